"""``jaxqueens compare`` (:mod:`jaxqueens.cli.compare`): flags, config files, lines, --out."""

import json

import pytest

from jaxqueens.cli import compare, schema
from jaxqueens.cli.main import build_parser
from jaxqueens.drivers import compare as driver
from jaxqueens.errors import QueensError


def parse(argv):
    """``compare`` words parsed as ``jaxqueens`` parses them, the ``--config`` file merged in."""
    parser = build_parser()
    return schema.apply_config(parser.parse_args(["compare", *argv]), parser.commands["compare"])


def test_the_names_in_help_are_the_drivers():
    assert tuple(driver.SOLVERS) == compare.SOLVER_NAMES


def test_compare_is_a_command_of_jaxqueens():
    assert "compare" in build_parser().commands


def test_compare_prints_and_writes_tables_and_figures(tmp_path, capsys):
    args = parse(
        [
            "-n",
            "6",
            "--chains",
            "10",
            "--steps",
            "200",
            "--solvers",
            "mc-permutation,mc-qs4",
            "--quiet",
            "--out",
            str(tmp_path),
        ]
    )
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "n = 6, 10 chains per solver, 200 steps per chain, seed 0" in out
    assert "mc-permutation:" in out and "mc-qs4:" in out and "recommended for n = 6" in out
    assert "every solver runs at its measured-best defaults" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["solvers"] == ["mc-permutation", "mc-qs4"] and summary["chains"] == 10
    assert summary["recommendation"]["line"] in out
    for name in (
        "summary.csv",
        "runs.csv",
        "steps_ecdf.csv",
        "seconds_ecdf.csv",
        "success.csv",
        "solutions.csv",
        "bias.csv",
        "steps_ecdf.png",
        "seconds_ecdf.png",
        "success.png",
        "ert.png",
    ):
        assert (tmp_path / name).stat().st_size > 0, name


def test_config_file_and_flags_override_it(tmp_path, capsys):
    cfg = tmp_path / "cmp.toml"
    cfg.write_text(
        'command = "compare"\n[options]\nn = 6\nchains = 4\nsteps = 100\nsolvers = ["mc-qs4"]\n'
        f'out = "{tmp_path / "out"}"\nno_plots = true\n'
    )
    args = parse(["--config", str(cfg), "--chains", "3", "--quiet"])
    assert args.func(args) in (0, 1)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["chains"] == 3 and summary["n"] == 6 and summary["solvers"] == ["mc-qs4"]
    assert not list((tmp_path / "out").glob("*.png"))  # no_plots from the config
    assert args.out == str(tmp_path / "out")  # the report hook reads args.out


@pytest.mark.parametrize(
    "text, needle",
    [
        ('command = "solve"\n', "not compare"),
        ('command = "compare"\n[options]\nfoo = 1\n', "unknown key 'foo'"),
        ('command = "compare"\n[options]\nchains = "many"\n', "'chains' must be an integer"),
    ],
)
def test_bad_config_is_one_line(tmp_path, text, needle):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(text)
    with pytest.raises(QueensError, match=needle):
        compare.cmd_compare(parse(["--config", str(cfg)]))


def test_bad_flags_are_refused_before_any_work(tmp_path):
    with pytest.raises(QueensError, match="--chains must be at least 1"):
        compare.cmd_compare(parse(["--chains", "0"]))
    with pytest.raises(QueensError, match="unknown; use a comma list"):
        compare.cmd_compare(parse(["--solvers", "mc-qs4,quick"]))
    (tmp_path / "file").write_text("x")
    with pytest.raises(QueensError, match="is a file, not a folder"):
        compare.cmd_compare(parse(["--solvers", "mc-qs4", "--out", str(tmp_path / "file")]))


def test_defect_28_msg_step_budget_is_checked_for_every_solver_before_any_runs(monkeypatch, capsys):
    """--steps 5 failed only when LS started (mc-qs4 had run, its work lost) and named --rounds,
    which compare does not have."""
    from jaxqueens.cli.main import main

    ran = []
    monkeypatch.setattr(driver, "run_solver", lambda name, *a, **k: ran.append(name))
    argv = ["compare", "-n", "8", "--chains", "5", "--steps", "5", "--solvers", "mc-qs4,ls"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert ran == [] and "--steps 5 is too small for ls" in err and "--rounds" not in err, err
    with pytest.raises(QueensError, match="too small for ga-combination"):
        driver.compare(8, 5, solvers="mc-qs4,ga-combination", steps=50)
    assert ran == []


def test_issue28_item3_ctrl_c_in_a_solvers_last_chunk_stops_the_comparison(
    tmp_path, monkeypatch, capsys
):
    """Ctrl-C during the first solver's last kernel call: the second solver never starts and the
    command exits as interrupted (it ran every solver and exited 0 before)."""
    import signal

    from jaxqueens.cli.main import main
    from jaxqueens.drivers import minconflicts as mcsolve

    real, compiled = mcsolve.compile_runner, []

    def interrupting(*args, **kwargs):
        runner = real(*args, **kwargs)
        compiled.append(1)

        def run_chunk(offset, count, *rest):
            if int(offset) + int(count) >= 10:  # the last chunk of 10 chains
                signal.raise_signal(signal.SIGINT)
            return runner(offset, count, *rest)

        return run_chunk

    monkeypatch.setattr(mcsolve, "compile_runner", interrupting)
    argv = ["compare", "-n", "6", "--chains", "10", "--steps", "200"]
    code = main([*argv, "--solvers", "mc-permutation,mc-qs4", "--quiet", "--out", str(tmp_path)])
    assert code == 130 and len(compiled) == 1
    assert "mc-qs4:" not in capsys.readouterr().out
