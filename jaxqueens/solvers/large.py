"""Very large boards in linear time: QS4 initialisation and swap repair (Sosic & Gu 1991, 1994).

R. Sosic and J. Gu, "Efficient local search with conflict minimization: a case study of the
n-queens problem", IEEE TKDE 6(5), 1994. The board stays a permutation, so only diagonals can
conflict; the state is the board and its diagonal and anti-diagonal counts. `init` places the
queens by QS4 in expected O(n), `step` is one round of swap repair and `run` repeats rounds until
no conflict is left or a budget is spent, keeping the package's contract
(`jaxqueens.solvers.base`). The docs' large page describes both phases and the randomness.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens.core.inplace import add as _add
from jaxqueens.core.inplace import get as _get
from jaxqueens.core.inplace import put as _set
from jaxqueens.core.inplace import swap as _swap
from jaxqueens.core.rng import U32, next_seed, stream_randint
from jaxqueens.solvers.base import seed_of
from jaxqueens.solvers.large_types import INT32_MAX as INT32_MAX
from jaxqueens.solvers.large_types import MAX_N as MAX_N
from jaxqueens.solvers.large_types import PAIRS_NONE as PAIRS_NONE
from jaxqueens.solvers.large_types import Config as Config
from jaxqueens.solvers.large_types import Params as Params
from jaxqueens.solvers.large_types import Result as Result
from jaxqueens.solvers.large_types import State as State
from jaxqueens.solvers.large_types import blank, check_args
from jaxqueens.solvers.large_types import default_params as default_params


def empty(key: jax.Array, config: Config, params: Params) -> State:
    """QS4's start: the identity board, empty counts (QS4's swaps draw the
    random permutation). Not yet a board to repair: [`place`][jaxqueens.solvers.large.place] every
    column, then [`ready`][jaxqueens.solvers.large.ready].

    Args:
      key: a typed `jax.random.key` (consumed).
      config: the static `Config`.
      params: the `Params`.

    Returns:
      The chain's `State` before QS4 places any column.
    """
    check_args(config, params)
    return blank(seed_of(key), config)


def place(s: State, config: Config, params: Params, start, stop) -> State:
    """QS4 for columns `start .. stop-1` (columns before `start` already placed).

    `start` and `stop` are dynamic: the driver jits this once (donating `s`) and calls it
    over column ranges to show progress; the board does not depend on the ranges.

    Args:
      s: the chain's `State`, columns before `start` placed.
      config: the static `Config`.
      params: the `Params`.
      start: [] int32, the first column to place.
      stop: [] int32, one past the last column to place.

    Returns:
      The `State` with columns up to `stop - 1` placed.
    """
    n = config.n
    seed = s.seed

    def column(i, t):
        rows, diag, anti, ctr = t
        limit = jnp.where(i < n - params.free_tail, params.tries, 1)

        def attempt(u):
            k, _, rows, ctr = u
            j = i + stream_randint(seed, ctr, jnp.uint32(0), n - i)
            rows, _, rj = _swap(rows, i, j)
            free = (_get(diag, i + rj) == 0) & (_get(anti, rj - i + n - 1) == 0)
            return k + 1, free, rows, ctr + U32(1)

        _, _, rows, ctr = lax.while_loop(
            lambda u: (u[0] < limit) & ~u[1], attempt, (jnp.int32(0), jnp.bool_(False), rows, ctr)
        )
        r = _get(rows, i)
        return rows, _add(diag, i + r, 1), _add(anti, r - i + n - 1, 1), ctr

    rows, diag, anti, ctr = lax.fori_loop(start, stop, column, (s.rows, s.diag, s.anti, s.ctr))
    return s._replace(rows=rows, diag=diag, anti=anti, ctr=ctr)


def ready(s: State, config: Config, params: Params) -> State:
    """A fully placed board opened for repair: its attacking pairs counted (O(n)).

    Args:
      s: the chain's `State`, every column placed.
      config: the static `Config`.
      params: the `Params`.

    Returns:
      The `State` ready to repair.
    """
    return s._replace(pairs=attacking_pairs(s))


def init(key: jax.Array, config: Config, params: Params) -> State:
    """A chain on its QS4 board, ready to repair.

    Args:
      key: a typed `jax.random.key` (consumed).
      config: the static `Config`.
      params: the `Params`.

    Returns:
      The chain's first `State`, ready to repair.

    Raises:
      QueensError: an argument of the wrong type or shape, or a concrete value out of range.
    """
    return ready(place(empty(key, config, params), config, params, 0, config.n), config, params)


def attacking_pairs(s: State) -> jax.Array:
    """[] int32 attacking pairs of the board, from its counts (O(n)).

    Args:
      s: the chain's `State`.

    Returns:
      [] int32.
    """
    return (jnp.sum(s.diag * (s.diag - 1) // 2) + jnp.sum(s.anti * (s.anti - 1) // 2)).astype(
        jnp.int32
    )


LIST_BLOCK = 16
"""Entries per block of `_listed`'s two-level search."""


