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

A constellation task (:mod:`jaxqueens.core.constellations`) also carries ``allow``, the rows
each column may use (the border queens' rows alone in their columns, the cells they attack
closed elsewhere): a level's free rows are ``~(cols | ld | rd) & allow[column]``, one dynamic
index per edge (measured: no slower than the plain kernel). Without a task, every row is allowed.

The stack is a fixed flat uint32 array of R rows of 5 words, ``(cols, ld, rd, back, av)``, so the
words an edge changes -- the parent's ``av`` and the child's whole row -- are 6 contiguous words,
written with one ``dynamic_update_slice`` (no scatter, no sort; 8% less time per edge at n = 16
than writing both whole rows), and XLA:CPU compiles the loop as one native function
(:mod:`jaxqueens.parallel.devices`). Stack row d is column ``depth + d``, so the child's column
and whether it is the last come from d (a popcount and a remainder by n measured 8-15% slower),
and indices are never negative inside a live search, so the slices say
``allow_negative_indices=False`` (JAX otherwise adds a wrap-around select to every index); a
finished lane's garbage indices clamp.
Counts are two uint32 words with an explicit carry (exact below 2^64).

Everything here is written for ONE prefix. Batching is the backend's choice, made in
:mod:`jaxqueens.parallel.items` and called from :mod:`jaxqueens.drivers.count`: one prefix per
``lax.map`` iteration sharded over host devices on the CPU; lockstep ``vmap`` lanes with refill
(:func:`step` on every live lane) on accelerators.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

COLS, LD, RD, BACK, AV = range(5)  # the words of a stack row
WORDS = 5
DONE = 0xFFFFFFFF  # ``back`` of the root level: returning there ends the search


@dataclasses.dataclass(frozen=True)
class KernelConfig:
    """Static shape of a search (hashable, a jit-static argument): board size and how many
    queens every prefix has placed."""

    n: int
    depth: int

    @property
    def rows(self) -> int:
        """Stack rows: one per level below the prefix, plus one for the write past the last."""
        return self.n - self.depth + 1

    @property
    def width(self) -> int:
        """Words per enumerated solution: the ``cols`` mask of every level, then the full board."""
        return self.n - self.depth + 1


class Lane(NamedTuple):
    """The DFS state of one prefix (``R`` = ``config.rows``)."""

    d: jax.Array  # [] int32 stack row of the current level; -1 once the subtree is searched
    lo: jax.Array  # [] uint32 solutions found, low word
    hi: jax.Array  # [] uint32 solutions found, high word
    stack: jax.Array  # [5 R] uint32: row r = words 5r..5r+4 = (cols, ld, rd, back, av) of level r
    allow: jax.Array  # [n] uint32 rows each column may use (a constellation's masks; all rows else)


def add64(lo, hi, x):
    """``(hi, lo) + x`` on two uint32 words with carry: exact where a uint32 sum would wrap."""
    lo2 = lo + x
    return lo2, hi + (lo2 < x).astype(jnp.uint32)


def init(prefix, config: KernelConfig, allow=None) -> Lane:
    """Lane for ``prefix`` = uint32 ``[4]`` (cols, ld, rd, av) of a partial board; ``allow``
    uint32 ``[n]``: the rows column k may use (default: every row)."""
    prefix = prefix.astype(jnp.uint32)
    root = jnp.stack([prefix[0], prefix[1], prefix[2], jnp.uint32(DONE), prefix[3]])
    stack = jnp.concatenate([root, jnp.zeros(WORDS * (config.rows - 1), jnp.uint32)])
    d = jnp.where(prefix[3] == 0, -1, 0).astype(jnp.int32)
    if allow is None:
        allow = jnp.full((config.n,), (1 << config.n) - 1, jnp.uint32)
    return Lane(d, jnp.uint32(0), jnp.uint32(0), stack, allow.astype(jnp.uint32))


def init_task(task, config: KernelConfig) -> Lane:
    """Lane for a constellation task: uint32 ``[4 + n]``, the prefix (cols, ld, rd, av) and then
    the ``allow`` masks of its constellation (:func:`jaxqueens.core.constellations.tasks`)."""
    return init(task[:4], config, task[4 : 4 + config.n])


