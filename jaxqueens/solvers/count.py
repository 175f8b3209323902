"""Bitmask depth-first search over ONE partial board: the exact-counting kernels.

Method: bitmask backtracking after Richards (1997, "Backtracking algorithms in MCPL using bit
patterns and recursion") as popularised by Jeff Somers' counter (`shared/baselines/count_c.c`),
over the constellation tasks of `jaxqueens.core.constellations` (after the Q27 project and
NQueensFAF), one branch-free tree edge per `lax.while_loop` iteration, resumable from its stack
after a budget of edges. The constellation search (`Config`, `edge`, `walk`, `search`) walks a
level table with border columns skipped and a look-ahead of two levels; the prefix kernel
(`KernelConfig`, `count_prefix`, `enumerate_prefix`) lists the solutions of mirror-symmetric
prefixes (n <= 14). The kernel contract (`jaxqueens.solvers.base`: `init`, `step`, `run`,
`resume`, `finish`) wraps the same edge for one task; `problems` builds every task of a board.
Everything here is written for ONE task: batching is `jaxqueens.parallel.items`' choice.
docs/reference/count.md describes the kernel and shows an example.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxqueens.core import constellations
from jaxqueens.core.rng import hash_randint
from jaxqueens.errors import QueensError
from jaxqueens.solvers import base
from jaxqueens.solvers.base import ignore_key

COLS, LD, RD, BACK, AV = range(5)  # the words of a stack row
WORDS = 5
DONE = 0xFFFFFFFF  # `back` of the root level: returning there ends the search


def add64(lo, hi, x):
    """`(hi, lo) + x` on two uint32 words with carry: exact where a uint32 sum would wrap.

    Args:
      lo: low word, uint32.
      hi: high word, uint32.
      x: uint32 addend.

    Returns:
      `(lo, hi)` of the sum.
    """
    lo2 = lo + x
    return lo2, hi + (lo2 < x).astype(jnp.uint32)


# --- the constellation search: level tables, look-ahead, a per-call edge budget ----------------
#
# A task is one partial board of a canonical constellation (jaxqueens.core.constellations.tasks)
# searched over its *levels*: the board columns from the task's first free column on that hold
# no border queen. A border queen's column is never searched (its queen is fixed and every other
# column's allowed rows already avoid it), so a level's child lies `gap` columns further on and
# the diagonals shift by the gap. A level table row (TABLE_WORDS uint32, built on the host by
# jaxqueens.core.constellations.level_tables) holds what an edge from that level needs:

GAP, ALLOW1, GAP2, ALLOW2, GAP3, ALLOW3, COUNT_MASK = range(7)  # the words of a level table row
TABLE_WORDS = 8
HEAD = 4  # a search item: (d, count, 0, 0), then the stack, then the level table
MAX_BUDGET = 2**31 - 1  # edges one call may take (a count never exceeds the edges taken)


@dataclasses.dataclass(frozen=True)
class Config:
    """Static shape of a constellation search (hashable, jit-static).

    Attributes:
      n: board size (uint32 masks: n <= 32).
      levels: rows of a level table, a power of two above the most levels any task has (the
        level index is masked to it, so no index is ever clamped: 17% fewer instructions per
        edge than clamped indices, measured).
    """

    n: int
    levels: int

    def __post_init__(self):
        base.check_whole("n", self.n, 1, 32)
        base.check_whole("levels", self.levels, 2, 1 << 12)
        if self.levels & (self.levels - 1):
            raise QueensError(f"levels must be a power of two >= 2, got {self.levels}")

    @property
    def rows(self) -> int:
        """Stack rows: twice the table rows, so the masked row and its child are in range."""
        return 2 * self.levels

    @property
    def state_width(self) -> int:
        """uint32 words of a search's resumable state: `HEAD`, then the stack."""
        return HEAD + WORDS * self.rows

    @property
    def width(self) -> int:
        """uint32 words of a search item: its state, then its level table."""
        return self.state_width + TABLE_WORDS * self.levels


