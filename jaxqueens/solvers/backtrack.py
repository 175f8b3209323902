"""First solution by plain backtracking, iterative, in JAX.

The classic solver (Wirth, *Algorithms + Data Structures = Programs*, 1976, section 3.5) places
queens column by column, trying rows in increasing order, and backtracks when a column has no
safe row left; here the recursion is an explicit fixed-capacity stack of bit masks in a
`lax.while_loop`. A *placement* puts a queen on a safe square, a *backtrack* removes one (the
final queens stay, so placements - backtracks = n): n = 8 gives `[0, 4, 7, 5, 2, 6, 1, 3]` after
113 placements and 105 backtracks. `randomised` tries each column's rows in a random order drawn
from its key; `jaxqueens.drivers.backtrack` batches such searches.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

MAX_N = 32  # uint32 masks
DEFAULT_MAX_STEPS = 2**31 - 1  # placements + backtracks; keeps the int32 counters exact
RUNNING, SOLVED, EXHAUSTED, OUT_OF_STEPS = range(4)


@dataclasses.dataclass(frozen=True)
class Config:
    """Static configuration (hashable, jit-static): board size and the step budget
    (placements + backtracks).
    """

    n: int  #: board size, 1..32.
    max_steps: int = DEFAULT_MAX_STEPS  #: the most placements plus backtracks a search may take.


class State(NamedTuple):
    """One backtracking search."""

    order: jax.Array  #: [n, n] int32 rows of each column in the order they are tried
    pos: jax.Array  #: [n] int32 index into order[c] of column c's queen (valid for c < col)
    masks: jax.Array  #: [n + 1, 3] uint32 attacked rows / diagonals / anti-diagonals per column
    col: jax.Array  #: [] int32 column being filled
    start: jax.Array  #: [] int32 first index of order[col] still to try
    placements: jax.Array  #: [] int32
    backtracks: jax.Array  #: [] int32
    status: jax.Array  #: [] int32 RUNNING, SOLVED, EXHAUSTED or OUT_OF_STEPS


class Result(NamedTuple):
    """Outcome of one search ([B] leading axis when batched)."""

    rows: jax.Array  #: [n] int32 the solution (meaningless where not solved)
    solved: jax.Array  #: [] bool
    placements: jax.Array  #: [] int32
    backtracks: jax.Array  #: [] int32


def init(order, config: Config) -> State:
    """A fresh search trying the rows of column c in the order `order[c]` (int32 [n, n]).

    Args:
      order: int32 [n, n], the row order of each column.
      config: the static `Config`.

    Returns:
      The search's first `State`.
    """
    n = config.n
    return State(
        order.astype(jnp.int32),
        jnp.zeros(n, jnp.int32),
        jnp.zeros((n + 1, 3), jnp.uint32),
        jnp.int32(0),
        jnp.int32(0),
        jnp.int32(0),
        jnp.int32(0),
        jnp.int32(SOLVED if n == 0 else RUNNING),
    )


def step(s: State, config: Config) -> State:
    """Place the next safe queen of column `col` or, if none is left, backtrack one column.

    Args:
      s: the search's `State`.
      config: the static `Config`.

    Returns:
      The next `State`.
    """
    n = config.n
    all_rows = jnp.uint32((1 << n) - 1)
    m = lax.dynamic_slice(s.masks, (s.col, 0), (1, 3))[0]
    free = all_rows & ~(m[0] | m[1] | m[2])
    order = lax.dynamic_slice(s.order, (s.col, 0), (1, n))[0]
    idx = jnp.arange(n, dtype=jnp.int32)
    cand = (((free >> order.astype(jnp.uint32)) & 1) == 1) & (idx >= s.start)
    found = jnp.any(cand)
    t = jnp.argmax(cand).astype(jnp.int32)
    # place: record the position, push the masks of the next column
    row = lax.dynamic_slice(order, (t,), (1,))[0]
    bit = jnp.uint32(1) << row.astype(jnp.uint32)
    nxt = jnp.stack([m[0] | bit, (m[1] | bit) << 1, (m[2] | bit) >> 1])
    masks = lax.dynamic_update_slice(
        s.masks, jnp.where(found, nxt, m)[None], (jnp.where(found, s.col + 1, s.col), 0)
    )
    pos = lax.dynamic_update_slice(s.pos, t[None], (s.col,))  # garbage if not found: unread
    # backtrack: resume the previous column after its queen's position
    prev = jnp.maximum(s.col - 1, 0)
    col = jnp.where(found, s.col + 1, s.col - 1)
    start = jnp.where(found, 0, lax.dynamic_slice(s.pos, (prev,), (1,))[0] + 1)
    placements = s.placements + found
    backtracks = s.backtracks + (~found & (s.col > 0))
    status = jnp.where(
        found & (col == n), SOLVED, jnp.where(~found & (s.col == 0), EXHAUSTED, RUNNING)
    )
    status = jnp.where(
        (status == RUNNING) & (placements + backtracks >= config.max_steps), OUT_OF_STEPS, status
    )
    return State(
        s.order,
        pos,
        masks,
        jnp.maximum(col, 0),
        start,
        placements,
        backtracks,
        status.astype(jnp.int32),
    )


def search(order, config: Config) -> State:
    """Run one search to its end (solved, exhausted or out of steps).

    Args:
      order: int32 [n, n], the row order of each column.
      config: the static `Config`.

    Returns:
      The final `State`.
    """
    return lax.while_loop(
        lambda s: s.status == RUNNING, lambda s: step(s, config), init(order, config)
    )


def result(s: State) -> Result:
    """What a finished search reports: its rows, whether it solved, and its counts.

    Args:
      s: a finished search's `State`.

    Returns:
      Its `Result`.
    """
    rows = jnp.take_along_axis(s.order, s.pos[:, None], axis=1)[:, 0]
    return Result(rows, s.status == SOLVED, s.placements, s.backtracks)


def classic(config: Config) -> Result:
    """The classic search: the rows of every column tried in increasing order.

    Args:
      config: the static `Config`.

    Returns:
      The search's `Result`.
    """
    order = jnp.broadcast_to(jnp.arange(config.n, dtype=jnp.int32), (config.n, config.n))
    return result(search(order, config))


def random_orders(key, n: int):
    """Per-column random row orders `[n, n]` int32 from `key`.

    Args:
      key: a typed `jax.random.key` (consumed).
      n: board size (static).

    Returns:
      int32 [n, n].
    """
    keys = jax.random.split(key, n)
    return jax.vmap(lambda k: jax.random.permutation(k, n))(keys).astype(jnp.int32)


def randomised(key, config: Config) -> Result:
    """One randomised search: the rows of each column tried in a random order from `key`.

    Args:
      key: a typed `jax.random.key` (consumed).
      config: the static `Config`.

    Returns:
      The search's `Result`.
    """
    return result(search(random_orders(key, config.n), config))
