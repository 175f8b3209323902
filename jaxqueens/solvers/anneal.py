"""Stochastic local search, threshold accepting and simulated annealing, one chain per kernel.

After the N-Queens vignette of the R package NMOF (Gilli, Maringer & Schumann, *Numerical
Methods and Optimization in Finance*; `LSopt`, `TAopt`, `SAopt`): a chain proposes a neighbour,
evaluates the change of the objective incrementally from line counts, and accepts it by the
method's rule. The docs' anneal page gives the neighbours, objectives, schedules, `replay` and
constrained boards.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxqueens.core import lines
from jaxqueens.core.rng import U32, random_permutation, stream_bits, stream_randint
from jaxqueens.errors import QueensError
from jaxqueens.solvers import base
from jaxqueens.solvers import constrained as rules
from jaxqueens.solvers.anneal_types import Config as Config
from jaxqueens.solvers.anneal_types import Params as Params
from jaxqueens.solvers.anneal_types import Problem as Problem
from jaxqueens.solvers.anneal_types import Result as Result
from jaxqueens.solvers.anneal_types import State as State
from jaxqueens.solvers.anneal_types import default_params as default_params
from jaxqueens.solvers.anneal_types import sa_schedule as sa_schedule
from jaxqueens.solvers.base import lockstep_config as lockstep_config
from jaxqueens.solvers.base import seed_of
from jaxqueens.solvers.constrained import Mask, allowed_start, mask_of  # noqa: F401 (re-exported)
from jaxqueens.solvers.variants import METHODS as METHODS
from jaxqueens.solvers.variants import NEIGHBOURS as NEIGHBOURS
from jaxqueens.solvers.variants import OBJECTIVES as OBJECTIVES


def _checked(config: Config, params, problem=None, state=None, need_params=True) -> Problem:
    """The kernel's arguments checked at its boundary; the `Problem` (`Problem()` for None)."""
    base.check_type("config", config, Config)
    if params is not None or need_params:
        template = Params._make([np.zeros(config.rounds, np.float32)])
        base.check_params(params, Params, template, "anneal")
        host = base.concrete(params.schedule)
        if host is not None and not (np.isfinite(host).all() and (host >= 0).all()):
            raise QueensError(
                "params.schedule must hold finite thresholds or temperatures >= 0, got "
                f"{host.min()} .. {host.max()}"
            )
    if state is not None:
        base.check_type("state", state, State, "make it with anneal.init")
    return base.check_chain_problem(problem, Problem, config.n, config.constrained)


def _line_delta(k, sign, objective: str):
    """Change of a line's contribution when a queen is added (+1) to or removed (-1) from a
    line holding k queens (before the change)."""
    if objective == "attacks":  # max(k - 1, 0)
        return (k >= 1).astype(jnp.int32) if sign > 0 else -(k >= 2).astype(jnp.int32)
    return k if sign > 0 else 1 - k  # k (k - 1) / 2


def _read(counts, updates, objective):
    """(positions [m], counts before [m], counts each update sees [m], objective change) of the
    updates applied in order. Every count is read from the unchanged array first (a swap may touch
    one line twice), so the writes that follow happen in place (`jaxqueens.core.inplace`)."""
    pos = jnp.stack([p for p, _ in updates]).astype(jnp.int32)
    signs = np.array([s for _, s in updates], np.int32)
    before = counts[pos]
    earlier = (pos[:, None] == pos[None, :]) & np.tri(len(updates), k=-1, dtype=bool)
    seen = before + jnp.sum(jnp.where(earlier, signs[None, :], 0), axis=1)
    delta = sum(_line_delta(seen[i], int(s), objective) for i, s in enumerate(signs))
    return pos, before, seen, delta


def _apply(s: State, updates, writes, read, take) -> tuple[jax.Array, jax.Array]:
    """The move's rows and counts written if `take`, else what was there written back:
    (rows [n] int32, counts [5n-2] int32)."""
    pos, before, seen, _ = read
    counts = s.counts
    for i, (_, sign) in enumerate(updates):
        value = jnp.where(take, seen[i] + sign, before[i])
        counts = lax.dynamic_update_slice(counts, value[None], (pos[i],))
    rows = s.rows
    for c, r in writes:
        rows = lax.dynamic_update_slice(rows, jnp.where(take, r, rows[c])[None], (c,))
    return rows, counts


