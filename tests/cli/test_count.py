"""``jaxqueens count`` (cli/count.py): printing, --enumerate files, --out/--resume, Ctrl-C."""

import argparse
import json
import re

import numpy as np
import pytest

from jaxqueens.cli import count as count_cli
from jaxqueens.core import checker
from jaxqueens.errors import QueensError
from jaxqueens.io import progress, writing


def _cli(argv):
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    count_cli.add_command(sub)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    finally:
        writing.release_all()  # as jaxqueens.cli.main does when a command ends


def test_count_command(tmp_path, capsys):
    assert _cli(["count", "-n", "10", "--unique"]) == 0
    out = capsys.readouterr().out
    assert "724 solutions" in out and "agrees" in out and "92" in out
    f = tmp_path / "sols.npy"
    assert _cli(["count", "-n", "8", "--enumerate", "--out", str(f)]) == 0
    boards = np.load(f)
    reps = np.load(tmp_path / "sols_fundamental.npy")
    assert boards.dtype == np.uint8 and boards.shape == (92, 8) and reps.shape == (12, 8)
    assert checker.are_solutions(reps).all()
    for argv, msg in [
        (["count", "-n", "8", "--enumerate"], "--out"),
        (["count", "-n", "8", "--out", str(f)], "--enumerate"),
        (["count", "-n", "15", "--enumerate", "--out", str(f)], "n <= 14"),
    ]:
        with pytest.raises(QueensError, match=msg):
            _cli(argv)


def test_size_spellings_and_missing_size(capsys):
    assert _cli(["count", "6"]) == 0 and "4 solutions" in capsys.readouterr().out
    assert _cli(["count", "--n", "6"]) == 0 and "4 solutions" in capsys.readouterr().out
    with pytest.raises(QueensError, match="board size"):
        _cli(["count"])


def test_enumerate_into_a_folder(tmp_path, capsys):
    assert _cli(["count", "-n", "6", "--enumerate", "--out", str(tmp_path / "run")]) == 0
    assert np.load(tmp_path / "run" / "solutions.npy").shape == (4, 6)
    assert np.load(tmp_path / "run" / "solutions_fundamental.npy").shape == (1, 6)
    assert "solutions_fundamental.npy" in capsys.readouterr().out


def test_count_out_left_its_checkpoint_after_a_finished_run(tmp_path, capsys):
    """``count --out DIR`` kept ``DIR/checkpoint.npz`` once the count was done; like every other
    command it removes it after the summary is written (``--resume`` then has nothing to
    resume). The toroidal count too."""
    out = tmp_path / "run"
    assert _cli(["count", "-n", "11", "--unique", "--out", str(out), "--quiet"]) == 0
    assert {p.name for p in out.iterdir()} == {"summary.json"}
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["n"], summary["total"], summary["unique"]) == (11, 2680, 341)
    assert summary["oeis_A000170"] == 2680 and summary["oeis_A002562"] == 341
    assert summary["processes"] == 1 and summary["resumed_chunks"] == 0
    assert {"seconds", "compile_seconds", "depth", "prefixes", "chunks"} <= set(summary)
    with pytest.raises(QueensError, match=r"no checkpoint\.npz there"):
        _cli(["count", "-n", "11", "--unique", "--resume", str(out)])
    toroidal = tmp_path / "torus"
    assert _cli(["count", "-n", "5", "--toroidal", "--quiet", "--out", str(toroidal)]) == 0
    assert {p.name for p in toroidal.iterdir()} == {"summary.json"}


def test_ctrl_c_saves_and_resume_finishes(tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"
    real, seen = progress.Progress.update, []

    def update(self, done, extra=""):  # Ctrl-C at the end of the first chunk
        seen.append(done)
        if len(seen) == 1:
            raise KeyboardInterrupt
        return real(self, done, extra)

    monkeypatch.setattr(progress.Progress, "update", update)
    assert _cli(["count", "-n", "12", "--unique", "--out", str(out)]) == 130
    err = capsys.readouterr().err
    chunks = int(re.search(r"after 1 of (\d+) chunks", err).group(1))
    assert chunks > 1 and f"--resume {out}" in err
    assert not (out / "summary.json").exists()
    monkeypatch.undo()
    with pytest.raises(QueensError, match="other settings"):  # another n cannot resume it
        _cli(["count", "-n", "11", "--resume", str(out)])
    assert _cli(["count", "-n", "12", "--unique", "--resume", str(out)]) == 0
    assert f"1 of {chunks} chunks resumed" in capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["total"], summary["unique"], summary["resumed_chunks"]) == (14200, 1787, 1)


