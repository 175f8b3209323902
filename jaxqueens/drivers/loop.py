"""The one chunked host loop that every driver runs through.

A driver hands :func:`run_chunks` a ``chunk()`` callable that runs one jitted chunk of work
(chains, prefixes, generations, probe calls), records its results on the host and returns a
:class:`Tick`. The loop owns what every long run needs, written once:

- a progress line (count, rate, time left; quiet off a terminal or when asked) and
  ``--log-json`` progress events (:mod:`jaxqueens.io.progress`);
- a checkpoint every ``every`` seconds through the driver's ``save()`` (pass None on processes
  other than 0, or when the run has no ``--out``);
- Ctrl-C at chunk boundaries only (:class:`~jaxqueens.io.progress.SafePoints`): the chunk in
  flight finishes, ``save()`` records the whole state, and the loop reports the interruption
  instead of raising, so the driver can return or re-raise what it has.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable

from jaxqueens.io.progress import Progress, SafePoints


@dataclasses.dataclass(frozen=True)
class Tick:
    """What one chunk reports to the loop."""

    done: int  # units finished so far, for the progress line
    note: str = ""  # shown beside the progress line
    finished: bool = False  # the budget is met: stop after this chunk


def run_chunks(chunk: Callable[[], Tick], *, total: int | None, unit: str, quiet: bool | None = None,
               save: Callable[[], None] | None = None, every: float = 30.0) -> bool:
    """Call ``chunk`` until a tick says ``finished``.

    Args:
      chunk: runs and records one chunk; a ``KeyboardInterrupt`` raised inside it (Ctrl-C twice,
        or a test) also ends the loop, with the state as the driver last recorded it.
      total: units for the progress bar (None: a count without a bar).
      unit: what the units are ("chains solved", "prefixes", "generations", "calls").
      quiet: no progress line (default: quiet unless stderr is a terminal).
      save: writes a checkpoint of everything recorded so far (None: no checkpoints).
      every: seconds between periodic checkpoints.

    Returns:
      True if Ctrl-C stopped the run (after ``save()``), False if a tick finished it.
    """
    bar = Progress(total, unit, quiet=quiet)
    last_save = time.perf_counter()
    try:
        with SafePoints() as safe:
            while True:
                safe.check()  # a Ctrl-C pressed during the last chunk stops here, state whole
                tick = chunk()
                bar.update(tick.done, tick.note)
                if tick.finished:
                    return False
                if save is not None and time.perf_counter() - last_save >= every:
                    save()
                    last_save = time.perf_counter()
    except KeyboardInterrupt:
        if save is not None:
            save()
        return True
    finally:
        bar.close()
