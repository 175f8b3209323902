"""The min-conflicts kernel's types: its static `Config`, sweepable `Params`, `Problem`,
`State`, `Result`, the pause inputs (`Fresh`, `Resume`) and `Metrics`, with the small helpers
the boards, the moves and the kernel share. All are importable from
`jaxqueens.solvers.minconflicts`.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import numpy as np

from jaxqueens.solvers import base
from jaxqueens.solvers import constrained as rules
from jaxqueens.solvers.variants import INITS, MOVES, default_max_steps


@dataclasses.dataclass(frozen=True)
class Config:
    """Static configuration: everything here fixes shapes or code paths (hashable, jit-static)."""

    n: int  #: board size.
    init: str = "permutation"  #: one of `INITS`.
    #: capacity of the plateau memory (squares); 0 compiles no tabu at all. `Params.tabu` (at most
    #: this) is the tenure used.
    tabu: int = 0
    unroll: int = 1  #: min-conflicts steps per iteration of the inner `while_loop`.
    #: random columns probed for a conflicted queen before an O(n) scan (0: always scan; -1: 0
    #: for n <= 12, else 16).
    pick_tries: int = -1
    move: str = "minconflicts"  #: one of `MOVES` (how the new row is chosen).
    #: report, for an unsolved chain, its attempt-end board with the fewest attacking pairs (off:
    #: the last board; the default path compiles without it).
    keep_best: bool = False
    toroidal: bool = False  #: queens attack along diagonals modulo n.
    constrained: bool = False  #: `Problem.mask` holds allowed squares and fixed queens.
    #: count a fresh board's lines with one scatter-add rather than an n-step loop
    #: (`jaxqueens.core.lines.counts_of`); lockstep lanes set it (`lockstep_config`).
    scatter_counts: bool = False

    def __post_init__(self):
        base.check_whole("n", self.n, 4, 46340)
        base.check_choice("init", self.init, INITS)
        base.check_choice("move", self.move, MOVES)
        base.check_whole("tabu", self.tabu, 0, 1 << 20)
        base.check_whole("unroll", self.unroll, 1, 64)
        base.check_whole("pick_tries", self.pick_tries, -1, 1 << 20)
        if (self.toroidal or self.constrained) and self.init not in ("random", "permutation"):
            raise ValueError(
                f"init {self.init} is not written for toroidal or constrained boards; "
                "use random or permutation"
            )


class Params(NamedTuple):
    """Dynamic parameters (0-d arrays): new values never recompile; `jax.vmap` sweeps them."""

    max_steps: jax.Array  #: [] int32 >= 1, steps per attempt before a restart
    max_restarts: jax.Array  #: [] int32 >= 0, restarts before a chain gives up unsolved
    tabu: jax.Array  #: [] int32 in 0..Config.tabu, plateau-memory tenure (squares remembered)
    qs4_tries: jax.Array  #: [] int32 >= 1, QS4 swaps tried per column before keeping a conflict


def default_params(
    config: Config,
    *,
    max_steps: int | None = None,
    max_restarts: int = 1_000_000,
    tabu: int | None = None,
    qs4_tries: int = 100,
) -> Params:
    """The package's defaults (`default_max_steps` steps per
    attempt, a million restarts, the whole tabu capacity), any of them overridden.

    Args:
      config: the static `Config`.
      max_steps: steps per attempt, >= 1 (None: `default_max_steps` for `config`).
      max_restarts: restarts before a chain gives up unsolved, >= 0.
      tabu: plateau-memory tenure, 0..`config.tabu` (None: `config.tabu`).
      qs4_tries: QS4 swaps tried per column, >= 1.

    Returns:
      `Params` of NumPy int32 scalars.

    Raises:
      QueensError: `config` is not a `Config`, or a value out of range.
    """
    base.check_type("config", config, Config)
    plain = not (config.toroidal or config.constrained)
    max_steps = default_max_steps(config.n, plain=plain) if max_steps is None else max_steps
    tabu = config.tabu if tabu is None else tabu
    _check_values((max_steps, max_restarts, tabu, qs4_tries), config)
    return base.int32_params(Params, (max_steps, max_restarts, tabu, qs4_tries))


def _check_values(values, config: Config) -> None:
    max_steps, max_restarts, tabu, qs4_tries = values
    base.check_whole("max_steps", max_steps, 1, 2**31 - 1)
    base.check_whole("max_restarts", max_restarts, 0, 2**31 - 1)
    base.check_whole("tabu", tabu, 0, config.tabu)
    base.check_whole("qs4_tries", qs4_tries, 1, 2**31 - 1)


def check_args(config: Config, params: Params, problem=None, state=None) -> Problem:
    """The kernel's arguments checked at its boundary (`base.check_kernel_args`): types, the
    params' shapes and dtypes, their values and the start board where concrete.

    Args:
      config: the static `Config`.
      params: the `Params`.
      problem: the `Problem`, or None (the plain board).
      state: a `State`, or None (not checked).

    Returns:
      The `Problem` (`Problem()` for None).

    Raises:
      QueensError: a wrong type, shape or dtype, a value out of range, or a bad start board.
    """
    base.check_kernel_args(
        "minconflicts",
        config,
        Config,
        params,
        _TEMPLATE,
        lambda values: _check_values(values, config),
        state,
        State,
    )
    return base.check_chain_problem(problem, Problem, config.n, config.constrained)


class Problem(NamedTuple):
    """What is solved beyond `n` (dynamic; every chain of a batch shares it)."""

    start: jax.Array | None = None  #: [n] int32 the first attempt's board, or None
    mask: rules.Mask | None = None  #: the instance (Config.constrained), or None


class State(NamedTuple):
    """One chain (add a leading [B] axis when batched)."""

    rows: jax.Array  #: [n] int32, rows[c] = row of the queen in column c
    counts: jax.Array  #: [5n-2] int32, queens per row | diagonal | anti-diagonal
    seed: jax.Array  #: [2] uint32, the attempt's 64-bit stream seed (low, high word)
    ctr: jax.Array  #: [] uint32, hash counter (one per random event)
    steps: jax.Array  #: [] int32, steps in the current attempt
    total_steps: jax.Array  #: [] int32, steps over all attempts
    restarts: jax.Array  #: [] int32
    solved: jax.Array  #: [] bool, no conflicted queen
    stop: jax.Array  #: [] bool, current attempt finished (solved or out of steps)
    tabu: jax.Array  #: [T] int32, squares c*n+r left during the plateau (-1 empty)
    tabu_ptr: jax.Array  #: [] int32, ring-buffer write position
    #: [] int32, the attempt after which an unsolved chain pauses (NO_PAUSE: never)
    until: jax.Array
    best_rows: jax.Array  #: [n] int32 with keep_best, else [0]: fewest-pairs attempt-end board
    best_pairs: jax.Array  #: [] int32, its attacking pairs (PAIRS_NONE: no attempt ended yet)


class Result(NamedTuple):
    """Per-chain outcome ([C] leading axis when batched)."""

    rows: jax.Array  #: [n] int32, final board
    solved: jax.Array  #: [] bool
    steps: jax.Array  #: [] int32, total steps over all attempts
    restarts: jax.Array  #: [] int32, index of the last attempt
    best: jax.Array  #: [] int32, attacking pairs of `rows` (0 when solved)


_TEMPLATE = base.int32_params(Params, [0] * len(Params._fields))

PAIRS_NONE = 2**31 - 1
"""`State.best_pairs` before any attempt has ended."""
NO_PAUSE = 2**31 - 1
"""`State.until` of a chain that runs until solved or out of restarts."""


def paused(result: Result, params: Params):
    """[C] bool: chains of a bounded call that stopped at `until`, unsolved with restarts left
    (a chain that ran to its end is solved or has spent `params.max_restarts`).

    Args:
      result: the `Result` of the chains of a call, [C] leading axis.
      params: the `Params` of that call.

    Returns:
      [C] bool.
    """
    return ~result.solved & (result.restarts < params.max_restarts)


class Resume(NamedTuple):
    """Where each chain of a kernel call starts ([C] leading axis): the dynamic input with which
    a driver continues paused chains in the next call (a first call takes
    [`Fresh`][jaxqueens.solvers.minconflicts.Fresh]).
    """

    # host arrays from the driver, traced arrays in the kernel
    restarts: jax.Array | np.ndarray  #: [] int32, a paused chain's Result.restarts; -1: fresh
    total_steps: jax.Array | np.ndarray  #: [] int32, its Result.steps (0 for a fresh chain)
    until: jax.Array | np.ndarray  #: [] int32, pause once attempt `until` fails; -1: skip it


class Fresh(NamedTuple):
    """Every chain of a kernel call fresh (a 0-d field: shared by the chains of the call)."""

    until: jax.Array | np.int32  #: [] int32 >= 0, pause once the attempt with this index fails


def fresh(until: int = NO_PAUSE) -> Fresh:
    """Every chain of a call fresh, pausing after attempt `until` (default: never); a host
    scalar, so a call with another `until` does not recompile.

    Args:
      until: the attempt index after which a chain pauses (default `NO_PAUSE`: never).

    Returns:
      A `Fresh` for `resume`.
    """
    return Fresh(until=np.int32(until))


class Metrics(NamedTuple):
    """Per-step figures of [`trace`][jaxqueens.solvers.minconflicts.trace] ([T] leading axis over
    steps).
    """

    # traced arrays in the kernel, host arrays from the driver (trace_chain)
    conflicted: jax.Array | np.ndarray  #: [] int32, conflicted queens before the step
    pairs: jax.Array | np.ndarray  #: [] int32, attacking pairs before the step


def board_counts(rows, config: Config):
    """[5n-2] int32 line counts of the board `rows` [n] on the `config`'s board.

    Args:
      rows: [n] int32 board.
      config: the static `Config`.

    Returns:
      [5n-2] int32.
    """
    return rules.counts_of(rows, config.n, config.toroidal, config.scatter_counts)


def conflicted(rows, counts, config: Config):
    """[n] bool: the conflicted queens of the board `rows` [n] with line counts `counts`.

    Args:
      rows: [n] int32 board.
      counts: [5n-2] int32, its line counts.
      config: the static `Config`.

    Returns:
      [n] bool.
    """
    return rules.conflicted(rows, counts, config.n, config.toroidal)
