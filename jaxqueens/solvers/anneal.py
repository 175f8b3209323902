"""Stochastic local search, threshold accepting and simulated annealing, one chain per kernel.

After the N-Queens vignette of the R package NMOF (Gilli, Maringer & Schumann, *Numerical
Methods and Optimization in Finance*; ``LSopt``, ``TAopt``, ``SAopt``). A chain proposes a
neighbour, evaluates the change of the objective incrementally from line counts, and accepts:

- ``ls``: if not worse (``TAopt`` with every threshold 0);
- ``ta``: if the worsening is at most the current threshold; ``rounds`` thresholds, each held for
  ``steps_per_round`` steps, from quantiles of |delta| along a random walk, the last one 0;
- ``sa``: Metropolis, ``exp(-delta / T)``, with ``T`` cooled geometrically each round from a
  calibrated ``T0`` (:mod:`jaxqueens.drivers.anneal` computes both schedules).

Neighbours: ``step`` moves one random queen by 1..step rows up or down, wrapping around the edge
(NMOF's move; rows may repeat: combination encoding); ``swap`` exchanges the rows of two random
queens (permutation encoding). Objectives: ``attacks`` (NMOF: queens minus lines occupied, over
rows, diagonals and anti-diagonals) or ``pairs`` (attacking pairs). A chain stops when solved or
after ``rounds * steps_per_round`` steps; it reports its final board (the solution when solved),
its best objective and the step at which that was found.

The kernel is written for one chain: a static :class:`Config` (shapes and code paths), the
schedule [rounds] as its one dynamic parameter, a :class:`State` on the packed line counts of
:mod:`jaxqueens.core.lines`, and randomness from the counter-based hash of
:mod:`jaxqueens.core.rng` seeded per chain. :mod:`jaxqueens.parallel.chains` batches chains.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxqueens.core import lines
from jaxqueens.core.rng import U32, hash_bits, hash_randint, random_permutation
from jaxqueens.solvers.base import ChainKernel

METHODS = ("ls", "ta", "sa")
NEIGHBOURS = ("step", "swap")
OBJECTIVES = ("attacks", "pairs")


@dataclasses.dataclass(frozen=True)
class Config:
    """Static configuration (hashable, jit-static): shapes and code paths."""

    n: int
    method: str = "ta"
    neighbour: str = "step"
    step: int = 3  # largest move of the step neighbour
    objective: str = "attacks"
    rounds: int = 10  # thresholds / temperatures
    steps_per_round: int = 1000
    unroll: int = 1

    def __post_init__(self):
        checks = [
            (self.n >= 4, f"n must be at least 4, got {self.n}"),
            (self.method in METHODS, f"method must be one of {', '.join(METHODS)}, got {self.method!r}"),
            (self.neighbour in NEIGHBOURS, f"neighbour must be step or swap, got {self.neighbour!r}"),
            (self.objective in OBJECTIVES, f"objective must be attacks or pairs, got {self.objective!r}"),
            (1 <= self.step < self.n, f"--step must lie in 1..n-1 = 1..{self.n - 1}, got {self.step}"),
            (self.rounds >= 1, f"--rounds must be at least 1, got {self.rounds}"),
            (self.steps_per_round >= 1, f"steps per round must be at least 1, got {self.steps_per_round}"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)

    @property
    def total_steps(self) -> int:
        return self.rounds * self.steps_per_round


class State(NamedTuple):
    """One chain (callers add a leading [B] axis when they batch)."""

    rows: jax.Array  # [n] int32 current board
    counts: jax.Array  # [5n-2] int32 queens per row | diagonal | anti-diagonal
    seed: jax.Array  # [] uint32 hash seed
    ctr: jax.Array  # [] uint32 hash counter
    f: jax.Array  # [] int32 current objective
    best: jax.Array  # [] int32 best objective so far
    best_step: jax.Array  # [] int32 step at which it was found
    steps: jax.Array  # [] int32 steps taken


class Result(NamedTuple):
    """What one chain reports (the fields every chain solver reports)."""

    rows: jax.Array  # [n] int32 final board (the solution when solved)
    solved: jax.Array  # [] bool
    steps: jax.Array  # [] int32 step at which the best board was found
    restarts: jax.Array  # [] int32 (always 0: annealing chains do not restart)
    best: jax.Array  # [] int32 best objective


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
    """Write the updated counts if ``take``, else write back what was there."""
    for i, (_, sign) in enumerate(updates):
        value = jnp.where(take, seen[i] + sign, before[i])
        counts = lax.dynamic_update_slice(counts, value[None], (pos[i],))
    return counts


def objective_of(counts: jax.Array, objective: str) -> jax.Array:
    """[] int32: the objective of a board from its packed counts [5n-2]."""
    if objective == "attacks":
        return jnp.sum(jnp.maximum(counts - 1, 0)).astype(jnp.int32)
    return lines.pairs_from_counts(counts).astype(jnp.int32)


def _move(s: State, config: Config):
    """A random neighbour as (count updates [(position, +-1)], row writes [(column, new row)])."""
    n = config.n
    if config.neighbour == "step":
        c = hash_randint(s.seed, s.ctr, jnp.uint32(0), n)
        d = hash_randint(s.seed, s.ctr, jnp.uint32(1), 2 * config.step)
        shift = jnp.where(d < config.step, d - config.step, d - config.step + 1)  # +-1..step
        r0 = s.rows[c]
        r1 = (r0 + shift) % n
        updates = [(p, -1) for p in lines.positions(n, c, r0)] + [(p, 1) for p in lines.positions(n, c, r1)]
        return updates, [(c, r1)]
    c1 = hash_randint(s.seed, s.ctr, jnp.uint32(0), n)
    c2 = hash_randint(s.seed, s.ctr, jnp.uint32(1), n - 1)
    c2 = c2 + (c2 >= c1)
    r1, r2 = s.rows[c1], s.rows[c2]
    # Rows keep their occupancy under a swap: only diagonals and anti-diagonals change.
    diagonals = lambda c, r: lines.positions(n, c, r)[1:]  # noqa: E731
    updates = ([(p, -1) for p in diagonals(c1, r1)] + [(p, -1) for p in diagonals(c2, r2)]
               + [(p, 1) for p in diagonals(c1, r2)] + [(p, 1) for p in diagonals(c2, r1)])
    return updates, [(c1, r2), (c2, r1)]


def propose(s: State, config: Config) -> tuple[jax.Array, jax.Array, jax.Array]:
    """A random neighbour, applied: (rows [n] int32, counts [5n-2] int32, objective change [] int32).
    O(1) work; the hash counter is not advanced (the caller does)."""
    updates, writes = _move(s, config)
    pos, before, seen, delta = _read(s.counts, updates, config.objective)
    counts = _write(s.counts, updates, pos, before, seen, jnp.bool_(True))
    rows = s.rows
    for c, r in writes:
        rows = lax.dynamic_update_slice(rows, r[None], (c,))
    return rows, counts, delta


def accept(delta: jax.Array, level: jax.Array, u: jax.Array, method: str) -> jax.Array:
    """Acceptance rule: LS/TA accept ``delta <= level`` (level 0 for LS); SA accepts improvements
    and otherwise with probability ``exp(-delta / level)`` (``u`` uniform in [0, 1))."""
    if method == "sa":
        return (delta <= 0) | (u < jnp.exp(-delta.astype(jnp.float32) / jnp.maximum(level, 1e-30)))
    return delta.astype(jnp.float32) <= level


def init(seed: jax.Array, config: Config, schedule: jax.Array | None) -> State:
    """A chain on a random permutation (NMOF starts from ``sample.int(n)``) from its uint32
    ``seed`` (``schedule`` is not read: the signature of :class:`Kernel`)."""
    rows = random_permutation(jnp.asarray(seed, U32), U32(0), config.n)
    counts = lines.counts_of(rows, config.n)
    f = objective_of(counts, config.objective)
    return State(rows=rows, counts=counts, seed=jnp.asarray(seed, U32), ctr=U32(1), f=f, best=f,
                 best_step=jnp.int32(0), steps=jnp.int32(0))


def done(s: State, config: Config) -> jax.Array:
    """[] bool: solved, or out of steps."""
    return (s.best == 0) | (s.steps >= config.total_steps)


def step(s: State, config: Config, schedule: jax.Array) -> State:
    """One proposal and acceptance decision (a no-op once the chain is done). O(1) work: only the
    move's counts and rows are written, so no array is copied or selected whole.

    ``schedule`` [rounds] float32 holds the thresholds (LS, TA) or temperatures (SA), one per
    round: the dynamic parameters (a new schedule does not recompile)."""
    updates, writes = _move(s, config)
    pos, before, seen, delta = _read(s.counts, updates, config.objective)
    level = schedule[jnp.minimum(s.steps // config.steps_per_round, config.rounds - 1)]
    u = (hash_bits(s.seed, s.ctr, jnp.uint32(2)) >> 8).astype(jnp.float32) * (1.0 / (1 << 24))
    live = ~done(s, config)
    take = accept(delta, level, u, config.method) & live
    counts = _write(s.counts, updates, pos, before, seen, take)
    rows = s.rows
    for c, r in writes:
        rows = lax.dynamic_update_slice(rows, jnp.where(take, r, rows[c])[None], (c,))
    f = jnp.where(take, s.f + delta, s.f)
    better = f < s.best
    return s._replace(rows=rows, counts=counts, ctr=s.ctr + U32(1), f=f,
                      best=jnp.where(better, f, s.best),
                      best_step=jnp.where(better, s.steps + 1, s.best_step),
                      steps=s.steps + live.astype(jnp.int32))


def result(s: State) -> Result:
    """What the chain reports: its board, whether solved, and its best objective and step."""
    return Result(rows=s.rows, solved=s.best == 0, steps=s.best_step,
                  restarts=jnp.int32(0), best=s.best)


def solve_chain(seed: jax.Array, config: Config, schedule: jax.Array) -> Result:
    """Run one chain until solved or out of steps."""
    s = lax.while_loop(lambda s: ~done(s, config), lambda s: step(s, config, schedule),
                       init(seed, config, schedule))
    return result(s)


def trace(seed: jax.Array, config: Config, schedule: jax.Array, every: int = 1) -> jax.Array:
    """Best objective so far after every ``every`` steps of one chain: [total_steps // every] int32."""

    def body(s, _):
        s = lax.fori_loop(0, every, lambda _, s: step(s, config, schedule), s)
        return s, s.best

    _, best = lax.scan(body, init(seed, config, schedule), None, length=config.total_steps // every)
    return best


def random_walk_deltas(seed: jax.Array, config: Config, length: int) -> jax.Array:
    """Objective changes along a random walk that accepts every move: [length] int32 (for the
    TA thresholds and the SA start temperature, as TAopt and SAopt compute them)."""

    def body(s, _):
        rows, counts, delta = propose(s, config)
        return s._replace(rows=rows, counts=counts, ctr=s.ctr + U32(1)), delta

    _, deltas = lax.scan(body, init(seed, config, None), None, length=length)
    return deltas


@dataclasses.dataclass(frozen=True)
class Kernel(ChainKernel):
    """Annealing as a :class:`~jaxqueens.solvers.base.ChainKernel`; ``data`` is the schedule
    [rounds] float32 (see :func:`step`)."""

    config: Config

    def init(self, seed, schedule):
        return init(seed, self.config, schedule)

    def step(self, s, schedule):
        return step(s, self.config, schedule)

    def finished(self, s):
        return done(s, self.config)

    def result(self, s):
        return result(s)

    def solve_one(self, seed, schedule):
        return solve_chain(seed, self.config, schedule)
