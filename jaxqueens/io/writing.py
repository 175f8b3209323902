"""The `--out` folder of a command that writes: checked before any work, owned, ended safely.

`prepare_out` checks the output path first (it can be written, its disk has room for the run).
A folder owns its run: `unfinished` lists the checkpoints of a run that has not finished (no
`summary.json` written at the same time or later), and a command started into such a folder
without `--resume` is refused; `acquire` takes the folder's lock file (`LOCK`, created atomically
with the owner's process id; a lock whose process is gone is taken over) and `release_all`
removes this process's locks; `earlier_run` names the outputs a finished earlier run left there:
a new run is refused unless given `--force`, and then `clear_earlier` removes them first.
`final_write`, part of the command's `ending`, defers signals while the summary, the `--out` files
and the report are written, removes the checkpoints `retire` names only after them, and says a
failed write in one line; `resume_advice` says how to continue a run (a `run` sweep sets it for
its settings: `resumed_by`). Only the `is_writer` process writes."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

from jaxqueens import _lazy, _process
from jaxqueens.errors import QueensError
from jaxqueens.io import atomic, checkpoint, interrupts, jsonl, report
from jaxqueens.io.interrupts import SafePoints
from jaxqueens.io.tables import SUMMARY
from jaxqueens.parallel import memory

gather = _lazy.load("jaxqueens.parallel.gather")  # JAX: imported at the first call of is_writer


@contextlib.contextmanager
def resumed_by(how: str) -> Iterator[None]:
    """Run a command inside the block as a part of another (a `run` sweep's setting).

    The messages that say how to continue an unfinished or interrupted run name `how` (a
    setting's folder is the sweep's, and its command's `--resume` would run that setting
    alone), and its final write is its whole `ending` (the sweep writes the report). `how` is
    the way to continue, e.g. `jaxqueens run CONFIG --resume`.
    """
    state = _process.commands
    before, state.resume_how = state.resume_how, how
    state.endings.append(None)
    try:
        yield
    finally:
        state.endings.pop()
        state.resume_how = before


def resume_advice(out) -> str:
    """How to continue an unfinished run of `--out` folder `out`: "the same command and
    --resume OUT", or what the enclosing sweep set (`resumed_by`)."""
    return _process.commands.resume_how or f"the same command and --resume {out}"


def is_writer() -> bool:
    """Whether this process writes the outputs: process 0 of a multi-process run, and a single
    process (a process that never loaded JAX is one: JAX is not imported to ask)."""
    return not _lazy.is_loaded("jax") or gather.is_writer()


MARGIN = 1 << 20  # bytes of free space beyond a command's estimate (summaries, tables, figures)


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist
        return False


def prepare_out(
    path, kind: str = "dir", *, option: str = "--out", inputs: Iterable = (), need: float = 0
) -> Path | None:
    """Check an output path before any work, so a run never ends in a write that must fail.

    The folder must be creatable and writable and its disk must have `need` plus `MARGIN`
    bytes free. Stale temporary files of a killed run are removed from the folder (`atomic`);
    nothing is created.
    `kind` "dir" is a folder (new or existing), never an existing file; "file" a file, never an
    existing folder nor one of the command's `inputs`; `need` is a rough estimate of the bytes
    the run writes, checkpoints included; `option` is the flag named in errors. Returns
    `Path(path)`, or None when none is given (None or "").

    Raises:
      QueensError: one line naming the option, the path and the fix.
    """
    if path is None or str(path) == "":
        return None
    target = Path(path)
    shown = f"{option} {path}"
    if kind == "dir" and target.exists() and not target.is_dir():
        raise QueensError(
            f"{shown}: is a file, not a folder; give a folder (new or existing) or "
            "move the file away"
        )
    if kind == "file":
        if target.is_dir():
            raise QueensError(f"{shown}: is a folder; give a file name")
        for source in inputs:
            if source is not None and _same_file(target, Path(source)):
                raise QueensError(f"{shown}: is the input file {source}; give another output name")
    folder = target if kind == "dir" else target.parent
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise QueensError(
            f"{shown}: {existing} is a file, so no folder can be made there; pick another path"
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        raise QueensError(
            f"{shown}: cannot write in {existing} (read-only or no permission); "
            "pick a writable folder"
        )
    try:
        free = shutil.disk_usage(existing).free
    except OSError:
        free = None
    if free is not None and free < need + MARGIN:
        raise QueensError(
            f"{shown}: only {memory.format_bytes(free)} free on the disk of {existing}, about "
            f"{memory.format_bytes(need + MARGIN)} needed; free some space or pick another folder"
        )
    if folder.is_dir():
        atomic.remove_stale_temps(folder)
    return target


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
            if pid is not None and pid != os.getpid() and atomic.alive(pid):
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


class _Ending:
    """One command's end: its safe region from the first `final_write` on (`safe`, entered on
    `stack`), and the checkpoints it has finished with (`retire`), removed after it."""

    def __init__(self) -> None:
        self.stack = contextlib.ExitStack()
        self.safe: SafePoints | None = None
        self.retired: list[Path] = []


def _current() -> _Ending | None:
    """The innermost running command's end (None: none, or a sweep's setting)."""
    return _process.commands.endings[-1] if _process.commands.endings else None


@contextlib.contextmanager
def ending(out) -> Iterator[None]:
    """One command's end, from its first `final_write` to the last.

    The command line closes a command's report in one, after the command's own. A signal
    anywhere in it waits for the end, and the checkpoints `retire` names are removed only
    then, when every output and the report are written. A second signal stops at once: each
    file is whole or absent, the checkpoint stays, and a line says how to resume. `out` is the
    command's `--out` folder (None: none).

    Raises:
      KeyboardInterrupt: after the block, when a first signal (SIGINT or SIGTERM) came during
        it (a line says the end was finished first); at once on a second one.
    """
    end = _Ending()
    _process.commands.endings.append(end)
    try:
        with end.stack:
            try:
                yield
            except KeyboardInterrupt:
                if end.safe is not None and out and is_writer():
                    print(
                        f"interrupted before the outputs in {out} were complete; the finished "
                        f"work is in its checkpoint: resume with {resume_advice(out)}"
                        if checkpoints(out)
                        else f"interrupted while writing {out}: each file there is whole or "
                        "absent; run the command again to write them all",
                        file=sys.stderr,
                    )
                raise
            for path in end.retired:
                path.unlink(missing_ok=True)
            if end.safe is not None and end.safe.requested:  # asked during the end: done first
                done = f"the files written to {out} are complete" if out and is_writer() else ""
                print(
                    f"{interrupts.signal_name()} during the final write: it was finished first "
                    f"({done or 'nothing lost'})",
                    file=sys.stderr,
                )
                end.safe.check()  # KeyboardInterrupt: the command exits as interrupted
    finally:
        _process.commands.endings.pop()


def retire(path) -> None:
    """Remove a checkpoint file once the command's outputs and report are written: at the end
    of `ending` (at once outside a command)."""
    end = _current()
    if end is None:
        Path(path).unlink(missing_ok=True)
    else:
        end.retired.append(Path(path))


@contextlib.contextmanager
def final_write(out) -> Iterator[None]:
    """A command's final write (summary lines, `--out` files), with signals deferred.

    It is part of the command's `ending` (its own, outside one): a first signal waits for
    every output and the report, a second keeps the checkpoint and prints the resume command.
    `out` is the command's `--out` folder (None: none).

    Raises:
      QueensError: a write failed (OSError: the disk filled up after `prepare_out`); one line
        that says how to resume or run again.
    """
    end = _current()
    if end is None:  # no command around it (a sweep's setting, a library caller): its own end
        with ending(out), final_write(out):
            yield
        return
    if end.safe is None:
        end.safe = end.stack.enter_context(SafePoints())
    try:
        yield
    except OSError as err:  # the disk filled up (or went read-only) after the preflight
        what = f"{err.strerror or err}" + (f": {err.filename}" if err.filename else "")
        keep = (
            f"the finished work is in its checkpoint: fix that and resume with {resume_advice(out)}"
            if is_writer() and checkpoints(out)
            else "fix that (free space, permissions) and run again"
        )
        raise QueensError(f"could not write the outputs to {out} ({what}); {keep}") from None
