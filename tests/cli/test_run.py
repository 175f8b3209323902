"""`jaxqueens run CONFIG`: key and type checks, overrides, sweeps, recorded provenance."""

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from jaxqueens.cli.main import main

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def write(tmp_path, text, name="c.toml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_single_run_records_provenance(tmp_path, capsys):
    cfg = write(
        tmp_path,
        'command = "solve"\nout = "%s"\n[options]\nn = 10\nchains = 30\nseed = 4\n'
        "quiet = true\n" % (tmp_path / "o"),
    )
    code, out, _ = run(["run", cfg, "--set", "chains=20"], capsys)
    assert code == 0 and "20 of 20 chains solved" in out
    rec = json.loads((tmp_path / "o" / "run.json").read_text())
    assert rec["command"] == "solve" and rec["options"]["chains"] == 20 and rec["seed"] == 4
    for key in ("jaxqueens", "jax", "devices", "backend", "python"):
        assert key in rec
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["chains"] == 20 and summary["seed"] == 4


def test_sweep_writes_one_row_per_setting(tmp_path, capsys):
    cfg = write(
        tmp_path,
        'command = "solve"\n[options]\nchains = 10\nquiet = true\n'
        '[sweep]\nn = [6, 9]\ninit = ["permutation", "qs4"]\n',
    )
    code, _, _ = run(["run", cfg, "--out", str(tmp_path / "sw")], capsys)
    assert code == 0
    with open(tmp_path / "sw" / "results.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["n"], r["init"]) for r in rows] == [
        ("6", "permutation"),
        ("6", "qs4"),
        ("9", "permutation"),
        ("9", "qs4"),
    ]
    assert all(r["solved"] == "10" for r in rows)
    assert (tmp_path / "sw" / "run-003" / "run.json").exists()


@pytest.mark.parametrize(
    "text,needle",
    [
        ('command = "solve"\n[options]\nchainz = 3\n', "unknown key 'chainz'"),
        ('command = "solve"\n[options]\nn = "eight"\n', "'n' must be an integer"),
        ('command = "solve"\n[options]\ninit = "best"\n', "'init' must be one of"),
        ('command = "solve"\n[options]\nplot = 1\n', "'plot' must be true or false"),
        ('command = "solve"\nnumber = 3\n', "unknown key 'number'"),
        ('command = "frobnicate"\n', "'command' must be one of"),
        ('command = "solve"\n[sweep]\nn = 8\n', "sweep 'n' must be a non-empty list"),
        ('command = "solve"\n[sweep]\nm = [1]\n', "unknown sweep key 'm'"),
        ('command = "solve"\n[options\n', "not valid TOML"),
    ],
)
def test_config_errors_name_the_key(tmp_path, capsys, text, needle):
    code, _, err = run(["run", write(tmp_path, text)], capsys)
    assert code == 2 and needle in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "override,needle",
    [
        ("chains", "key=value"),
        ("chainz=3", "unknown key 'chainz'"),
        ("n=x", "not a valid int"),
        ("plot=yes", "true or false"),
    ],
)
def test_bad_overrides(tmp_path, capsys, override, needle):
    cfg = write(tmp_path, 'command = "solve"\n[options]\nn = 8\n')
    code, _, err = run(["run", cfg, "--set", override], capsys)
    assert code == 2 and needle in err


def test_shipped_configs_are_valid():
    from jaxqueens.cli import run as experiment
    from jaxqueens.cli.main import build_parser
    from jaxqueens.io.config import load_config

    parser = build_parser()
    configs = sorted(CONFIGS.glob("*.toml"))
    assert configs
    for path in configs:
        experiment.resolve(load_config(path), parser, [], str(path))


@pytest.mark.parametrize(
    "text,needle",
    [
        ('command = "solve"\noptions = 5\n', "'options' must be a table"),
        ('command = "solve"\noptions = [1, 2]\n', "'options' must be a table"),
        ('command = "solve"\nsweep = "x"\n', "'sweep' must be a table"),
        ('command = "solve"\nsweep = [["n", 8]]\n', "'sweep' must be a table"),
        ('command = "solve"\nout = 5\n', "'out' must be a folder name"),
    ],
)
def test_defect_8_config_sections_of_the_wrong_type(tmp_path, capsys, text, needle):
    code, _, err = run(["run", write(tmp_path, text)], capsys)
    assert code == 2 and needle in err and err.count("\n") == 1, err