class Params(NamedTuple):
    """Dynamic parameters: a new value never recompiles; `jax.vmap` sweeps them."""

    budget: jax.Array  # [] int32 in 0..MAX_BUDGET: tree edges a call may take


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
    """The kernel's arguments checked at its boundary (`jaxqueens.solvers.base`)."""
    base.check_type("config", config, Config)
    base.check_budget_params(params, Params, "count", MAX_BUDGET)
    if state is not None:
        base.check_type("state", state, State, "make it with count.init")
    if problem is not None:
        base.check_type("problem", problem, Problem, "take one of count.problems(n).tasks")


class Dfs(NamedTuple):
    """One task's search as the drivers' hot loop carries it, resumable (`R` =
    `config.rows`); the contract's `State` adds 64-bit totals around it."""

    d: jax.Array  # [] int32 stack row (= level) of the current node; -1 once searched
    found: jax.Array  # [] uint32 completions found since the state was unpacked (<= edges taken)
    stack: jax.Array  # [5 R] uint32: row r = (cols, ld, rd, back, av) of level r


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


def edge(state: Dfs, table, config: Config) -> Dfs:
    """One tree edge.

    Takes the lowest untried row of level d; counts the child's free rows when the child is the
    task's last level (`COUNT_MASK` is all ones only on the row before it, and the last level
    has at most one free row: every other column then holds a queen); otherwise goes down to the
    child if its level and the next two levels each keep a free row (the look-ahead ignores the
    queens still to come, so it never cuts a solution). Whatever happens, the parent's `av` and
    the child's row are written as 6 contiguous words, and `back` (the nearest level with rows
    left) spares every iteration spent popping.

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
    # gaps masked to 0..31: a shift by >= 32 is 0 in XLA, and the mask lets LLVM drop that select
    g0, g2, g3 = t[GAP] & 31, t[GAP2] & 31, t[GAP3] & 31
    bit = av & (jnp.uint32(0) - av)
    rest = av ^ bit
    nc, nl, nr = cols | bit, (ld | bit) << g0, (rd | bit) >> g0
    nav = ~(nc | nl | nr) & t[ALLOW1]
    ahead2 = ~(nc | (nl << g2) | (nr >> g2)) & t[ALLOW2]  # 0 on the row before the last level
    ahead3 = ~(nc | (nl << g3) | (nr >> g3)) & t[ALLOW3]
    push = (nav != 0) & (ahead2 != 0) & (ahead3 != 0)
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


# --- the kernel contract (jaxqueens.solvers.base): one task, 64-bit totals ---------------------
#
# Thin wrappers over the hot path above (the same `edge` and `walk`): the contract's
# State keeps the completions and edges since `init` as two uint32 words each (a task
# resumed call after call may pass 2^32), where the drivers sum each call's uint32 on the host.


class Problem(NamedTuple):
    """One task (dynamic): where its search starts and the levels it walks. `problems`
    builds every task of a board."""

    prefix: jax.Array  # [4] uint32 (cols, ld, rd, av) at the task's first level
    table: jax.Array  # [levels * TABLE_WORDS] uint32 its level table (core.constellations)


class State(NamedTuple):
    """One task's search, resumable (`R` = `config.rows`)."""

    d: jax.Array  # [] int32 stack row (= level) of the current node; -1 once searched
    stack: jax.Array  # [5 R] uint32: row r = (cols, ld, rd, back, av) of level r
    found: jax.Array  # [2] uint32 completions found since init (low, high word: exact < 2^64)
    edges: jax.Array  # [2] uint32 tree edges taken since init (low, high word)


class Result(NamedTuple):
    """What one task's search reports."""

    found: jax.Array  # [2] uint32 completions found (low, high word: exact below 2^64)
    finished: jax.Array  # [] bool the task's tree is searched (found is its completion count)
    edges: jax.Array  # [2] uint32 tree edges taken (low, high word)