def _listed(mask: jax.Array, size: int) -> jax.Array:
    """[size] int32: the indices of the first `size` set entries of `mask` [n] in ascending
    order, 0 past the last: `jnp.nonzero(mask, size=size, fill_value=0)`, without its scatter
    of every entry (a large part of a repair round on XLA:CPU).

    Two levels: the set entries per block of `LIST_BLOCK` and their prefix sums locate the
    block of the j-th set entry by binary search; a prefix sum inside that block alone finds it.
    """
    n, b = mask.shape[0], LIST_BLOCK
    blocks = -(-n // b)
    x = jnp.pad(mask.astype(jnp.int32), (0, blocks * b - n)).reshape(blocks, b)
    per_block = jnp.sum(x, axis=1, dtype=jnp.int32)
    ends = jnp.cumsum(per_block, dtype=jnp.int32)  # set entries up to each block's end
    j = jnp.arange(1, size + 1, dtype=jnp.int32)  # the j-th set entry, for each slot
    block = jnp.searchsorted(ends, j, side="left", method="scan").astype(jnp.int32)
    found = block < blocks  # else fewer than j entries are set
    block = jnp.minimum(block, blocks - 1)
    rank = j - (ends[block] - per_block[block])  # its rank inside its block, 1-based
    inside = jnp.sum(jnp.cumsum(x[block], axis=1, dtype=jnp.int32) < rank[:, None], axis=1)
    return jnp.where(found, block * b + inside.astype(jnp.int32), 0)


def conflicted(s: State) -> jax.Array:
    """[n] bool: queens sharing a diagonal or anti-diagonal (vectorised, O(n)).

    Args:
      s: the chain's `State`.

    Returns:
      [n] bool.
    """
    n = s.rows.shape[0]
    c = jnp.arange(n, dtype=jnp.int32)
    return (s.diag[s.rows + c] > 1) | (s.anti[s.rows - c + n - 1] > 1)


def _try_swap(rows, diag, anti, n: int, c1, c2, sideways):
    """Swap the rows of queens c1 != c2 if c1 is in conflict and the swap lowers the attacking
    pairs (or keeps them, with `sideways`); returns (rows, diag, anti, pair change, taken). O(1).

    Every count is read before the first write and every position written once, with the new or
    the old value, so the arrays update in place (`jaxqueens.core.inplace`); a `lax.cond` around
    the writes would copy the board and both count arrays every step."""
    r2, r1 = rows[jnp.stack([c2, c1])]
    d_pos = jnp.stack([c1 + r1, c2 + r2, c1 + r2, c2 + r1])  # off, off, on, on
    a_pos = jnp.stack([r1 - c1, r2 - c2, r2 - c1, r1 - c2]) + (n - 1)
    kd, ka = diag[d_pos], anti[a_pos]
    still = (kd[0] > 1) | (ka[0] > 1)
    seen = []
    delta = jnp.int32(0)
    for pos, k in ((d_pos, kd), (a_pos, ka)):
        # a swap can take both queens off one line, or put both on one line
        k_seen = jnp.stack([k[0], k[1] - (pos[1] == pos[0]), k[2], k[3] + (pos[3] == pos[2])])
        delta += -(k_seen[0] - 1) - (k_seen[1] - 1) + k_seen[2] + k_seen[3]
        seen.append(k_seen)
    take = still & ((delta < 0) | (sideways & (delta == 0)))
    for i, v in enumerate((-1, -1, 1, 1)):
        diag = _set(diag, d_pos[i], jnp.where(take, seen[0][i] + v, kd[i]))
        anti = _set(anti, a_pos[i], jnp.where(take, seen[1][i] + v, ka[i]))
    rows = _set(_set(rows, c1, jnp.where(take, r2, r1)), c2, jnp.where(take, r1, r2))
    return rows, diag, anti, jnp.where(take, delta, 0), take


def repair(s: State, config: Config, params: Params) -> State:
    """One repair round: list the conflicted queens, then swap attempts until no pair is left,
    `64 * listed + 64` attempts are spent or the swap budget is; after a round without fewer
    pairs (`s.stalled > 0`) swaps that keep the pair count are taken too. The board is one
    [`ready`][jaxqueens.solvers.large.ready] opened (or a repair left): its `pairs` are counted.

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      params: the `Params`.

    Returns:
      The `State` after the round.
    """
    n = config.n
    mask = conflicted(s)
    count = jnp.sum(mask, dtype=jnp.int32)
    listed = _listed(mask, config.list_size)
    size = jnp.maximum(jnp.minimum(count, config.list_size), 1)
    budget = jnp.minimum(params.max_steps - s.steps, 64 * size + 64)
    sideways = s.stalled > 0
    last = config.trace_size - 1
    seed = s.seed

    def attempt(t):
        k, moves, pairs, trace, rows, diag, anti, ctr = t
        c1 = _get(listed, stream_randint(seed, ctr, jnp.uint32(1), size))
        c2 = stream_randint(seed, ctr, jnp.uint32(2), n - 1)
        rows, diag, anti, delta, taken = _try_swap(
            rows, diag, anti, n, c1, c2 + (c2 >= c1), sideways
        )
        pairs = pairs + delta
        slot = jnp.minimum(k, last)
        trace = _set(trace, slot, jnp.where(k <= last, pairs, _get(trace, slot)))
        return k + 1, moves + taken, pairs, trace, rows, diag, anti, ctr + U32(1)

    k, moves, pairs, trace, rows, diag, anti, ctr = lax.while_loop(
        lambda t: (t[0] < budget) & (t[2] > 0),
        attempt,
        (
            jnp.int32(0),
            jnp.int32(0),
            s.pairs,  # kept up to date (recounting it here made XLA copy both count arrays)
            jnp.full(config.trace_size, -1, jnp.int32),
            s.rows,
            s.diag,
            s.anti,
            s.ctr,
        ),
    )
    return s._replace(
        rows=rows,
        diag=diag,
        anti=anti,
        ctr=ctr,
        pairs=pairs,
        best=jnp.minimum(s.best, pairs),
        stalled=jnp.where(pairs < s.best, 0, s.stalled + 1),
        steps=s.steps + k,
        moves=s.moves + moves,
        rounds=s.rounds + 1,
        conflicted=count,
        trace=trace,
    )


def done(s: State, config: Config, params: Params) -> jax.Array:
    """[] bool: solved, or the swap or round budget is spent.

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      params: the `Params`.

    Returns:
      [] bool.
    """
    return (s.pairs == 0) | (s.steps >= params.max_steps) | (s.rounds >= params.max_rounds)


def retry(s: State, config: Config, params: Params) -> jax.Array:
    """[] bool: not done, and the repair has stalled for `params.stall_rounds` rounds.

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      params: the `Params`.

    Returns:
      [] bool.
    """
    return ~done(s, config, params) & (s.stalled >= params.stall_rounds)


def renew(s: State, config: Config, params: Params) -> State:
    """The next attempt's QS4 start: the identity board from the chain's next seed
    (`next_seed`), the chain's totals kept (`restart` places and
    opens it).

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      params: the `Params`.

    Returns:
      The `State` on the identity board, before QS4.
    """
    return blank(next_seed(s.seed), config, like=s)._replace(restarts=s.restarts + 1)


def restart(s: State, config: Config, params: Params) -> State:
    """A fresh QS4 board for a stalled chain (O(n)): `renew`,
    [`place`][jaxqueens.solvers.large.place], [`ready`][jaxqueens.solvers.large.ready].

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      params: the `Params`.

    Returns:
      The `State` on its fresh QS4 board, ready to repair.
    """
    return ready(place(renew(s, config, params), config, params, 0, config.n), config, params)


def _advance(s: State, config: Config, params: Params) -> State:
    return lax.cond(
        retry(s, config, params),
        lambda s: restart(s, config, params),
        lambda s: repair(s, config, params),
        s,
    )


def step(s: State, config: Config, params: Params) -> State:
    """One repair round, or a restart once the repair has stalled (a no-op once
    [`done`][jaxqueens.solvers.large.done]).

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      params: the `Params`.

    Returns:
      The next `State`.
    """
    check_args(config, params, s)
    return lax.cond(done(s, config, params), lambda s: s, lambda s: _advance(s, config, params), s)


def result(s: State, config: Config, params: Params) -> Result:
    """What the chain reports.

    Args:
      s: the chain's `State`.
      config: not read.
      params: not read.

    Returns:
      The chain's `Result`.
    """
    return Result(
        rows=s.rows,
        solved=s.pairs == 0,
        steps=s.steps,
        moves=s.moves,
        rounds=s.rounds,
        restarts=s.restarts,
        pairs=s.pairs,
    )


def finish(s: State, config: Config, params: Params) -> Result:
    """Rounds (and restarts) from `s` until solved or out of budget:
    [`run`][jaxqueens.solvers.large.run] from a given state.

    Args:
      s: the chain's `State`.
      config: the static `Config`.
      params: the `Params`.

    Returns:
      The chain's `Result`.
    """
    check_args(config, params, s)
    s = lax.while_loop(lambda s: ~done(s, config, params), lambda s: _advance(s, config, params), s)
    return result(s, config, params)


def run(key: jax.Array, config: Config, params: Params) -> Result:
    """QS4, then repair rounds (restarting when stalled) until solved or out of budget.

    Under `jax.vmap` (a sweep over keys or [`Params`][jaxqueens.solvers.large.Params]) the restart
    and the repair branch both run every round for every lane (a batched `lax.cond` is a select), so
    a round costs a QS4 pass too: fine for sweeps on small boards; for many chains on large boards
    map them (`lax.map`) instead.

    Args:
      key: a typed `jax.random.key` (consumed).
      config: the static `Config`.
      params: the `Params`.

    Returns:
      The chain's `Result`.

    Raises:
      QueensError: as for `init`.
    """
    return finish(init(key, config, params), config, params)
