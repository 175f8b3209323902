"""The min-conflicts kernel's boards and moves: the initial boards (`Config.init`: random,
permutation, the CP468 greedy, Sosic & Gu's QS4; constrained: a random allowed square per
column), an attempt's fresh start and its best board kept, and one step of an attempt
(`advance`): a random conflicted queen (`Config.pick_tries` probes, then a scan) moved to the
row `choose_row` picks (`Config.move`, the plateau memory, a constrained board's allowed rows).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens.core import inplace
from jaxqueens.core.lines import column_cost, pairs_from_counts, positions, size
from jaxqueens.core.rng import U32 as _U32
from jaxqueens.core.rng import (
    idx_bits,
    next_seed,
    random_permutation,
    stream_bits,
    stream_randint,
)
from jaxqueens.solvers import constrained as rules
from jaxqueens.solvers.minconflicts_types import (
    NO_PAUSE,
    PAIRS_NONE,
    Config,
    Params,
    Problem,
    State,
    board_counts,
    conflicted,
)

# ----------------------------------------------------------------------------- boards


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
        # them for n > 8192, fewer than the candidate rows), the tie goes to no row in particular
        # (lowest-index ties would pile the queens up).
        off = stream_randint(seed, ctr + c.astype(_U32), n, n)
        low = jnp.where(r >= off, r - off, r - off + n).astype(_U32)
        key = (used << 31) | (jnp.minimum(diag, 3).astype(_U32) << 29) | (rnd & ~mask) | low
        r1 = (jnp.min(key) & mask).astype(jnp.int32) + off
        r1 = jnp.where(r1 >= n, r1 - n, r1)
        rows = lax.dynamic_update_slice(rows, r1[None], (c,))
        for pos in positions(n, c, r1):
            counts = inplace.add(counts, pos, 1)
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
        dfl = inplace.add(dfl, i + r, 1)
        dfl = inplace.add(dfl, 3 * n - 2 + r - i, 1)
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
    counts = board_counts(rows, config)
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


def blank(seed: jax.Array, config: Config) -> State:
    """A chain's state with no board yet (every attempt starts with `fresh_attempt`).

    Args:
      seed: uint32 [2], the chain's stream seed.
      config: the static `Config`.

    Returns:
      The `State`, its board all zeros.
    """
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


# ----------------------------------------------------------------------------- one step

CISC352_PROBES = 100
"""Random rows the `cisc352` move probes for a single-conflict row before the full scan."""


def _is_conflicted(rows, counts, c, n, toroidal: bool = False):
    r = rows[c]
    return functools.reduce(
        lambda a, b: a | b, [counts[p] > 1 for p in rules.positions(n, c, r, toroidal)]
    )


def _pick_scan(s: State, config: Config):
    """(column, found): a uniformly random conflicted queen (packed-key min over all n queens)."""
    n = config.n
    c = jnp.arange(n, dtype=jnp.int32)
    mask = _U32((1 << idx_bits(n)) - 1)
    conf = conflicted(s.rows, s.counts, config)
    key = jnp.where(
        conf, (stream_bits(s.seed, s.ctr, c) & ~mask) | c.astype(_U32), _U32(0xFFFFFFFF)
    )
    k = jnp.min(key)
    return (k & mask).astype(jnp.int32), k != _U32(0xFFFFFFFF)


def _pick_conflicted(s: State, config: Config):
    """(column, found): a uniformly random conflicted queen; the first conflicted one of
    `config.pick_tries` random probes is uniform too, and the scan decides if all miss."""
    n = config.n
    tries = config.pick_tries if config.pick_tries >= 0 else (0 if n <= 12 else 16)
    if tries == 0:
        return _pick_scan(s, config)

    def cond(t):
        k, _, found = t
        return (k < tries) & ~found

    def body(t):
        k, _, _ = t
        c = stream_randint(s.seed, s.ctr, 2 * n + k, n)
        return k + 1, c, _is_conflicted(s.rows, s.counts, c, n, config.toroidal)

    _, c, found = lax.while_loop(cond, body, (jnp.int32(0), jnp.int32(0), jnp.bool_(False)))
    return lax.cond(found, lambda: (c, found), lambda: _pick_scan(s, config))


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
    cost = jnp.minimum(rules.column_cost(s.counts, c, s.rows[c], n, config.toroidal), 3)
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
    mask = None if problem is None else problem.mask
    n = config.n
    c, found = _pick_conflicted(s, config)
    solved = ~found
    exhausted = found & (s.steps >= params.max_steps)
    move = ~s.stop & found & ~exhausted

    r0 = s.rows[c]
    r1, cost = choose_row(s, c, config, mask)
    r1 = jnp.where(move, r1, r0)

    counts = s.counts
    lines_of = functools.partial(rules.positions, n, toroidal=config.toroidal)
    for pos, v in zip(lines_of(c, r0) + lines_of(c, r1), (-1, -1, -1, 1, 1, 1), strict=True):
        counts = inplace.add(counts, pos, v)
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
