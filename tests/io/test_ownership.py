"""io.ownership: unfinished runs found in a folder, and the folder's lock (one writer)."""

import json
import os
import subprocess
import sys

import pytest

from jaxqueens.errors import QueensError
from jaxqueens.io import ownership


def _touch(path, ns):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x")
    os.utime(path, ns=(ns, ns))


def test_a_checkpoint_without_a_later_summary_is_unfinished(tmp_path):
    assert ownership.unfinished(tmp_path / "absent") == []
    _touch(tmp_path / "checkpoint.npz", 2_000_000_000)
    assert ownership.unfinished(tmp_path) == [tmp_path / "checkpoint.npz"]
    _touch(tmp_path / "summary.json", 1_000_000_000)  # older: the summary of an earlier run
    assert ownership.unfinished(tmp_path) == [tmp_path / "checkpoint.npz"]
    _touch(tmp_path / "summary.json", 2_000_000_000)  # written with or after it: finished
    assert ownership.unfinished(tmp_path) == []
    _touch(tmp_path / "ta" / "checkpoint.npz", 3)  # anneal's per-method folders, estimate's names
    _touch(tmp_path / "checkpoint-n12.npz", 3_000_000_000)
    assert ownership.unfinished(tmp_path) == [
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
    lock = ownership.acquire(out)
    assert lock == (out / ownership.LOCK).absolute()
    assert lock.read_text().split() == [str(os.getpid())]
    assert ownership.acquire(out) == lock  # this process again: the same lock
    ownership.release_all()
    assert not lock.exists() and not out.exists()  # a folder it made and left empty goes too


def test_a_second_writer_is_refused(tmp_path, live_pid):
    (tmp_path / ownership.LOCK).write_text(f"{live_pid}\n")
    with pytest.raises(QueensError, match=f"another jaxqueens process \\(pid {live_pid}\\)"):
        ownership.acquire(tmp_path)
    assert (tmp_path / ownership.LOCK).read_text() == f"{live_pid}\n"  # left alone


@pytest.mark.parametrize("content", ["dead", "", "garbage"])
def test_a_stale_lock_is_taken_over(tmp_path, content):
    text = f"{_dead_pid()}\n" if content == "dead" else content
    (tmp_path / ownership.LOCK).write_text(text)
    lock = ownership.acquire(tmp_path)
    assert lock.read_text().split() == [str(os.getpid())]
    ownership.release_all()
    assert not lock.exists() and tmp_path.exists()


def test_earlier_run_lists_only_files_inside_its_folder(tmp_path):
    from jaxqueens.io import report

    out = tmp_path / "out"
    (out / "sub").mkdir(parents=True)
    (out / "sub" / "a.csv").write_text("x")
    (tmp_path / "outside.txt").write_text("x")
    assert ownership.earlier_run(out) is None  # files, but no finished run's manifest or page
    doc = {"command": "stats", "files": [{"path": "sub/a.csv"}, {"path": "../outside.txt"}]}
    (out / report.MANIFEST).write_text(json.dumps(doc))
    found = ownership.earlier_run(out)
    assert found.command == "stats"
    assert found.files == [out / "sub" / "a.csv", out / report.MANIFEST]
    ownership.clear_earlier(found)
    assert not (out / "sub").exists() and out.is_dir() and (tmp_path / "outside.txt").exists()
    # a page without a (readable) manifest: the page alone is the earlier run's
    (out / report.FILENAME).write_text("<html>")
    (out / report.MANIFEST).write_text("{not json")
    found = ownership.earlier_run(out)
    assert found.command is None and set(found.files) == {
        out / report.FILENAME,
        out / report.MANIFEST,
    }


def test_manifest_with_repeated_key_is_not_read_as_a_runs_list(tmp_path):
    from jaxqueens.io import report

    out = tmp_path / "out"
    out.mkdir()
    (out / "a.csv").write_text("x")
    (out / "b.csv").write_text("x")
    (out / report.MANIFEST).write_text(
        '{"command": "stats", "files": [{"path": "a.csv"}], "files": [{"path": "b.csv"}]}'
    )
    found = ownership.earlier_run(out)
    assert found.command is None and found.files == [out / report.MANIFEST]


@pytest.mark.parametrize("manifest", [None, "{bad json", '{"command": "count"}'])
def test_earlier_run_without_a_readable_manifest_is_not_said_to_be_listed_in_it(tmp_path, manifest):
    """A folder holding only report.html, or a manifest that cannot be read, said "(1 files,
    listed in manifest.json)"."""
    from jaxqueens.io import report

    (tmp_path / report.FILENAME).write_text("<html>")
    if manifest is not None:
        (tmp_path / report.MANIFEST).write_text(manifest)
    message = str(ownership.refuse_earlier(ownership.earlier_run(tmp_path)))
    assert "listed in" not in message and "1 files" not in message, message
    assert (report.FILENAME if manifest is None else "cannot be read") in message
    assert "--force" in message and message.count("\n") == 0


def test_earlier_run_with_a_readable_manifest_counts_its_files(tmp_path):
    from jaxqueens.io import report

    (tmp_path / "runs.csv").write_text("x")
    (tmp_path / report.MANIFEST).write_text('{"command": "solve", "files": [{"path": "runs.csv"}]}')
    message = str(ownership.refuse_earlier(ownership.earlier_run(tmp_path)))
    assert "earlier `solve` run (2 files, listed in manifest.json)" in message, message
