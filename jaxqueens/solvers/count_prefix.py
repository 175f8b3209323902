"""The prefix kernel of exact enumeration: a bitmask DFS over every column of ONE
mirror-symmetric prefix that counts its completions and lists them (n <= 14).

Method: bitmask backtracking after Richards (1997) and Jeff Somers' counter, as in
`jaxqueens.solvers.count` (whose stack words, in `jaxqueens.solvers.count_types`, it shares);
counts are two uint32 words with an explicit carry (exact below 2^64). Batching is
`jaxqueens.parallel.count`'s choice.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens.solvers.count_types import AV, BACK, COLS, DONE, LD, RD, WORDS, add64


@dataclasses.dataclass(frozen=True)
class KernelConfig:
    """Static shape of a search (hashable, a jit-static argument)."""

    n: int  #: board size
    depth: int  #: queens every prefix has placed

    @property
    def rows(self) -> int:
        """Stack rows: one per level below the prefix, plus one for the write past the last."""
        return self.n - self.depth + 1

    @property
    def width(self) -> int:
        """Words per enumerated solution: the `cols` mask of every level, then the full board."""
        return self.n - self.depth + 1


class Lane(NamedTuple):
    """The DFS state of one prefix (`R` = `config.rows`)."""

    d: jax.Array  #: [] int32 stack row of the current level; -1 once the subtree is searched
    lo: jax.Array  #: [] uint32 solutions found, low word
    hi: jax.Array  #: [] uint32 solutions found, high word
    stack: jax.Array  #: [5 R] uint32: row r = words 5r..5r+4 = (cols, ld, rd, back, av) of level r
    #: [n] uint32 rows each column may use (a constellation's masks; all rows else)
    allow: jax.Array


def init_prefix(prefix, config: KernelConfig, allow=None) -> Lane:
    """The lane that searches every completion of a partial board.

    Args:
      prefix: uint32 `[4]` (cols, ld, rd, av) of the partial board.
      config: the prefix kernel's static shape.
      allow: uint32 `[n]`, the rows column k may use (default: every row).

    Returns:
      A live `Lane` at the prefix's level.
    """
    prefix = prefix.astype(jnp.uint32)
    root = jnp.stack([prefix[0], prefix[1], prefix[2], jnp.uint32(DONE), prefix[3]])
    stack = jnp.concatenate([root, jnp.zeros(WORDS * (config.rows - 1), jnp.uint32)])
    d = jnp.where(prefix[3] == 0, -1, 0).astype(jnp.int32)
    if allow is None:
        allow = jnp.full((config.n,), (1 << config.n) - 1, jnp.uint32)
    return Lane(d, jnp.uint32(0), jnp.uint32(0), stack, allow.astype(jnp.uint32))


def _advance(lane: Lane, config: KernelConfig):
    """One tree edge. Returns the new lane, whether the child is the last column, and the child's
    `cols` and `av` masks (the enumeration kernel needs them)."""
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
    stack = lax.dynamic_update_slice(
        lane.stack,
        jnp.stack([rest, nc, nl, nr, resume, nav]),
        (start + AV,),
        allow_negative_indices=False,
    )
    lo, hi = add64(lane.lo, lane.hi, jnp.where(last, lax.population_count(nav), jnp.uint32(0)))
    d = jnp.where(push, here + 1, resume).astype(jnp.int32)  # DONE -> -1
    return Lane(d, lo, hi, stack, lane.allow), last, nc, nav


def step_prefix(lane: Lane, config: KernelConfig) -> Lane:
    """One counting iteration.

    Args:
      lane: a live lane (`d >= 0`).
      config: the prefix kernel's static shape.

    Returns:
      The lane one tree edge further.
    """
    return _advance(lane, config)[0]


def run_prefix(lane: Lane, config: KernelConfig):
    """Search a lane's subtree to the end.

    Args:
      lane: the lane (`init_prefix`).
      config: the prefix kernel's static shape.

    Returns:
      Solutions, uint32 `[2]` (low word, high word).
    """
    lane = lax.while_loop(lambda s: s.d >= 0, lambda s: step_prefix(s, config), lane)
    return jnp.stack([lane.lo, lane.hi])


def count_prefix(prefix, config: KernelConfig):
    """Count the solutions extending one prefix.

    Args:
      prefix: uint32 `[4]` (cols, ld, rd, av) of a partial board.
      config: the prefix kernel's static shape.

    Returns:
      Solutions, uint32 `[2]` (low word, high word).
    """
    return run_prefix(init_prefix(prefix, config), config)


def enumerate_prefix(prefix, config: KernelConfig, cap: int):
    """List the solutions extending one prefix.

    Row i of the list holds the `cols` masks of levels 0..n-depth-1 of solution i and then the
    full mask; consecutive differences are the rows of the queens (decoded on the host). At most
    `cap` solutions are written; the count is exact regardless.

    Args:
      prefix: uint32 `[4]` (cols, ld, rd, av) of a partial board.
      config: the prefix kernel's static shape.
      cap: most solutions listed.

    Returns:
      `(count, lists)`: uint32 `[2]` (low word, high word) and uint32 `[cap, W]`.
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
        (init_prefix(prefix, config), jnp.zeros((cap, config.width), jnp.uint32)),
    )
    return jnp.stack([lane.lo, lane.hi]), out
