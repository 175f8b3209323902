"""An output folder owns its run: unfinished work is never overwritten, and one process writes.

- :func:`unfinished` lists the checkpoints of a folder whose run has not finished: a checkpoint
  (``checkpoint*.npz``, at any depth: ``anneal --method all`` keeps one per method) with no
  ``summary.json`` beside it written at the same time or later (every command writes its summary
  in its final write, after its last checkpoint; some remove the checkpoint then, some keep it).
  A command started into such a folder without ``--resume`` is refused
  (:func:`jaxqueens.cli.options.claim_out`): it would start again from nothing and overwrite it.
- :func:`acquire` takes the folder's lock file (:data:`LOCK`), created atomically (``O_EXCL``)
  with the owner's process id; a second writer is refused in one line. A lock whose process is
  gone (a killed run) is taken over. :func:`release_all` removes this process's locks (the
  command line calls it as the command ends; :mod:`atexit` too, as a backstop).
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import os
from pathlib import Path

from jaxqueens.errors import QueensError
from jaxqueens.io import checkpoint

LOCK = ".jaxqueens.lock"
"""The lock file inside a run's ``--out`` folder while a process writes there."""

SUMMARY = "summary.json"

_held: dict[Path, bool] = {}  # lock file -> whether this process made its folder


def unfinished(folder: str | Path) -> list[Path]:
    """The checkpoints in ``folder`` (any depth) whose run has not finished (none: [])."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    stem, suffix = Path(checkpoint.FILENAME).stem, Path(checkpoint.FILENAME).suffix
    left = []
    for ckpt in sorted(folder.rglob(f"{stem}*{suffix}")):
        summary = ckpt.parent / SUMMARY
        try:
            done = summary.stat().st_mtime_ns >= ckpt.stat().st_mtime_ns
        except OSError:  # no summary (or the checkpoint went away meanwhile)
            done = not ckpt.exists()
        if not done:
            left.append(ckpt)
    return left


def _alive(pid: int) -> bool:
    """Whether a process with this id runs on this machine."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except OSError as err:
        return err.errno == errno.EPERM  # it exists, owned by someone else
    return True


def _owner(lock: Path) -> int | None:
    """The process id written in a lock file (None: unreadable or not a number)."""
    try:
        text = lock.read_text(encoding="ascii").split()
        return int(text[0]) if text else None
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def acquire(folder: str | Path, option: str = "--out") -> Path:
    """Take ``folder``'s lock (making the folder if needed); the lock file.

    Raises:
      QueensError: another live process holds it (one line with its process id and the ways on).
    """
    folder = Path(folder)
    lock = (folder / LOCK).absolute()
    if lock in _held:  # this process holds it already (a sweep's setting in the same folder)
        return lock
    made = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    for _ in range(3):
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            pid = _owner(lock)
            if pid is not None and pid != os.getpid() and _alive(pid):
                if made:
                    with contextlib.suppress(OSError):
                        folder.rmdir()
                raise QueensError(
                    f"{option} {folder}: another jaxqueens process (pid {pid}) is writing there "
                    f"(lock {lock}); wait for it to end or give another folder (delete the lock "
                    "only if that process is gone)"
                ) from None
            with contextlib.suppress(FileNotFoundError):  # stale (its process is gone): take it
                lock.unlink()
            continue
        with os.fdopen(fd, "w", encoding="ascii") as f:
            f.write(f"{os.getpid()}\n")
        if not _held:
            atexit.register(release_all)
        _held[lock] = made
        return lock
    raise QueensError(
        f"{option} {folder}: could not take the lock {lock} (other processes keep taking it); "
        "give another folder"
    )


def release_all() -> None:
    """Remove this process's locks (a folder it made and left empty goes too)."""
    for lock, made in list(_held.items()):
        if _owner(lock) == os.getpid():
            with contextlib.suppress(OSError):
                lock.unlink()
        if made:
            with contextlib.suppress(OSError):  # only if empty: a refused run leaves nothing
                lock.parent.rmdir()
        del _held[lock]