def test_checkpoint_flags(tmp_path):
    with pytest.raises(QueensError, match=r"--out DIR.*--resume DIR"):
        _cli(["count", "-n", "8", "--checkpoint", str(tmp_path / "c.json")])
    with pytest.raises(QueensError, match=r"no checkpoint\.npz"):
        _cli(["count", "-n", "8", "--resume", str(tmp_path / "nothing")])
    with pytest.raises(QueensError, match="cannot resume"):
        _cli(["count", "-n", "8", "--enumerate", "--resume", str(tmp_path)])
    with pytest.raises(SystemExit):
        _cli(["count", "-n", "8", "--progress", "--quiet"])


def test_progress_flag_draws_the_line_off_a_terminal(capsys):
    assert _cli(["count", "-n", "12", "--progress"]) == 0
    assert "tasks" in capsys.readouterr().err
    assert _cli(["count", "-n", "12"]) == 0  # default: a line on a terminal only (not here)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("name", ["solutions.txt", "sols.csv", "board.NPY"])
def test_defect_18_enumerate_never_writes_npy_bytes_under_another_suffix(tmp_path, name):
    """`--enumerate --out X` with a suffix other than .npy is refused (one line naming the fix),
    before any work; nothing is written."""
    with pytest.raises(QueensError, match=r"--out .*\.npy.*folder"):
        _cli(["count", "-n", "6", "--enumerate", "--out", str(tmp_path / name)])
    assert list(tmp_path.iterdir()) == []


def test_enumerate_into_a_folder_with_a_dot_in_its_name_is_not_refused(tmp_path, capsys):
    """`--enumerate --out x_1.5` was refused for its ".5" suffix; only a file type's suffix
    (one with a letter) is."""
    out = tmp_path / "x_1.5"
    assert _cli(["count", "-n", "6", "--enumerate", "--out", str(out)]) == 0
    assert np.load(out / "solutions.npy").shape == (4, 6)


def test_plan_prints_tasks_and_an_estimate_and_counts_nothing(tmp_path, capsys):
    assert _cli(["count", "-n", "11", "--plan"]) == 0
    out = capsys.readouterr().out
    assert "constellations" in out and "tasks of depth" in out and "estimated run time" in out
    assert re.search(r"95%: .* to .*tree edges \(Knuth's estimate from [\d,]+ random probes", out)
    assert "check of the estimator" in out and "A000170: 2680" in out
    assert "solutions" not in out.splitlines()[0]
    for extra in (["--out", str(tmp_path / "x")], ["--enumerate"], ["--resume", str(tmp_path)]):
        with pytest.raises(QueensError, match=r"--plan.*drop"):
            _cli(["count", "-n", "11", "--plan", *extra])
    assert list(tmp_path.iterdir()) == []
    assert _cli(["count", "-n", "3", "--plan"]) == 0 and "no tasks" in capsys.readouterr().out


def test_duration_reads_well():
    assert count_cli.duration(0.42) == "0.4 s"
    assert count_cli.duration(200) == "3 min 20 s"
    assert count_cli.duration(40 * 86400) == "40.0 days"
    assert count_cli.duration(3 * 365.25 * 86400) == "3.0 years"
    assert count_cli.duration(4.1e8 * 365.25 * 86400) == "4.1e+08 years"
    assert count_cli.duration(5 * 3600 + 12 * 60) == "5 h 12 min"
    assert count_cli.duration(3.2 * 86400) == "3.2 days"


