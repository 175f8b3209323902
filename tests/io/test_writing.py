"""io.writing: the final write of every command (its outputs, then its manifest and report, then
the checkpoint's removal) with signals deferred, the advice on how to continue a run, unfinished
runs found in a folder, the folder's lock (one writer) and an earlier run's outputs."""

import json
import os
import signal
import subprocess
import sys

import pytest

from jaxqueens.cli.main import main
from jaxqueens.drivers import chains as chain_driver
from jaxqueens.errors import QueensError
from jaxqueens.io import report, writing
from jaxqueens.io import schema as run_schema


def _signal_after_the_first_chunk(monkeypatch, module):
    """``module.run_chunks`` with SIGINT raised as its first chunk returns: the loop saves its
    checkpoint and stops at the next safe point."""
    real = module.run_chunks

    def run_chunks(chunk, **kwargs):
        def first(*args):
            tick = chunk(*args)
            signal.raise_signal(signal.SIGINT)
            return tick

        return real(first, **kwargs)

    monkeypatch.setattr(module, "run_chunks", run_chunks)


def _signal_in(monkeypatch, module, name, second=False):
    """``module.name`` receives SIGINT as it starts (``second``: a second one, which raises)."""
    real = getattr(module, name)

    def writer(*args, **kwargs):
        signal.raise_signal(signal.SIGINT)
        if second:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, writer)


SOLVE = ["solve", "-n", "6", "--chains", "3", "--quiet"]


@pytest.fixture
def interrupted_solve(tmp_path, monkeypatch, capsys):
    """An ``--out`` folder holding the checkpoint of an interrupted solve."""
    out = tmp_path / "out"
    with monkeypatch.context() as m:
        _signal_after_the_first_chunk(m, chain_driver)
        assert main([*SOLVE, "--out", str(out)]) == 130
    assert (out / "checkpoint.npz").exists()
    capsys.readouterr()
    return out


def test_signal_during_the_final_write_of_a_resumed_run_writes_the_report_first(
    interrupted_solve, monkeypatch, capsys
):
    """The resumed run's first signal in its final write lets the write finish, the manifest and
    the report included: only then does the checkpoint go, and one line says so."""
    out = interrupted_solve
    _signal_in(monkeypatch, run_schema, "write_csv")
    assert main([*SOLVE, "--resume", str(out)]) == 130
    err = capsys.readouterr().err
    assert (out / "manifest.json").exists() and (out / "report.html").exists()
    assert not (out / "checkpoint.npz").exists()
    assert "finished first" in err and "run the command again" not in err, err
    listed = {f["path"] for f in json.loads((out / "manifest.json").read_text())["files"]}
    assert {"runs.csv", "summary.json", "solutions.npy"} <= listed


def test_second_signal_while_the_report_is_written_keeps_a_checkpoint_that_resumes(
    interrupted_solve, monkeypatch, capsys
):
    """The report is part of the final write: two signals there stop it at once, and the
    checkpoint (which went with the outputs before) stays for the resume command printed."""
    out = interrupted_solve
    with monkeypatch.context() as m:
        _signal_in(m, report, "write_report", second=True)
        assert main([*SOLVE, "--resume", str(out)]) == 130
    err = capsys.readouterr().err
    assert (out / "checkpoint.npz").exists() and not (out / "report.html").exists()
    assert f"resume with the same command and --resume {out}" in err
    assert "finished first" not in err and "run the command again" not in err, err
    assert main([*SOLVE, "--resume", str(out)]) == 0
    assert (out / "report.html").exists() and not (out / "checkpoint.npz").exists()


def test_signal_during_evolves_final_write_writes_the_report_and_keeps_the_advice(
    tmp_path, monkeypatch, capsys
):
    from jaxqueens.drivers import ga
    from jaxqueens.io import ga as ga_io

    argv, out = ["evolve", "-n", "6", "--pop", "8", "--generations", "2", "--quiet"], tmp_path
    with monkeypatch.context() as m:
        _signal_after_the_first_chunk(m, ga)
        assert main([*argv, "--out", str(out)]) == 130
    assert (out / "checkpoint.npz").exists()
    with monkeypatch.context() as m:
        _signal_in(m, ga_io, "write_outputs")
        assert main([*argv, "--resume", str(out)]) == 130
    err = capsys.readouterr().err
    assert (out / "report.html").exists() and not (out / "checkpoint.npz").exists()
    assert "finished first" in err


def _touch(path, ns):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x")
    os.utime(path, ns=(ns, ns))


