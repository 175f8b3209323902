"""io.atomic: a write lands whole or leaves nothing behind, with the mode the umask allows."""

import errno
import os
import stat
import subprocess
import sys
import textwrap
import time

import pytest

from jaxqueens.io import atomic
from jaxqueens.io.atomic import atomic_path, write_bytes, write_text


def _temps(folder):
    return sorted(
        p.name for p in folder.iterdir() if p.name.startswith(".") and p.name.endswith(".tmp")
    )


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def umask():
    """Set the process umask for one test (restored after)."""
    saved = []

    def set_mask(mask):
        saved.append(os.umask(mask))

    yield set_mask
    if saved:
        os.umask(saved[0])


def test_write_lands_whole(tmp_path):
    write_text(tmp_path / "a" / "x.txt", "hello\n")
    assert (tmp_path / "a" / "x.txt").read_text() == "hello\n"
    assert _temps(tmp_path / "a") == []


@pytest.mark.parametrize(
    "failure",
    [
        OSError(errno.ENOSPC, "No space left on device"),
        KeyboardInterrupt(),
        RuntimeError("writer bug"),
    ],
)
def test_failed_writes_leave_no_temporary_file_and_keep_the_old_target(tmp_path, failure):
    target = tmp_path / "x.txt"
    target.write_text("old\n")
    with pytest.raises(type(failure)), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise failure
    assert target.read_text() == "old\n"
    assert _temps(tmp_path) == []


def test_a_failed_rename_leaves_no_temporary_file(tmp_path, monkeypatch):
    def refused(src, dst):
        raise OSError(errno.EXDEV, "Invalid cross-device link", src)

    monkeypatch.setattr(os, "replace", refused)
    with pytest.raises(OSError):
        write_bytes(tmp_path / "x.txt", b"data")
    assert _temps(tmp_path) == []


def test_writing_a_board_onto_a_folder_names_the_folder_not_a_temporary_file(tmp_path):
    """``write_board("adir", ...)`` raised IsADirectoryError naming ``.adir.<...>.tmp``."""
    import numpy as np

    from jaxqueens.errors import QueensError
    from jaxqueens.io import boards

    (tmp_path / "adir").mkdir()
    with pytest.raises(QueensError) as err:
        boards.write_board(tmp_path / "adir", np.array([1, 3, 0, 2]))
    assert (
        str(err.value)
        == f"{tmp_path / 'adir'}: is a folder; give a file name (or a path inside it)"
    )
    assert _temps(tmp_path) == [] and list((tmp_path / "adir").iterdir()) == []


KILLED_WRITER = textwrap.dedent("""
    import sys, time
    from jaxqueens.io.atomic import atomic_path
    with atomic_path(sys.argv[1]) as tmp, open(tmp, "wb") as f:
        f.write(b"x" * 100_000)
        f.flush()
        print("writing", flush=True)
        time.sleep(60)
""")


def test_defect_14_temporary_files_of_a_killed_writer_are_removed_by_the_next_write(tmp_path):
    """kill -9 in the middle of a write leaves `.NAME.*.tmp`; the next write into that folder
    removes it (and only files of our own pattern)."""
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(out / "solutions.npy")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout.readline().strip() == "writing"
    finally:
        proc.kill()  # SIGKILL: no cleanup can run in the writer
        proc.wait()
    left = _temps(out)
    assert len(left) == 1 and left[0].startswith(".solutions.npy.")
    (out / ".notes.tmp").write_text("the user's own file\n")  # not our pattern: kept
    (out / "keep.tmp").write_text("also the user's\n")
    write_text(out / "summary.json", "{}\n")
    assert _temps(out) == [".notes.tmp"]
    assert (out / "keep.tmp").exists() and not (out / "solutions.npy").exists()


def test_a_live_writers_temporary_file_is_left_alone(tmp_path):
    """A temporary file of a process that is still running (this one) is not stale."""
    with atomic_path(tmp_path / "big.npy") as tmp:
        tmp.write_bytes(b"partial")
        atomic.remove_stale_temps(tmp_path)
        write_text(tmp_path / "other.json", "{}\n")
        assert tmp.exists()
    assert (tmp_path / "big.npy").read_bytes() == b"partial"


def test_old_temporary_files_of_our_pattern_are_stale_whoever_wrote_them(tmp_path):
    """Untagged (older versions) or another machine's: stale once untouched for an hour."""
    old = tmp_path / ".runs.csv.k3j_x9q2.tmp"
    other_host = tmp_path / ".runs.csv.0123abcd-77.k3j_x9q2.tmp"
    fresh = tmp_path / ".summary.json.0123abcd-78.a1b2c3d4.tmp"
    users = tmp_path / ".notes.k3j_x9q2.tmp"  # not a kind of file we write: never ours
    for p in (old, other_host, fresh, users):
        p.write_text("x")
    hours_ago = time.time() - 2 * 3600
    for p in (old, other_host, users):
        os.utime(p, (hours_ago, hours_ago))
    atomic.remove_stale_temps(tmp_path)
    assert _temps(tmp_path) == sorted([fresh.name, users.name])


@pytest.mark.parametrize("mask, want", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_defect_15_written_files_get_the_mode_the_umask_allows(tmp_path, umask, mask, want):
    umask(mask)
    write_text(tmp_path / "new.txt", "x\n")
    assert _mode(tmp_path / "new.txt") == want
    replaced = tmp_path / "old.txt"
    replaced.write_text("old\n")
    os.chmod(replaced, 0o644)
    write_text(replaced, "new\n")  # replacing a 0644 file: the umask's mode, never 0600
    assert _mode(replaced) == want and replaced.read_text() == "new\n"


def test_a_stream_grows_beside_its_name_survives_the_stale_sweep_and_resumes(tmp_path):
    from jaxqueens.io.atomic import Stream, partial_path, remove_stale_temps

    target = tmp_path / "rows.csv"
    s = Stream(target)
    s.write("a\n")
    mark = s.sync()
    s.write(b"lost\n")
    s.close()
    assert not target.exists() and partial_path(target).name == ".rows.csv.partial"
    assert remove_stale_temps(tmp_path) == [] and partial_path(target).exists()
    with pytest.raises(FileNotFoundError):
        Stream(target, resume_at=mark + 100)
    again = Stream(target, resume_at=mark)
    again.write("b\n")
    assert again.commit() == target and target.read_text() == "a\nb\n"
    assert not partial_path(target).exists()
    gone = Stream(tmp_path / "x.csv")
    gone.discard()
    assert not list(tmp_path.glob(".x.csv*"))


def test_recording_keeps_what_was_written_inside_it(tmp_path, monkeypatch):
    a, b, big = tmp_path / "a.txt", tmp_path / "b.bin", tmp_path / "big.bin"
    atomic.write_text(a, "before")
    assert atomic.recorded(a) is None  # nothing is kept outside a recording
    monkeypatch.setattr(atomic, "RECORD_MAX_BYTES", 8)
    with atomic.recording() as kept:
        atomic.write_text(a, "first")
        atomic.write_text(a, "second")  # the last write wins
        atomic.write_bytes(b, b"\x00\x01")
        atomic.write_bytes(big, b"x" * 9)  # too large to keep: read from the file if needed
        assert atomic.recorded(a) == b"second" and atomic.recorded(b) == b"\x00\x01"
        assert atomic.recorded(big) is None and set(kept) == {a.resolve(), b.resolve()}
    assert atomic.recorded(a) is None and a.read_text() == "second"
