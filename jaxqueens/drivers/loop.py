"""The one chunked host loop that every driver runs through.

A driver hands `run_chunks` a `chunk()` callable that runs one jitted chunk of work (chains,
prefixes, generations, probe calls), records its results on the host and returns a `Tick`. The
loop owns what every long run needs: a progress line and `--log-json` progress events, a
checkpoint every `checkpoint_every` seconds through the driver's `save()` (one that cannot be
written warns and never stops the run: `guarded`), Ctrl-C and SIGTERM at chunk boundaries only
(the chunk in flight finishes, `save()` records the state, the loop reports the interruption
instead of raising), and a lost process of a multi-process run (saved, then its one-line error).
Every driver takes its run control (progress, checkpoint file and cadence, resume) as one
`RunControl`.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable
from pathlib import Path

from jaxqueens.core import arguments
from jaxqueens.drivers.settings import CHECKPOINT_EVERY
from jaxqueens.errors import PeerLostError
from jaxqueens.io.interrupts import SafePoints
from jaxqueens.io.progress import Progress


@dataclasses.dataclass(frozen=True)
class RunControl:
    """How a run is watched, saved and resumed, one object for every driver; none of it
    changes a result (a resumed run returns what an uninterrupted one would)."""

    quiet: bool | None = True  #: no progress line; None: one on a terminal only; False: always
    checkpoint: str | Path | None = None  #: the driver's checkpoint file; None: none written
    #: continue from `checkpoint`; None: the family's default (count and complete resume a file that
    #: exists, the others start afresh)
    resume: bool | None = None
    checkpoint_every: float = CHECKPOINT_EVERY  #: seconds between checkpoints, finite, >= 0

    def __post_init__(self) -> None:  # nan or inf would never save: one line, before any work
        every = arguments.real(self.checkpoint_every, "checkpoint_every", 0.0)
        object.__setattr__(self, "checkpoint_every", every)


@dataclasses.dataclass(frozen=True)
class Tick:
    """What one chunk reports to the loop."""

    done: int  #: units finished so far, for the progress line
    note: str = ""  #: shown beside the progress line
    finished: bool = False  #: the budget is met: stop after this chunk


def guarded(save: Callable[[], object]) -> Callable[[], bool]:
    """`save` (which writes the checkpoint) wrapped so that it never raises OSError and each call
    returns whether it saved: the first failure prints one warning on stderr (the run goes on; later
    saves try again, silently)."""
    warned: list[OSError] = []

    def attempt() -> bool:
        try:
            save()
            return True
        except OSError as err:
            if not warned:
                warned.append(err)
                print(
                    f"warning: could not write a checkpoint ({err}); the run goes on and tries "
                    "again at the next one (the last checkpoint written, if any, is kept)",
                    file=sys.stderr,
                    flush=True,
                )
            return False

    return attempt


def run_chunks(
    chunk: Callable[[], Tick],
    *,
    total: int | None,
    unit: str,
    control: RunControl | None = None,
    save: Callable[[], object] | None = None,
) -> bool:
    """Call `chunk` (which runs and records one chunk) until a tick says `finished`; `save` (None:
    no checkpoints) writes a checkpoint of everything recorded so far at `control`'s cadence.

    `total` is the units for the progress bar (None: a count without a bar), `unit` what they are
    ("chains solved", "prefixes", "generations", "calls"). A `KeyboardInterrupt` raised inside
    `chunk` (Ctrl-C twice, or a test) also ends the loop, with the state as the driver last recorded
    it. Returns True if Ctrl-C (or SIGTERM) stopped the run (after `save()`), also when it came
    during the chunk that finished the run; False if a tick finished it undisturbed."""
    control = RunControl() if control is None else control
    bar = Progress(total, unit, quiet=control.quiet)
    save = guarded(save) if save is not None else None
    last_save = time.perf_counter()
    try:
        with SafePoints() as safe:
            while True:
                safe.check()  # a Ctrl-C pressed during the last chunk stops here, state whole
                tick = chunk()
                bar.update(tick.done if total is None else min(tick.done, total), tick.note)
                if tick.finished:  # a stop asked during the last chunk is not dropped
                    safe.check()
                    return False
                if save is not None and time.perf_counter() - last_save >= control.checkpoint_every:
                    save()
                    last_save = time.perf_counter()
    except (KeyboardInterrupt, PeerLostError) as stop:
        if save is not None:
            save()
        if isinstance(stop, PeerLostError):  # another process is gone: the kept state, its error
            raise
        return True
    finally:
        bar.close()
