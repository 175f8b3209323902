"""What every command that writes does before any work and at its end: the output preflight
(`prepare_out`: the path can be written and its disk has room for what the run will write)
and the final write (`final_write`, part of the command's `ending`: signals deferred
while the summary, the `--out` files and the report are written, the checkpoint removed only
after them (`retire`), a failed write said in one line); the advice on how to continue a run
(`resume_advice`, which a `run` sweep sets for its settings: `resumed_by`); and
`is_writer`: only process 0 of a multi-process run writes."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from jaxqueens import _lazy, _process
from jaxqueens.errors import QueensError
from jaxqueens.io import atomic, checkpoint, interrupts
from jaxqueens.io.interrupts import SafePoints
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
    """Whether this process writes the outputs: process 0 of a multi-process run (and a single
    process). Imports JAX: commands call it after their run, when JAX is loaded anyway."""
    return gather.is_writer()


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

    Args:
      path (str | os.PathLike | None): the output path (None or "": none given, None returned).
      kind: "dir": a folder (new or existing), never an existing file; "file": a file, never
        an existing folder nor one of the command's `inputs`.
      option: the flag named in errors.
      inputs: the command's input files.
      need: a rough estimate of the bytes the run writes, checkpoints included.

    Returns:
      `Path(path)`, or None when no path is given.

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


def _checkpoints_in(out) -> list[Path]:
    """The checkpoint files of a run's `--out` folder (any command's naming, any depth)."""
    if not out or not Path(out).is_dir():
        return []
    stem = Path(checkpoint.FILENAME).stem
    return sorted(Path(out).rglob(f"{stem}*.npz"))


def _writes() -> bool:
    """Whether this process writes the outputs, without importing JAX for it (a command that
    never loaded JAX runs as one process)."""
    return not _lazy.is_loaded("jax") or is_writer()


class _Ending:
    """The end of one command: from its first `final_write` to its report, one safe
    region; the checkpoints it has finished with (`retire`) go after it."""

    def __init__(self, out) -> None:
        self.out = out
        self.stack = contextlib.ExitStack()
        self.safe: SafePoints | None = None  # the region, from the first final write on
        self.retired: list[Path] = []

    def begin(self) -> None:
        if self.safe is None:
            self.safe = self.stack.enter_context(SafePoints())


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
    end = _Ending(out)
    _process.commands.endings.append(end)
    try:
        with end.stack:
            try:
                yield
            except KeyboardInterrupt:
                if end.safe is not None and out and _writes():
                    if _checkpoints_in(out):
                        print(
                            f"interrupted before the outputs in {out} were complete; the "
                            "finished work is in its checkpoint: resume with "
                            f"{resume_advice(out)}",
                            file=sys.stderr,
                        )
                    else:
                        print(
                            f"interrupted while writing {out}: each file there is whole or "
                            "absent; run the command again to write them all",
                            file=sys.stderr,
                        )
                raise
            for path in end.retired:
                path.unlink(missing_ok=True)
            if end.safe is not None and end.safe.requested:  # asked during the end: done first
                done = f"the files written to {out} are complete" if out and _writes() else ""
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
    end = _process.commands.endings[-1] if _process.commands.endings else None
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
    end = _process.commands.endings[-1] if _process.commands.endings else None
    if end is None:  # no command around it (a sweep's setting, a library caller): its own end
        with ending(out), final_write(out):
            yield
        return
    end.begin()
    try:
        yield
    except OSError as err:  # the disk filled up (or went read-only) after the preflight
        what = f"{err.strerror or err}" + (f": {err.filename}" if err.filename else "")
        keep = (
            f"the finished work is in its checkpoint: fix that and resume with {resume_advice(out)}"
            if _writes() and _checkpoints_in(out)
            else "fix that (free space, permissions) and run again"
        )
        raise QueensError(f"could not write the outputs to {out} ({what}); {keep}") from None