def test_defect_8_binary_config_and_folder_as_config(tmp_path, capsys):
    binary = tmp_path / "b.toml"
    binary.write_bytes(bytes(range(256)) * 4)
    code, _, err = run(["run", str(binary)], capsys)
    assert code == 2 and "not UTF-8 text" in err and err.count("\n") == 1, err
    code, _, err = run(["run", str(tmp_path)], capsys)
    assert code == 2 and "is a directory" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("command", ["show", "check", "render", "run"])
def test_defect_18_run_refuses_commands_that_need_a_file(tmp_path, capsys, command):
    """A config cannot give show, check or render their board file: refused in one line, and
    the list of commands a config may name leaves them out."""
    code, _, err = run(["run", write(tmp_path, f'command = "{command}"\n')], capsys)
    assert code == 2 and err.count("\n") == 1 and f"'{command}'" in err, err
    code, _, err = run(["run", write(tmp_path, 'command = "frobnicate"\n')], capsys)
    listed = err.split("must be one of", 1)[1]
    assert "solve" in listed and not any(c in listed for c in ("show", "check", "render", "run,"))


def test_defect_13_ctrl_c_stops_a_sweep_that_then_resumes(tmp_path, monkeypatch, capsys):
    from jaxqueens.drivers import minconflicts as mc_runner

    cfg = write(
        tmp_path,
        'command = "solve"\n[options]\nchains = 10\nbatch = 5\nquiet = true\n'
        "[sweep]\nn = [6, 8, 9]\n",
    )
    whole, out = tmp_path / "whole", tmp_path / "sw"
    assert run(["run", cfg, "--out", str(whole)], capsys)[0] == 0
    real, calls = mc_runner.compile_runner, []

    def interrupting(*args, **kwargs):
        runner = real(*args, **kwargs)

        def run_chunk(offset, count, *rest):
            calls.append(offset)
            if len(calls) == 4:  # n = 6 takes calls 1-2; Ctrl-C in n = 8's second chunk
                raise KeyboardInterrupt
            return runner(offset, count, *rest)

        return run_chunk

    monkeypatch.setattr(mc_runner, "compile_runner", interrupting)
    code, stdout, err = run(["run", cfg, "--out", str(out)], capsys)
    assert code == 130 and "--resume" in err
    assert "n=9" not in stdout and not (out / "run-002").exists()  # the sweep stopped
    with open(out / "results.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["n"] for r in rows] == ["6"] and all(r["solved"] for r in rows)  # no empty row
    monkeypatch.undo()
    code, stdout, _ = run(["run", cfg, "--out", str(out), "--resume"], capsys)
    assert code == 0 and "skipped" in stdout and stdout.count("chains solved") == 2
    tables = []
    for folder in (whole, out):
        with open(folder / "results.csv") as f:
            tables.append(
                [
                    (r["n"], r["chains"], r["solved"], r["distinct_solutions"])
                    for r in csv.DictReader(f)
                ]
            )
    assert tables[0] == tables[1] and len(tables[0]) == 3
    np.testing.assert_array_equal(
        np.load(whole / "run-001" / "solutions.npy"), np.load(out / "run-001" / "solutions.npy")
    )
    code, stdout, _ = run(["run", cfg, "--out", str(out), "--resume"], capsys)
    assert code == 0 and stdout.count("skipped") == 3  # all finished: nothing runs again


@pytest.mark.parametrize(
    "text,override,needle",
    [
        ('command = "solve"\n[options]\nseed = -1\n', None, "'seed' must be between 0 and 2^32-1"),
        (
            'command = "solve"\n[options]\nn = 8\n',
            "seed=4294967296",
            "--set seed: must be between 0 and 2^32-1",
        ),
        (
            'command = "solve"\n[options]\nmaxsteps = 3000000000\n',
            None,
            "'maxsteps': 3000000000 is out of range",
        ),
        (
            'command = "solve"\n[options]\nn = 8\n[sweep]\nseed = [1, 99999999999]\n',
            None,
            "'seed' must be between",
        ),
    ],
)
def test_defect_19_config_integers_are_range_checked_before_any_run(
    tmp_path, capsys, text, override, needle
):
    argv = ["run", write(tmp_path, text)] + (["--set", override] if override else [])
    code, out, err = run(argv, capsys)
    assert code == 2 and needle in err and err.count("\n") == 1 and out == "", err


def test_defect_28_9_set_on_a_swept_key_is_refused(tmp_path, capsys):
    cfg = write(
        tmp_path, 'command = "solve"\n[options]\nchains = 3\nquiet = true\n[sweep]\nn = [8, 10]\n'
    )
    code, out, err = run(["run", cfg, "--set", "n=12"], capsys)
    assert code == 2 and "--set n:" in err and "sweeps 'n'" in err and err.count("\n") == 1, err
    assert out == ""  # nothing ran


def test_defect_28_msg_config_naming_complete_is_refused(tmp_path, capsys):
    cfg = write(tmp_path, 'command = "complete"\n[options]\ncount = true\n')
    code, _, err = run(["run", cfg], capsys)
    assert code == 2 and "'command' = 'complete' cannot run from a config" in err, err
    assert "jaxqueens complete FILES" in err and err.count("\n") == 1


def test_defect_28_msg_named_pipe_as_config_is_refused(tmp_path, capsys):
    import os
    import threading

    fifo = tmp_path / "c.toml"
    os.mkfifo(fifo)
    box = []
    t = threading.Thread(target=lambda: box.append(run(["run", str(fifo)], capsys)), daemon=True)
    t.start()
    t.join(30)
    assert box and box[0][0] == 2 and "named pipe" in box[0][2], box


def test_issue28_item3_ctrl_c_in_a_settings_last_chunk_stops_the_sweep(
    tmp_path, monkeypatch, capsys
):
    """Ctrl-C during the last kernel call of the first setting: the sweep stops there (it went
    on to every other setting before)."""
    import signal

    from jaxqueens.drivers import minconflicts as mc_runner

    cfg = write(
        tmp_path,
        'command = "solve"\n[options]\nchains = 10\nbatch = 5\nquiet = true\n[sweep]\nn = [6, 8]\n',
    )
    real, calls = mc_runner.compile_runner, []

    def interrupting(*args, **kwargs):
        runner = real(*args, **kwargs)

        def run_chunk(offset, count, *rest):
            calls.append(offset)
            if len(calls) == 2:  # n = 6 takes calls 1-2: Ctrl-C in its last one
                signal.raise_signal(signal.SIGINT)
            return runner(offset, count, *rest)

        return run_chunk

    monkeypatch.setattr(mc_runner, "compile_runner", interrupting)
    out = tmp_path / "sw"
    code, _stdout, err = run(["run", cfg, "--out", str(out)], capsys)
    assert code == 130 and "--resume" in err
    assert len(calls) == 2 and not (out / "run-001").exists()


def test_issue28_an_unfinished_sweep_names_the_sweeps_own_resume(tmp_path, monkeypatch, capsys):
    """A sweep interrupted in a setting keeps that setting's checkpoint. Started again without
    --resume it is refused before any setting runs, naming the sweep's own resume (before: the
    finished settings ran again and then the setting's folder was refused with its command's
    ``--resume out/run-001``, which would run that setting alone); the interrupt line of the
    setting names it too."""
    from jaxqueens.drivers import count as counter

    cfg = write(tmp_path, 'command = "count"\n[options]\nquiet = true\n[sweep]\nn = [8, 13]\n')
    out = tmp_path / "sw"
    real = counter.count_solutions

    def stop(done, total):
        raise KeyboardInterrupt  # Ctrl-C after the first chunk (the checkpoint is then saved)

    def counting(n, **kwargs):  # the n = 13 setting is interrupted
        return real(n, **kwargs, **({"on_chunk": stop} if n == 13 else {}))

    monkeypatch.setattr(counter, "count_solutions", counting)
    code, stdout, err = run(["run", cfg, "--out", str(out)], capsys)
    sweep_resume = f"jaxqueens run {cfg} --out {out} --resume"
    assert code == 130 and (out / "run-001" / "checkpoint.npz").exists()
    assert f"resume with {sweep_resume}" in err  # the setting's own interrupt line
    assert f"resume with: {sweep_resume}" in err and "--resume " + str(out / "run-001") not in err
    monkeypatch.undo()
    code, stdout, err = run(["run", cfg, "--out", str(out)], capsys)
    assert code == 2 and "n = 8" not in stdout  # refused before any setting runs again
    assert err.count("\n") == 1 and "unfinished sweep" in err
    assert f"continue it with: {sweep_resume}," in err and str(out / "run-001") in err
    code, stdout, _ = run(["run", cfg, "--out", str(out), "--resume"], capsys)
    assert code == 0 and "73,712 solutions" in stdout and "skipped" in stdout


def test_compare_sweep_results_carry_success_rate_ert_and_recommendation(tmp_path, capsys):
    cfg = write(
        tmp_path,
        'command = "compare"\n[options]\nn = 6\nchains = 4\nsteps = 200\nsolvers = ["mc-qs4"]\n'
        "no_plots = true\nquiet = true\n[sweep]\nseed = [0, 1]\n",
    )
    code, _, _ = run(["run", cfg, "--out", str(tmp_path / "sw")], capsys)
    assert code == 0
    with open(tmp_path / "sw" / "results.csv") as f:
        rows = list(csv.DictReader(f))
    assert [r["seed"] for r in rows] == ["0", "1"]
    for i, row in enumerate(rows):
        summary = json.loads((tmp_path / "sw" / f"run-{i:03d}" / "summary.json").read_text())
        (solver,) = summary["per_solver"]
        assert row["recommended"] == summary["recommendation"]["solver"] == "mc-qs4"
        assert row["recommendation"] == summary["recommendation"]["line"]
        assert float(row["mc-qs4.success_rate"]) == solver["success_rate"]
        assert float(row["mc-qs4.ert_s"]) == solver["ert_s"]


def test_estimate_config_with_a_number_for_its_sizes_is_taken(tmp_path):
    from jaxqueens.cli import run as experiment
    from jaxqueens.cli.main import build_parser
    from jaxqueens.io.config import load_config

    path = write(tmp_path, 'command = "estimate"\n[options]\nn = 10\n')
    _, opts, _, options = experiment.resolve(load_config(path), build_parser(), [], path)
    assert experiment.schema.argv_of(opts, options, path) == ["--n", "10"]


def _runs_without_seconds(folder: Path) -> list[list[str]]:
    with open(folder / "runs.csv", newline="") as f:
        rows = list(csv.reader(f))
    at = rows[0].index("seconds")
    return [row[:at] + row[at + 1 :] for row in rows]


@pytest.mark.parametrize(
    "argv",
    [
        ["solve", "-n", "8", "--chains", "40", "--seed", "3", "--init", "qs4"],
        ["anneal", "-n", "10", "--chains", "12", "--method", "sa", "--steps", "300", "--seed", "5"],
    ],
    ids=["solve", "anneal"],
)
def test_a_recorded_run_runs_again_from_its_summary(tmp_path, capsys, argv):
    """`jaxqueens run DIR` (or DIR/summary.json) repeats the command with the options its
    command line gave: the same chains, steps and boards (only the seconds differ); --set
    changes one of them."""
    first, again, fewer = tmp_path / "first", tmp_path / "again", tmp_path / "fewer"
    assert main([*argv, "--quiet", "--out", str(first)]) == 0
    assert main(["run", str(first), "--out", str(again)]) == 0
    assert _runs_without_seconds(again) == _runs_without_seconds(first)
    np.testing.assert_array_equal(
        np.load(again / "solutions.npy"), np.load(first / "solutions.npy")
    )
    summary = json.loads((again / "summary.json").read_text())
    assert summary["run"]["argv"][1:3] == ["run", str(first)]  # the rerun records how it ran
    assert main(["run", str(first / "summary.json"), "--set", "chains=4", "--out", str(fewer)]) == 0
    assert _runs_without_seconds(fewer) == _runs_without_seconds(first)[:5]


def test_run_refuses_a_summary_without_a_command_line(tmp_path, capsys):
    (tmp_path / "summary.json").write_text('{"n": 8}')
    assert main(["run", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "records no command line to run again" in err[0]
