"""Bitmask depth-first search over ONE partial board (a prefix): the exact-counting kernel.

Method: bitmask backtracking after Richards (1997, "Backtracking algorithms in MCPL using bit
patterns and recursion") as popularised by Jeff Somers' counter (``shared/baselines/count_c.c``).
Search level k places the queen of board column k; a level holds uint32 masks of the rows
attacked along rows (``cols``), diagonals (``ld``, shifted left per level) and anti-diagonals
(``rd``, shifted right), plus ``av``, the free rows still to try there (lowest bit first).

Each ``lax.while_loop`` iteration handles exactly one edge of the search tree, branch-free:

- take the lowest bit of the top level's ``av``;
- if the child is the last column, add ``popcount(child av)`` (each free row is a solution);
- otherwise push the child if it has a free row;
- no iteration is spent popping: every stack row stores ``back``, the stack row to resume when
  its subtree is done (the nearest ancestor with rows left), so exhausted levels are skipped.

The stack is a fixed ``[R, 5]`` uint32 array written with one 2-row ``dynamic_update_slice`` per
iteration (no scatter, no sort), so XLA:CPU compiles the loop as one native function
(``jaxqueens/backend.py``). Counts are two uint32 words with an explicit carry (exact below 2^64).

Batching, chosen by backend in :func:`count_batch`: one prefix per ``lax.map`` iteration sharded
over host devices on the CPU; lockstep ``vmap`` lanes with refilling on accelerators.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens.parallel import devices as backend

COLS, LD, RD, AV, BACK = range(5)
DONE = 0xFFFFFFFF  # ``back`` of the root level: returning there ends the search


class KernelConfig(NamedTuple):
    """Static shape of a search: board size and how many queens every prefix has placed."""

    n: int
    depth: int

    @property
    def rows(self) -> int:
        """Stack rows: one per level below the prefix, plus one for the 2-row write."""
        return self.n - self.depth + 1

    @property
    def width(self) -> int:
        """Words per enumerated solution: the ``cols`` mask of every level, then the full board."""
        return self.n - self.depth + 1


class Lane(NamedTuple):
    """The DFS state of one prefix."""

    d: jax.Array  # [] int32 stack row of the current level; -1 once the subtree is searched
    lo: jax.Array  # [] uint32 solutions found, low word
    hi: jax.Array  # [] uint32 solutions found, high word
    stack: jax.Array  # [R, 5] uint32 (cols, ld, rd, av, back) per level


def add64(lo, hi, x):
    """``(hi, lo) + x`` on two uint32 words with carry: exact where a uint32 sum would wrap."""
    lo2 = lo + x
    return lo2, hi + (lo2 < x).astype(jnp.uint32)


def init(prefix, config: KernelConfig) -> Lane:
    """Lane for ``prefix`` = uint32 ``[4]`` (cols, ld, rd, av) of a partial board."""
    prefix = prefix.astype(jnp.uint32)
    root = jnp.concatenate([prefix, jnp.full((1,), DONE, jnp.uint32)])
    stack = jnp.concatenate([root[None], jnp.zeros((config.rows - 1, 5), jnp.uint32)])
    d = jnp.where(prefix[AV] == 0, -1, 0).astype(jnp.int32)
    return Lane(d, jnp.uint32(0), jnp.uint32(0), stack)


def _advance(lane: Lane, n: int):
    """One tree edge. Returns the new lane, whether the child is the last column, and the child's
    ``cols`` and ``av`` masks (the enumeration kernel needs them)."""
    all_rows = jnp.uint32((1 << n) - 1)
    row = lax.dynamic_slice(lane.stack, (lane.d, 0), (1, 5))[0]
    cols, ld, rd, av, back = row[COLS], row[LD], row[RD], row[AV], row[BACK]
    bit = av & (jnp.uint32(0) - av)
    rest = av ^ bit
    nc, nl, nr = cols | bit, (ld | bit) << 1, (rd | bit) >> 1
    nav = all_rows & ~(nc | nl | nr)
    last = lax.population_count(nc) == n - 1
    push = ~last & (nav != 0)
    here = lane.d.astype(jnp.uint32)
    resume = jnp.where(rest != 0, here, back)  # where to go once the child's subtree is done
    block = jnp.stack([jnp.stack([cols, ld, rd, rest, back]), jnp.stack([nc, nl, nr, nav, resume])])
    stack = lax.dynamic_update_slice(lane.stack, block, (lane.d, 0))
    lo, hi = add64(lane.lo, lane.hi, jnp.where(last, lax.population_count(nav), jnp.uint32(0)))
    d = jnp.where(push, here + 1, resume).astype(jnp.int32)  # DONE -> -1
    return Lane(d, lo, hi, stack), last, nc, nav


def step(lane: Lane, config: KernelConfig) -> Lane:
    """One counting iteration (the lane must be live: ``d >= 0``)."""
    return _advance(lane, config.n)[0]


def count_prefix(prefix, config: KernelConfig):
    """Solutions extending one prefix: uint32 ``[2]`` (low word, high word)."""
    lane = lax.while_loop(lambda s: s.d >= 0, lambda s: step(s, config), init(prefix, config))
    return jnp.stack([lane.lo, lane.hi])


def enumerate_prefix(prefix, config: KernelConfig, cap: int):
    """Solutions extending one prefix, listed: (count uint32 ``[2]``, uint32 ``[cap, W]``).

    Row i of the list holds the ``cols`` masks of levels 0..n-depth-1 of solution i and then the
    full mask; consecutive differences are the rows of the queens (decoded on the host). At most
    ``cap`` solutions are written; the count is exact regardless.
    """
    levels = config.n - config.depth - 1

    def body(carry):
        lane, out = carry
        new, last, nc, nav = _advance(lane, config.n)
        vec = jnp.concatenate([new.stack[:levels, COLS], jnp.stack([nc, nc | nav])])
        hit = last & (nav != 0) & (lane.lo < cap)
        out = lax.cond(hit, lambda o: lax.dynamic_update_slice(o, vec[None], (lane.lo.astype(jnp.int32), 0)),
                       lambda o: o, out)
        return new, out

    lane, out = lax.while_loop(lambda c: c[0].d >= 0, body,
                               (init(prefix, config), jnp.zeros((cap, config.width), jnp.uint32)))
    return jnp.stack([lane.lo, lane.hi]), out


def map_sharded(fn, x, num_devices: int):
    """Apply ``fn`` ([per, ...] -> pytree with leading [per]) to ``x`` [D * per, ...] split
    evenly over the first ``num_devices`` host devices."""
    per = x.shape[0] // num_devices
    x = x.reshape((num_devices, per) + x.shape[1:])
    one = lambda x: jax.tree.map(lambda a: a[None], fn(x[0]))  # noqa: E731
    if num_devices == 1:
        out = one(x)
    else:
        mesh = jax.make_mesh((num_devices,), ("d",), devices=jax.local_devices()[:num_devices],
                             axis_types=(jax.sharding.AxisType.Auto,))
        P = jax.sharding.PartitionSpec
        out = jax.shard_map(one, mesh=mesh, in_specs=P("d"), out_specs=P("d"), check_vma=False)(x)
    return jax.tree.map(lambda a: a.reshape((num_devices * per,) + a.shape[2:]), out)


@functools.partial(jax.jit, static_argnums=(1, 2))
def count_mapped(prefixes, config: KernelConfig, num_devices: int = 1):
    """CPU strategy: one prefix per ``lax.map`` iteration, prefixes split over ``num_devices``.

    Args:
      prefixes: uint32 ``[P, 4]``, P a multiple of ``num_devices`` (pad with ``av = 0`` rows).
    Returns:
      uint32 ``[P, 2]`` count words per prefix.
    """
    return map_sharded(lambda x: lax.map(lambda p: count_prefix(p, config), x), prefixes, num_devices)


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def count_lockstep(prefixes, config: KernelConfig, lanes: int, num_devices: int = 1):
    """Accelerator strategy: on each of ``num_devices`` devices, ``lanes`` searches advance in
    lockstep (``vmap``) over its share of the prefixes; a lane whose prefix is done writes its
    count and takes the next prefix. Returns uint32 ``[P, 2]``."""
    per = prefixes.shape[0] // num_devices
    return map_sharded(lambda x: _lockstep(x, config, min(lanes, per)), prefixes, num_devices)


def _lockstep(prefixes, config: KernelConfig, lanes: int):
    num = prefixes.shape[0]
    vinit = jax.vmap(lambda p: init(p, config))
    vstep = jax.vmap(lambda s: step(s, config))
    ids = jnp.arange(lanes, dtype=jnp.int32)
    state = vinit(prefixes[jnp.minimum(ids, num - 1)])
    state = state._replace(d=jnp.where(ids < num, state.d, -1))

    def body(carry):
        s, ids, nxt, out = carry
        live = s.d >= 0
        moved = vstep(s)
        s = jax.tree.map(lambda a, b: jnp.where(live.reshape((-1,) + (1,) * (a.ndim - 1)), a, b),
                         moved, s)
        finished = (s.d < 0) & (ids < num)
        out = out.at[jnp.where(finished, ids, num)].set(jnp.stack([s.lo, s.hi], 1), mode="drop")
        rank = jnp.cumsum(finished.astype(jnp.int32)) - 1
        ids = jnp.where(finished, nxt + rank, ids)
        nxt = nxt + jnp.sum(finished.astype(jnp.int32))
        take = finished & (ids < num)
        fresh = lambda s: jax.tree.map(  # noqa: E731
            lambda a, b: jnp.where(take.reshape((-1,) + (1,) * (a.ndim - 1)), a, b),
            vinit(prefixes[jnp.minimum(ids, num - 1)]), s)
        s = lax.cond(jnp.any(take), fresh, lambda s: s, s)
        return s, ids, nxt, out

    carry = (state, ids, jnp.int32(lanes), jnp.zeros((num, 2), jnp.uint32))
    return lax.while_loop(lambda c: jnp.any(c[1] < num), body, carry)[3]


def count_batch(prefixes, config: KernelConfig, num_devices: int = 1, lanes: int = 4096):
    """Count words ``[P, 2]`` per prefix with the batching strategy of the default backend."""
    if backend.is_accelerator():
        return count_lockstep(prefixes, config, min(lanes, prefixes.shape[0]), num_devices)
    return count_mapped(prefixes, config, num_devices)


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def enumerate_mapped(prefixes, config: KernelConfig, cap: int, num_devices: int = 1):
    """Enumerate every prefix's solutions (at most ``cap`` each): counts ``[P, 2]`` and lists
    ``[P, cap, W]``. Mapped over prefixes on the CPU, ``vmap``-ped on accelerators."""
    one = lambda p: enumerate_prefix(p, config, cap)  # noqa: E731
    if backend.is_accelerator():
        return jax.vmap(one)(prefixes)
    return map_sharded(lambda x: lax.map(one, x), prefixes, num_devices)
