"""Bitmask depth-first search over ONE constrained sub-tree: the exact kernel of `complete`.

Method: the bitmask DFS of `jaxqueens.solvers.count` (after Richards 1997 and Somers), extended
for the constrained variants of Gent, Jefferson & Nightingale (JAIR 2017; CSPLib prob079): a
column's free rows are ANDed with its allowed rows, and toroidal queens rotate the diagonal
masks modulo n. `start`, `edge` (`step_lane` for lockstep lanes), `search` and `readout` over
packed items are the drivers' hot path; the kernel contract (`jaxqueens.solvers.base`) wraps them
for one whole instance. The docs' complete page describes items and the search.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxqueens.core.constraints import Constraints, column_masks
from jaxqueens.errors import QueensError
from jaxqueens.solvers import base
from jaxqueens.solvers.base import ignore_key
from jaxqueens.solvers.complete_types import (
    AV,
    BACK,
    BUDGET,
    COLS,
    HEAD,
    LD,
    LEVEL,
    RD,
    SAT,
    STOP,
    UNKNOWN,
    UNSAT,
    Params,
    Problem,
    Result,
    State,
    check_allowed,
)
from jaxqueens.solvers.count_types import DONE, MAX_BUDGET, add64

MAX_N = 32  # uint32 masks
STATUS = ("unknown", "SAT", "UNSAT")  # the name of a `Result` status, by value


@dataclasses.dataclass(frozen=True)
class Config:
    """Static shape of a search (hashable, jit-static)."""

    n: int  #: board size, 1..MAX_N
    toroidal: bool = False  #: queens attack along diagonals modulo n
    cap: int = 0  #: enumerate: solutions listed per item and call (0: none, the fast kernel)
    decide: bool = False  #: every item stops at its first solution and nothing is counted (leaner)

    def __post_init__(self):
        base.check_whole("n", self.n, 1, MAX_N)
        base.check_whole("cap", self.cap, 0, 1 << 20)
        for name in ("toroidal", "decide"):
            if not isinstance(getattr(self, name), bool):
                raise QueensError(f"{name} must be True or False, got {getattr(self, name)!r}")

    @property
    def rows(self) -> int:
        return self.n + 1

    @property
    def width(self) -> int:
        """uint32 words of one item: `HEAD` words, then the n allowed masks."""
        return HEAD + self.n


def start(item, config: Config) -> State:
    """The lane that searches one item.

    Args:
      item: uint32 `[HEAD + n]`: the root row and budget (`COLS` .. `BUDGET`), then the
        allowed-row masks of the columns.
      config: the kernel's static shape (n, torus, what to list, decide or count).

    Returns:
      The lane's `State`.
    """
    item = item.astype(jnp.uint32)
    root = jnp.concatenate([item[:4], jnp.full((1,), DONE, jnp.uint32)])
    stack = jnp.concatenate([root[None], jnp.zeros((config.rows - 1, 5), jnp.uint32)])
    allowed = jnp.concatenate([item[HEAD:], jnp.zeros((1,), jnp.uint32)])
    d = jnp.where(item[AV] == 0, -1, 0).astype(jnp.int32)
    z = jnp.uint32(0)
    return State(
        d,
        item[LEVEL].astype(jnp.int32),
        item[BUDGET].astype(jnp.int32),
        item[STOP] != 0,
        jnp.int32(0),
        z,
        z,
        allowed,
        stack,
        jnp.zeros((max(config.cap, 1), config.n + 1), jnp.uint32),
    )


def _shift(ld, rd, n: int, toroidal: bool):
    full = jnp.uint32((1 << n) - 1)
    if toroidal:
        return (((ld << 1) | (ld >> (n - 1))) & full, ((rd >> 1) | (rd << (n - 1))) & full)
    return ld << 1, rd >> 1


def live(lane: State, config: Config):
    """Whether the lane still has work in this call.

    Args:
      lane: the lane.
      config: the kernel's static shape (n, torus, what to list, decide or count).

    Returns:
      [] bool (a stopped search has a negative `d`).
    """
    del config
    return (lane.d >= 0) & (lane.steps < lane.budget)


def edge(lane: State, config: Config, keep=None) -> State:
    """One tree edge.

    Args:
      lane: the lane, `live` unless `keep` says it stays as it is.
      config: the kernel's static shape (n, torus, what to list, decide or count).
      keep: [] bool for lockstep lanes: True writes the lane's words back unchanged.

    Returns:
      The lane one edge further.
    """
    n = config.n
    row = lax.dynamic_slice(lane.stack, (lane.d, 0), (1, 5))[0]
    cols, ld, rd, av, back = row[COLS], row[LD], row[RD], row[AV], row[BACK]
    bit = av & (jnp.uint32(0) - av)
    rest = av ^ bit
    nc = cols | bit
    nl, nr = _shift(ld | bit, rd | bit, n, config.toroidal)
    child = lane.level + lane.d + 1
    nav = lax.dynamic_slice(lane.allowed, (child,), (1,))[0] & ~(nc | nl | nr)
    last = child == n - 1
    push = ~last & (nav != 0)
    here = lane.d.astype(jnp.uint32)
    resume = jnp.where(rest != 0, here, back)
    block = jnp.stack([jnp.stack([cols, ld, rd, rest, back]), jnp.stack([nc, nl, nr, nav, resume])])
    if keep is not None:  # the same two rows, read back: no select over the whole lane
        block = jnp.where(keep, lax.dynamic_slice(lane.stack, (lane.d, 0), (2, 5)), block)
    stack = lax.dynamic_update_slice(lane.stack, block, (lane.d, 0))
    hit = last & (nav != 0)
    sols = lane.sols
    if config.cap:  # one unconditional row write per step (a cond here is far slower)
        path = lax.dynamic_update_slice(
            stack[:, COLS], (nc | (nav & (jnp.uint32(0) - nav)))[None], (lane.d + 2,)
        )
        slot = jnp.minimum(lane.lo, config.cap - 1).astype(jnp.int32)
        old = lax.dynamic_slice(sols, (slot, 0), (1, config.n + 1))[0]
        write = hit & (lane.lo < config.cap)
        row = jnp.where(write if keep is None else write & ~keep, path, old)
        sols = lax.dynamic_update_slice(sols, row[None], (slot, 0))
    lo, hi = lane.lo, lane.hi
    if not config.decide:  # (decide: the stop alone tells the host; no per-step count)
        lo, hi = add64(lo, hi, jnp.where(last, lax.population_count(nav), jnp.uint32(0)))
    d = jnp.where(push, here + 1, resume).astype(jnp.int32)  # DONE -> -1
    stop = hit if config.decide else hit & lane.stop
    d = jnp.where(stop, -3 - lane.d, d)  # -2 - (row of the final column): see `readout`
    steps = lane.steps + 1
    if keep is not None:
        d, steps, lo, hi = (
            jnp.where(keep, a, b)
            for a, b in ((lane.d, d), (lane.steps, steps), (lane.lo, lo), (lane.hi, hi))
        )
    return lane._replace(d=d, steps=steps, lo=lo, hi=hi, stack=stack, sols=sols)


def step_lane(lane: State, config: Config) -> State:
    """One lockstep iteration of a lane that may not be `live` (it then stays as it is): `edge`
    writing a stopped lane's words back instead of selecting the whole lane (a select reads and
    writes every lane's stack and listed solutions each iteration).

    Args:
      lane: the lane.
      config: the kernel's static shape (n, torus, what to list, decide or count).

    Returns:
      The lane after the iteration.
    """
    return edge(lane, config, keep=~live(lane, config))


def search(item, config: Config) -> State:
    """Search one item until its sub-tree is done, its budget is spent or (`stop`) a solution is
    found.

    Args:
      item: uint32 `[HEAD + n]` (`start`).
      config: the kernel's static shape (n, torus, what to list, decide or count).

    Returns:
      The lane's final `State`.
    """
    return lax.while_loop(lambda s: live(s, config), lambda s: edge(s, config), start(item, config))


def _read(lane: State, config: Config):
    """One lane's results: (d of its untried frontier, found low word, and the cols masks
    along the path of the solution a `stop` item ended on)."""
    at = -2 - lane.d  # a stopped item: the stack row of its solution's final column
    stopped = at >= 0
    row = lax.dynamic_slice(lane.stack, (jnp.maximum(at - 1, 0), 0), (1, 5))[0]
    resume = jnp.where(row[AV] != 0, at - 1, row[BACK].astype(jnp.int32))  # as `edge`
    frontier = jnp.where(stopped, resume, lane.d)
    lo = stopped.astype(jnp.uint32) if config.decide else lane.lo
    last = lax.dynamic_slice(lane.stack, (jnp.maximum(at, 0), 0), (1, 5))[0]
    final = last[COLS] | (last[AV] & (jnp.uint32(0) - last[AV]))
    path = lax.dynamic_update_slice(lane.stack[:, COLS], final[None], (jnp.maximum(at, 0) + 1,))
    return frontier, lo, path[None]


def readout(lane: State, config: Config):
    """What the host reads back, of one lane or a batch.

    Args:
      lane: the lane(s).
      config: the kernel's static shape (n, torus, what to list, decide or count).

    Returns:
      `(head, stack, solutions)`: head uint32 `[..., 4]` = (d, steps, lo, hi), d being the
      deepest stack row still to search (-1: none); the stack `[..., R, 5]`; the listed solutions
      `[..., C, n + 1]` (cap 0: the one solution a `stop` item ended on, valid when it found
      one), row j holding the `cols` masks along solution j's path from stack row 0, then the
      full mask (consecutive differences are the queens' rows).
    """
    read = functools.partial(_read, config=config)
    frontier, lo, path = jax.vmap(read)(lane) if lane.d.ndim else read(lane)
    head = jnp.stack(
        [frontier.astype(jnp.uint32), lane.steps.astype(jnp.uint32), lo, lane.hi], axis=-1
    )
    return head, lane.stack, (lane.sols if config.cap else path)


# --- the kernel contract (jaxqueens.solvers.base): one whole instance ---------------------------
# The same `start`, `edge` and `_read`; the search stops at its first solution (`stop`) so that
# its path can be read off the stack; in count mode it is then recorded in `sols` row 0 and the
# search goes on from the untried frontier, where the drivers split the rest off into new items.


def default_params(config: Config, *, budget: int = MAX_BUDGET) -> Params:
    """The package's default parameters.

    Args:
      config: the kernel's static shape (n, torus, what to list, decide or count).
      budget: edges a call may take (default `MAX_BUDGET`, 2^31 - 1).

    Returns:
      `Params`.
    """
    base.check_type("config", config, Config)
    base.check_whole("budget", budget, 0, MAX_BUDGET)
    return Params(jnp.asarray(budget, jnp.int32))


def _checked(config: Config, params: Params, problem, state=None) -> jax.Array:
    base.check_type("config", config, Config)
    base.check_budget_params(params, Params, "complete", MAX_BUDGET)
    if state is not None:
        base.check_type("state", state, State, "make it with complete.init")
    base.check_type("problem", problem, Problem, "make it with complete.problem(constraints)")
    return check_allowed(problem.allowed, config.n)


def problem(model: Constraints, orientation: int = 0) -> Problem:
    """The instance as the kernel's problem (host NumPy).

    Args:
      model: the instance.
      orientation: one of the square's 8 symmetries (0: as given; the driver searches the most
        constrained one, `jaxqueens.core.constraints.search_masks`, and maps boards back with
        `jaxqueens.core.constraints.board_from_orientation`).

    Returns:
      `Problem`: the allowed rows of every column.
    """
    return Problem(column_masks(model, orientation).astype(np.uint32))


def _settle(lane: State, config: Config) -> State:
    """After a stop at the first solution: its path into `sols` row 0 (cap 0), and in count
    mode the search resumed from its untried frontier (decide: it stays stopped, and SAT)."""
    stopped = lane.d <= -2
    frontier, _, path = _read(lane, config)
    sols = lane.sols if config.cap else jnp.where(stopped, path, lane.sols)
    if config.decide:
        lo = jnp.where(stopped, jnp.uint32(1), lane.lo)
        return lane._replace(lo=lo, sols=sols)
    d = jnp.where(stopped, frontier, lane.d)
    return lane._replace(d=d, stop=lane.stop & ~stopped, sols=sols)


def init(key, config: Config, params: Params, problem: Problem) -> State:
    """The instance's search at its root.

    Args:
      key: unused (`None` or a key, checked): the search is exact and deterministic.
      config: the kernel's static shape (n, torus, what to list, decide or count).
      params: the edge budget.
      problem: the instance (`problem`).

    Returns:
      The initial `State`.
    """
    ignore_key(key)
    allowed = _checked(config, params, problem)
    head = [0, 0, 0, allowed[0], 0, params.budget, config.cap == 0]
    lane = start(
        jnp.concatenate([jnp.stack([jnp.asarray(x, jnp.uint32) for x in head]), allowed]), config
    )
    if config.n == 1:  # no edge to take: the one square, if allowed, is the solution
        one = allowed[0] & 1
        path = jnp.stack([jnp.uint32(0), one])
        lane = lane._replace(d=jnp.int32(-1), lo=one, sols=lane.sols.at[0].set(path))
    return lane


def done(state: State, config: Config, params: Params) -> jax.Array:
    """Whether nothing is left to do in this call (searched, stopped, or out of budget).

    Args:
      state: the search state.
      config: the kernel's static shape (n, torus, what to list, decide or count).
      params: the edge budget.

    Returns:
      [] bool.
    """
    return ~live(state, config)


def step(state: State, config: Config, params: Params, problem: Problem) -> State:
    """One tree edge (`edge`; a no-op once `done`).

    Args:
      state: the search state.
      config: the kernel's static shape (n, torus, what to list, decide or count).
      params: the edge budget.
      problem: the instance.

    Returns:
      The state one edge further.
    """
    base.check_type("state", state, State, "make it with complete.init")
    return _settle(step_lane(state, config), config)


def resume(state: State, config: Config, params: Params, problem: Problem) -> State:
    """At most `params.budget` more edges (in all at most `MAX_BUDGET` since `init`).

    Args:
      state: the search state.
      config: the kernel's static shape (n, torus, what to list, decide or count).
      params: the edge budget.
      problem: the instance.

    Returns:
      The state, searched further.
    """
    base.check_type("state", state, State, "make it with complete.init")
    more = jnp.minimum(params.budget, MAX_BUDGET - state.steps)
    lane = state._replace(budget=state.steps + more)
    go = lambda s: lax.while_loop(lambda x: live(x, config), lambda x: edge(x, config), s)
    return go(_settle(go(lane), config))  # to the first solution, then (count) the rest


def result(state: State, config: Config, params: Params) -> Result:
    """What the search reports so far.

    Args:
      state: the search state.
      config: the kernel's static shape (n, torus, what to list, decide or count).
      params: the edge budget.

    Returns:
      `Result`: status, solutions found, the first solution's rows and the listed boards.
    """
    n = config.n
    found = (state.lo | state.hi) != 0
    stopped = state.d <= -2
    finished = (state.d == -1) | (stopped & config.decide)
    status = jnp.where(found, SAT, jnp.where(state.d == -1, UNSAT, UNKNOWN)).astype(jnp.int32)
    bits = state.sols[:, 1:] ^ state.sols[:, :-1]  # [C, n] the queen of each column
    boards = lax.population_count(bits - jnp.uint32(1)).astype(jnp.int32)
    cap = bits.shape[0]
    listed = jnp.arange(cap) < jnp.where(state.hi > 0, cap, jnp.minimum(state.lo, cap)).astype(
        jnp.int32
    )
    boards = jnp.where(listed[:, None] & found, boards, -1)
    return Result(
        status, jnp.stack([state.lo, state.hi]), finished, boards[0, :n], boards, state.steps
    )


def finish(state: State, config: Config, params: Params, problem: Problem) -> Result:
    """`resume`, then `result`.

    Args:
      state: the search state.
      config: the kernel's static shape (n, torus, what to list, decide or count).
      params: the edge budget.
      problem: the instance.

    Returns:
      `Result`.
    """
    return result(resume(state, config, params, problem), config, params)


def run(key, config: Config, params: Params, problem: Problem) -> Result:
    """Decide, count or enumerate one instance (`config.decide`, `config.cap`) until the search is
    over or `params.budget` edges are taken.

    Args:
      key: unused (`None` or a key).
      config: the kernel's static shape (n, torus, what to list, decide or count).
      params: the edge budget.
      problem: the instance.

    Returns:
      `Result`.
    """
    return finish(init(key, config, params, problem), config, params, problem)
