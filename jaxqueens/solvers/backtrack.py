"""First solution by plain backtracking -- the method taught first -- iterative, in JAX.

The classic solver (Wirth, *Algorithms + Data Structures = Programs*, 1976, section 3.5; the
recursive course solver) places queens column by column, trying rows in increasing order, and
backtracks when a column has no safe row left. Here the recursion is an explicit fixed-capacity
stack in a ``lax.while_loop``: per column the chosen position and the attacked-row masks (rows,
diagonals, anti-diagonals as uint32 bit masks), written with ``dynamic_update_slice``.

Counting, calibrated on the classic figures: a *placement* is putting a queen on a safe square; a
*backtrack* is removing a queen because every later row of the next column is attacked. The final
queens stay, so placements - backtracks = n. n = 8: ``[0, 4, 7, 5, 2, 6, 1, 3]`` after 113
placements and 105 backtracks; n = 17: ``[0, 2, 4, 1, 7, 10, 14, 6, 15, 13, 16, 3, 5, 8, 11, 9,
12]`` after 5374 placements and 5357 backtracks.

The randomised variant tries the rows of each column in a random order drawn from
``fold_in(key, i)`` for search i, so a search's result does not depend on how many run beside it;
many independent searches run batched (one per ``lax.map`` iteration over host devices on the
CPU, lockstep ``vmap`` on accelerators).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxqueens.parallel import devices as backend

from jaxqueens.core import checker
from jaxqueens.solvers.count import map_sharded
from jaxqueens.errors import QueensError

MAX_N = 32  # uint32 masks
DEFAULT_MAX_STEPS = 2**31 - 1  # placements + backtracks; keeps the int32 counters exact
RUNNING, SOLVED, EXHAUSTED, OUT_OF_STEPS = range(4)


class Config(NamedTuple):
    """Static configuration: board size and the step budget (placements + backtracks)."""

    n: int
    max_steps: int = DEFAULT_MAX_STEPS


class State(NamedTuple):
    """One backtracking search."""

    order: jax.Array  # [n, n] int32 rows of each column in the order they are tried
    pos: jax.Array  # [n] int32 index into order[c] of column c's queen (valid for c < col)
    masks: jax.Array  # [n + 1, 3] uint32 attacked rows / diagonals / anti-diagonals per column
    col: jax.Array  # [] int32 column being filled
    start: jax.Array  # [] int32 first index of order[col] still to try
    placements: jax.Array  # [] int32
    backtracks: jax.Array  # [] int32
    status: jax.Array  # [] int32 RUNNING, SOLVED, EXHAUSTED or OUT_OF_STEPS


class Result(NamedTuple):
    """Outcome of a batch of searches (leading axis [B])."""

    rows: jax.Array  # [B, n] int32 the solution (meaningless where not solved)
    solved: jax.Array  # [B] bool
    placements: jax.Array  # [B] int32
    backtracks: jax.Array  # [B] int32


def init(order, config: Config) -> State:
    """A fresh search trying the rows of column c in the order ``order[c]`` (int32 [n, n])."""
    n = config.n
    return State(order.astype(jnp.int32), jnp.zeros(n, jnp.int32), jnp.zeros((n + 1, 3), jnp.uint32),
                 jnp.int32(0), jnp.int32(0), jnp.int32(0), jnp.int32(0),
                 jnp.int32(SOLVED if n == 0 else RUNNING))


def step(s: State, config: Config) -> State:
    """Place the next safe queen of column ``col`` or, if none is left, backtrack one column."""
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
    masks = lax.dynamic_update_slice(s.masks, jnp.where(found, nxt, m)[None],
                                     (jnp.where(found, s.col + 1, s.col), 0))
    pos = lax.dynamic_update_slice(s.pos, t[None], (s.col,))  # garbage if not found: unread
    # backtrack: resume the previous column after its queen's position
    prev = jnp.maximum(s.col - 1, 0)
    col = jnp.where(found, s.col + 1, s.col - 1)
    start = jnp.where(found, 0, lax.dynamic_slice(s.pos, (prev,), (1,))[0] + 1)
    placements = s.placements + found
    backtracks = s.backtracks + (~found & (s.col > 0))
    status = jnp.where(found & (col == n), SOLVED, jnp.where(~found & (s.col == 0), EXHAUSTED, RUNNING))
    status = jnp.where((status == RUNNING) & (placements + backtracks >= config.max_steps),
                       OUT_OF_STEPS, status)
    return State(s.order, pos, masks, jnp.maximum(col, 0), start, placements, backtracks,
                 status.astype(jnp.int32))


def search(order, config: Config) -> State:
    """Run one search to its end (solved, exhausted or out of steps)."""
    return lax.while_loop(lambda s: s.status == RUNNING, lambda s: step(s, config),
                          init(order, config))


def _result(s: State) -> Result:
    rows = jnp.take_along_axis(s.order, s.pos[:, None], axis=1)[:, 0]
    return Result(rows, s.status == SOLVED, s.placements, s.backtracks)


def _check_n(n: int) -> None:
    if not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_N:
        raise QueensError(f"n = {n} is out of range: backtracking supports 1 <= n <= {MAX_N}")


@functools.partial(jax.jit, static_argnums=(0,))
def _classic(config: Config) -> Result:
    order = jnp.broadcast_to(jnp.arange(config.n, dtype=jnp.int32), (config.n, config.n))
    return jax.tree.map(lambda x: x[None], _result(search(order, config)))


def first_solution(n: int, max_steps: int = DEFAULT_MAX_STEPS) -> tuple[np.ndarray | None, int, int]:
    """The classic first solution: rows tried in increasing order, column by column.

    Returns:
      ``(rows, placements, backtracks)``: rows is int32 ``[n]`` (``rows[c]`` = row of column c's
      queen), or None when the board has no solution (n = 2, 3); the counts then describe the
      exhaustive search (n = 2: 2 and 2; n = 3: 5 and 5).

    Raises:
      QueensError: n out of 1..32, or the search needs more than ``max_steps`` steps.
    """
    _check_n(n)
    r = jax.tree.map(np.asarray, _classic(Config(int(n), int(max_steps))))
    placements, backtracks = int(r.placements[0]), int(r.backtracks[0])
    if not r.solved[0]:
        if placements + backtracks >= max_steps:
            raise QueensError(f"backtracking for n = {n} did not finish within {max_steps:,} "
                              "steps; raise max_steps or use a randomised search")
        return None, placements, backtracks
    rows = r.rows[0]
    checker.require_solutions(rows[None], what=f"backtracking for n = {n}", n=n)
    return rows, placements, backtracks


def random_orders(key, n: int):
    """Per-column random row orders ``[n, n]`` int32 from ``key`` (key is consumed)."""
    keys = jax.random.split(key, n)
    return jax.vmap(lambda k: jax.random.permutation(k, n))(keys).astype(jnp.int32)


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def _random(key, config: Config, num: int, num_devices: int) -> Result:
    ids = jnp.arange(num, dtype=jnp.int32)
    one = lambda i: _result(search(random_orders(jax.random.fold_in(key, i), config.n), config))  # noqa: E731
    if backend.is_accelerator():
        return jax.vmap(one)(ids)
    return map_sharded(lambda x: lax.map(one, x), ids, num_devices)


def random_first_solutions(key, n: int, num: int, max_steps: int = 1_000_000) -> Result:
    """``num`` independent randomised backtracking searches, batched.

    Search i tries the rows of each column in a random order drawn from ``fold_in(key, i)``, so
    its result does not depend on ``num`` or the device count. Solved rows are verified by the
    checker.

    Returns:
      :class:`Result` of host arrays with leading axis [num].
    """
    _check_n(n)
    if num < 1:
        raise QueensError(f"num = {num}: ask for at least one search")
    d = 1 if backend.is_accelerator() else jax.local_device_count()
    padded = -(-num // d) * d
    r = jax.tree.map(lambda x: np.asarray(x)[:num], _random(key, Config(int(n), int(max_steps)),
                                                            padded, d))
    if r.solved.any():
        checker.require_solutions(r.rows[r.solved], what=f"randomised backtracking, n = {n}", n=n)
    return r
