"""What every command that writes does before any work and at its end: the output preflight
(:func:`prepare_out`: the path can be written and its disk has room for what the run will write)
and the final write (:func:`final_write`: Ctrl-C deferred while the summary and the ``--out``
files are written, a failed write said in one line); the advice on how to continue a run
(:func:`resume_advice`, which a ``run`` sweep sets for its settings: :func:`resumed_by`); and
:func:`is_writer`: only process 0 of a multi-process run writes."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from jaxqueens import _lazy
from jaxqueens.errors import QueensError
from jaxqueens.io import atomic, checkpoint, interrupts
from jaxqueens.io.interrupts import SafePoints
from jaxqueens.parallel import memory

gather = _lazy.load("jaxqueens.parallel.gather")  # JAX: imported at the first call of is_writer


_RESUME: dict = {"how": None}  # set by a `run` sweep while one of its settings runs


@contextlib.contextmanager
def resumed_by(how: str) -> Iterator[None]:
    """Inside the block, the messages that say how to continue an unfinished or interrupted
    run name ``how`` (a ``run`` sweep: its own ``jaxqueens run CONFIG --resume``; a setting's
    folder is the sweep's, and its command's ``--resume`` would run that setting alone)."""
    before = _RESUME["how"]
    _RESUME["how"] = how
    try:
        yield
    finally:
        _RESUME["how"] = before


def resume_advice(out) -> str:
    """How to continue the run of ``out``: "the same command and --resume OUT", or what the
    enclosing sweep set (:func:`resumed_by`)."""
    return _RESUME["how"] or f"the same command and --resume {out}"


def is_writer() -> bool:
    """Whether this process writes the outputs: process 0 of a multi-process run (imports JAX;
    commands call it after their run, when JAX is loaded anyway)."""
    return gather.is_writer()


MARGIN = 1 << 20
"""Bytes of free space asked for beyond a command's estimate (summaries, tables, figures)."""


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:  # one of them does not exist
        return False


def prepare_out(
    path, kind: str = "dir", *, option: str = "--out", inputs: Iterable = (), need: float = 0
) -> Path | None:
    """Check an output path before any work, so a run never ends in a write that must fail.

    ``kind="dir"``: ``path`` is a folder (new or existing), never an existing file;
    ``kind="file"``: a file, never an existing folder nor one of ``inputs``. Either way the
    folder must be creatable and writable and its disk must have ``need`` bytes (a rough
    estimate of what the run writes, checkpoints included) plus :data:`MARGIN` free. Stale
    temporary files of a killed run are removed from the folder (:mod:`jaxqueens.io.atomic`).
    Nothing is created. Returns ``Path(path)``, or None when no path is given.

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
    """The checkpoint files of a run's ``--out`` folder (any command's naming, any depth)."""
    if not out or not Path(out).is_dir():
        return []
    stem = Path(checkpoint.FILENAME).stem
    return sorted(Path(out).rglob(f"{stem}*.npz"))


@contextlib.contextmanager
def final_write(out) -> Iterator[None]:
    """The end of a run (summary lines, ``--out`` files) with Ctrl-C deferred: the finished work
    is never lost in its last seconds.

    A first Ctrl-C inside the block waits for it: the outputs are then whole, a line says so
    and the command exits 130 (KeyboardInterrupt, after the block). A second Ctrl-C stops at
    once: the atomic writes leave each file whole or absent, the checkpoint (removed only after
    the outputs) stays, and the resume command is printed. A write that fails (OSError: the disk
    filled up after :func:`prepare_out`) becomes a one-line QueensError that says the same.
    """
    with SafePoints() as safe:
        try:
            yield
            if safe.requested:  # asked during the write (or the run's last chunk): done first
                done = (
                    f"the files written to {out} are complete"
                    if out and is_writer()
                    else "nothing lost"
                )
                print(
                    f"{interrupts.signal_name()} during the final write: it was finished first "
                    f"({done})",
                    file=sys.stderr,
                )
                safe.check()  # KeyboardInterrupt: the command exits as interrupted
        except OSError as err:  # the disk filled up (or went read-only) after the preflight
            what = f"{err.strerror or err}" + (f": {err.filename}" if err.filename else "")
            keep = (
                f"the finished work is in its checkpoint: fix that and resume with "
                f"{resume_advice(out)}"
                if is_writer() and _checkpoints_in(out)
                else "fix that (free space, permissions) and run again"
            )
            raise QueensError(f"could not write the outputs to {out} ({what}); {keep}") from None
        except KeyboardInterrupt:
            if is_writer() and _checkpoints_in(out):
                print(
                    f"interrupted before the outputs in {out} were complete; the finished work is "
                    f"in its checkpoint: resume with {resume_advice(out)}",
                    file=sys.stderr,
                )
            elif out and is_writer():
                print(
                    f"interrupted while writing {out}: each file there is whole or absent; run "
                    "the command again to write them all",
                    file=sys.stderr,
                )
            raise
