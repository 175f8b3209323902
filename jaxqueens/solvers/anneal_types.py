"""The annealing kernel's types (`jaxqueens.solvers.anneal`): its static `Config`, checked when
built, the schedule `Params` and their defaults, and the `Problem`, `State` and `Result` of a
chain.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import arguments
from jaxqueens.errors import QueensError
from jaxqueens.solvers import base
from jaxqueens.solvers.constrained import Mask
from jaxqueens.solvers.variants import EDGES, METHODS, NEIGHBOURS, OBJECTIVES


@dataclasses.dataclass(frozen=True)
class Config:
    """Static configuration (hashable, jit-static): shapes and code paths."""

    n: int  #: board size, 4..46340.
    method: str = "ta"  #: "ls", "ta" or "sa" (the acceptance rule).
    neighbour: str | None = None  #: swap or step; None: step on constrained boards, else swap
    step: int = 3  #: largest move of the step neighbour
    edge: str = "wrap"  #: step neighbour past the edge: "wrap" (mod n) or "nmof" (to the far end)
    objective: str = "attacks"  #: "attacks" (NMOF's) or "pairs" (attacking pairs).
    rounds: int = 10  #: thresholds / temperatures
    steps_per_round: int = 1000  #: steps per threshold or temperature.
    unroll: int = 1  #: steps per loop iteration of lockstep lanes, 1..64.
    scatter_counts: bool = False  #: a board's line counts by one scatter-add (lockstep lanes)
    toroidal: bool = False  #: queens attack along diagonals modulo n
    constrained: bool = False  #: Problem.mask: fixed columns and allowed squares (step only)

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
        choices = {
            "method": METHODS,
            "neighbour": NEIGHBOURS,
            "edge": EDGES,
            "objective": OBJECTIVES,
        }
        for name, opts in choices.items():
            value = getattr(self, name)
            if value not in opts:
                listed = " or ".join(opts) if len(opts) == 2 else "one of " + ", ".join(opts)
                raise ValueError(f"{name} must be {listed}, got {value!r}")
        if not 1 <= self.step < self.n:
            raise ValueError(f"--step must lie in 1..n-1 = 1..{self.n - 1}, got {self.step}")
        if self.constrained and self.neighbour != "step":
            raise ValueError(
                "constrained boards need the step neighbour (a swap cannot honour fixed queens and "
                "forbidden squares)"
            )

    @property
    def total_steps(self) -> int:
        return self.rounds * self.steps_per_round


class Params(NamedTuple):
    """Dynamic parameters: new values never recompile; `jax.vmap` sweeps them."""

    schedule: jax.Array  #: [rounds] float32 thresholds (LS: 0, TA) or temperatures (SA), per round


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
    them on a random walk instead (`calibrate`: TAopt's quantiles, SAopt's start temperature).

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
    arguments.real(t0, "t0", 0)
    arguments.real(alpha, "alpha", 0, 1, lo_open=True)
    rounds = config.rounds
    levels: np.ndarray
    if config.method == "ls":
        levels = np.zeros(rounds)
    elif config.method == "ta":
        levels = t0 * np.linspace(1.0, 0.0, rounds) if rounds > 1 else np.zeros(1)
    else:
        levels = t0 * alpha ** np.arange(rounds)
    return Params(jnp.asarray(levels, jnp.float32))


class Problem(NamedTuple):
    """What is solved beyond `n` (dynamic; every chain of a batch shares it)."""

    #: [n] int32 every chain's first board; None: random permutations
    start: jax.Array | None = None
    mask: Mask | None = None  #: the instance (Config.constrained); None: the plain board


class State(NamedTuple):
    """One chain (callers add a leading [B] axis when they batch)."""

    rows: jax.Array  #: [n] int32 current board
    counts: jax.Array  #: [5n-2] int32 queens per row | diagonal | anti-diagonal
    seed: jax.Array  #: [2] uint32, the chain's 64-bit stream seed (low, high word)
    ctr: jax.Array  #: [] uint32 hash counter
    f: jax.Array  #: [] int32 current objective
    best: jax.Array  #: [] int32 best objective so far
    best_step: jax.Array  #: [] int32 step at which it was found
    steps: jax.Array  #: [] int32 steps taken


class Result(NamedTuple):
    """What one chain reports (the fields every chain solver reports)."""

    rows: jax.Array  #: [n] int32 final board (the solution when solved)
    solved: jax.Array  #: [] bool
    steps: jax.Array  #: [] int32 steps spent (the solution's step when solved)
    restarts: jax.Array  #: [] int32 (always 0: annealing chains do not restart)
    best: jax.Array  #: [] int32 best objective
    best_step: jax.Array  #: [] int32 step at which the best board was found