def test_toroidal_counts_match_a051906_and_write_a_summary(tmp_path, capsys):
    assert _cli(["count", "-n", "7", "--toroidal", "--quiet", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "28 solutions" in out and "A051906: agrees" in out
    doc = json.loads((tmp_path / "summary.json").read_text())
    assert doc["total"] == doc["oeis_A051906"] == 28 and doc["toroidal"] is True
    assert doc["seconds"] >= 0 and doc["compile_seconds"] >= 0  # the count's names
    assert _cli(["count", "-n", "6", "--toroidal", "--quiet"]) == 0  # 0 solutions for 2 | n
    assert "n = 6, toroidal: 0 solutions" in capsys.readouterr().out
    for argv, msg in [
        (["count", "-n", "7", "--toroidal", "--unique"], "drop --unique"),
        (["count", "-n", "7", "--toroidal", "--plan"], "drop --plan"),
        (["count", "-n", "33", "--toroidal"], "n <= 32"),
    ]:
        with pytest.raises(QueensError, match=msg):
            _cli(argv)


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_issue28_item2_plan_at_a_large_n_stops_promptly_on_a_signal(sig):
    """``count -n 32 --plan`` (planning, compiling or sampling when the signal comes) exits 130
    or 143 within seconds (before: a sampled task ran for hours and the worker thread kept the
    process alive: Ctrl-C was ignored at n = 27)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    argv = [sys.executable, "-m", "jaxqueens", "count", "-n", "32", "--plan"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        time.sleep(4)  # JAX imported; planning the 2 M tasks
        sent = time.perf_counter()
        proc.send_signal(getattr(signal, sig))
        out, err = proc.communicate(timeout=60)
        took = time.perf_counter() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + getattr(signal, sig), (out, err)
    assert "interrupted" in err and "estimated" not in out
    assert took < 10, took  # about a second when measured; generous on a loaded machine


def test_issue28_item4_sigterm_saves_and_prints_the_resume_line(tmp_path):
    """``kill`` (SIGTERM) on a running count: the chunk in flight finishes, the checkpoint is
    saved, the resume line printed, exit 143 (before: killed at once, nothing saved or said); the
    resumed count is right."""
    import os
    import signal
    import subprocess
    import sys
    import time

    # n = 17 counts for about 4 s on one core: its first progress event (after 1 s) leaves most of
    # the tasks to do, so the signal always meets a running loop (n = 18 took ~50 CPU s to finish)
    out = tmp_path / "d"
    argv = [sys.executable, "-m", "jaxqueens", "--log-json", "count", "-n", "17", "--out", str(out)]
    # without the suite's XLA_FLAGS (tests/conftest.py): the command sets its own, as from a shell
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    for line in proc.stderr:  # the first progress event: the chunked loop is running
        if '"progress"' in line:
            break
    sent = time.perf_counter()
    proc.send_signal(signal.SIGTERM)
    err = proc.stderr.read()
    code = proc.wait(timeout=120)
    took = time.perf_counter() - sent
    assert code == 143, err
    assert (
        f"saved in {out / 'checkpoint.npz'}; resume with the same command and --resume {out}" in err
    )
    assert (out / "checkpoint.npz").exists() and not (out / "summary.json").exists()
    assert took < 60, took  # about a second when measured; generous on a loaded machine
    done = subprocess.run(
        [*argv[:3], "count", "-n", "17", "--resume", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0 and "95,815,104 solutions" in done.stdout


def test_issue28_item5_an_unfinished_run_is_never_started_over(tmp_path, monkeypatch, capsys):
    """A folder holding an unfinished count's checkpoint, given again without --resume: refused
    in one line naming both ways on (it started from chunk 0 and overwrote the checkpoint)."""
    from jaxqueens.cli.main import main

    out = tmp_path / "d"

    def interrupt(self, done, extra=""):  # Ctrl-C at the end of the first chunk
        raise KeyboardInterrupt

    with monkeypatch.context() as m:
        m.setattr(progress.Progress, "update", interrupt)
        assert main(["count", "-n", "9", "--out", str(out)]) == 130
    assert not (out / "summary.json").exists()  # an interrupted run: a checkpoint, no summary
    saved = (out / "checkpoint.npz").read_bytes()
    capsys.readouterr()
    assert main(["count", "-n", "9", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unfinished run" in err
    assert f"--resume {out}" in err and "new folder" in err
    assert (out / "checkpoint.npz").read_bytes() == saved
    assert main(["count", "-n", "9", "--resume", str(out)]) == 0
    assert "352 solutions" in capsys.readouterr().out
    # finished: the folder is reused with --force (without it: refused, an earlier run's outputs)
    assert main(["count", "-n", "9", "--out", str(out)]) == 2
    assert main(["count", "-n", "9", "--out", str(out), "--force"]) == 0
    assert not (out / ".jaxqueens.lock").exists()  # released at the end


def test_issue28_item4_a_second_writer_is_detected(tmp_path, capsys):
    import subprocess
    import sys

    out = tmp_path / "d"
    out.mkdir()
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (out / ".jaxqueens.lock").write_text(f"{other.pid}\n")
        from jaxqueens.cli.main import main

        assert main(["count", "-n", "8", "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert f"pid {other.pid}" in err and err.count("\n") == 1
        assert not (out / "checkpoint.npz").exists()
    finally:
        other.kill()
        other.wait()
    assert main(["count", "-n", "8", "--out", str(out)]) == 0  # its process is gone: taken over
    assert not (out / ".jaxqueens.lock").exists()


def test_the_switches_are_the_count_settings_fields():
    """--unique, --toroidal, --plan and --enumerate are `CountSettings`' fields with help, built
    by `options.add_fields`: switches, off unless given, with the field's help."""
    import dataclasses

    from jaxqueens.drivers.count_setup import SWITCHES, CountSettings

    parser = argparse.ArgumentParser()
    count_cli.add_command(parser.add_subparsers(dest="command"))
    actions = {a.dest: a for a in parser._subparsers._group_actions[0].choices["count"]._actions}
    helped = [f for f in dataclasses.fields(CountSettings) if f.metadata.get("help")]
    assert tuple(f.name for f in helped) == SWITCHES
    for f in helped:
        action = actions[f.name]
        assert (action.help, action.default, action.nargs) == (f.metadata["help"], False, 0)
    assert parser.parse_args(["count", "8", "--plan"]).plan is True