def test_a_checkpoint_without_a_later_summary_is_unfinished(tmp_path):
    assert writing.unfinished(tmp_path / "absent") == []
    _touch(tmp_path / "checkpoint.npz", 2_000_000_000)
    assert writing.unfinished(tmp_path) == [tmp_path / "checkpoint.npz"]
    _touch(tmp_path / "summary.json", 1_000_000_000)  # older: the summary of an earlier run
    assert writing.unfinished(tmp_path) == [tmp_path / "checkpoint.npz"]
    _touch(tmp_path / "summary.json", 2_000_000_000)  # written with or after it: finished
    assert writing.unfinished(tmp_path) == []
    _touch(tmp_path / "ta" / "checkpoint.npz", 3)  # anneal's per-method folders, estimate's names
    _touch(tmp_path / "checkpoint-n12.npz", 3_000_000_000)
    assert writing.unfinished(tmp_path) == [
        tmp_path / "checkpoint-n12.npz",
        tmp_path / "ta" / "checkpoint.npz",
    ]


@pytest.fixture
def live_pid():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield proc.pid
    proc.kill()
    proc.wait()


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_the_lock_holds_the_pid_and_goes_at_release(tmp_path):
    out = tmp_path / "new" / "out"
    lock = writing.acquire(out)
    assert lock == (out / writing.LOCK).absolute()
    assert lock.read_text().split() == [str(os.getpid())]
    assert writing.acquire(out) == lock  # this process again: the same lock
    writing.release_all()
    assert not lock.exists() and not out.exists()  # a folder it made and left empty goes too


def test_a_second_writer_is_refused(tmp_path, live_pid):
    (tmp_path / writing.LOCK).write_text(f"{live_pid}\n")
    with pytest.raises(QueensError, match=f"another jaxqueens process \\(pid {live_pid}\\)"):
        writing.acquire(tmp_path)
    assert (tmp_path / writing.LOCK).read_text() == f"{live_pid}\n"  # left alone


@pytest.mark.parametrize("content", ["dead", "", "garbage"])
def test_a_stale_lock_is_taken_over(tmp_path, content):
    text = f"{_dead_pid()}\n" if content == "dead" else content
    (tmp_path / writing.LOCK).write_text(text)
    lock = writing.acquire(tmp_path)
    assert lock.read_text().split() == [str(os.getpid())]
    writing.release_all()
    assert not lock.exists() and tmp_path.exists()


def test_earlier_run_lists_only_files_inside_its_folder(tmp_path):
    out = tmp_path / "out"
    (out / "sub").mkdir(parents=True)
    (out / "sub" / "a.csv").write_text("x")
    (tmp_path / "outside.txt").write_text("x")
    assert writing.earlier_run(out) is None  # files, but no finished run's manifest or page
    doc = {"command": "stats", "files": [{"path": "sub/a.csv"}, {"path": "../outside.txt"}]}
    (out / report.MANIFEST).write_text(json.dumps(doc))
    found = writing.earlier_run(out)
    assert found.command == "stats"
    assert found.files == [out / "sub" / "a.csv", out / report.MANIFEST]
    writing.clear_earlier(found)
    assert not (out / "sub").exists() and out.is_dir() and (tmp_path / "outside.txt").exists()
    # a page without a (readable) manifest: the page alone is the earlier run's
    (out / report.FILENAME).write_text("<html>")
    (out / report.MANIFEST).write_text("{not json")
    found = writing.earlier_run(out)
    assert found.command is None and set(found.files) == {
        out / report.FILENAME,
        out / report.MANIFEST,
    }


def test_manifest_with_repeated_key_is_not_read_as_a_runs_list(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.csv").write_text("x")
    (out / "b.csv").write_text("x")
    (out / report.MANIFEST).write_text(
        '{"command": "stats", "files": [{"path": "a.csv"}], "files": [{"path": "b.csv"}]}'
    )
    found = writing.earlier_run(out)
    assert found.command is None and found.files == [out / report.MANIFEST]


@pytest.mark.parametrize("manifest", [None, "{bad json", '{"command": "count"}'])
def test_earlier_run_without_a_readable_manifest_is_not_said_to_be_listed_in_it(tmp_path, manifest):
    """A folder holding only report.html, or a manifest that cannot be read, said "(1 files,
    listed in manifest.json)"."""
    (tmp_path / report.FILENAME).write_text("<html>")
    if manifest is not None:
        (tmp_path / report.MANIFEST).write_text(manifest)
    message = str(writing.refuse_earlier(writing.earlier_run(tmp_path)))
    assert "listed in" not in message and "1 files" not in message, message
    assert (report.FILENAME if manifest is None else "cannot be read") in message
    assert "--force" in message and message.count("\n") == 0


def test_earlier_run_with_a_readable_manifest_counts_its_files(tmp_path):
    (tmp_path / "runs.csv").write_text("x")
    (tmp_path / report.MANIFEST).write_text('{"command": "solve", "files": [{"path": "runs.csv"}]}')
    message = str(writing.refuse_earlier(writing.earlier_run(tmp_path)))
    assert "earlier `solve` run (2 files, listed in manifest.json)" in message, message
