"""``jaxqueens compare`` (:mod:`jaxqueens.cli.compare`): flags, config files, lines, --out."""

import json
import re

import pytest

from jaxqueens.cli import compare, schema
from jaxqueens.cli.main import build_parser
from jaxqueens.drivers import compare as driver
from jaxqueens.drivers import compare_setup
from jaxqueens.drivers import compare_solvers as runners
from jaxqueens.errors import QueensError


def parse(argv):
    """``compare`` words parsed as ``jaxqueens`` parses them, the ``--config`` file merged in."""
    parser = build_parser()
    return schema.apply_config(parser.parse_args(["compare", *argv]), parser.commands["compare"])


def test_the_names_in_help_are_the_drivers():
    """`--help` lists the names of the one JAX-free table (compare_setup) the driver runs."""
    assert (
        ", ".join(compare_setup.COMPARE_SOLVERS)
        in build_parser().commands["compare"].flags["--solvers"].help
    )


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
        "settings.csv",
        "runs.csv",
        "rtd_steps.csv",
        "rtd_seconds.csv",
        "steps_ecdf.csv",
        "seconds_ecdf.csv",
        "success.csv",
        "solutions.csv",
        "bias.csv",
        "rtd_steps.png",
        "rtd_seconds.png",
        "steps_ecdf.png",
        "seconds_ecdf.png",
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


def test_bad_flags_are_refused_before_any_work(tmp_path, capsys):
    from jaxqueens.cli.main import main

    for flag, name in (("--chains", "chains"), ("--steps", "steps")):  # the driver's one check
        with pytest.raises(QueensError, match=f"^{name} must be at least 1") as err:
            compare.cmd_compare(parse([flag, "0"]))
        assert err.value.param == name
        assert main(["compare", "-n", "8", flag, "-3", "--out", str(tmp_path / "o")]) == 2
        line = capsys.readouterr().err
        assert f"error: {flag} must be at least 1, got -3" in line and line.count("\n") == 1
        assert f" {name} must" not in line and not (tmp_path / "o").exists()
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
    monkeypatch.setattr(runners, "run_solver", lambda name, *a, **k: ran.append(name))
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
    from jaxqueens.drivers import minconflicts as mc_runner

    real, compiled = mc_runner.compile_runner, []

    def interrupting(*args, **kwargs):
        runner = real(*args, **kwargs)
        compiled.append(1)

        def run_chunk(offset, count, *rest):
            if int(offset) + int(count) >= 10:  # the last chunk of 10 chains
                signal.raise_signal(signal.SIGINT)
            return runner(offset, count, *rest)

        return run_chunk

    monkeypatch.setattr(mc_runner, "compile_runner", interrupting)
    argv = ["compare", "-n", "6", "--chains", "10", "--steps", "200"]
    code = main([*argv, "--solvers", "mc-permutation,mc-qs4", "--quiet", "--out", str(tmp_path)])
    assert code == 130 and len(compiled) == 1
    assert "mc-qs4:" not in capsys.readouterr().out


