"""Min-conflicts local search for N-Queens (Minton et al. 1992), written for one chain.

One step picks a conflicted queen at random and moves it to a least-conflicted row of its column
(random ties); an attempt ends solved or after `Params.max_steps` steps, and the chain restarts
from a fresh board until solved or out of restarts. The kernel keeps the package's contract
(`jaxqueens.solvers.base`); `jaxqueens.parallel.chains` batches chains. The docs' minconflicts
page describes initial boards, the plateau memory, row choice, pausing and resuming, constrained
boards and the randomness.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens.core.lines import pairs_from_counts
from jaxqueens.core.rng import next_seed
from jaxqueens.solvers import base
from jaxqueens.solvers.base import lockstep_config as lockstep_config
from jaxqueens.solvers.base import seed_of
from jaxqueens.solvers.minconflicts_moves import CISC352_PROBES as CISC352_PROBES
from jaxqueens.solvers.minconflicts_moves import advance as advance
from jaxqueens.solvers.minconflicts_moves import blank
from jaxqueens.solvers.minconflicts_moves import choose_row as choose_row
from jaxqueens.solvers.minconflicts_moves import fresh_attempt as fresh_attempt
from jaxqueens.solvers.minconflicts_moves import init_board as init_board
from jaxqueens.solvers.minconflicts_moves import keep_best as keep_best
from jaxqueens.solvers.minconflicts_types import INITS as INITS
from jaxqueens.solvers.minconflicts_types import MOVES as MOVES
from jaxqueens.solvers.minconflicts_types import NO_PAUSE as NO_PAUSE
from jaxqueens.solvers.minconflicts_types import PAIRS_NONE as PAIRS_NONE
from jaxqueens.solvers.minconflicts_types import Config as Config
from jaxqueens.solvers.minconflicts_types import Fresh as Fresh
from jaxqueens.solvers.minconflicts_types import Metrics as Metrics
from jaxqueens.solvers.minconflicts_types import Params as Params
from jaxqueens.solvers.minconflicts_types import Problem as Problem
from jaxqueens.solvers.minconflicts_types import Result as Result
from jaxqueens.solvers.minconflicts_types import Resume as Resume
from jaxqueens.solvers.minconflicts_types import State as State
from jaxqueens.solvers.minconflicts_types import board_counts, check_args, conflicted
from jaxqueens.solvers.minconflicts_types import default_params as default_params
from jaxqueens.solvers.minconflicts_types import fresh as fresh
from jaxqueens.solvers.minconflicts_types import paused as paused


def init(key: jax.Array, config: Config, params: Params, problem: Problem | None = None) -> State:
    """A chain on its first board.

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
    problem = check_args(config, params, problem)
    return _init(blank(seed_of(key), config), config, params, problem)


def _init(s: State, config: Config, params: Params, problem: Problem, fresh=None) -> State:
    """`s` on its attempt's fresh board, or on `problem.start` (where `fresh` [] bool, if given)."""
    s = fresh_attempt(s, config, params, reseed=False, mask=problem.mask)
    if problem.start is None:
        return s
    start = base.on_board(jnp.asarray(problem.start, jnp.int32), s.rows, config.n)
    if fresh is None:
        return s._replace(rows=start, counts=board_counts(start, config))
    rows = jnp.where(fresh, start, s.rows)
    return s._replace(rows=rows, counts=jnp.where(fresh, board_counts(start, config), s.counts))


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
    return fresh_attempt(s, config, params, mask=None if problem is None else problem.mask)


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
    problem = check_args(config, params, problem, state=s)
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
    problem = check_args(config, params, problem)
    seed = seed_of(key)
    if isinstance(r, Fresh):
        s = _init(blank(seed, config), config, params, problem)
        return s._replace(until=jnp.asarray(r.until, jnp.int32))
    fresh = r.restarts < 0
    # Attempt k draws from seed_k = f^k(seed) with f = rng.next_seed (fresh_attempt);
    # O(k) scalar steps, small beside the k attempts that the chain has run.
    seed = lax.fori_loop(0, jnp.maximum(r.restarts + 1, 0), lambda _, x: next_seed(x), seed)
    s = blank(seed, config)._replace(
        restarts=jnp.where(fresh, 0, r.restarts + 1),
        total_steps=jnp.where(fresh, 0, r.total_steps),
    )
    s = _init(s, config, params, problem, fresh)
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
    problem = check_args(config, params, problem, state=s)

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
                s._replace(restarts=s.restarts + 1), config, params, mask=problem.mask
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
    """One chain with restarts until solved or `params.max_restarts` are spent.

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
            conflicted=jnp.sum(conflicted(s.rows, s.counts, config)).astype(jnp.int32),
            pairs=pairs_from_counts(s.counts).astype(jnp.int32),
        )
        return advance(s, config, params, problem), m

    return lax.scan(body, init(key, config, params, problem), None, length=num_steps)