def _advance(lane: Lane, config: KernelConfig, keep=None):
    """One tree edge. Returns the new lane, whether the child is the last column, and the child's
    ``cols`` and ``av`` masks (the enumeration kernel needs them). ``keep`` (a [] bool, lockstep
    lanes only): the lane stays as it is, its stack words written back unchanged."""
    n, depth = config.n, config.depth
    all_rows = jnp.uint32((1 << n) - 1)
    start = lane.d * WORDS
    row = lax.dynamic_slice(lane.stack, (start,), (WORDS,), allow_negative_indices=False)
    cols, ld, rd, back, av = row[COLS], row[LD], row[RD], row[BACK], row[AV]
    bit = av & (jnp.uint32(0) - av)
    rest = av ^ bit
    nc, nl, nr = cols | bit, (ld | bit) << 1, (rd | bit) >> 1
    # stack row d is column depth + d, so the child's column is known without a popcount
    allow = lax.dynamic_slice(
        lane.allow, (lane.d + (depth + 1),), (1,), allow_negative_indices=False
    )[0]
    nav = all_rows & ~(nc | nl | nr) & allow
    last = lane.d == n - depth - 2
    push = ~last & (nav != 0)
    here = lane.d.astype(jnp.uint32)
    resume = jnp.where(rest != 0, here, back)  # where to go once the child's subtree is done
    # the words that change are contiguous: the parent's av, then the child's whole row
    words = jnp.stack([rest, nc, nl, nr, resume, nav])
    if keep is not None:  # the same six words, read back: no select over the whole stack
        old = lax.dynamic_slice(lane.stack, (start + AV,), (6,), allow_negative_indices=False)
        words = jnp.where(keep, old, words)
    stack = lax.dynamic_update_slice(lane.stack, words, (start + AV,), allow_negative_indices=False)
    lo, hi = add64(lane.lo, lane.hi, jnp.where(last, lax.population_count(nav), jnp.uint32(0)))
    d = jnp.where(push, here + 1, resume).astype(jnp.int32)  # DONE -> -1
    if keep is not None:
        d, lo, hi = (jnp.where(keep, a, b) for a, b in ((lane.d, d), (lane.lo, lo), (lane.hi, hi)))
    return Lane(d, lo, hi, stack, lane.allow), last, nc, nav


def step(lane: Lane, config: KernelConfig) -> Lane:
    """One counting iteration (the lane must be live: ``d >= 0``)."""
    return _advance(lane, config)[0]


def step_lane(lane: Lane, config: KernelConfig) -> Lane:
    """One lockstep iteration of a lane that may be finished (``d < 0``: it stays as it is).
    The same as :func:`step` on a live lane; a finished lane writes its own stack words back
    instead of being selected whole (``make gpu-check``'s model: the select read and wrote every
    lane's stack each iteration, most of the bytes moved per tree edge)."""
    return _advance(lane, config, keep=lane.d < 0)[0]


def run(lane: Lane, config: KernelConfig):
    """Search a lane's subtree to the end: uint32 ``[2]`` solutions (low word, high word)."""
    lane = lax.while_loop(lambda s: s.d >= 0, lambda s: step(s, config), lane)
    return jnp.stack([lane.lo, lane.hi])


def count_prefix(prefix, config: KernelConfig):
    """Solutions extending one prefix: uint32 ``[2]`` (low word, high word)."""
    return run(init(prefix, config), config)


def count_task(task, config: KernelConfig):
    """Completions of one constellation task (:func:`init_task`): uint32 ``[2]``."""
    return run(init_task(task, config), config)


def enumerate_prefix(prefix, config: KernelConfig, cap: int):
    """Solutions extending one prefix, listed: (count uint32 ``[2]``, uint32 ``[cap, W]``).

    Row i of the list holds the ``cols`` masks of levels 0..n-depth-1 of solution i and then the
    full mask; consecutive differences are the rows of the queens (decoded on the host). At most
    ``cap`` solutions are written; the count is exact regardless.
    """
    levels = config.n - config.depth - 1

    def body(carry):
        lane, out = carry
        new, last, nc, nav = _advance(lane, config)
        vec = jnp.concatenate(
            [new.stack.reshape(-1, WORDS)[:levels, COLS], jnp.stack([nc, nc | nav])]
        )
        hit = last & (nav != 0) & (lane.lo < cap)
        out = lax.cond(
            hit,
            lambda o: lax.dynamic_update_slice(o, vec[None], (lane.lo.astype(jnp.int32), 0)),
            lambda o: o,
            out,
        )
        return new, out

    lane, out = lax.while_loop(
        lambda c: c[0].d >= 0,
        body,
        (init(prefix, config), jnp.zeros((cap, config.width), jnp.uint32)),
    )
    return jnp.stack([lane.lo, lane.hi]), out
