"""Independent one-item kernels over a batch of items, with the strategy of the backend.

This is where the batching choice is made, once, for every family that is not a chain solver:
on the CPU, one item per ``lax.map`` iteration over host devices
(:func:`jaxqueens.parallel.shard.map_items`); on an accelerator, ``vmap`` per device, or
lockstep lanes with refill (:func:`jaxqueens.parallel.lanes.lockstep`) for searches whose items
take very different numbers of steps. Call these under ``jit``; ``items`` must divide by
``num_devices`` (:func:`jaxqueens.parallel.shard.pad_rows`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

from jaxqueens.parallel import devices
from jaxqueens.parallel.lanes import lockstep, lockstep_budget
from jaxqueens.parallel.shard import map_items, over_devices


def each(one: Callable[[Any], Any], items, num_devices: int):
    """``one`` on every item: mapped on the CPU, vmapped on an accelerator."""
    if devices.is_accelerator():
        return over_devices(jax.vmap(one), items, num_devices=num_devices)
    return map_items(one, items, num_devices)


def search_each(
    one: Callable[[Any], Any],
    init: Callable[[Any], Any],
    advance: Callable[[Any, Any], Any],
    finished: Callable[[Any], Any],
    result: Callable[[Any], Any],
    items,
    num_devices: int,
    lanes: int,
):
    """A search per item: ``one(item)`` mapped on the CPU; on an accelerator, ``lanes`` lockstep
    lanes per device built from ``init(item)``, ``advance(states, active)``, ``finished(states)``
    and ``result(states)`` (see :func:`jaxqueens.parallel.lanes.lockstep`). Same results."""
    if not devices.is_accelerator():
        return map_items(one, items, num_devices)
    per = items.shape[0] // num_devices

    def shard(x):
        return lockstep(lambda k: init(x[k]), advance, finished, result, per, min(lanes, per))

    return over_devices(shard, items, num_devices=num_devices)


def search_budget(
    serial: Callable[[Any], Any],
    init: Callable[[Any], Any],
    advance: Callable[[Any, Any], Any],
    finished: Callable[[Any], Any],
    result: Callable[[Any], Any],
    untouched: Callable[[Any], Any],
    items,
    num_devices: int,
    lanes: int,
    steps,
):
    """Resumable searches, at most ``steps`` of work per device and call.

    On the CPU, ``serial(items of one device) -> (results, work)`` searches them one after the
    other under one shared budget (it holds ``steps`` itself). On an accelerator, ``lanes``
    lockstep lanes per device (:func:`jaxqueens.parallel.lanes.lockstep_budget`) built from
    ``init(item)``, advanced ``steps`` times at most; items the budget stopped report
    ``result(state)``, items never reached ``untouched(item)``.

    Returns:
      (results with a leading ``[num_items]`` axis, work int32 ``[num_devices]``: edges taken on
      the CPU, lockstep iterations on an accelerator).
    """
    if not devices.is_accelerator():

        def shard(x):
            out, work = serial(x)
            return out, work[None]

        return over_devices(shard, items, num_devices=num_devices)
    per = items.shape[0] // num_devices

    def shard(x):
        out, k = lockstep_budget(
            lambda i: init(x[i]),
            advance,
            finished,
            result,
            jax.vmap(untouched)(x),
            min(lanes, per),
            steps,
        )
        return out, k[None]

    return over_devices(shard, items, num_devices=num_devices)