def test_interrupted_compare_writes_the_finished_solvers_tables(tmp_path, monkeypatch, capsys):
    """SIGTERM while the second solver compiles: the first solver's tables are written, the
    missing one is named, and the command exits as interrupted (it wrote nothing before)."""
    import signal

    from jaxqueens.cli.main import main
    from jaxqueens.drivers import minconflicts as mc_runner

    real, compiled = mc_runner.compile_runner, []

    def interrupting(*args, **kwargs):
        compiled.append(1)
        if len(compiled) == 2:  # the second solver: outside a safe region, it stops at once
            signal.raise_signal(signal.SIGTERM)
        return real(*args, **kwargs)

    monkeypatch.setattr(mc_runner, "compile_runner", interrupting)
    argv = ["compare", "-n", "6", "--chains", "10", "--steps", "200", "--quiet"]
    code = main([*argv, "--solvers", "mc-permutation,mc-qs4", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 143 and "1 of 2 solvers: mc-qs4 did not run" in err, err
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["solvers"] == ["mc-permutation"] and summary["missing_solvers"] == ["mc-qs4"]
    rows = (tmp_path / "runs.csv").read_text().splitlines()[1:]
    assert len(rows) == 10 and all(r.startswith("mc-permutation,") for r in rows)


def write(tmp_path, text, name="cmp.toml"):
    cfg = tmp_path / name
    cfg.write_text(text)
    return str(cfg)


SOLVER_TABLES = (
    'command = "compare"\n[options]\nn = 6\nsolvers = ["mc-qs4", "sa", "ga-permutation"]\n'
    "[solvers.sa]\nrounds = 10\nsteps = 500\ninit_prob = 0.2\n"
    '[solvers.ga-permutation]\npop = 12\ngenerations = 30\ncrossover = "pmx"\n'
)


def test_per_solver_settings_from_the_config_and_set_the_command_line_winning(tmp_path):
    cfg = write(tmp_path, SOLVER_TABLES)
    conf = compare._settings(
        parse(["--config", cfg, "--set", "sa.rounds=20", "--set", "mc-qs4.tabu=2"])
    )
    assert conf["settings"] == {
        "sa": {"rounds": 20, "steps": 500, "init_prob": 0.2},
        "ga-permutation": {"pop": 12, "generations": 30, "crossover": "pmx"},
        "mc-qs4": {"tabu": 2},
    }
    only_flags = compare._settings(parse(["--set", "ls.rounds=3", "--set", "ls.rounds=4"]))
    assert only_flags["settings"] == {"ls": {"rounds": 4}}  # the later word wins
    assert "set" not in only_flags


def test_run_passes_the_solver_tables_and_dotted_set_on(tmp_path):
    from jaxqueens.cli import run
    from jaxqueens.io.config import load_config

    cfg = write(tmp_path, SOLVER_TABLES)
    command, opts, _, _ = run.resolve(
        load_config(cfg), build_parser(), ["sa.rounds=30", "chains=4"], cfg
    )
    assert command == "compare" and opts["chains"] == 4
    assert opts["set"] == [
        "sa.rounds=10",
        "sa.steps=500",
        "sa.init_prob=0.2",
        "ga-permutation.pop=12",
        "ga-permutation.generations=30",
        "ga-permutation.crossover=pmx",
        "sa.rounds=30",
    ]
    argv = [
        "compare",
        *schema.argv_of(opts, schema.options_of(build_parser().commands["compare"]), cfg),
    ]
    assert compare._settings(parse(argv[1:]))["settings"]["sa"]["rounds"] == 30
    with pytest.raises(QueensError, match=re.escape("--set sa.rounds: 'x' is not a valid int")):
        run.resolve(load_config(cfg), build_parser(), ["sa.rounds=x"], cfg)


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--set", "rounds=5"], "--set 'rounds=5': write SOLVER.KEY=VALUE"),
        (["--set", "sa.rounds=x"], "--set sa.rounds: 'x' is not a valid int"),
        (["--set", "nope.rounds=1"], "no solver 'nope'"),
        (["--set", "sa.speed=1"], "unknown key 'speed'"),
        (["--set", "mc-qs4.init=qs4"], "unknown key 'init'"),
        (["--set", "ls.rounds=3", "--solvers", "mc-qs4"], "ls is not among the solvers run"),
        (["--set", "sa.q=0.3"], "does not use q"),
        (["--set", "sa.steps=50"], "sa.steps 50 is too small"),
        (["--format", "svg"], "--format set the figures written with --out DIR"),
        (["--repeats", "0"], "--repeats must"),
        (["--dpi", "5", "--out", "X"], "--dpi must lie in 10..2400"),
    ],
)
def test_bad_solver_settings_are_one_line_exit_2_before_jax(argv, needle, capsys, monkeypatch):
    from jaxqueens.cli.main import main

    ran = []
    monkeypatch.setattr(runners, "run_solver", lambda name, *a, **k: ran.append(name))
    assert main(["compare", "-n", "8", "--quiet", *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert ran == []


@pytest.mark.parametrize(
    "text, needle",
    [
        ('[solvers.sa]\nrounds = "ten"\n', "[solvers.sa]: 'rounds' must be an integer"),
        ("[solvers.nope]\nrounds = 1\n", "no solver 'nope'"),
        ("[solvers]\nsa = 3\n", "'solvers.sa' must be a table"),
    ],
)
def test_bad_solver_tables_in_a_config_name_the_file_and_table(tmp_path, text, needle):
    cfg = write(tmp_path, 'command = "compare"\n' + text)
    with pytest.raises(QueensError, match=re.escape(needle)):
        compare.cmd_compare(parse(["--config", cfg]))


def test_solver_tables_belong_to_compare_only(tmp_path):
    from jaxqueens.cli import run
    from jaxqueens.io.config import load_config

    cfg = write(tmp_path, 'command = "solve"\n[solvers.sa]\nrounds = 1\n')
    with pytest.raises(QueensError, match=re.escape("[solvers.*] tables are not taken")):
        run.resolve(load_config(cfg), build_parser(), [], cfg)


@pytest.mark.parametrize("fmt", ["svg", "pdf"])
def test_vector_figures_and_the_report_shows_them(tmp_path, capsys, fmt):
    from jaxqueens.cli.main import main

    out = tmp_path / "out"
    argv = ["compare", "-n", "6", "--chains", "4", "--steps", "100", "--solvers", "mc-qs4"]
    assert main([*argv, "--quiet", "--out", str(out), "--format", fmt, "--dpi", "150"]) == 0
    figures = sorted(p.name for p in out.glob(f"*.{fmt}"))
    assert figures == sorted(
        f"{f}.{fmt}" for f in ("rtd_steps", "rtd_seconds", "steps_ecdf", "seconds_ecdf", "ert")
    )
    assert not list(out.glob("*.png"))
    page = (out / "report.html").read_text()
    if fmt == "svg":
        assert page.count("data:image/svg+xml;base64,") == 5
    else:
        assert page.count('<a href="') >= 5 and 'href="ert.pdf"' in page

    def refuse(name):
        raise ValueError(name)

    json.loads((out / "summary.json").read_text(), parse_constant=refuse)


def test_the_n64_example_config_reads_and_checks():
    """configs/compare_n64.toml (README): its per-solver settings parse and pass the driver's
    checks (no run)."""
    from pathlib import Path

    from jaxqueens.drivers import compare_setup as settings

    cfg = Path(__file__).resolve().parents[2] / "configs" / "compare_n64.toml"
    conf = compare._settings(parse(["--config", str(cfg)]))
    assert conf["n"] == 64 and conf["settings"]["sa"]["steps"] == 30000
    assert conf["settings"]["ga-permutation"] == {"steps": 40000, "pop": 10, "tournament": 4}
    own = settings.compare_settings(
        64, settings.parse_solvers(conf["solvers"]), 10000, conf["settings"]
    )
    assert {name: s["steps"] for name, s in own.items()} == {
        "mc-qs4": 10000,
        "ls": 10000,
        "sa": 30000,
        "ga-permutation": 40000,
    }


def test_a_solver_line_words_an_open_ert_interval_without_infinity():
    from jaxqueens.cli.compare import _line

    p = {
        "solver": "sa",
        "solved": 1,
        "chains": 30,
        "success_rate": 1 / 30,
        "ert_s": 0.00926,
        "ert_s_ci": [0.00299, None],
        "steps": {"median": 109},
        "solutions_per_s": 108.0,
        "distinct_solutions": 1,
        "fundamental_classes": 1,
    }
    line = _line(p)
    assert "9.26 ms (95% CI 2.99 or more) per solution" in line
    assert "inf" not in line and "to or" not in line
    line = _line({**p, "ert_s_ci": [0.00299, 0.02]})
    assert "(95% CI 2.99 to 20)" in line
