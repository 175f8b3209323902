"""Atomic file writes: write to a temporary file beside the target, then rename.

A reader (or a crash) never sees a half-written result file: `os.replace` is
atomic on POSIX and Windows when source and target share a directory.

- The temporary file is removed on every failure (an error, Ctrl-C, a failed rename).
- A process killed mid-write (``kill -9``) cannot clean up; its temporary file,
  ``.NAME.<host>-<pid>.XXXXXXXX.tmp``, is removed by the next write into that folder once it is
  stale: its process is gone (same machine) or it has not been touched for
  :data:`STALE_SECONDS`. Only files of this pattern are ever removed.
- Written files get the mode the umask allows (``0o666 & ~umask``), as ``open()`` gives, not
  ``mkstemp``'s 0600, also when they replace an existing file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import socket
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

STALE_SECONDS = 3600.0
"""A temporary file of ours untouched this long is stale whoever wrote it (a live write keeps
touching its file)."""

_HOST = hashlib.sha1(socket.gethostname().encode()).hexdigest()[:8]
_OURS = re.compile(r"^\..+\.(?P<host>[0-9a-f]{8})-(?P<pid>\d+)\.[a-z0-9_]{8}\.tmp$")
_UNTAGGED = re.compile(r"^\..+\.(?:npy|npz|csv|json|jsonl|png|txt)\.[a-z0-9_]{8}\.tmp$")
"""Written by versions before the tag: ``.NAME.XXXXXXXX.tmp`` for our own kinds of file only."""
_swept: set[str] = set()  # folders already swept by this process


def _umask() -> int:
    """The process umask, read without changing it where the OS allows."""
    try:
        with open("/proc/self/status", encoding="latin-1") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _alive(pid: int) -> bool:
    if pid == os.getpid() or os.name == "nt":  # on Windows os.kill would terminate it
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
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
    return m is not None and m["host"] == _HOST and not _alive(int(m["pid"]))


def remove_stale_temps(folder: str | os.PathLike[str]) -> list[Path]:
    """Remove the stale temporary files of our own pattern in ``folder`` (see the module doc);
    returns what was removed. Never raises: a folder that cannot be listed is left alone."""
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
    """Yield a temporary path beside `path`; rename it onto `path` if the block succeeds.

    Write through an open file object (``np.save(f, ...)``), not the bare
    temporary name: some writers append their own extension to a name.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    folder = str(target.parent.resolve())
    if folder not in _swept:
        _swept.add(folder)
        remove_stale_temps(folder)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{target.name}.{_HOST}-{os.getpid()}.", suffix=".tmp", dir=target.parent
    )
    tmp_path = Path(tmp)
    try:
        os.close(fd)
        os.chmod(tmp_path, 0o666 & ~_umask())
        yield tmp_path
        os.replace(tmp_path, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp_path.unlink()
        raise


def write_text(path: str | os.PathLike, text: str) -> None:
    """Write `text` to `path` atomically (UTF-8)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write `data` to `path` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
