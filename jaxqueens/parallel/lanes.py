"""Lockstep lanes with refill: the accelerator strategy for many independent searches.

`lanes` searches advance together (`vmap`) inside one `while_loop`. A lane whose item is
finished writes its result to the item's slot and takes the next item, so no lane idles while a
slow item runs. Chains
(`chains`) and count prefixes (`count`) both run
through `lockstep`; on the CPU, one item per `lax.map` iteration
(`map_items`) is faster.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax


def where_lanes(mask, new, old):
    """Per-lane select between two pytrees.

    Args:
      mask: bool `[B]`: take `new` in these lanes.
      new: pytree of `[B, ...]` arrays.
      old: pytree of the same structure and shapes.

    Returns:
      The selected pytree.
    """
    return jax.tree.map(
        lambda a, b: jnp.where(mask.reshape((-1,) + (1,) * (a.ndim - 1)), a, b), new, old
    )


REFILL_SHARE = 16
"""A refill waits until 1/REFILL_SHARE of the lanes wait for one (or no lane is left running)."""


def gate(waiting, running, lanes: int):
    """Whether lanes that wait for a refill (or restart) get it now.

    A refill builds fresh states for every lane and selects, and on a GPU a fresh state can be a
    host-driven loop over the board, so refilling the lanes that finish in each iteration would
    cost a whole refill per iteration; gated, it costs one per `lanes / REFILL_SHARE` finished
    lanes, for about 1/(2 REFILL_SHARE) idle lanes. A waiting lane's state is stopped (a step is
    a no-op), so no result changes.

    Args:
      waiting: bool `[B]`: lanes waiting for a refill.
      running: bool `[B]`: lanes still running.
      lanes: B (static).

    Returns:
      bool scalar: once `lanes / REFILL_SHARE` lanes wait, or when no other lane is running.
    """
    count = jnp.sum(waiting.astype(jnp.int32))
    return (count >= max(1, lanes // REFILL_SHARE)) | ((count > 0) & ~jnp.any(running))


def _retire(done, item, nxt, out, results, num_items: int):
    """Lanes `done` [B] write `results` into their item's row of `out` and take the next
    items in lane order: (out, item [B], nxt [])."""
    dst = jnp.where(done, item, num_items)
    out = jax.tree.map(lambda o, r: o.at[dst].set(r, mode="drop"), out, results)
    rank = jnp.cumsum(done.astype(jnp.int32)) - 1
    return out, jnp.where(done, nxt + rank, item), nxt + jnp.sum(done.astype(jnp.int32))


def lockstep(
    init_item: Callable[[jax.Array], Any],
    advance: Callable[[Any, jax.Array], Any],
    finished: Callable[[Any], jax.Array],
    result: Callable[[Any], Any],
    num_items: int,
    lanes: int,
):
    """Run `num_items` searches on `lanes` lockstep lanes, refilling finished lanes.

    A lane whose item finishes writes its result and is given the next item; its fresh state is
    built when enough lanes wait for one (`gate`), so the results never depend on
    `lanes`.

    Args:
      init_item: item index `[]` int32 -> the state of one lane (vmapped here).
      advance: `(states [B], active [B] bool) -> states [B]`: one lockstep iteration of every
        lane (already batched; `active` is False for lanes with no item left or waiting for
        their next item's state, whose states must not change).
      finished: `states [B] -> [B] bool`: the lane's item is done.
      result: `states [B] -> pytree [B, ...]`: what a finished lane reports.
      num_items: items, indexed `0 .. num_items - 1`.
      lanes: lockstep lanes B, at most `num_items`.

    Returns:
      The result pytree with a leading `[num_items]` axis, in item order.
    """
    vinit = jax.vmap(init_item)
    first = jnp.arange(lanes, dtype=jnp.int32)
    s0 = vinit(jnp.minimum(first, num_items - 1))
    out = jax.tree.map(lambda x: jnp.zeros((num_items, *x.shape[1:]), x.dtype), result(s0))

    def body(carry):
        s, item, nxt, out, waiting = carry
        active = (item < num_items) & ~waiting
        s = advance(s, active)
        done = finished(s) & active
        out, item, nxt = _retire(done, item, nxt, out, result(s), num_items)
        waiting = waiting | (done & (item < num_items))
        running = (item < num_items) & ~waiting
        s, waiting = lax.cond(
            gate(waiting, running, lanes),
            lambda s, w: (where_lanes(w, vinit(jnp.minimum(item, num_items - 1)), s), w & False),
            lambda s, w: (s, w),
            s,
            waiting,
        )
        return s, item, nxt, out, waiting

    carry = (s0, first, jnp.int32(lanes), out, jnp.zeros(lanes, bool))
    return lax.while_loop(lambda c: jnp.any(c[1] < num_items), body, carry)[3]


def lockstep_budget(
    init_item: Callable[[jax.Array], Any],
    advance: Callable[[Any, jax.Array], Any],
    finished: Callable[[Any], jax.Array],
    result: Callable[[Any], Any],
    untouched: Any,
    lanes: int,
    steps,
):
    """`lockstep` that stops after `steps` iterations, for resumable searches.

    A lane whose item finishes writes `result` and takes the next item; when the budget ends,
    every lane still busy writes `result` of its unfinished state too, and the items no lane
    reached keep their row of `untouched`. A later call resumes the unfinished items from what
    it returns.

    Args:
      init_item: as `lockstep` takes it.
      advance: as `lockstep` takes it.
      finished: as `lockstep` takes it.
      result: as `lockstep` takes it.
      untouched: a pytree with a leading `[num_items]` axis, in `result`'s format.
      lanes: lockstep lanes B, at most `num_items`.
      steps: [] int32, lockstep iterations (each lane advances at most this many times).

    Returns:
      (results with a leading `[num_items]` axis in item order, [] int32 iterations run).
    """
    num_items = jax.tree.leaves(untouched)[0].shape[0]
    vinit = jax.vmap(init_item)
    first = jnp.arange(lanes, dtype=jnp.int32)
    s0 = vinit(jnp.minimum(first, num_items - 1))

    def body(carry):
        s, item, nxt, out, k = carry
        active = item < num_items
        s = advance(s, active)
        done = finished(s) & active
        out, item, nxt = _retire(done, item, nxt, out, result(s), num_items)
        take = done & (item < num_items)
        s = lax.cond(
            jnp.any(take),
            lambda s: where_lanes(take, vinit(jnp.minimum(item, num_items - 1)), s),
            lambda s: s,
            s,
        )
        return s, item, nxt, out, k + 1

    carry = (s0, first, jnp.int32(lanes), untouched, jnp.int32(0))
    s, item, _, out, k = lax.while_loop(
        lambda c: jnp.any(c[1] < num_items) & (c[4] < steps), body, carry
    )
    dst = jnp.where(item < num_items, item, num_items)  # the lanes the budget stopped
    out = jax.tree.map(lambda o, r: o.at[dst].set(r, mode="drop"), out, result(s))
    return out, k
