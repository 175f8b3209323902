"""Bitmask depth-first search over ONE partial board: the exact-counting kernel.

Method: bitmask backtracking after Richards (1997, "Backtracking algorithms in MCPL using bit
patterns and recursion") and Jeff Somers' counter, over the constellation tasks of
`jaxqueens.core.constellations` (after the Q27 project and NQueensFAF): one branch-free tree edge
per `lax.while_loop` iteration, resumable after a budget of edges. `edge`, `walk` and `search` are
the drivers' hot path; the kernel contract (`jaxqueens.solvers.base`) wraps the same edge for one
task. The docs' count page describes the kernel.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxqueens.core import constellations
from jaxqueens.core.constellations import (
    ALLOW1,
    ALLOW2,
    ALLOW3,
    COUNT_MASK,
    GAP,
    GAP2,
    GAP3,
    TABLE_WORDS,
)
from jaxqueens.solvers import base
from jaxqueens.solvers.base import ignore_key
from jaxqueens.solvers.count_types import (
    AV,
    BACK,
    COLS,
    DONE,
    HEAD,
    LD,
    MAX_BUDGET,
    RD,
    WORDS,
    Config,
    Dfs,
    Params,
    Problem,
    Problems,
    Result,
    State,
    add64,
)

# A task is one partial board of a canonical constellation searched over its *levels*: the columns
# from its first free one on that hold no border queen; a level's child lies `GAP` columns on, and
# a row of its level table (`jaxqueens.core.constellations.level_tables`) holds what an edge needs.


def default_params(config: Config, *, budget: int = MAX_BUDGET) -> Params:
    """The package's default parameters.

    Args:
      config: the kernel's static shape.
      budget: edges a call may take (default `MAX_BUDGET`, 2^31 - 1: `run` searches every task
        of n <= 20 to its end in one call; a task the budget stops is resumed by `resume`).

    Returns:
      `Params`.
    """
    base.check_type("config", config, Config)
    base.check_whole("budget", budget, 0, MAX_BUDGET)
    return Params(jnp.asarray(budget, jnp.int32))


def _checked(config: Config, params: Params, problem, state=None) -> None:
    base.check_type("config", config, Config)
    base.check_budget_params(params, Params, "count", MAX_BUDGET)
    if state is not None:
        base.check_type("state", state, State, "make it with count.init")
    if problem is not None:
        base.check_type("problem", problem, Problem, "take one of count.problems(n).tasks")


def unpack(item, config: Config) -> tuple[Dfs, jax.Array]:
    """Read a search item.

    Args:
      item: uint32 `[config.width]`, the packed state followed by its level table.
      config: the kernel's static shape.

    Returns:
      `(state, table)`: the state (count reset to 0) and the level table, uint32
      `[TABLE_WORDS * levels]`.
    """
    state = Dfs(item[0].astype(jnp.int32), jnp.uint32(0), item[HEAD : config.state_width])
    return state, item[config.state_width :]


def pack(state: Dfs) -> jax.Array:
    """A state as the words a call returns, from which the host resumes an unfinished search.

    Args:
      state: the search state.

    Returns:
      uint32 `[config.state_width]`: the state's item without the table.
    """
    head = jnp.stack([state.d.astype(jnp.uint32), state.found, jnp.uint32(0), jnp.uint32(0)])
    return jnp.concatenate([head, state.stack])


def child(t, cols, ld, rd, bit) -> tuple[jax.Array, ...]:
    """The child a queen on `bit` makes (`bit` may be `[32]` rows at once, as the probe tries
    them), and whether the search enters it: its level and the next two each keep a free row
    (the look-ahead ignores the queens still to come, so it never cuts a solution).

    Args:
      t: uint32 `[TABLE_WORDS]`, the node's row of the level table.
      cols: uint32, the node's occupied rows.
      ld: uint32, the node's rows attacked along diagonals.
      rd: uint32, the node's rows attacked along anti-diagonals.
      bit: uint32, the row placed (one bit; or `[32]`, one row each).

    Returns:
      `(nc, nl, nr, nav, enter)`: the child's three masks, its free rows and bool entered.
    """
    # gaps masked to 0..31: a shift by >= 32 is 0 in XLA, and the mask lets LLVM drop that select
    g0, g2, g3 = t[GAP] & 31, t[GAP2] & 31, t[GAP3] & 31
    nc, nl, nr = cols | bit, (ld | bit) << g0, (rd | bit) >> g0
    nav = ~(nc | nl | nr) & t[ALLOW1]
    ahead2 = ~(nc | (nl << g2) | (nr >> g2)) & t[ALLOW2]  # 0 on the row before the last level
    ahead3 = ~(nc | (nl << g3) | (nr >> g3)) & t[ALLOW3]
    return nc, nl, nr, nav, (nav != 0) & (ahead2 != 0) & (ahead3 != 0)


def edge(state: Dfs, table, config: Config) -> Dfs:
    """One tree edge.

    Takes the lowest untried row of level d; counts the child's free rows when the child is the
    task's last level (`COUNT_MASK` is all ones only on the row before it, and the last level
    has at most one free row: every other column then holds a queen); otherwise goes down to the
    `child` if the look-ahead lets it. Whatever happens, the parent's `av` and the child's row
    are written as 6 contiguous words, and `back` (the nearest level with rows left) spares
    every iteration spent popping.

    Args:
      state: a live state (`d >= 0`).
      table: the task's level table, uint32 `[TABLE_WORDS * levels]`.
      config: the kernel's static shape.

    Returns:
      The state one edge further.
    """
    d = state.d
    level = d & (config.levels - 1)  # == d in a live search; lets LLVM drop the index clamps
    start = level * WORDS
    row = lax.dynamic_slice(state.stack, (start,), (WORDS,), allow_negative_indices=False)
    t = lax.dynamic_slice(table, (level * TABLE_WORDS,), (TABLE_WORDS,))
    cols, ld, rd, back, av = row[COLS], row[LD], row[RD], row[BACK], row[AV]
    bit = av & (jnp.uint32(0) - av)
    rest = av ^ bit
    nc, nl, nr, nav, push = child(t, cols, ld, rd, bit)
    here = d.astype(jnp.uint32)
    keep = jnp.uint32(0) - (rest != 0).astype(jnp.uint32)
    resume = back ^ ((back ^ here) & keep)  # here if rows are left, else the parent's back
    stack = lax.dynamic_update_slice(
        state.stack,
        jnp.stack([rest, nc, nl, nr, resume, nav]),
        (start + AV,),
        allow_negative_indices=False,
    )
    count = state.found + lax.population_count(nav & t[COUNT_MASK])
    return Dfs(jnp.where(push, here + 1, resume).astype(jnp.int32), count, stack)


def walk(state: Dfs, table, params: Params, config: Config) -> tuple[Dfs, jax.Array]:
    """Search until the task is done (`d < 0`) or `params.budget` edges are taken.

    Args:
      state: the search state.
      table: the task's level table.
      params: the edge budget.
      config: the kernel's static shape.

    Returns:
      `(state, taken)`: the state (to resume in a later call with the same total) and the edges
      taken, [] int32.
    """
    # a countdown to 0, not a count up to the budget: one load and compare fewer per edge
    state, left = lax.while_loop(
        lambda c: (c[0].d >= 0) & (c[1] > 0),
        lambda c: (edge(c[0], table, config), c[1] - 1),
        (state, params.budget),
    )
    return state, params.budget - left


def search(items, params: Params, config: Config):
    """Search items one after the other with ONE shared budget (the CPU strategy: a call then
    takes at most `params.budget` edges whatever its items).

    Args:
      items: uint32 `[B, config.width]` search items (`unpack`).
      params: the edge budget of the whole call.
      config: the kernel's static shape.

    Returns:
      `(states, taken)`: uint32 `[B, config.state_width]` (`pack`; a finished search has
      `d = -1`, an item the budget did not reach comes back unchanged, count 0) and the edges
      taken, [] int32.
    """

    def body(left, item):
        state, table = unpack(item, config)
        state, taken = walk(state, table, Params(left), config)
        return left - taken, pack(state)

    left, states = lax.scan(body, params.budget, items)
    return states, params.budget - left


# --- the kernel contract (`jaxqueens.solvers.base`): one task, 64-bit totals (a task resumed
# call after call may pass 2^32; the drivers sum each call's uint32 on the host) ------------


def _add(words, x):
    """uint32 `[2]` (low, high) plus a uint32 [] `x`, with carry."""
    return jnp.stack(add64(words[0], words[1], jnp.asarray(x, jnp.uint32)))


def _dfs(state: State) -> Dfs:
    return Dfs(state.d, jnp.uint32(0), state.stack)


def init(key, config: Config, params: Params, problem: Problem) -> State:
    """The task's search at its start.

    Args:
      key: unused (`None` or a key, checked): the search is exact and deterministic.
      config: the kernel's static shape.
      params: the edge budget.
      problem: the task (its prefix and level table).

    Returns:
      The initial `State`.
    """
    ignore_key(key)
    _checked(config, params, problem)
    cols, ld, rd, av = (jnp.asarray(problem.prefix, jnp.uint32)[i] for i in range(4))
    root = jnp.stack([cols, ld, rd, jnp.uint32(DONE), av])  # the words of stack row 0
    stack = jnp.concatenate([root, jnp.zeros(WORDS * (config.rows - 1), jnp.uint32)])
    zero = jnp.zeros(2, jnp.uint32)
    return State(jnp.where(av == 0, -1, 0).astype(jnp.int32), stack, zero, zero)


def done(state: State, config: Config, params: Params) -> jax.Array:
    """Whether the task's tree is searched.

    Args:
      state: the search state.
      config: the kernel's static shape.
      params: the edge budget.

    Returns:
      [] bool.
    """
    return state.d < 0


def step(state: State, config: Config, params: Params, problem: Problem) -> State:
    """One tree edge (`edge`; a no-op once `done`).

    Args:
      state: the search state.
      config: the kernel's static shape.
      params: the edge budget.
      problem: the task.

    Returns:
      The state one edge further.
    """
    _checked(config, params, problem, state)
    nxt = edge(_dfs(state), problem.table, config)
    moved = State(nxt.d, nxt.stack, _add(state.found, nxt.found), _add(state.edges, 1))
    live = state.d >= 0
    return jax.tree.map(lambda a, b: jnp.where(live, a, b), moved, state)


def resume(state: State, config: Config, params: Params, problem: Problem) -> State:
    """At most `params.budget` more edges (`walk`); call again while not `done`: the totals never
    depend on the budget.

    Args:
      state: the search state.
      config: the kernel's static shape.
      params: the edge budget.
      problem: the task.

    Returns:
      The state, searched further.
    """
    _checked(config, params, problem, state)
    nxt, taken = walk(_dfs(state), problem.table, params, config)
    return State(nxt.d, nxt.stack, _add(state.found, nxt.found), _add(state.edges, taken))


def result(state: State, config: Config, params: Params) -> Result:
    """What the search reports so far.

    Args:
      state: the search state.
      config: the kernel's static shape.
      params: the edge budget.

    Returns:
      `Result`: completions and edges as two uint32 words each.
    """
    return Result(state.found, state.d < 0, state.edges)


def finish(state: State, config: Config, params: Params, problem: Problem) -> Result:
    """`resume`, then `result`.

    Args:
      state: the search state.
      config: the kernel's static shape.
      params: the edge budget.
      problem: the task.

    Returns:
      `Result`.
    """
    return result(resume(state, config, params, problem), config, params)


def run(key, config: Config, params: Params, problem: Problem) -> Result:
    """Search one task until it is done or `params.budget` edges are taken.

    Args:
      key: unused (`None` or a key).
      config: the kernel's static shape.
      params: the edge budget.
      problem: the task.

    Returns:
      `Result`.
    """
    return finish(init(key, config, params, problem), config, params, problem)


def problems(n: int, depth: int | None = None) -> Problems:
    """Every task of the n-queens count (host NumPy): `Q(n) = sum(weights * run(...).found)`.

    One canonical border configuration per symmetry class
    (`jaxqueens.core.constellations.constellations`), its first `depth` columns placed, each
    weighted by its class size. A task whose first level is its last (counted on the host by the
    driver) is written as one edge from an empty virtual level into it, so every task goes through
    the kernel.

    Args:
      n: board size.
      depth: columns placed (default 1 below n = 12, else 2; 1..n-2).

    Returns:
      `Problems`: the config, the tasks and their weights.
    """
    n = int(n)
    if not 1 <= n <= 32:
        raise ValueError(f"n must lie in [1, 32] (uint32 masks), got {n}")
    if n <= 3:  # no border configuration to split: Q(1) = 1, Q(2) = Q(3) = 0
        config, k = Config(n, 2), int(n == 1)
        tasks = np.array([[0, 0, 0, 1]] * k, np.uint32).reshape(k, 4)  # n = 1: row 0 is free
        table = np.zeros((k, config.levels, TABLE_WORDS), np.uint32)
        return _virtual(config, tasks, table, np.ones(k, bool), np.ones(k, np.int64))
    depth = min(1 if n < 12 else 2, n - 2) if depth is None else int(depth)
    if not 1 <= depth <= n - 2:
        raise ValueError(f"depth must lie in [1, {n - 2}] for n = {n}, got {depth}")
    cfg, weights = constellations.constellations(n)
    allow = constellations.allow_masks(n, cfg)
    tasks, owner = constellations.tasks(n, allow, depth)
    _, levels = constellations.level_columns(n, cfg, depth)
    config = Config(n, constellations.table_levels(n, depth))
    table = constellations.level_tables(n, cfg, allow, depth)[owner]
    return _virtual(config, tasks, table, levels[owner] == 1, weights[owner])


def _virtual(config, tasks, table, one, weights) -> Problems:
    """Tasks `one` (their first level is their last: `av`, at most one row, is the count)
    as one edge from a virtual level: av a bit outside the real row's, no gap, the real row as
    the child's allowed rows, the count mask all ones, no look-ahead."""
    tasks, table = tasks.copy(), table.copy()
    av = tasks[one, 3]
    table[one] = 0
    table[one, 0, ALLOW1] = av
    table[one, 0, COUNT_MASK] = 0xFFFFFFFF
    tasks[one] = 0
    tasks[one, 3] = np.where(av == 1, 2, 1)
    prefix = tasks.astype(np.uint32)
    width = config.levels * TABLE_WORDS
    return Problems(config, Problem(prefix, table.reshape(len(prefix), width)), weights)


def to_int(words) -> int:
    """The exact Python int of two uint32 words.

    Args:
      words: uint32 `[2]` (low, high).

    Returns:
      The int.
    """
    w = np.asarray(words).astype(np.uint64)
    return int(w[0]) | int(w[1]) << 32


def total(results: Result, weights) -> int:
    """`sum(weights * found)` over a batch of results, exact (Python ints).

    Args:
      results: `Result` of a batch `[P]` of finished tasks.
      weights: `[P]` class sizes (`problems`).

    Returns:
      The total.

    Raises:
      ValueError: some task is not finished (resume it first).
    """
    left = int(np.size(results.finished) - np.count_nonzero(np.asarray(results.finished)))
    if left:
        raise ValueError(f"{left} tasks are not finished: resume them (a larger budget)")
    found = np.asarray(results.found).reshape(-1, 2).astype(np.uint64)
    weights = np.asarray(weights, np.int64).reshape(-1)
    return sum(
        int(w) * (int(lo) | int(hi) << 32)
        for w, lo, hi in zip(weights, found[:, 0], found[:, 1], strict=True)
    )
