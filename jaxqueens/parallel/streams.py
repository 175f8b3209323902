"""Independent streams of kernel calls, one per host device, each fed by its own worker thread.

For work that comes in uneven pieces (the tasks of `count`, the sub-trees of `complete`), a
barrier between the devices costs: a call spanning every device waits for its slowest shard. A
*stream* instead runs calls on one device only, so a slow call on one core never idles the
other. Each stream has its own worker thread because XLA:CPU runs a one-device call inline: the
calls of several devices made from one thread run one after the other, with the host's work
between them (the second device's call starts when the first ends).

On an accelerator, or with one device, there is one stream over every device (the device itself
keeps its lanes busy: `lockstep`). Drivers schedule their calls
over the streams with `Scheduler`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NamedTuple

import jax
import numpy as np

from jaxqueens.parallel import devices


class Stream(NamedTuple):
    """Where one stream's calls run."""

    device: Any  #: a jax Device, or None: one call over every local device
    shards: int  #: devices one call spans (1 for a per-device stream)
    rows: int  #: items per call


def plan(chunk: int, accelerator: bool) -> list[Stream]:
    """The streams for calls of `chunk` items.

    Args:
      chunk: items per call, a multiple of the local device count.
      accelerator: the devices are accelerators.

    Returns:
      One stream per host device on a CPU with several, else one over every device.
    """
    num_dev = devices.local_device_count()
    if accelerator or num_dev == 1:
        return [Stream(None, num_dev, chunk)]
    return [Stream(dev, 1, chunk // num_dev) for dev in jax.local_devices()]


def call(stream: Stream, fn: Callable[[Any, int], Any], batch: np.ndarray):
    """One call on a stream, timed.

    Args:
      stream: where to run.
      fn: called as `fn(batch on the stream's device, stream.shards)`.
      batch: the call's items.

    Returns:
      `(outputs as NumPy arrays, start, end)`, the times in `perf_counter` seconds.
    """
    t0 = time.perf_counter()
    out = fn(
        batch if stream.device is None else jax.device_put(batch, stream.device), stream.shards
    )
    out = tuple(np.asarray(x) for x in out)
    return out, t0, time.perf_counter()


class Workers:
    """One worker thread per stream; a context manager (on leaving, calls not started are
    cancelled and a call already running ends within its own budget).

    Args:
      streams: the streams (`plan`).
      name: the threads' name prefix.
    """

    def __init__(self, streams: list[Stream], name: str = "jaxqueens"):
        self.streams = streams
        self._pools = [
            ThreadPoolExecutor(1, thread_name_prefix=f"{name}-{k}") for k in range(len(streams))
        ]

    def submit(self, k: int, fn: Callable[[Any, int], Any], batch: np.ndarray) -> Future:
        """`call` of `fn` on one stream, in its thread.

        Args:
          k: the stream's index.
          fn: as `call` takes it.
          batch: the call's items.

        Returns:
          The future of `call`'s result.
        """
        return self._pools[k].submit(call, self.streams[k], fn, batch)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc) -> None:
        for pool in self._pools:
            pool.shutdown(wait=False, cancel_futures=True)
