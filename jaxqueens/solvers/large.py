"""Very large boards in linear time: QS4 initialisation and swap repair (Sosic & Gu 1991, 1994).

R. Sosic and J. Gu, "Efficient local search with conflict minimization: a case study of the
n-queens problem", IEEE TKDE 6(5), 1994. The board stays a permutation, so only diagonals can
conflict; the state is the board and its diagonal and anti-diagonal counts (20 bytes per queen).

- Initialisation (QS4): for columns i = 0, 1, ..., swap a random not-yet-placed row into column i
  until both of its diagonals are free of the queens already placed (at most ``tries`` attempts;
  the last ``free_tail`` columns take one random swap). Expected O(n). It runs as a series of
  jitted calls over column ranges so that the driver can show progress on huge boards.
- Repair: a vectorised O(n) scan lists the conflicted queens; then, per step, a random listed
  queen still in conflict swaps rows with a random other queen if that lowers the number of
  attacking pairs (QS4's move; O(1) per step). After a round without progress, swaps that keep
  the count are taken too, to cross the plateau (this is what small boards need). Rounds repeat until no conflict
  is left; a repair that stalls for ``stall_rounds`` rounds restarts from a fresh board.

All loops are scalar ``dynamic_slice``/``dynamic_update_slice`` code that XLA:CPU compiles to one
native loop (see :mod:`jaxqueens.parallel.devices`), and buffers are donated from call to call.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens.core.inplace import add as _add
from jaxqueens.core.inplace import get as _get
from jaxqueens.core.inplace import put as _set
from jaxqueens.core.inplace import swap as _swap
from jaxqueens.core.rng import U32, hash_randint

BYTES_PER_QUEEN = 20
"""State: board (4) + diagonal and anti-diagonal counts (2 x 2 x 4)."""


@dataclasses.dataclass(frozen=True)
class Config:
    """Static configuration (hashable)."""

    n: int
    tries: int = 100  # QS4 attempts per column
    free_tail: int = 0  # last columns placed with a single random swap
    list_size: int = 4096  # conflicted queens listed per repair round
    stall_rounds: int = 50  # rounds without progress before a restart
    trace_size: int = 4096  # attacking pairs recorded for the first steps


class State(NamedTuple):
    """One large chain."""

    rows: jax.Array  # [n] int32 permutation
    diag: jax.Array  # [2n-1] int32 queens per diagonal r + c
    anti: jax.Array  # [2n-1] int32 queens per anti-diagonal r - c + n - 1
    seed: jax.Array  # [] uint32
    ctr: jax.Array  # [] uint32 hash counter


class RoundStats(NamedTuple):
    conflicted: jax.Array  # [] int32 conflicted queens at the start of the round
    pairs: jax.Array  # [] int32 attacking pairs at the end of the round
    steps: jax.Array  # [] int32 swap attempts in the round
    moves: jax.Array  # [] int32 accepted swaps
    trace: jax.Array  # [trace_size] int32 pairs after each attempt (-1 past the end)


def new_state(seed, n: int) -> State:
    """Identity board, empty counts: QS4 starts here (its swaps draw the random permutation)."""
    return State(
        rows=jnp.arange(n, dtype=jnp.int32),
        diag=jnp.zeros(2 * n - 1, jnp.int32),
        anti=jnp.zeros(2 * n - 1, jnp.int32),
        seed=jnp.asarray(seed, U32),
        ctr=U32(0),
    )


@functools.partial(jax.jit, static_argnums=(1,), donate_argnums=(0,))
def init_columns(s: State, config: Config, start, stop) -> State:
    """QS4 for columns ``start .. stop-1`` (columns before ``start`` already placed)."""
    n = config.n

    def column(i, s):
        limit = jnp.where(i < n - config.free_tail, config.tries, 1)

        def attempt(t):
            k, _, s = t
            j = i + hash_randint(s.seed, s.ctr, jnp.uint32(0), n - i)
            rows, _, rj = _swap(s.rows, i, j)
            free = (_get(s.diag, i + rj) == 0) & (_get(s.anti, rj - i + n - 1) == 0)
            return k + 1, free, s._replace(rows=rows, ctr=s.ctr + U32(1))

        _, _, s = lax.while_loop(
            lambda t: (t[0] < limit) & ~t[1], attempt, (jnp.int32(0), jnp.bool_(False), s)
        )
        r = _get(s.rows, i)
        return s._replace(diag=_add(s.diag, i + r, 1), anti=_add(s.anti, r - i + n - 1, 1))

    return lax.fori_loop(start, stop, column, s)


def _pairs(s: State):
    return (jnp.sum(s.diag * (s.diag - 1) // 2) + jnp.sum(s.anti * (s.anti - 1) // 2)).astype(
        jnp.int32
    )


def conflicted(s: State) -> jax.Array:
    """[n] bool: queens sharing a diagonal or anti-diagonal (vectorised, O(n))."""
    n = s.rows.shape[0]
    c = jnp.arange(n, dtype=jnp.int32)
    return (s.diag[s.rows + c] > 1) | (s.anti[s.rows - c + n - 1] > 1)


def _try_swap(s: State, n: int, c1, c2, sideways):
    """Swap the rows of queens c1 != c2 if c1 is in conflict and the swap lowers the attacking
    pairs (or keeps them, with ``sideways``); returns (state, pair change, taken). O(1).

    All counts are read (gathered) before any write, and every position is written once with
    the new or the old value, so the loop updates the arrays in place (a ``lax.cond`` around
    the writes made XLA copy the board and both count arrays on every step)."""
    r2, r1 = s.rows[jnp.stack([c2, c1])]
    d_pos = jnp.stack([c1 + r1, c2 + r2, c1 + r2, c2 + r1])  # off, off, on, on
    a_pos = jnp.stack([r1 - c1, r2 - c2, r2 - c1, r1 - c2]) + (n - 1)
    kd, ka = s.diag[d_pos], s.anti[a_pos]
    still = (kd[0] > 1) | (ka[0] > 1)
    seen = []
    delta = jnp.int32(0)
    for pos, k in ((d_pos, kd), (a_pos, ka)):
        # a swap can take both queens off one line, or put both on one line
        k_seen = jnp.stack([k[0], k[1] - (pos[1] == pos[0]), k[2], k[3] + (pos[3] == pos[2])])
        delta += -(k_seen[0] - 1) - (k_seen[1] - 1) + k_seen[2] + k_seen[3]
        seen.append(k_seen)
    take = still & ((delta < 0) | (sideways & (delta == 0)))
    diag, anti = s.diag, s.anti
    for i, v in enumerate((-1, -1, 1, 1)):
        diag = _set(diag, d_pos[i], jnp.where(take, seen[0][i] + v, kd[i]))
        anti = _set(anti, a_pos[i], jnp.where(take, seen[1][i] + v, ka[i]))
    rows = _set(_set(s.rows, c1, jnp.where(take, r2, r1)), c2, jnp.where(take, r1, r2))
    return s._replace(rows=rows, diag=diag, anti=anti), jnp.where(take, delta, 0), take


@functools.partial(jax.jit, static_argnums=(1,), donate_argnums=(0,))
def repair_round(s: State, config: Config, max_steps, sideways) -> tuple[State, RoundStats]:
    """One repair round: list the conflicted queens, then up to ``max_steps`` swap attempts;
    ``sideways`` also takes swaps that leave the pair count unchanged."""
    n = config.n
    mask = conflicted(s)
    count = jnp.sum(mask, dtype=jnp.int32)
    listed = jnp.nonzero(mask, size=config.list_size, fill_value=0)[0].astype(jnp.int32)
    size = jnp.maximum(jnp.minimum(count, config.list_size), 1)
    budget = jnp.minimum(max_steps, 64 * size + 64)
    last = config.trace_size - 1

    def attempt(t):
        k, moves, pairs, trace, s = t
        c1 = _get(listed, hash_randint(s.seed, s.ctr, jnp.uint32(1), size))
        c2 = hash_randint(s.seed, s.ctr, jnp.uint32(2), n - 1)
        s, delta, taken = _try_swap(s, n, c1, c2 + (c2 >= c1), sideways)
        pairs = pairs + delta
        slot = jnp.minimum(k, last)
        trace = _set(trace, slot, jnp.where(k <= last, pairs, _get(trace, slot)))
        return k + 1, moves + taken, pairs, trace, s._replace(ctr=s.ctr + U32(1))

    k, moves, pairs, trace, s = lax.while_loop(
        lambda t: (t[0] < budget) & (t[2] > 0),
        attempt,
        (jnp.int32(0), jnp.int32(0), _pairs(s), jnp.full(config.trace_size, -1, jnp.int32), s),
    )
    return s, RoundStats(conflicted=count, pairs=pairs, steps=k, moves=moves, trace=trace)


@functools.partial(jax.jit, static_argnums=(1,))
def pairs_of(s: State, config: Config) -> jax.Array:
    """Attacking pairs of the state (O(n))."""
    return _pairs(s)
