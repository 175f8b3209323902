"""An output folder owns its run: unfinished work is never overwritten, and one process writes.

`unfinished` lists the checkpoints of a folder whose run has not finished (no `summary.json`
written at the same time or later); a command started into such a folder without `--resume` is
refused. `acquire` takes the folder's lock file (`LOCK`, created atomically with the owner's
process id; a lock whose process is gone is taken over) and `release_all` removes this process's
locks. `earlier_run` names the outputs a finished earlier run left in a folder: a new run there
is refused unless given `--force`, and then `clear_earlier` removes them first.
"""

from __future__ import annotations

import atexit
import contextlib
import os
from pathlib import Path
from typing import NamedTuple

from jaxqueens import _process
from jaxqueens.errors import QueensError
from jaxqueens.io import checkpoint, jsonl, report
from jaxqueens.io.atomic import alive
from jaxqueens.io.tables import SUMMARY

LOCK = ".jaxqueens.lock"  # inside a run's `--out` folder while a process writes there


def checkpoints(folder) -> list[Path]:
    """The checkpoint files in a run's output folder (any command's naming, any depth), sorted;
    [] for none or no folder (None, "")."""
    if not folder or not Path(folder).is_dir():
        return []
    name = Path(checkpoint.FILENAME)
    return sorted(Path(folder).rglob(f"{name.stem}*{name.suffix}"))


def unfinished(folder: str | Path) -> list[Path]:
    """The checkpoints in a run's output folder whose run has not finished (`checkpoints`
    without a `summary.json` written at the same time or later)."""
    left = []
    for ckpt in checkpoints(folder):
        summary = ckpt.parent / SUMMARY
        try:
            done = summary.stat().st_mtime_ns >= ckpt.stat().st_mtime_ns
        except OSError:  # no summary (or the checkpoint went away meanwhile)
            done = not ckpt.exists()
        if not done:
            left.append(ckpt)
    return left


def _owner(lock: Path) -> int | None:
    """The process id written in a lock file (None: unreadable or not a number)."""
    try:
        text = lock.read_text(encoding="ascii").split()
        return int(text[0]) if text else None
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def acquire(folder: str | Path, option: str = "--out") -> Path:
    """Take `folder`'s lock, making the folder if needed; returns the lock file's absolute
    path. `option` is the flag named in errors.

    Raises:
      QueensError: another live process holds it (one line with its process id and the ways on).
    """
    folder = Path(folder)
    lock = (folder / LOCK).absolute()
    if lock in _process.locks.held:  # held already (a sweep's setting in the same folder)
        return lock
    made = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    for _ in range(3):
        try:
            fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            pid = _owner(lock)
            if pid is not None and pid != os.getpid() and alive(pid):
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
        if not _process.locks.held:
            atexit.register(release_all)
        _process.locks.held[lock] = made
        return lock
    raise QueensError(
        f"{option} {folder}: could not take the lock {lock} (other processes keep taking it); "
        "give another folder"
    )


def release_all() -> None:
    """Remove this process's locks (a folder it made and left empty goes too)."""
    for lock, made in list(_process.locks.held.items()):
        if _owner(lock) == os.getpid():
            with contextlib.suppress(OSError):
                lock.unlink()
        if made:
            with contextlib.suppress(OSError):  # only if empty: a refused run leaves nothing
                lock.parent.rmdir()
        del _process.locks.held[lock]


class EarlierRun(NamedTuple):
    """The outputs a finished earlier run left in a folder."""

    folder: Path  #: the `--out` folder.
    command: str | None  #: the command that wrote them (None: unknown, no readable manifest).
    files: list[Path]  #: its files that are still there, the manifest and `report.html` included.
    listed: bool = False  #: a readable manifest listed them (else: the manifest and page only).


def earlier_run(folder: str | Path) -> EarlierRun | None:
    """The outputs of the finished run whose `manifest.json` (or `report.html`) `folder` holds:
    the files the manifest lists (paths inside `folder` only), the manifest and the page; None
    for a new or empty folder, or one holding neither file."""
    folder = Path(folder)
    manifest, page = folder / report.MANIFEST, folder / report.FILENAME
    if not folder.is_dir() or not (manifest.is_file() or page.is_file()):
        return None
    command, listed, read = None, [], False
    try:
        doc = jsonl.loads(manifest.read_text(encoding="utf-8"))
        command = doc.get("command") if isinstance(doc.get("command"), str) else None
        listed = [f["path"] for f in doc["files"] if isinstance(f.get("path"), str)]
        read = True
    except (OSError, ValueError, AttributeError, TypeError, KeyError):  # none, or not ours
        pass
    root = folder.resolve()
    files = []
    for rel in [*listed, report.MANIFEST, report.FILENAME]:
        path = folder / rel
        inside = path.resolve().is_relative_to(root) and path.resolve() != root
        if inside and path.is_file() and path not in files:
            files.append(path)
    return EarlierRun(folder, command, files, read)


def refuse_earlier(found: EarlierRun, option: str = "--out") -> QueensError:
    """The one-line refusal, for the caller to raise, of a folder that holds an earlier run's
    outputs (`earlier_run`); `option` is the flag named in it."""
    what = f"an earlier `{found.command}` run" if found.command else "an earlier run"
    count = f"{len(found.files)} file{'' if len(found.files) == 1 else 's'}"
    if found.listed:
        which = f"{count}, listed in {report.MANIFEST}"
    elif found.folder / report.MANIFEST in found.files:
        which = f"{count}: its {report.MANIFEST} cannot be read, so only it and its page are known"
    else:
        which = f"{', '.join(p.name for p in found.files)}, with no {report.MANIFEST}"
    return QueensError(
        f"{option} {found.folder} holds the outputs of {what} ({which}); give --force to "
        "replace them, or give a new folder"
    )


def clear_earlier(found: EarlierRun) -> None:
    """Remove an earlier run's files (`earlier_run`) and the subfolders they leave empty; other
    files in the folder are left alone."""
    folders = set()
    for path in found.files:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        folders.add(path.parent)
    for sub in sorted(folders - {found.folder}, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):  # only if empty
            sub.rmdir()