class Problems(NamedTuple):
    """Every task of a board (host NumPy; `problems`): `Q(n) = sum(weights * found)`."""

    config: Config  # the static shape every task shares
    tasks: Problem  # prefix [P, 4], table [P, levels * TABLE_WORDS] uint32
    weights: np.ndarray  # [P] int64 each task's weight (its constellation's class size)


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


# --- Knuth's probe of a task's tree: what `count --plan` estimates a count's size from --------


class Probe(NamedTuple):
    """What one random walk down a task's search tree reports (Knuth 1975): unbiased estimates
    of the whole task's search, exact for a tree with one branch per level."""

    edges: jax.Array  # [] float32 tree edges the task's search takes (`edge` calls)
    found: jax.Array  # [] float32 completions it finds


def probe(problem: Problem, seed, lane, config: Config) -> Probe:
    """One Knuth probe (Knuth 1975, "Estimating the efficiency of backtrack programs") of the tree
    `run` searches for a task.

    At each node the probe adds `w * popcount(av)` to the edges (one edge per row tried; `w` is
    the product of the branchings above, 1 at the root) and `w` times the rows counted on the row
    before the last level; the children `edge` would enter (a free row there and at the two
    look-ahead levels) number `c`; the probe goes down into one of them uniformly at random and
    multiplies `w` by `c` (`c = 0`: it ends, `w = 0`). Every level is one `fori_loop` iteration,
    the rows of a node tried at once (`[32]` words); the random child comes from the counter hash
    of (`seed`, level, `lane`) (`jaxqueens.core.rng`).

    Args:
      problem: the task (its prefix and level table).
      seed: uint32 seed of the counter hash.
      lane: the probe's index (its stream of the hash).
      config: the kernel's static shape.

    Returns:
      `Probe`: the estimated edges and completions.
    """
    rows = jnp.asarray(problem.table, jnp.uint32).reshape(config.levels, TABLE_WORDS)
    cols, ld, rd, av = (jnp.asarray(problem.prefix, jnp.uint32)[i] for i in range(4))
    bits = jnp.uint32(1) << jnp.arange(32, dtype=jnp.uint32)  # [32] every row's bit

    def body(level, carry):
        cols, ld, rd, av, w, edges, found = carry
        t = rows[level]
        g0, g2, g3 = t[GAP] & 31, t[GAP2] & 31, t[GAP3] & 31
        bit = av & bits  # [32]
        nc, nl, nr = cols | bit, (ld | bit) << g0, (rd | bit) >> g0
        nav = ~(nc | nl | nr) & t[ALLOW1]
        ahead2 = ~(nc | (nl << g2) | (nr >> g2)) & t[ALLOW2]
        ahead3 = ~(nc | (nl << g3) | (nr >> g3)) & t[ALLOW3]
        tried = bit != 0
        push = tried & (nav != 0) & (ahead2 != 0) & (ahead3 != 0)  # [32] children entered
        edges = edges + w * lax.population_count(av).astype(jnp.float32)
        counted = jnp.where(tried, lax.population_count(nav & t[COUNT_MASK]), 0).sum()
        found = found + w * counted.astype(jnp.float32)
        c = push.sum(dtype=jnp.int32)
        pick = hash_randint(seed, level, lane, jnp.maximum(c, 1))
        k = jnp.argmax(jnp.cumsum(push, dtype=jnp.int32) > pick)  # the pick-th child entered
        live = c > 0
        av = jnp.where(live, nav[k], jnp.uint32(0))
        return nc[k], nl[k], nr[k], av, w * c.astype(jnp.float32), edges, found

    zero = jnp.float32(0)
    carry = (cols, ld, rd, av, jnp.float32(1), zero, zero)
    carry = lax.fori_loop(0, config.levels, body, carry)
    return Probe(carry[5], carry[6])
