"""Stochastic local search, threshold accepting and simulated annealing, one chain per kernel.

After the N-Queens vignette of the R package NMOF (Gilli, Maringer & Schumann, *Numerical
Methods and Optimization in Finance*; `LSopt`, `TAopt`, `SAopt`). A chain proposes a neighbour
(`step`: one queen moved by 1..step rows; `swap`: two queens exchange rows), evaluates the
change of the objective (`attacks` or `pairs`) incrementally from line counts, and accepts it
if not worse (`ls`), if within the current threshold (`ta`) or by the Metropolis rule (`sa`).
A chain stops when solved or out of steps; it is deterministic given its seed, so `replay`
recovers its best board. The docs' anneal page gives the neighbours, schedules and constrained
boards.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxqueens.core import lines
from jaxqueens.core.rng import U32, random_permutation, stream_bits, stream_randint
from jaxqueens.errors import QueensError
from jaxqueens.solvers import base
from jaxqueens.solvers import constrained as rules
from jaxqueens.solvers.base import seed_of
from jaxqueens.solvers.constrained import Mask, allowed_start, mask_of  # noqa: F401 (re-exported)
from jaxqueens.solvers.variants import EDGES, METHODS, NEIGHBOURS, OBJECTIVES


@dataclasses.dataclass(frozen=True)
class Config:
    """Static configuration (hashable, jit-static): shapes and code paths.

    Attributes:
      n: board size, 4..46340.
      method: "ls", "ta" or "sa" (the acceptance rule).
      neighbour: swap or step; None: step on constrained boards, else swap
      step: largest move of the step neighbour
      edge: step neighbour past the edge: "wrap" (mod n) or "nmof" (to the far end)
      objective: "attacks" (NMOF's) or "pairs" (attacking pairs).
      rounds: thresholds / temperatures
      steps_per_round: steps per threshold or temperature.
      unroll: steps per loop iteration of lockstep lanes, 1..64.
      scatter_counts: a board's line counts by one scatter-add (lockstep lanes)
      toroidal: queens attack along diagonals modulo n
      constrained: Problem.mask: fixed columns and allowed squares (step only)
    """

    n: int
    method: str = "ta"
    neighbour: str | None = None  # swap or step; None: step on constrained boards, else swap
    step: int = 3  # largest move of the step neighbour
    edge: str = "wrap"  # step neighbour past the edge: "wrap" (mod n) or "nmof" (to the far end)
    objective: str = "attacks"
    rounds: int = 10  # thresholds / temperatures
    steps_per_round: int = 1000
    unroll: int = 1
    scatter_counts: bool = False  # a board's line counts by one scatter-add (lockstep lanes)
    toroidal: bool = False  # queens attack along diagonals modulo n
    constrained: bool = False  # Problem.mask: fixed columns and allowed squares (step only)

    def __post_init__(self):
        if self.neighbour is None:  # the command's preset; constrained boards take only steps
            object.__setattr__(self, "neighbour", "step" if self.constrained else "swap")
        base.check_whole("n", self.n, 4, 46340)
        base.check_whole("step", self.step, 1)
        base.check_whole("rounds", self.rounds, 1, 1 << 24)
        base.check_whole("steps_per_round", self.steps_per_round, 1, 2**31 - 1)
        base.check_whole("unroll", self.unroll, 1, 64)
        if self.rounds * self.steps_per_round > 2**31 - 1:
            raise QueensError(
                f"rounds x steps_per_round must be at most {2**31 - 1:,} steps, got "
                f"{self.rounds * self.steps_per_round:,}"
            )
        checks = [
            (
                self.method in METHODS,
                f"method must be one of {', '.join(METHODS)}, got {self.method!r}",
            ),
            (
                self.neighbour in NEIGHBOURS,
                f"neighbour must be step or swap, got {self.neighbour!r}",
            ),
            (self.edge in EDGES, f"edge must be wrap or nmof, got {self.edge!r}"),
            (
                self.objective in OBJECTIVES,
                f"objective must be attacks or pairs, got {self.objective!r}",
            ),
            (
                1 <= self.step < self.n,
                f"--step must lie in 1..n-1 = 1..{self.n - 1}, got {self.step}",
            ),
            (
                not self.constrained or self.neighbour == "step",
                "constrained boards need the step neighbour (a swap cannot honour fixed queens and "
                "forbidden squares)",
            ),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)

    @property
    def total_steps(self) -> int:
        return self.rounds * self.steps_per_round


class Params(NamedTuple):
    """Dynamic parameters: new values never recompile; `jax.vmap` sweeps them.

    Attributes:
      schedule: [rounds] float32 thresholds (LS: 0, TA) or temperatures (SA), per round
    """

    schedule: jax.Array  # [rounds] float32 thresholds (LS: 0, TA) or temperatures (SA), per round


def sa_schedule(t0, alpha, rounds: int) -> jax.Array:
    """SA temperatures [rounds] float32: `t0 * alpha**k` (traceable: sweep `t0`, `alpha`).

    Args:
      t0: start temperature (scalar, may be traced).
      alpha: cooling factor per round (scalar, may be traced).
      rounds: number of rounds (static).

    Returns:
      [rounds] float32 temperatures.
    """
    k = jnp.arange(rounds, dtype=jnp.float32)
    return (jnp.asarray(t0, jnp.float32) * jnp.asarray(alpha, jnp.float32) ** k).astype(jnp.float32)


def default_params(config: Config, *, t0: float = 1.0, alpha: float = 0.9) -> Params:
    """Uncalibrated defaults: LS thresholds 0; TA thresholds falling linearly from `t0` to 0
    (TAopt's last threshold is 0); SA temperatures `t0 * alpha**k`. The driver calibrates
    them on a random walk instead (`calibrate`: TAopt's
    quantiles, SAopt's start temperature).

    Args:
      config: the static `Config`.
      t0: first TA threshold and SA start temperature, >= 0.
      alpha: SA cooling factor per round, in (0, 1].

    Returns:
      `Params` whose `schedule` holds `config.rounds` levels.

    Raises:
      QueensError: `config` is not a `Config`, or `t0` or `alpha` out of range.
    """
    base.check_type("config", config, Config)
    base.check_real("t0", t0, 0)
    base.check_real("alpha", alpha, 0, 1, lo_open=True)
    rounds = config.rounds
    levels: np.ndarray
    if config.method == "ls":
        levels = np.zeros(rounds)
    elif config.method == "ta":
        levels = t0 * np.linspace(1.0, 0.0, rounds) if rounds > 1 else np.zeros(1)
    else:
        levels = t0 * alpha ** np.arange(rounds)
    return Params(jnp.asarray(levels, jnp.float32))


def _checked(config: Config, params, problem=None, state=None, need_params=True) -> Problem:
    """The kernel's arguments checked at its boundary (`base`): types,
    the schedule's shape and dtype (its values where concrete: finite, at least 0) and the start
    board."""
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


class Problem(NamedTuple):
    """What is solved beyond `n` (dynamic; every chain of a batch shares it).

    Attributes:
      start: [n] int32 every chain's first board; None: random permutations
      mask: the instance (Config.constrained); None: the plain board
    """

    start: jax.Array | None = None  # [n] int32 every chain's first board; None: random permutations
    mask: Mask | None = None  # the instance (Config.constrained); None: the plain board


def _problem(problem) -> Problem:
    return Problem() if problem is None else problem


class State(NamedTuple):
    """One chain (callers add a leading [B] axis when they batch).

    Attributes:
      rows: [n] int32 current board
      counts: [5n-2] int32 queens per row | diagonal | anti-diagonal
      seed: [2] uint32, the chain's 64-bit stream seed (low, high word)
      ctr: [] uint32 hash counter
      f: [] int32 current objective
      best: [] int32 best objective so far
      best_step: [] int32 step at which it was found
      steps: [] int32 steps taken
    """

    rows: jax.Array  # [n] int32 current board
    counts: jax.Array  # [5n-2] int32 queens per row | diagonal | anti-diagonal
    seed: jax.Array  # [2] uint32, the chain's 64-bit stream seed (low, high word)
    ctr: jax.Array  # [] uint32 hash counter
    f: jax.Array  # [] int32 current objective
    best: jax.Array  # [] int32 best objective so far
    best_step: jax.Array  # [] int32 step at which it was found
    steps: jax.Array  # [] int32 steps taken


class Result(NamedTuple):
    """What one chain reports (the fields every chain solver reports).

    Attributes:
      rows: [n] int32 final board (the solution when solved)
      solved: [] bool
      steps: [] int32 steps spent (the solution's step when solved)
      restarts: [] int32 (always 0: annealing chains do not restart)
      best: [] int32 best objective
      best_step: [] int32 step at which the best board was found
    """

    rows: jax.Array  # [n] int32 final board (the solution when solved)
    solved: jax.Array  # [] bool
    steps: jax.Array  # [] int32 steps spent (the solution's step when solved)
    restarts: jax.Array  # [] int32 (always 0: annealing chains do not restart)
    best: jax.Array  # [] int32 best objective
    best_step: jax.Array  # [] int32 step at which the best board was found


def _line_delta(k, sign, objective: str):
    """Change of a line's contribution when a queen is added (+1) to or removed (-1) from a
    line holding k queens (before the change)."""
    if objective == "attacks":  # max(k - 1, 0)
        return (k >= 1).astype(jnp.int32) if sign > 0 else -(k >= 2).astype(jnp.int32)
    return k if sign > 0 else 1 - k  # k (k - 1) / 2


def _read(counts, updates, objective):
    """Counts before each update (updates applied in order) and the objective change.

    Every count is read from the unchanged array first (a swap may touch one line twice), so the
    writes that follow can happen in place: interleaving reads and writes made XLA copy the whole
    counts array several times per step.

    Returns:
      (positions [m], counts before [m], counts each update sees [m], objective change).
    """
    pos = jnp.stack([p for p, _ in updates]).astype(jnp.int32)
    signs = np.array([s for _, s in updates], np.int32)
    before = counts[pos]
    earlier = (pos[:, None] == pos[None, :]) & np.tri(len(updates), k=-1, dtype=bool)
    seen = before + jnp.sum(jnp.where(earlier, signs[None, :], 0), axis=1)
    delta = sum(_line_delta(seen[i], int(s), objective) for i, s in enumerate(signs))
    return pos, before, seen, delta


def _write(counts, updates, pos, before, seen, take):
    """Write the updated counts if `take`, else write back what was there."""
    for i, (_, sign) in enumerate(updates):
        value = jnp.where(take, seen[i] + sign, before[i])
        counts = lax.dynamic_update_slice(counts, value[None], (pos[i],))
    return counts


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


def positions(config: Config, c, r) -> tuple:
    """Indices into the packed counts of the lines of square (column c, row r) under the
    config's attack rule (`positions`).

    Args:
      config: the static `Config`.
      c: the square's column.
      r: the square's row.

    Returns:
      `(row, diagonal, anti-diagonal)` indices into the packed counts.
    """
    return rules.positions(config.n, c, r, config.toroidal)


def counts_of(rows: jax.Array, config: Config) -> jax.Array:
    """Packed line counts [5n-2] int32 of a board [n] under the config's attack rule (one
    scatter-add with `config.scatter_counts`: the same counts).

    Args:
      rows: [n] int32 board.
      config: the static `Config`.

    Returns:
      [5n-2] int32.
    """
    return rules.counts_of(rows, config.n, config.toroidal, config.scatter_counts)


def _move(s: State, config: Config, mask: Mask | None = None):
    """A random neighbour as (count updates [(position, +-1)], row writes [(column, new row)])."""
    n = config.n
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
        updates = [(p, -1) for p in positions(config, c, r0)] + [
            (p, 1) for p in positions(config, c, r1)
        ]
        return updates, [(c, r1)]
    c1 = stream_randint(s.seed, s.ctr, jnp.uint32(0), n)
    c2 = stream_randint(s.seed, s.ctr, jnp.uint32(1), n - 1)
    c2 = c2 + (c2 >= c1)
    r1, r2 = s.rows[c1], s.rows[c2]
    # Rows keep their occupancy under a swap: only diagonals and anti-diagonals change.
    diagonals = lambda c, r: positions(config, c, r)[1:]
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
    pos, before, seen, delta = _read(s.counts, updates, config.objective)
    if not config.constrained:
        counts = _write(s.counts, updates, pos, before, seen, jnp.bool_(True))
        rows = s.rows
        for c, r in writes:
            rows = lax.dynamic_update_slice(rows, r[None], (c,))
        return rows, counts, delta
    take = _allowed(config, mask, writes)
    counts = _write(s.counts, updates, pos, before, seen, take)
    rows = s.rows
    for c, r in writes:
        rows = lax.dynamic_update_slice(rows, jnp.where(take, r, rows[c])[None], (c,))
    return rows, counts, jnp.where(take, delta, 0)


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
    """A chain (key is consumed): on a random permutation (NMOF's `sample.int(n)`), or on
    `problem.start` ([n] int32, rows in 0..n-1, repeats allowed) when given; under
    `config.constrained` on a random allowed square per column of `problem.mask`
    (`allowed_start`; a start board is not used). `params` is not read (None or a
    `Params`). A start row off the board is refused where the board is concrete, and replaced by
    a random permutation's row where it is traced.

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
    return _init(seed_of(key), config, _checked(config, params, problem, need_params=False))


def _init(seed: jax.Array, config: Config, problem: Problem) -> State:
    seed = jnp.asarray(seed, U32)
    if config.constrained:
        assert problem.mask is not None  # a constrained config comes with its instance
        rows = rules.allowed_start(seed, problem.mask)
    elif problem.start is None:
        rows = random_permutation(seed, U32(0), config.n)
    else:
        fresh = random_permutation(seed, U32(0), config.n)
        rows = base.on_board(jnp.asarray(problem.start, jnp.int32), fresh, config.n)
    counts = counts_of(rows, config)
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

    `params.schedule` [rounds] float32 holds the thresholds (LS, TA) or temperatures (SA), one
    per round. `problem.mask`: the instance, read only under `config.constrained` (a move
    onto a forbidden square is rejected).

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      params: the schedule (`Params`).
      problem: the instance, under `config.constrained`; else None or a start board (unused).

    Returns:
      The next `State`.
    """
    mask = _checked(config, params, problem, state=s).mask
    updates, writes = _move(s, config, mask)
    pos, before, seen, delta = _read(s.counts, updates, config.objective)
    level = params.schedule[jnp.minimum(s.steps // config.steps_per_round, config.rounds - 1)]
    u = (stream_bits(s.seed, s.ctr, jnp.uint32(2)) >> 8).astype(jnp.float32) * (1.0 / (1 << 24))
    live = ~done(s, config)
    take = accept(delta, level, u, config.method) & live
    if config.constrained:
        take = take & _allowed(config, mask, writes)
    counts = _write(s.counts, updates, pos, before, seen, take)
    rows = s.rows
    for c, r in writes:
        rows = lax.dynamic_update_slice(rows, jnp.where(take, r, rows[c])[None], (c,))
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
    """One chain until solved or out of steps (key is consumed).

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
    key: jax.Array,
    config: Config,
    params: Params,
    upto: jax.Array,
    problem: Problem | None = None,
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
    key: jax.Array,
    config: Config,
    params: Params,
    every: int = 1,
    problem: Problem | None = None,
) -> jax.Array:
    """Best objective so far after every `every` steps of one chain:
    [total_steps // every] int32.

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
    mask = _problem(problem).mask

    def body(s, _):
        rows, counts, delta = propose(s, config, mask)
        return s._replace(rows=rows, counts=counts, ctr=s.ctr + U32(1)), delta

    _, deltas = lax.scan(body, init(key, config, None, problem), None, length=length)
    return deltas


def lockstep_config(config: Config) -> Config:
    """The same chains formulated for lockstep lanes: line counts by one scatter-add.

    Args:
      config: the static `Config`.

    Returns:
      The lockstep `Config`.
    """
    return dataclasses.replace(config, scatter_counts=True)
