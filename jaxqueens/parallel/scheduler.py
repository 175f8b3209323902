"""One scheduler of kernel calls over device streams, for drivers whose work comes in uneven pieces
(`count`, `complete`).

A `Scheduler` keeps up to `depth` calls in flight on each stream of `jaxqueens.parallel.streams`.
The driver owns its queue of work and says what a stream's next call is (`Scheduler.fill` asks
`take(stream)` for a `Launch`); `Scheduler.next` and `Scheduler.wait` hand back `Finished`
calls, either the oldest (`ordered`: reproducible) or the first to end. Leaving the `with` block
cancels the calls not started.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent import futures
from typing import Any, Generic, NamedTuple, TypeVar

import numpy as np

from jaxqueens.parallel.streams import Stream, Workers

J = TypeVar("J")


class Launch(NamedTuple, Generic[J]):
    """One kernel call to make on a stream."""

    job: J  #: the driver's work item(s) the call runs, handed back in `Finished`
    kernel: Callable[[Any, int], Any]  #: `kernel(batch on the stream's device, shards)`
    batch: np.ndarray  #: the call's input rows (the stream's `rows`, padded by the driver)


class Finished(NamedTuple, Generic[J]):
    """One kernel call that has ended."""

    job: J  #: as launched
    stream: int  #: index of the stream it ran on
    outputs: tuple  #: the kernel's outputs as NumPy arrays
    start: float  #: perf_counter seconds when the call started on its worker
    end: float  #: perf_counter seconds when it ended


class _Call(NamedTuple):
    job: Any
    stream: int
    future: futures.Future


class Scheduler(Generic[J]):
    """Calls over `streams`, at most `depth` in flight on each; a context manager.

    Args:
      streams: where calls run (`plan`).
      depth: calls in flight per stream (2: the next call is queued while the host reads one).
      ordered: `next` returns the oldest call (True) or the first to end (False).
      name: the worker threads' name prefix.
    """

    def __init__(self, streams: list[Stream], *, depth: int, ordered: bool, name: str):
        if depth < 1:
            raise ValueError(f"depth must be at least 1, got {depth}")
        self.streams, self.depth, self.ordered = streams, depth, ordered
        self._workers = Workers(streams, name)
        self._flight: list[_Call] = []  # launch order

    def __enter__(self) -> Scheduler[J]:
        return self

    def __exit__(self, *exc) -> None:
        self._workers.__exit__(*exc)

    def __len__(self) -> int:
        """Calls in flight."""
        return len(self._flight)

    def in_flight(self, stream: int | None = None) -> int:
        """The number of calls in flight.

        Args:
          stream: on this stream only (None: on every stream).

        Returns:
          The count.
        """
        return sum(stream is None or c.stream == stream for c in self._flight)

    def jobs(self) -> list[J]:
        """The jobs of the calls in flight (a checkpoint puts them back in the queue: their results
        are not recorded yet).

        Returns:
          The jobs, oldest first.
        """
        return [c.job for c in self._flight]

    def fill(self, take: Callable[[int], Launch[J] | None]) -> int:
        """Stream by stream, launch calls until the stream has `depth` in flight or nothing to run.

        Args:
          take: `take(stream)` gives the next `Launch` for a stream, or None (nothing for it now).

        Returns:
          The number of calls launched.
        """
        launched = 0
        for k in range(len(self.streams)):
            while self.in_flight(k) < self.depth:
                launch = take(k)
                if launch is None:
                    break
                future = self._workers.submit(k, launch.kernel, launch.batch)
                self._flight.append(_Call(launch.job, k, future))
                launched += 1
        return launched

    def next(self) -> Finished[J]:
        """Wait for a call: the oldest if `ordered`, else the first to end (ties in launch order).

        Returns:
          The call; its exception, if it raised, is raised here.

        Raises:
          LookupError: no call is in flight.
        """
        return self._take(self._wait()[0])

    def wait(self) -> list[Finished[J]]:
        """Wait as `next` does, with every other call that has ended too unless `ordered`.

        The driver records them all before it fills the streams again, so no stream waits for the
        host to record another's call.

        Returns:
          The calls, in launch order.

        Raises:
          LookupError: no call is in flight.
        """
        return [self._take(call) for call in self._wait()]

    def _wait(self) -> list[_Call]:
        if not self._flight:
            raise LookupError("no call in flight")
        if self.ordered:
            return [self._flight[0]]
        futures.wait([c.future for c in self._flight], return_when=futures.FIRST_COMPLETED)
        return [c for c in self._flight if c.future.done()]

    def _take(self, call: _Call) -> Finished[J]:
        self._flight = [c for c in self._flight if c is not call]
        outputs, start, end = call.future.result()
        return Finished(call.job, call.stream, outputs, start, end)
