"""Min-conflicts local search for N-Queens (Minton et al. 1992), written for one chain.

One step picks a conflicted queen at random and moves it to a least-conflicted row of its column
(random ties); an attempt ends solved or after `Params.max_steps` steps, and the chain restarts
from a fresh board until solved or out of restarts. The kernel keeps the package's contract
(`jaxqueens.solvers.base`); `jaxqueens.parallel.chains` batches chains. The docs' minconflicts
page describes initial boards, the plateau memory, row choice, pausing and resuming, constrained
boards and the randomness.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxqueens.core import inplace
from jaxqueens.core.lines import (
    add1,
    column_cost,
    conflicted_from_counts,
    counts_of,
    pairs_from_counts,
    positions,
    size,
)
from jaxqueens.core.rng import U32 as _U32
from jaxqueens.core.rng import (
    idx_bits,
    next_seed,
    random_permutation,
    stream_bits,
    stream_randint,
)
from jaxqueens.solvers import base
from jaxqueens.solvers import constrained as rules
from jaxqueens.solvers.base import seed_of
from jaxqueens.solvers.variants import INITS, MOVES, default_max_steps

CISC352_PROBES = 100
"""Random rows the `cisc352` move probes for a single-conflict row before the full scan."""


@dataclasses.dataclass(frozen=True)
class Config:
    """Static configuration: everything here fixes shapes or code paths (hashable, jit-static).

    Attributes:
        n: board size.
        init: one of `INITS`.
        tabu: capacity of the plateau memory (squares); 0 compiles no tabu at all.
            `Params.tabu` (at most this) is the tenure used.
        unroll: min-conflicts steps per iteration of the inner `while_loop`.
        pick_tries: random columns probed for a conflicted queen before an O(n) scan (0: always
            scan; -1: 0 for n <= 12, else 16, the best on CPU).
        move: one of `MOVES` (how the new row is chosen).
        keep_best: report, for an unsolved chain, its attempt-end board with the fewest
            attacking pairs (off: the last board; the default path compiles without it).
        toroidal: queens attack along diagonals modulo n.
        constrained: `Problem.mask` holds allowed squares and fixed queens.
        scatter_counts: count a fresh board's lines with one scatter-add rather than an n-step
            loop, the same counts; lockstep lanes set it (`lockstep_config`: on a GPU the
            loop is n host-driven iterations inside every refill, `make gpu-check`'s model).
    """

    n: int
    init: str = "permutation"
    tabu: int = 0
    unroll: int = 1
    pick_tries: int = -1
    move: str = "minconflicts"
    keep_best: bool = False
    toroidal: bool = False
    constrained: bool = False
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
    """Dynamic parameters (0-d arrays): new values never recompile; `jax.vmap` sweeps them.

    Attributes:
      max_steps: [] int32 >= 1, steps per attempt before a restart
      max_restarts: [] int32 >= 0, restarts before a chain gives up unsolved
      tabu: [] int32 in 0..Config.tabu, plateau-memory tenure (squares remembered)
      qs4_tries: [] int32 >= 1, QS4 swaps tried per column before keeping a conflict
    """

    max_steps: jax.Array  # [] int32 >= 1, steps per attempt before a restart
    max_restarts: jax.Array  # [] int32 >= 0, restarts before a chain gives up unsolved
    tabu: jax.Array  # [] int32 in 0..Config.tabu, plateau-memory tenure (squares remembered)
    qs4_tries: jax.Array  # [] int32 >= 1, QS4 swaps tried per column before keeping a conflict


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
    _check_values(max_steps, max_restarts, tabu, qs4_tries, config)
    # NumPy leaves: building them dispatches no XLA operation (a short job's first eager
    # conversions compile); jit and vmap take them as they take JAX arrays.
    return Params._make(np.asarray(v, np.int32) for v in (max_steps, max_restarts, tabu, qs4_tries))


def _check_values(max_steps, max_restarts, tabu, qs4_tries, config: Config) -> None:
    base.check_whole("max_steps", max_steps, 1, 2**31 - 1)
    base.check_whole("max_restarts", max_restarts, 0, 2**31 - 1)
    base.check_whole("tabu", tabu, 0, config.tabu)
    base.check_whole("qs4_tries", qs4_tries, 1, 2**31 - 1)


def _checked(config: Config, params: Params, problem=None, state=None) -> Problem:
    """The kernel's arguments checked at its boundary (`base`): types,
    the params' shapes and dtypes, their values and the start board where concrete."""
    base.check_type("config", config, Config)
    base.check_params(params, Params, _TEMPLATE, "minconflicts")
    host = [base.concrete(v) for v in params]
    if all(h is not None and h.ndim == 0 for h in host):
        steps, restarts, tabu, tries = (h.item() for h in host)  # type: ignore[union-attr]
        _check_values(steps, restarts, tabu, tries, config)
    if state is not None:
        base.check_type("state", state, State, "make it with minconflicts.init")
    return base.check_chain_problem(problem, Problem, config.n, config.constrained)


class Problem(NamedTuple):
    """What is solved beyond `n` (dynamic; every chain of a batch shares it).

    Attributes:
      start: [n] int32 the first attempt's board, or None
      mask: the instance (Config.constrained), or None
    """

    start: jax.Array | None = None  # [n] int32 the first attempt's board, or None
    mask: rules.Mask | None = None  # the instance (Config.constrained), or None


def _problem(problem) -> Problem:
    return Problem() if problem is None else problem


class State(NamedTuple):
    """One chain (add a leading [B] axis when batched).

    Attributes:
      rows: [n] int32, rows[c] = row of the queen in column c
      counts: [5n-2] int32, queens per row | diagonal | anti-diagonal
      seed: [2] uint32, the attempt's 64-bit stream seed (low, high word)
      ctr: [] uint32, hash counter (one per random event)
      steps: [] int32, steps in the current attempt
      total_steps: [] int32, steps over all attempts
      restarts: [] int32
      solved: [] bool, no conflicted queen
      stop: [] bool, current attempt finished (solved or out of steps)
      tabu: [T] int32, squares c*n+r left during the plateau (-1 empty)
      tabu_ptr: [] int32, ring-buffer write position
      until: [] int32, the attempt after which an unsolved chain pauses (NO_PAUSE: never)
      best_rows: [n] int32 with keep_best, else [0]: fewest-pairs attempt-end board
      best_pairs: [] int32, its attacking pairs (PAIRS_NONE: no attempt ended yet)
    """

    rows: jax.Array  # [n] int32, rows[c] = row of the queen in column c
    counts: jax.Array  # [5n-2] int32, queens per row | diagonal | anti-diagonal
    seed: jax.Array  # [2] uint32, the attempt's 64-bit stream seed (low, high word)
    ctr: jax.Array  # [] uint32, hash counter (one per random event)
    steps: jax.Array  # [] int32, steps in the current attempt
    total_steps: jax.Array  # [] int32, steps over all attempts
    restarts: jax.Array  # [] int32
    solved: jax.Array  # [] bool, no conflicted queen
    stop: jax.Array  # [] bool, current attempt finished (solved or out of steps)
    tabu: jax.Array  # [T] int32, squares c*n+r left during the plateau (-1 empty)
    tabu_ptr: jax.Array  # [] int32, ring-buffer write position
    until: jax.Array  # [] int32, the attempt after which an unsolved chain pauses (NO_PAUSE: never)
    best_rows: jax.Array  # [n] int32 with keep_best, else [0]: fewest-pairs attempt-end board
    best_pairs: jax.Array  # [] int32, its attacking pairs (PAIRS_NONE: no attempt ended yet)


class Result(NamedTuple):
    """Per-chain outcome ([C] leading axis when batched).

    Attributes:
      rows: [n] int32, final board
      solved: [] bool
      steps: [] int32, total steps over all attempts
      restarts: [] int32, index of the last attempt
      best: [] int32, attacking pairs of `rows` (0 when solved)
    """

    rows: jax.Array  # [n] int32, final board
    solved: jax.Array  # [] bool
    steps: jax.Array  # [] int32, total steps over all attempts
    restarts: jax.Array  # [] int32, index of the last attempt
    best: jax.Array  # [] int32, attacking pairs of `rows` (0 when solved)


_TEMPLATE = Params._make(np.zeros((), np.int32) for _ in Params._fields)
"""The shape and dtype of every `Params` leaf (`base.check_params` compares them)."""

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

    Attributes:
      restarts: [] int32, a paused chain's Result.restarts; -1: fresh
      total_steps: [] int32, its Result.steps (0 for a fresh chain)
      until: [] int32, pause once attempt `until` fails; -1: skip it
    """

    # host arrays from the driver, traced arrays in the kernel
    restarts: jax.Array | np.ndarray  # [] int32, a paused chain's Result.restarts; -1: fresh
    total_steps: jax.Array | np.ndarray  # [] int32, its Result.steps (0 for a fresh chain)
    until: jax.Array | np.ndarray  # [] int32, pause once attempt `until` fails; -1: skip it


class Fresh(NamedTuple):
    """Every chain of a kernel call fresh (a 0-d field: shared by the chains of the call).

    Attributes:
      until: [] int32 >= 0, pause once the attempt with this index fails
    """

    until: jax.Array | np.int32  # [] int32 >= 0, pause once the attempt with this index fails


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

    Attributes:
      conflicted: [] int32, conflicted queens before the step
      pairs: [] int32, attacking pairs before the step
    """

    # traced arrays in the kernel, host arrays from the driver (trace_chain)
    conflicted: jax.Array | np.ndarray  # [] int32, conflicted queens before the step
    pairs: jax.Array | np.ndarray  # [] int32, attacking pairs before the step


# ----------------------------------------------------------------------------- initial boards


def _init_greedy(seed, ctr, n):
    """The classic greedy (CP468): column by column onto a least-attacked free row (diagonal
    attacks by the queens already placed, clamped at 3), ties broken at random. Rows stay
    distinct, so only the last few columns, short of free rows, end in conflict."""
    r = jnp.arange(n, dtype=jnp.int32)
    b = idx_bits(n)
    mask = _U32((1 << b) - 1)

    def body(c, carry):
        rows, counts = carry
        diag = column_cost(counts, c, -1, n) - counts[:n]  # diagonal attacks on each row
        used = (counts[:n] > 0).astype(_U32)
        rnd = stream_bits(seed, ctr + c.astype(_U32), r) >> 3
        # Rows rotated by a random offset in the low bits: when the random bits tie (13-15 of
        # them for n > 8192, fewer than the candidate rows), the tie goes to no row in particular;
        # lowest-index ties piled the queens up and cost 100+ pairs at n = 3 * 10^4.
        off = stream_randint(seed, ctr + c.astype(_U32), n, n)
        low = jnp.where(r >= off, r - off, r - off + n).astype(_U32)
        key = (used << 31) | (jnp.minimum(diag, 3).astype(_U32) << 29) | (rnd & ~mask) | low
        r1 = (jnp.min(key) & mask).astype(jnp.int32) + off
        r1 = jnp.where(r1 >= n, r1 - n, r1)
        rows = lax.dynamic_update_slice(rows, r1[None], (c,))
        for pos in positions(n, c, r1):
            counts = add1(counts, pos, 1)
        return rows, counts

    rows, _ = lax.fori_loop(0, n, body, (jnp.zeros(n, jnp.int32), jnp.zeros(size(n), jnp.int32)))
    return rows


def _init_qs4(seed, ctr, n, tries):
    """Sosic & Gu QS4: swap random unplaced rows into column i until its diagonals are free."""
    q0 = random_permutation(seed, ctr, n)
    dflags = jnp.zeros(4 * n - 2, jnp.int32)  # [diag | anti] occupancy of placed queens

    def col(i, carry):
        q, dfl, ct = carry

        def try_cond(s):
            _, k, ok, _ = s
            return (k < tries) & ~ok

        def try_body(s):
            q, k, _, ct = s
            j = i + stream_randint(seed, ct, 0, n - i)
            q, _, r = inplace.swap(q, i, j)
            free = (dfl[i + r] == 0) & (dfl[3 * n - 2 + r - i] == 0)
            return q, k + 1, free, ct + _U32(1)

        q, _, _, ct = lax.while_loop(try_cond, try_body, (q, 0, False, ct))
        r = q[i]
        dfl = add1(dfl, i + r, 1)
        dfl = add1(dfl, 3 * n - 2 + r - i, 1)
        return q, dfl, ct

    # counters: the permutation uses ctr, the swaps ctr + 1, ctr + 2, ... (< n * tries)
    q, _, _ = lax.fori_loop(0, n, col, (q0, dflags, ctr + _U32(1)))
    return q


def init_board(
    seed: jax.Array, ctr: jax.Array, config: Config, params: Params, mask: rules.Mask | None = None
) -> jax.Array:
    """A fresh board [n] int32 for attempt counter `ctr` of chain `seed` (constrained: a
    random allowed row per column).

    Args:
      seed: uint32 [2], the chain's stream seed.
      ctr: [] uint32 the attempt's hash counter.
      config: the static `Config`.
      params: the `Params`.
      mask: the instance's `Mask`, under `config.constrained`; else None.

    Returns:
      [n] int32 board.
    """
    n = config.n
    if config.constrained:
        assert mask is not None  # a constrained config comes with its instance
        return rules.allowed_start(seed, mask, ctr)
    if config.init == "random":
        return stream_randint(seed, ctr, jnp.arange(n), n)
    if config.init == "permutation":
        return random_permutation(seed, ctr, n)
    if config.init == "greedy":
        return _init_greedy(seed, ctr, n)
    return _init_qs4(seed, ctr, n, params.qs4_tries)


# Within an attempt, initialisation draws from counters below 2^23, steps from 2^23 on. A restart
# re-seeds the attempt with rng.next_seed(seed), so the chain's stream continues.
_STEP_BASE = 1 << 23


def fresh_attempt(
    s: State, config: Config, params: Params, reseed: bool = True, mask: rules.Mask | None = None
) -> State:
    """`s` on the fresh board of its next attempt (`reseed`) or of its current one.

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      params: the `Params`.
      reseed: start the next attempt (True) or redo the current one.
      mask: as for `init_board`.

    Returns:
      The `State` on the fresh board.
    """
    seed = next_seed(s.seed) if reseed else s.seed
    rows = init_board(seed, _U32(0), config, params, mask)
    counts = _counts_of(rows, config)
    return s._replace(
        rows=rows,
        counts=counts,
        seed=seed,
        ctr=_U32(_STEP_BASE),
        steps=jnp.int32(0),
        solved=jnp.bool_(False),
        stop=jnp.bool_(False),
        tabu=jnp.full_like(s.tabu, -1),
        tabu_ptr=jnp.int32(0),
    )


def keep_best(s: State, config: Config) -> State:
    """Score the board of an attempt that has just ended; keep it if it has fewer attacking
    pairs than the best so far (only with `config.keep_best`).

    Args:
      s: the chain's `State`, its attempt just ended.
      config: the static `Config`.

    Returns:
      The `State` with its best board updated.
    """
    if not config.keep_best:
        return s
    pairs = pairs_from_counts(s.counts).astype(jnp.int32)
    better = pairs < s.best_pairs
    return s._replace(
        best_rows=jnp.where(better, s.rows, s.best_rows),
        best_pairs=jnp.where(better, pairs, s.best_pairs),
    )


def _blank(seed: jax.Array, config: Config) -> State:
    """A state with no board yet (every attempt starts with `fresh_attempt`)."""
    n = config.n
    return State(
        rows=jnp.zeros(n, jnp.int32),
        counts=jnp.zeros(size(n), jnp.int32),
        seed=jnp.asarray(seed, _U32),
        ctr=_U32(0),
        steps=jnp.int32(0),
        total_steps=jnp.int32(0),
        restarts=jnp.int32(0),
        solved=jnp.bool_(False),
        stop=jnp.bool_(False),
        tabu=jnp.full((config.tabu,), -1, jnp.int32),
        tabu_ptr=jnp.int32(0),
        until=jnp.int32(NO_PAUSE),
        best_rows=jnp.zeros(n if config.keep_best else 0, jnp.int32),
        best_pairs=jnp.int32(PAIRS_NONE),
    )


def _counts_of(rows, config: Config):
    if config.toroidal:
        return rules.counts_of(rows, config.n, True, config.scatter_counts)
    return counts_of(rows, config.n, config.scatter_counts)


def init(key: jax.Array, config: Config, params: Params, problem: Problem | None = None) -> State:
    """A chain on its first board (key is consumed).

    With `problem.start` ([n] int32, values in 0..n-1) the first attempt starts from that board;
    restarts draw fresh boards with `config.init` as usual. Under `config.constrained` every
    attempt starts on a random allowed square per column of `problem.mask`. A start row off the
    board is refused where the board is concrete, and replaced by the fresh board's row where it
    is traced.

    Args:
      key: a typed `jax.random.key` (consumed).
      config: the static `Config`.
      params: the `Params`.
      problem: the start board or the instance (`Problem`); None: a board drawn by `config.init`.

    Returns:
      The chain's first `State`.

    Raises:
      QueensError: an argument of the wrong type or shape, a concrete value out of range, or a
        concrete start row off the board.
    """
    problem = _checked(config, params, problem)
    return _init(seed_of(key), config, params, problem)


def _init(seed: jax.Array, config: Config, params: Params, problem: Problem) -> State:
    s = fresh_attempt(_blank(seed, config), config, params, reseed=False, mask=problem.mask)
    if problem.start is not None:
        start = base.on_board(jnp.asarray(problem.start, jnp.int32), s.rows, config.n)
        s = s._replace(rows=start, counts=_counts_of(start, config))
    return s


# ----------------------------------------------------------------------------- one step


def _is_conflicted(rows, counts, c, n, toroidal: bool = False):
    r = rows[c]
    return functools.reduce(
        lambda a, b: a | b, [counts[p] > 1 for p in rules.positions(n, c, r, toroidal)]
    )


def _conflicted(rows, counts, config: Config):
    if not config.toroidal:
        return conflicted_from_counts(rows, counts, config.n)
    return rules.conflicted(rows, counts, config.n, True)


def _pick_scan(s: State, n: int, config: Config | None = None):
    """(column, found): a uniformly random conflicted queen (packed-key min over all n queens)."""
    c = jnp.arange(n, dtype=jnp.int32)
    mask = _U32((1 << idx_bits(n)) - 1)
    conf = (
        conflicted_from_counts(s.rows, s.counts, n)
        if config is None
        else _conflicted(s.rows, s.counts, config)
    )
    key = jnp.where(
        conf, (stream_bits(s.seed, s.ctr, c) & ~mask) | c.astype(_U32), _U32(0xFFFFFFFF)
    )
    k = jnp.min(key)
    return (k & mask).astype(jnp.int32), k != _U32(0xFFFFFFFF)


def _pick_conflicted(s: State, config: Config):
    """(column, found): a uniformly random conflicted queen.

    Up to `config.pick_tries` uniform random columns are probed (the first conflicted one is
    uniform over the conflicted set); if all miss, an O(n) scan decides (also uniform)."""
    n = config.n
    tries = config.pick_tries if config.pick_tries >= 0 else (0 if n <= 12 else 16)
    if tries == 0:
        return _pick_scan(s, n, config)

    def cond(t):
        k, _, found = t
        return (k < tries) & ~found

    def body(t):
        k, _, _ = t
        c = stream_randint(s.seed, s.ctr, 2 * n + k, n)
        return k + 1, c, _is_conflicted(s.rows, s.counts, c, n, config.toroidal)

    _, c, found = lax.while_loop(cond, body, (jnp.int32(0), jnp.int32(0), jnp.bool_(False)))
    return lax.cond(found, lambda: (c, found), lambda: _pick_scan(s, n, config))


def choose_row(
    s: State, c: jax.Array, config: Config, mask: rules.Mask | None = None
) -> tuple[jax.Array, jax.Array]:
    """Row for the queen of column `c`: least conflicts (queen lifted), ties uniformly at random
    (packed key: cost | random bits | row). With plateau memory, squares left during the plateau
    and staying rank after the other squares of the same cost. A forbidden row is never chosen.

    Args:
      s: the chain's `State`.
      c: [] int32 the column.
      config: the static `Config`.
      mask: as for `init_board`.

    Returns:
      (row, cost [n] clamped at 3, which is exact at the minimum: the other n - 1 queens
      attack at most 3(n - 1) squares of the column, so some row has at most 2 conflicts; on
      a constrained board, where the allowed rows may all cost more, they tie at 3).
    """
    n = config.n
    r = jnp.arange(n, dtype=jnp.int32)
    ok_rows = None  # [n] bool: the allowed rows of column c (constrained)
    if config.constrained:
        assert mask is not None  # a constrained config comes with its instance
        ok_rows = mask.allowed[c]
    low = _U32((1 << idx_bits(n)) - 1)  # the row's bits of a key
    if config.toroidal:
        cost = jnp.minimum(rules.column_cost(s.counts, c, s.rows[c], n, True), 3)
    else:
        cost = jnp.minimum(column_cost(s.counts, c, s.rows[c], n), 3)
    rnd = stream_bits(s.seed, s.ctr, r + n) >> 3
    if config.tabu:
        later = jnp.any(s.tabu[:, None] == (c * n + r)[None, :], axis=0) | (r == s.rows[c])
        key = (cost.astype(_U32) << 30) | (later.astype(_U32) << 29) | (rnd & ~low) | r.astype(_U32)
    else:
        key = (cost.astype(_U32) << 29) | (rnd & ~low) | r.astype(_U32)
    if ok_rows is not None:
        key = jnp.where(ok_rows, key, _U32(0xFFFFFFFF))
    r1 = (jnp.min(key) & low).astype(jnp.int32)
    if config.move == "cisc352":
        # Stage 1 is the minimum above when it has no conflict; else stage 2 probes random rows
        # for one with a single conflict; stage 3 keeps the full scan's least-conflicted row.
        probe = stream_randint(s.seed, s.ctr, 3 * n + jnp.arange(CISC352_PROBES), n)
        ok = cost[probe] == 1
        if ok_rows is not None:
            ok = ok & ok_rows[probe]
        first = probe[jnp.argmax(ok)]
        r1 = jnp.where((cost[r1] > 0) & jnp.any(ok), first, r1)
    return r1, cost


def advance(s: State, config: Config, params: Params, problem: Problem | None = None) -> State:
    """One min-conflicts step of the current attempt (a no-op once `s.stop`). Sets
    `solved`/`stop` when the attempt ends: no conflicted queen left, or `params.max_steps`
    steps taken. ([`step`][jaxqueens.solvers.minconflicts.step] also starts the next attempt;
    lockstep lanes use this and [`restart`][jaxqueens.solvers.minconflicts.restart] so that they
    restart only when a lane needs it.)

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      params: the `Params`.
      problem: the instance, under `config.constrained`; else None or a start board (unused).

    Returns:
      The next `State`.
    """
    mask = _problem(problem).mask
    n = config.n
    c, found = _pick_conflicted(s, config)
    solved = ~found
    exhausted = found & (s.steps >= params.max_steps)
    move = ~s.stop & found & ~exhausted

    r0 = s.rows[c]
    r1, cost = choose_row(s, c, config, mask)
    r1 = jnp.where(move, r1, r0)

    counts = s.counts
    lines_of = (
        (lambda c, r: positions(n, c, r))
        if not config.toroidal
        else (lambda c, r: rules.positions(n, c, r, True))
    )
    for pos, v in zip(lines_of(c, r0) + lines_of(c, r1), (-1, -1, -1, 1, 1, 1), strict=True):
        counts = add1(counts, pos, v)
    rows = lax.dynamic_update_slice(s.rows, r1[None], (c,))

    tabu, tabu_ptr = s.tabu, s.tabu_ptr
    if config.tabu:
        # cost[r0] is clamped at 3: a queen on 4+ conflicts that moves to 3 did improve
        cost0 = sum(s.counts[p] for p in lines_of(c, r0)) - 3
        improved = cost[r1] < cost0
        moved = move & (r1 != r0)
        tabu = jnp.where(move & improved, -1, tabu)
        ring = lax.dynamic_update_slice(tabu, (c * n + r0)[None], (tabu_ptr,))
        push = moved & ~improved & (params.tabu > 0)  # the tenure: at most Config.tabu squares
        tabu = jnp.where(push, ring, tabu)
        tabu_ptr = jnp.where(push, (tabu_ptr + 1) % jnp.maximum(params.tabu, 1), tabu_ptr)

    inc = move.astype(jnp.int32)
    return s._replace(
        rows=rows,
        counts=counts,
        ctr=s.ctr + (~s.stop).astype(_U32),
        steps=s.steps + inc,
        total_steps=s.total_steps + inc,
        solved=s.solved | (~s.stop & solved),
        stop=s.stop | solved | exhausted,
        tabu=tabu,
        tabu_ptr=tabu_ptr,
    )


def retry(s: State, config: Config, params: Params) -> jax.Array:
    """[] bool: the attempt is over, unsolved, with restarts left (and not paused).

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      params: the `Params`.

    Returns:
      [] bool.
    """
    return s.stop & ~s.solved & (s.restarts < params.max_restarts) & (s.restarts < s.until)


def restart(s: State, config: Config, params: Params, problem: Problem | None = None) -> State:
    """The chain's next attempt: the ended attempt's board kept if best, a fresh board.

    Args:
      s: the chain's `State`, its attempt ended.
      config: the static `Config`.
      params: the `Params`.
      problem: as for `advance`.

    Returns:
      The `State` at the start of the next attempt.
    """
    s = keep_best(s, config)._replace(restarts=s.restarts + 1)
    return fresh_attempt(s, config, params, mask=_problem(problem).mask)


def step(s: State, config: Config, params: Params, problem: Problem | None = None) -> State:
    """One step: a min-conflicts move, or, once an attempt has ended unsolved with restarts left,
    the next attempt's fresh board (a no-op once [`done`][jaxqueens.solvers.minconflicts.done]).

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      params: the `Params`.
      problem: as for `advance`.

    Returns:
      The next `State`.
    """
    problem = _checked(config, params, problem, state=s)
    return lax.cond(
        retry(s, config, params),
        lambda s: restart(s, config, params, problem),
        lambda s: advance(s, config, params, problem),
        s,
    )


def done(s: State, config: Config, params: Params) -> jax.Array:
    """[] bool: the chain is over for good (solved, out of restarts, or paused).

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      params: the `Params`.

    Returns:
      [] bool.
    """
    over = (s.restarts >= params.max_restarts) | (s.restarts >= s.until)
    return s.stop & (s.solved | over)


def search(s: State, config: Config, params: Params, problem: Problem | None = None) -> State:
    """Steps until the current attempt stops (`config.unroll` steps per loop iteration).

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      params: the `Params`.
      problem: as for `advance`.

    Returns:
      The `State` once the attempt has stopped.
    """

    def body(s):
        for _ in range(config.unroll):
            s = advance(s, config, params, problem)
        return s

    return lax.while_loop(lambda s: ~s.stop, body, s)


def resume(
    key: jax.Array,
    config: Config,
    params: Params,
    problem: Problem | None,
    r: Resume | Fresh,
) -> State:
    """A chain's state at the start of a bounded call: fresh
    ([`Fresh`][jaxqueens.solvers.minconflicts.Fresh], or `r.restarts < 0`: as
    [`init`][jaxqueens.solvers.minconflicts.init]) or the next attempt of a paused chain; it pauses
    after attempt `r.until` (`r.until < 0`: a stopped state, the chain is skipped). Selects, not
    branches: the per-chain cost of a call stays that of
    [`init`][jaxqueens.solvers.minconflicts.init].

    Args:
      key: the chain's key, as given to every call of the run (consumed).
      config: the static `Config`.
      params: the `Params`.
      problem: as for `init`.
      r: where the chain starts: `Fresh`, or its `Resume` entry.

    Returns:
      The chain's `State` at the start of the call.
    """
    problem = _checked(config, params, problem)
    seed = seed_of(key)
    if isinstance(r, Fresh):
        return _init(seed, config, params, problem)._replace(until=jnp.asarray(r.until, jnp.int32))
    fresh = r.restarts < 0
    # Attempt k draws from seed_k = f^k(seed) with f = rng.next_seed (fresh_attempt);
    # O(k) scalar steps, small beside the k attempts that the chain has run.
    seed = lax.fori_loop(0, jnp.maximum(r.restarts + 1, 0), lambda _, x: next_seed(x), seed)
    s = _blank(seed, config)
    s = s._replace(
        restarts=jnp.where(fresh, 0, r.restarts + 1),
        total_steps=jnp.where(fresh, 0, r.total_steps),
    )
    s = fresh_attempt(s, config, params, reseed=False, mask=problem.mask)
    if problem.start is not None:
        start = base.on_board(jnp.asarray(problem.start, jnp.int32), s.rows, config.n)
        s = s._replace(
            rows=jnp.where(fresh, start, s.rows),
            counts=jnp.where(fresh, _counts_of(start, config), s.counts),
        )
    until = jnp.asarray(r.until, jnp.int32)
    return s._replace(until=until, stop=until < 0)


def finish(s: State, config: Config, params: Params, problem: Problem | None = None) -> Result:
    """Attempts from `s` until solved, out of restarts, or paused at `s.until`: the fast
    loop of [`run`][jaxqueens.solvers.minconflicts.run] (an attempt's steps in an inner
    `while_loop`, restarts outside it).

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      params: the `Params`.
      problem: as for `advance`.

    Returns:
      The chain's `Result`.
    """
    problem = _checked(config, params, problem, state=s)

    def cond(s):
        return ~s.solved & (s.restarts <= params.max_restarts) & ~(s.stop)

    def body(s):
        # The step loop carries a constant in place of `until` (XLA drops it from the carry),
        # so that the hot loop is exactly that of a chain without a bound.
        until = s.until
        s = search(s._replace(until=jnp.int32(NO_PAUSE)), config, params, problem)
        s = keep_best(s._replace(until=until), config)
        again = ~s.solved & (s.restarts < params.max_restarts) & (s.restarts < s.until)
        return lax.cond(
            again,
            lambda s: fresh_attempt(
                s._replace(restarts=s.restarts + 1), config, params, mask=_problem(problem).mask
            ),
            lambda s: s,
            s,
        )

    return _result(lax.while_loop(cond, body, s), config)


def result(s: State, config: Config, params: Params) -> Result:
    """What the chain reports (call it once [`done`][jaxqueens.solvers.minconflicts.done]).

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      params: not read.

    Returns:
      The chain's `Result`.
    """
    return _result(keep_best(s, config), config)


def _result(s: State, config: Config) -> Result:
    """The chain's outcome; call it on a state whose attempt has ended and been kept
    (`keep_best`)."""
    pairs = pairs_from_counts(s.counts).astype(jnp.int32)
    rows = s.rows
    if config.keep_best:
        use = ~s.solved & (s.best_pairs <= pairs)  # the first board with the fewest pairs
        rows, pairs = jnp.where(use, s.best_rows, rows), jnp.where(use, s.best_pairs, pairs)
    return Result(rows=rows, solved=s.solved, steps=s.total_steps, restarts=s.restarts, best=pairs)


def run(key: jax.Array, config: Config, params: Params, problem: Problem | None = None) -> Result:
    """One chain with restarts until solved or `params.max_restarts` are spent (key is
    consumed).

    Args:
      key: a typed `jax.random.key` (consumed).
      config: the static `Config`.
      params: the `Params`.
      problem: the start board or the instance (`Problem`); None: boards drawn by `config.init`.

    Returns:
      The chain's `Result`.

    Raises:
      QueensError: as for `init`.
    """
    return finish(init(key, config, params, problem), config, params, problem)


def trace(
    key: jax.Array,
    config: Config,
    params: Params,
    num_steps: int,
    problem: Problem | None = None,
) -> tuple[State, Metrics]:
    """The first attempt (no restarts) for `num_steps` steps; per-step metrics [num_steps].

    Args:
      key: a typed `jax.random.key` (consumed).
      config: the static `Config`.
      params: the `Params`.
      num_steps: steps to record (static).
      problem: as for `init`.

    Returns:
      `(state, metrics)`: the state after the steps, and `Metrics` with leading axis [num_steps].
    """

    def body(s, _):
        m = Metrics(
            conflicted=jnp.sum(_conflicted(s.rows, s.counts, config)).astype(jnp.int32),
            pairs=pairs_from_counts(s.counts).astype(jnp.int32),
        )
        return advance(s, config, params, problem), m

    return lax.scan(body, init(key, config, params, problem), None, length=num_steps)


def lockstep_config(config: Config) -> Config:
    """The same chains formulated for lockstep lanes: line counts by one scatter-add.

    Args:
      config: the static `Config`.

    Returns:
      The lockstep `Config`.
    """
    return dataclasses.replace(config, scatter_counts=True)