def objective_of(counts: jax.Array, objective: str) -> jax.Array:
    """[] int32: the objective of a board from its packed counts [5n-2].

    Args:
      counts: [5n-2] int32 packed line counts.
      objective: "attacks" or "pairs".

    Returns:
      [] int32.
    """
    if objective == "attacks":
        return jnp.sum(jnp.maximum(counts - 1, 0)).astype(jnp.int32)
    return lines.pairs_from_counts(counts).astype(jnp.int32)


def _move(s: State, config: Config, mask: Mask | None = None):
    """A random neighbour as (count updates [(position, +-1)], row writes [(column, new row)])."""
    n = config.n
    at = functools.partial(rules.positions, n, toroidal=config.toroidal)  # a square's lines
    if config.neighbour == "step":
        if config.constrained:  # only free columns move
            assert mask is not None  # a constrained config comes with its instance
            c = mask.free[stream_randint(s.seed, s.ctr, jnp.uint32(0), jnp.maximum(mask.nfree, 1))]
        else:
            c = stream_randint(s.seed, s.ctr, jnp.uint32(0), n)
        d = stream_randint(s.seed, s.ctr, jnp.uint32(1), 2 * config.step)
        shift = jnp.where(d < config.step, d - config.step, d - config.step + 1)  # +-1..step
        r0 = s.rows[c]
        if config.edge == "wrap":
            r1 = (r0 + shift) % n
        else:  # NMOF: past the last row to the first, before the first to the last
            r1 = r0 + shift
            r1 = jnp.where(r1 > n - 1, 0, jnp.where(r1 < 0, n - 1, r1))
        updates = [(p, -1) for p in at(c, r0)] + [(p, 1) for p in at(c, r1)]
        return updates, [(c, r1)]
    c1 = stream_randint(s.seed, s.ctr, jnp.uint32(0), n)
    c2 = stream_randint(s.seed, s.ctr, jnp.uint32(1), n - 1)
    c2 = c2 + (c2 >= c1)
    r1, r2 = s.rows[c1], s.rows[c2]
    # Rows keep their occupancy under a swap: only diagonals and anti-diagonals change.
    diagonals = lambda c, r: at(c, r)[1:]
    updates = (
        [(p, -1) for p in diagonals(c1, r1)]
        + [(p, -1) for p in diagonals(c2, r2)]
        + [(p, 1) for p in diagonals(c1, r2)]
        + [(p, 1) for p in diagonals(c2, r1)]
    )
    return updates, [(c1, r2), (c2, r1)]


def _allowed(config: Config, mask: Mask | None, writes) -> jax.Array:
    """[] bool: every square the move writes is allowed (always, unconstrained)."""
    if not config.constrained:
        return jnp.bool_(True)
    assert mask is not None  # a constrained config comes with its instance
    return functools.reduce(lambda a, b: a & b, [mask.allowed[c, r] for c, r in writes])


