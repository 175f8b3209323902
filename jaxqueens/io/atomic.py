"""Atomic file writes: write to a temporary file beside the target, then rename.

A reader (or a crash) never sees a half-written result file: `os.replace` is atomic on POSIX and
Windows when source and target share a directory.

- The temporary file is removed on every failure (an error, Ctrl-C, a failed rename).
- A process killed mid-write (`kill -9`) cannot clean up; its temporary file,
  `.NAME.<host>-<pid>.XXXXXXXX.tmp`, is removed by the next write into that folder once it is
  stale: its process is gone (same machine) or it has not been touched for `STALE_SECONDS`.
  Only files of this pattern are ever removed.
- Written files get the mode the umask allows (`0o666 & ~umask`), as `open()` gives, not
  `mkstemp`'s 0600, also when they replace an existing file.
- Inside `recording`, what `write_text` and `write_bytes` write is also kept in memory, so that
  the run's report is built from it rather than from the files read back (`recorded`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import socket
import tempfile
import time
import typing
from collections.abc import Iterator
from pathlib import Path

from jaxqueens import _process
from jaxqueens.errors import QueensError

STALE_SECONDS = 3600.0  # a live write keeps touching its file: older is stale, whoever wrote it

_HOST = hashlib.sha1(socket.gethostname().encode()).hexdigest()[:8]
_OURS = re.compile(r"^\..+\.(?P<host>[0-9a-f]{8})-(?P<pid>\d+)\.[a-z0-9_]{8}\.tmp$")
# temporary files without the host tag, `.NAME.XXXXXXXX.tmp`: our own kinds of file only
_UNTAGGED = re.compile(r"^\..+\.(?:npy|npz|csv|json|jsonl|png|txt)\.[a-z0-9_]{8}\.tmp$")
RECORD_MAX_BYTES = 16 << 20  # a larger file is not kept by `recording` (the report reads it)


def _as_open_gives(path: Path) -> None:
    """Give `path` the mode `open()` gives a new file, `0o666 & ~umask` (the umask read without
    changing it where the OS allows)."""
    mask = None
    try:
        with open("/proc/self/status", encoding="latin-1") as f:
            mask = next((int(x.split()[1], 8) for x in f if x.startswith("Umask:")), None)
    except (OSError, ValueError, IndexError):
        pass
    if mask is None:
        mask = os.umask(0o022)
        os.umask(mask)
    os.chmod(path, 0o666 & ~mask)


def alive(pid: int) -> bool:
    """Whether a process with this id runs on this machine (this process, and any on Windows,
    where `os.kill` would end it, count as alive; so does one not ours to judge)."""
    if pid <= 0:
        return False
    if pid == os.getpid() or os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OverflowError, OSError):
        return True  # someone else's live process (or not ours to judge)
    return True


def _stale(path: Path, now: float) -> bool:
    m = _OURS.match(path.name)
    if m is None and not _UNTAGGED.match(path.name):
        return False
    try:
        age = now - path.lstat().st_mtime
    except OSError:
        return False
    if age >= STALE_SECONDS:
        return True
    return m is not None and m["host"] == _HOST and not alive(int(m["pid"]))


def remove_stale_temps(folder: str | os.PathLike[str]) -> list[Path]:
    """Remove the stale temporary files of our own pattern in `folder` (see the module doc);
    returns the paths removed. Never raises: a folder that cannot be listed is left alone."""
    removed: list[Path] = []
    now = time.time()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        path = Path(entry.path)
        if entry.name.startswith(".") and entry.name.endswith(".tmp") and _stale(path, now):
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
    return removed


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path beside `path` (its folders made), renamed onto `path` if the block
    succeeds, removed if it fails.

    Write through an open file object (`np.save(f, ...)`), not the bare
    temporary name: some writers append their own extension to a name.

    Raises:
      QueensError: `path` is a folder (one line naming it, never the temporary file).
    """
    target = Path(path)
    folder_given = QueensError(f"{target}: is a folder; give a file name (or a path inside it)")
    if target.is_dir():  # never a temporary file named in the error of the rename below
        raise folder_given
    target.parent.mkdir(parents=True, exist_ok=True)
    folder = str(target.parent.resolve())
    if folder not in _process.writes.swept:
        _process.writes.swept.add(folder)
        remove_stale_temps(folder)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{target.name}.{_HOST}-{os.getpid()}.", suffix=".tmp", dir=target.parent
    )
    tmp_path = Path(tmp)
    try:
        os.close(fd)
        _as_open_gives(tmp_path)
        yield tmp_path
        try:
            os.replace(tmp_path, target)
        except IsADirectoryError:  # made a folder while the file was written
            raise folder_given from None
    except BaseException:
        with contextlib.suppress(OSError):
            tmp_path.unlink()
        raise


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write `text` to `path` atomically, as UTF-8."""
    write_bytes(path, text.encode("utf-8"))


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write `data` to `path` atomically (and keep it in an open `recording`)."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    recordings = _process.writes.recordings
    if recordings and len(data) <= RECORD_MAX_BYTES:
        recordings[-1][Path(path).resolve()] = data


@contextlib.contextmanager
def recording() -> Iterator[dict[Path, bytes]]:
    """Keep, for the block, the bytes of every file `write_text`/`write_bytes` write: yields
    them by resolved path (files up to `RECORD_MAX_BYTES`; the last write of a path wins)."""
    kept: dict[Path, bytes] = {}
    _process.writes.recordings.append(kept)
    try:
        yield kept
    finally:
        _process.writes.recordings.remove(kept)


def recorded(path: str | os.PathLike) -> bytes | None:
    """The bytes an open `recording` kept for `path` (None when it was not written, or kept,
    inside one)."""
    where = Path(path).resolve()
    for kept in reversed(_process.writes.recordings):
        if where in kept:
            return kept[where]
    return None


def partial_path(path: str | os.PathLike) -> Path:
    """Where `Stream` grows `path` until `Stream.commit`: `.NAME.partial` beside it (never swept
    as stale: a checkpoint may point into it)."""
    target = Path(path)
    return target.with_name(f".{target.name}.partial")


class Stream:
    """A file written in parts over a long run, whole or absent under its final name.

    The parts go to `partial_path` (appended, never held in memory); `sync` makes
    what was written durable and returns its length, which a checkpoint records beside the state
    it belongs to; a resumed run reopens the partial file at that length (`resume_at`: bytes
    beyond it, written after the checkpoint, are cut off), so the file and the checkpoint agree
    across an interrupt. `commit` renames the whole file onto its name (`os.replace`:
    atomic); `discard` removes the partial file. `resume_at` is the length a checkpoint recorded
    (None: start a new partial file).

    Raises:
      FileNotFoundError: `resume_at` is given but the partial file is missing or shorter
        (the caller turns it into a one-line error).
    """

    def __init__(self, path: str | os.PathLike, resume_at: int | None = None):
        self.path = Path(path)
        self.partial = partial_path(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._f: typing.BinaryIO
        if resume_at is None:
            self._f = open(self.partial, "wb")  # noqa: SIM115 (closed by commit/discard/close)
            _as_open_gives(self.partial)
        else:
            size = self.partial.stat().st_size if self.partial.exists() else -1
            if size < resume_at:
                raise FileNotFoundError(
                    f"{self.partial} holds {max(size, 0):,} bytes, the checkpoint {resume_at:,}"
                )
            self._f = open(self.partial, "r+b")  # noqa: SIM115
            self._f.truncate(resume_at)
            self._f.seek(resume_at)

    def write(self, data: bytes | str) -> None:
        """Append `data` (a str as UTF-8)."""
        self._f.write(data.encode() if isinstance(data, str) else data)

    def sync(self) -> int:
        """Flush and fsync what was written; returns the file's length in bytes."""
        self._f.flush()
        os.fsync(self._f.fileno())
        return self._f.tell()

    def commit(self) -> Path:
        """Make the partial file durable, then rename it onto its final name (atomic); returns
        that name."""
        self.sync()
        self._f.close()
        os.replace(self.partial, self.path)
        return self.path

    def close(self) -> None:
        """Close the partial file and keep it (an interrupted run: a checkpoint points into it)."""
        if not self._f.closed:
            self._f.close()

    def discard(self) -> None:
        """Close and remove the partial file."""
        self.close()
        with contextlib.suppress(OSError):
            self.partial.unlink()
