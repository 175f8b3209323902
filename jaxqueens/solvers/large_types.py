"""The large-board kernel's types: its static `Config`, sweepable `Params`, `State` and
`Result`, and the blank state QS4 starts from. All are importable from `jaxqueens.solvers.large`.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxqueens.core.rng import U32
from jaxqueens.solvers import base

MAX_N = 2**30 - 1
"""Largest board: diagonal indices up to 2n - 2 fit int32."""
INT32_MAX = 2**31 - 1
PAIRS_NONE = INT32_MAX
"""`State.best` before a round of the attempt has ended."""


@dataclasses.dataclass(frozen=True)
class Config:
    """Static configuration (hashable, jit-static): what fixes shapes."""

    n: int  #: board size (>= 4; N-Queens has no solution for n = 2, 3, and 1 is trivial).
    list_size: int = 4096  #: conflicted queens listed per repair round (the round's buffer).
    trace_size: int = 4096  #: attacking pairs recorded after a round's first swap attempts.

    def __post_init__(self):
        base.check_whole("n", self.n, 4, MAX_N)
        base.check_whole("list_size", self.list_size, 1, 1 << 24)
        base.check_whole("trace_size", self.trace_size, 1, 1 << 24)


class Params(NamedTuple):
    """Dynamic parameters (0-d int32 arrays): new values never recompile; `jax.vmap` sweeps
    them.
    """

    tries: jax.Array  #: [] int32 >= 1, QS4 swaps tried per column (1: a random permutation)
    free_tail: jax.Array  #: [] int32 in 0..n, last columns placed with a single random swap
    stall_rounds: jax.Array  #: [] int32 >= 1, rounds without fewer pairs before a restart
    max_steps: jax.Array  #: [] int32 >= 1, swap attempts in all (every attempt of the chain)
    max_rounds: jax.Array  #: [] int32 >= 1, repair rounds in all


def default_params(
    config: Config,
    *,
    tries: int = 100,
    free_tail: int = 0,
    stall_rounds: int = 50,
    max_steps: int = 1 << 30,
    max_rounds: int = 100_000,
) -> Params:
    """The package's defaults (Sosic & Gu's 100 QS4 tries, no free tail, a restart after 50
    stalled rounds, 2^30 swap attempts, 10^5 rounds), any of them overridden.

    Args:
      config: the static `Config`.
      tries: QS4 attempts per column, >= 1 (1: a uniform random permutation).
      free_tail: last columns placed with one random swap, 0..n.
      stall_rounds: rounds without fewer pairs before a restart, >= 1.
      max_steps: swap attempts allowed in all.
      max_rounds: repair rounds allowed in all.

    Returns:
      `Params` of NumPy int32 scalars.

    Raises:
      QueensError: `config` is not a `Config`, or a value out of range.
    """
    base.check_type("config", config, Config)
    values = (tries, free_tail, stall_rounds, max_steps, max_rounds)
    _check_values(values, config)
    return base.int32_params(Params, values)


def _check_values(values, config: Config) -> None:
    for name, v in zip(Params._fields, values, strict=True):
        base.check_whole(name, v, 0 if name == "free_tail" else 1, INT32_MAX)
    base.check_whole("free_tail", values[1], 0, config.n)


def check_args(config: Config, params: Params, state=None) -> None:
    """The kernel's arguments checked at its boundary (`base.check_kernel_args`): types, the
    params' shapes and dtypes, and their values where concrete.

    Args:
      config: the static `Config`.
      params: the `Params`.
      state: a `State`, or None (not checked).

    Raises:
      QueensError: a wrong type, shape or dtype, or a value out of range.
    """
    base.check_kernel_args(
        "large",
        config,
        Config,
        params,
        _TEMPLATE,
        lambda values: _check_values(values, config),
        state,
        State,
    )


class State(NamedTuple):
    """One large chain."""

    rows: jax.Array  #: [n] int32 permutation
    diag: jax.Array  #: [2n-1] int32 queens per diagonal r + c
    anti: jax.Array  #: [2n-1] int32 queens per anti-diagonal r - c + n - 1
    seed: jax.Array  #: [2] uint32, the attempt's 64-bit stream seed (low, high word)
    ctr: jax.Array  #: [] uint32, hash counter
    pairs: jax.Array  #: [] int32 attacking pairs (-1: the board is not placed yet)
    best: jax.Array  #: [] int32 fewest pairs after a round of this attempt (PAIRS_NONE: none)
    stalled: jax.Array  #: [] int32 rounds since the pairs last fell below best
    steps: jax.Array  #: [] int32 swap attempts in all
    moves: jax.Array  #: [] int32 swaps taken in all
    rounds: jax.Array  #: [] int32 repair rounds in all
    restarts: jax.Array  #: [] int32 fresh QS4 boards after the first
    conflicted: jax.Array  #: [] int32 conflicted queens at the start of the last round (-1: none)
    #: [trace_size] int32 pairs after each of the last round's first attempts (-1 past its end)
    trace: jax.Array


class Result(NamedTuple):
    """What one chain reports."""

    rows: jax.Array  #: [n] int32 the last board (a solution when solved)
    solved: jax.Array  #: [] bool
    steps: jax.Array  #: [] int32 swap attempts in all
    moves: jax.Array  #: [] int32 swaps taken
    rounds: jax.Array  #: [] int32 repair rounds
    restarts: jax.Array  #: [] int32
    pairs: jax.Array  #: [] int32 attacking pairs of rows (0 when solved)


_TEMPLATE = base.int32_params(Params, [0] * len(Params._fields))


def blank(seed, config: Config, like: State | None = None) -> State:
    """QS4's start: the identity board, empty counts, no round yet.

    Args:
      seed: uint32 [2], the attempt's stream seed.
      config: the static `Config`.
      like: a chain's `State` whose totals and last round's figures a restart keeps, or None.

    Returns:
      The `State`.
    """
    n = config.n
    s = State(
        rows=jnp.arange(n, dtype=jnp.int32),
        diag=jnp.zeros(2 * n - 1, jnp.int32),
        anti=jnp.zeros(2 * n - 1, jnp.int32),
        seed=jnp.asarray(seed, U32),
        ctr=U32(0),
        pairs=jnp.int32(-1),
        best=jnp.int32(PAIRS_NONE),
        stalled=jnp.int32(0),
        steps=jnp.int32(0),
        moves=jnp.int32(0),
        rounds=jnp.int32(0),
        restarts=jnp.int32(0),
        conflicted=jnp.int32(-1),
        trace=jnp.full(config.trace_size, -1, jnp.int32),
    )
    if like is not None:  # a restart keeps the chain's totals and last round's figures
        keep = ("steps", "moves", "rounds", "restarts", "conflicted", "trace")
        s = s._replace(**{f: getattr(like, f) for f in keep})
    return s