def propose(
    s: State, config: Config, mask: Mask | None = None
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """A random neighbour, applied: (rows [n] int32, counts [5n-2] int32, objective change []
    int32). O(1) work; the hash counter is not advanced (the caller does). Under
    `config.constrained` a move onto a forbidden square is not applied (change 0).

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      mask: the instance's `Mask`, under `config.constrained`; else None.

    Returns:
      `(rows, counts, delta)`.
    """
    updates, writes = _move(s, config, mask)
    read = _read(s.counts, updates, config.objective)
    take = _allowed(config, mask, writes)
    rows, counts = _apply(s, updates, writes, read, take)
    return rows, counts, jnp.where(take, read[3], 0)


def accept(delta: jax.Array, level: jax.Array, u: jax.Array, method: str) -> jax.Array:
    """Acceptance rule: LS/TA accept `delta <= level` (level 0 for LS); SA accepts improvements
    and otherwise with probability `exp(-delta / level)` (`u` uniform in [0, 1)).

    Args:
      delta: [] int32 objective change.
      level: [] float32 threshold (LS, TA) or temperature (SA).
      u: [] float32 uniform in [0, 1).
      method: "ls", "ta" or "sa" (static).

    Returns:
      [] bool.
    """
    if method == "sa":
        return (delta <= 0) | (u < jnp.exp(-delta.astype(jnp.float32) / jnp.maximum(level, 1e-30)))
    return delta.astype(jnp.float32) <= level


def init(
    key: jax.Array, config: Config, params: Params | None, problem: Problem | None = None
) -> State:
    """A chain: on a random permutation (NMOF's `sample.int(n)`), or on
    `problem.start` ([n] int32, rows in 0..n-1, repeats allowed) when given; under
    `config.constrained` on a random allowed square per column of `problem.mask`
    (`allowed_start`; a start board is not used). A start row off the board is refused where
    the board is concrete, and replaced by a random permutation's row where it is traced.

    Args:
      key: a typed `jax.random.key` (consumed).
      config: the static `Config`.
      params: not read (None or a `Params`).
      problem: the start board or the instance (`Problem`); None: a random permutation.

    Returns:
      The chain's first `State`.

    Raises:
      QueensError: an argument of the wrong type, or a concrete start row off the board.
    """
    seed = jnp.asarray(seed_of(key), U32)
    problem = _checked(config, params, problem, need_params=False)
    if config.constrained:
        assert problem.mask is not None  # a constrained config comes with its instance
        rows = rules.allowed_start(seed, problem.mask)
    else:
        rows = random_permutation(seed, U32(0), config.n)
        if problem.start is not None:
            rows = base.on_board(jnp.asarray(problem.start, jnp.int32), rows, config.n)
    counts = rules.counts_of(rows, config.n, config.toroidal, config.scatter_counts)
    f = objective_of(counts, config.objective)
    if problem.mask is not None and config.constrained:
        f = f + rules.stranded(rows, problem.mask)
    return State(
        rows=rows,
        counts=counts,
        seed=seed,
        ctr=U32(1),
        f=f,
        best=f,
        best_step=jnp.int32(0),
        steps=jnp.int32(0),
    )


def done(s: State, config: Config, params: Params | None = None) -> jax.Array:
    """[] bool: solved, or out of steps.

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      params: not read.

    Returns:
      [] bool.
    """
    return (s.best == 0) | (s.steps >= config.total_steps)


def step(s: State, config: Config, params: Params, problem: Problem | None = None) -> State:
    """One proposal and acceptance decision (a no-op once the chain is done). O(1) work: only the
    move's counts and rows are written, so no array is copied or selected whole.

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      params: the schedule (`Params`): a threshold (LS, TA) or temperature (SA) per round.
      problem: the instance, under `config.constrained` (a move onto a forbidden square is
        rejected); else None or a start board (unused).

    Returns:
      The next `State`.
    """
    mask = _checked(config, params, problem, state=s).mask
    updates, writes = _move(s, config, mask)
    read = _read(s.counts, updates, config.objective)
    delta = read[3]
    level = params.schedule[jnp.minimum(s.steps // config.steps_per_round, config.rounds - 1)]
    u = (stream_bits(s.seed, s.ctr, jnp.uint32(2)) >> 8).astype(jnp.float32) * (1.0 / (1 << 24))
    live = ~done(s, config)
    take = accept(delta, level, u, config.method) & live
    if config.constrained:
        take = take & _allowed(config, mask, writes)
    rows, counts = _apply(s, updates, writes, read, take)
    f = jnp.where(take, s.f + delta, s.f)
    better = f < s.best
    return s._replace(
        rows=rows,
        counts=counts,
        ctr=s.ctr + U32(1),
        f=f,
        best=jnp.where(better, f, s.best),
        best_step=jnp.where(better, s.steps + 1, s.best_step),
        steps=s.steps + live.astype(jnp.int32),
    )


def result(s: State, config: Config | None = None, params: Params | None = None) -> Result:
    """What the chain reports: its board, whether solved, the steps it spent, and its best
    objective and the step it was found at.

    Args:
      s: the chain's `State` (call it once `done`).
      config: not read.
      params: not read.

    Returns:
      The chain's `Result`.
    """
    return Result(
        rows=s.rows,
        solved=s.best == 0,
        steps=s.steps,
        restarts=jnp.int32(0),
        best=s.best,
        best_step=s.best_step,
    )


def finish(s: State, config: Config, params: Params, problem: Problem | None = None) -> Result:
    """Steps from `s` until solved or out of steps.

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      params: the schedule (`Params`).
      problem: as for `step`.

    Returns:
      The chain's `Result`.
    """
    s = lax.while_loop(lambda s: ~done(s, config), lambda s: step(s, config, params, problem), s)
    return result(s)


def run(key: jax.Array, config: Config, params: Params, problem: Problem | None = None) -> Result:
    """One chain until solved or out of steps.

    Args:
      key: a typed `jax.random.key` (consumed).
      config: the static `Config`.
      params: the schedule (`Params`).
      problem: the start board or the instance (`Problem`); None: a random permutation.

    Returns:
      The chain's `Result`.

    Raises:
      QueensError: an argument of the wrong type or shape, a concrete schedule value that is
        not finite and >= 0, or a concrete start row off the board.
    """
    return finish(init(key, config, params, problem), config, params, problem)


def replay(
    key: jax.Array, config: Config, params: Params, upto: jax.Array, problem: Problem | None = None
) -> State:
    """The chain's state after its first `upto` steps ([] int32, at most where it stopped).

    A chain is a deterministic function of its key, params and problem, so replaying it to the
    step at which its best objective was found (`Result.best_step`) gives its best board
    (`rows`, with `f == best`) without keeping a best board in the hot loop.

    Args:
      key: the chain's key, as given to `run`.
      config: the static `Config`.
      params: the schedule (`Params`), as given to `run`.
      upto: [] int32, the steps to replay (e.g. `Result.best_step`).
      problem: as given to `run`.

    Returns:
      The chain's `State` after `upto` steps.
    """
    return lax.while_loop(
        lambda s: (s.steps < upto) & ~done(s, config),
        lambda s: step(s, config, params, problem),
        init(key, config, params, problem),
    )


def trace(
    key: jax.Array, config: Config, params: Params, every: int = 1, problem: Problem | None = None
) -> jax.Array:
    """Best objective so far after every `every` steps of one chain: [total_steps // every] int32.

    Args:
      key: a typed `jax.random.key` (consumed).
      config: the static `Config`.
      params: the schedule (`Params`).
      every: steps between samples (static).
      problem: as for `run`.

    Returns:
      [total_steps // every] int32: the best objective after each `every` steps.
    """

    def body(s, _):
        s = lax.fori_loop(0, every, lambda _, s: step(s, config, params, problem), s)
        return s, s.best

    s0 = init(key, config, params, problem)
    _, best = lax.scan(body, s0, None, length=config.total_steps // every)
    return best


def random_walk_deltas(
    key: jax.Array, config: Config, length: int, problem: Problem | None = None
) -> jax.Array:
    """Objective changes along a random walk that accepts every move, from the chain's first
    board: [length] int32 (for the TA thresholds and the SA start temperature, as TAopt and
    SAopt compute them from `x0`).

    Args:
      key: a typed `jax.random.key` (consumed), as for `init`.
      config: the static `Config`.
      length: steps of the walk (static).
      problem: as for `init`.

    Returns:
      [length] int32 objective changes.
    """
    mask = None if problem is None else problem.mask

    def body(s, _):
        rows, counts, delta = propose(s, config, mask)
        return s._replace(rows=rows, counts=counts, ctr=s.ctr + U32(1)), delta

    _, deltas = lax.scan(body, init(key, config, None, problem), None, length=length)
    return deltas
