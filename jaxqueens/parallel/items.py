"""Independent one-item kernels over a batch of items, with the strategy of the backend.

This is where the batching choice is made, once, for every family that is not a chain solver:
on the CPU, one item per `lax.map` iteration over host devices
(`map_items`); on an accelerator, `vmap` per device, or
lockstep lanes with refill (`lockstep`) for searches whose items
take very different numbers of steps. Branch-free kernels whose items all take the same steps
(Knuth's probes) lose nothing to lockstep: `blocks` vmaps them, in blocks under `lax.map`
on a CPU (the block's state stays in cache) and all at once on an accelerator. Call these under
`jit`; `items` must divide by `num_devices` (`pad_rows`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import jax
from jax import lax

from jaxqueens.parallel import devices
from jaxqueens.parallel.lanes import lockstep, lockstep_budget
from jaxqueens.parallel.shard import map_items, over_devices


def each(one: Callable[[Any], Any], items, num_devices: int, accelerator: bool | None = None):
    """`one` on every item: mapped on the CPU, vmapped on an accelerator.

    Args:
      one: the function of one item.
      items: a PyTree whose leaves have the items' leading axis.
      num_devices: devices the items are sharded over.
      accelerator: which strategy (None: the default backend's).

    Returns:
      The results, with the items' leading axis.
    """
    if devices.is_accelerator() if accelerator is None else accelerator:
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
    accelerator: bool | None = None,
):
    """A search per item: `one(item)` mapped on the CPU; on an accelerator, `lanes` lockstep lanes
    per device built from `init(item)`, `advance(states, active)`, `finished(states)` and
    `result(states)` (see `lockstep`). Same results.

    Args:
      one: the whole search of one item (CPU).
      init: an item's lane state.
      advance: one lockstep iteration of the active lanes.
      finished: which lanes are done.
      result: the lanes' results.
      items: a PyTree whose leaves have the items' leading axis.
      num_devices: devices the items are sharded over.
      lanes: lockstep lanes per device (accelerator).
      accelerator: which strategy (None: the default backend's; the GPU check compiles the
        accelerator's on a CPU-only machine).

    Returns:
      The results, with the items' leading axis.
    """
    if not (devices.is_accelerator() if accelerator is None else accelerator):
        return map_items(one, items, num_devices)
    per = items.shape[0] // num_devices

    def shard(x):
        return lockstep(lambda k: init(x[k]), advance, finished, result, per, min(lanes, per))

    return over_devices(shard, items, num_devices=num_devices)


def blocks(one: Callable[[Any], Any], items, block: int):
    """`one` on every item, `block` items vmapped in lockstep per `lax.map` iteration; 0 (the
    accelerator way) vmaps them all at once. The block is lowered to `gcd(items, block)` so that
    it divides the items (no padding).

    Args:
      one: the function of one item.
      items: a PyTree whose leaves have the items' leading axis.
      block: items per lockstep block (0: all).

    Returns:
      The results, with the items' leading axis.
    """
    total = jax.tree.leaves(items)[0].shape[0]
    block = math.gcd(total, block) if block else total
    if block == total:
        return jax.vmap(one)(items)
    split = jax.tree.map(lambda x: x.reshape((-1, block, *x.shape[1:])), items)
    out = lax.map(jax.vmap(one), split)
    return jax.tree.map(lambda x: x.reshape((total, *x.shape[2:])), out)


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
    accelerator: bool | None = None,
):
    """Resumable searches, at most `steps` of work per device and call.

    On the CPU, `serial(items of one device) -> (results, work)` searches them one after the other
    under one shared budget (it holds `steps` itself). On an accelerator, `lanes` lockstep lanes
    per device (`lockstep_budget`) built from `init(item)`, advanced `steps` times at most; items
    the budget stopped report `result(state)`, items never reached `untouched(item)`.

    Args:
      serial: the CPU's search of one device's items.
      init: an item's lane state.
      advance: one lockstep iteration of the active lanes.
      finished: which lanes are done.
      result: the lanes' results.
      untouched: the result of an item never reached.
      items: a PyTree whose leaves have the items' leading axis.
      num_devices: devices the items are sharded over.
      lanes: lockstep lanes per device (accelerator).
      steps: lockstep iterations per call (accelerator).
      accelerator: which strategy (None: the default backend's; the GPU check compiles the
        accelerator's on a CPU-only machine).

    Returns:
      `(results, work)`: results with a leading `[num_items]` axis, and work int32
      `[num_devices]` (edges taken on the CPU, lockstep iterations on an accelerator).
    """
    if not (devices.is_accelerator() if accelerator is None else accelerator):

        def serial_shard(x):
            out, work = serial(x)
            return out, work[None]

        return over_devices(serial_shard, items, num_devices=num_devices)
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
