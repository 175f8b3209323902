"""Knuth's random probe of the backtrack tree, written for one probe (the estimator's kernel).

After Knuth (1975, "Estimating the efficiency of backtrack programs", Math. Comp. 29). The kernel
keeps the package's contract (`jaxqueens.solvers.base`) for one probe; the docs' estimate page
gives the method, an example, the probe's state and its randomness.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens.core.rng import stream_bits
from jaxqueens.errors import QueensError
from jaxqueens.solvers import base
from jaxqueens.solvers.base import seed_of
from jaxqueens.solvers.estimate_types import Config as Config
from jaxqueens.solvers.estimate_types import GroupSums as GroupSums
from jaxqueens.solvers.estimate_types import Params as Params
from jaxqueens.solvers.estimate_types import Problem as Problem
from jaxqueens.solvers.estimate_types import Result as Result
from jaxqueens.solvers.estimate_types import State as State
from jaxqueens.solvers.estimate_types import default_params as default_params
from jaxqueens.solvers.estimate_types import words_of as words_of

U32, I32, F32 = jnp.uint32, jnp.int32, jnp.float32


def _popcount(x):
    return lax.population_count(x).astype(I32)


def _kth_bit(x, k):
    """Position (int32) of the k-th (0-based) set bit of uint32 `x`; needs k < popcount(x)."""
    pos = jnp.zeros_like(k)
    for w in (16, 8, 4, 2, 1):
        low = x & U32((1 << w) - 1)
        c = _popcount(low)
        up = k >= c
        k = jnp.where(up, k - c, k)
        x = jnp.where(up, x >> U32(w), low)
        pos = pos + jnp.where(up, w, 0)
    return pos


def _below(u, d):
    """Integer in [0, d) from uint32 `u` by multiply-shift (bias <= d / 2^32), d < 2^16."""
    d = d.astype(U32)
    return (((u >> U32(16)) * d + (((u & U32(0xFFFF)) * d) >> U32(16))) >> U32(16)).astype(I32)


def _pow2(t):
    """2^t as float32 for int32 t (0 below 2^-126)."""
    return lax.bitcast_convert_type((jnp.maximum(t + 127, 0) << 23).astype(I32), F32)


class _Walk(NamedTuple):
    """`State`'s walk inside the level loop: each mask as W scalar words (`W x []`), so
    that the loop body is scalar code per word."""

    cols: tuple
    ld: tuple
    rd: tuple
    m: jax.Array
    e: jax.Array
    nodes: jax.Array
    alive: jax.Array


def _words(x) -> tuple:
    return tuple(x[w] for w in range(x.shape[0]))


def _walk(s: State) -> _Walk:
    return _Walk(_words(s.cols), _words(s.ld), _words(s.rd), s.m, s.e, s.nodes, s.alive)


def _from_walk(w: _Walk, s: State) -> State:
    masks = (jnp.stack(w.cols), jnp.stack(w.ld), jnp.stack(w.rd))
    return State(*masks, w.m, w.e, w.nodes, w.alive, s.seed, s.lane)


def _level(state: _Walk, level, seed, lane, config: Config) -> _Walk:
    """Advance one probe by one column (a no-op once the walk has died)."""
    n, words = config.n, config.words
    full = [U32(((1 << n) - 1 >> (32 * w)) & 0xFFFFFFFF) for w in range(words)]
    cols, ld, rd, m, e, nodes, alive = state
    free = [~(cols[w] | ld[w] | rd[w]) & full[w] for w in range(words)]
    cnt = [_popcount(f) for f in free]
    d = sum(cnt)
    ok = alive & (d > 0)
    u = stream_bits(seed, level, lane)
    k = _below(u, jnp.maximum(d, 1))
    # pick the word holding the k-th free row, then the bit inside it
    word, x = I32(0), free[0]
    for w in range(1, words):
        later = k >= cnt[w - 1]
        k = jnp.where(later, k - cnt[w - 1], k)
        word = jnp.where(later, w, word)
        x = jnp.where(later, free[w], x)
    pos = _kth_bit(x, k)
    bit = [jnp.where(ok & (word == w), U32(1) << pos.astype(U32), U32(0)) for w in range(words)]
    cols = tuple(c | b for c, b in zip(cols, bit, strict=True))
    lb = [a | b for a, b in zip(ld, bit, strict=True)]
    rb = [a | b for a, b in zip(rd, bit, strict=True)]
    ld = tuple(
        ((lb[w] << U32(1)) | (lb[w - 1] >> U32(31) if w else U32(0))) & full[w]
        for w in range(words)
    )
    rd = tuple(
        (rb[w] >> U32(1)) | (rb[w + 1] << U32(31) if w + 1 < words else U32(0))
        for w in range(words)
    )
    # weight *= d, renormalised to a mantissa in [1, 2) (exact: d < 2^7, 24-bit mantissa)
    md = m * d.astype(F32)
    bits = lax.bitcast_convert_type(md, I32)
    t = ((bits >> 23) & 0xFF) - 127
    md = lax.bitcast_convert_type((bits & 0x007FFFFF) | 0x3F800000, F32)
    m = jnp.where(ok, md, m)
    nodes = jnp.where(ok, nodes * _pow2(-t) + md, nodes)
    e = jnp.where(ok, e + t, e)
    return _Walk(cols, ld, rd, m, e, nodes, ok)


def start(seed, lane, config: Config, params: Params, problem: Problem | None = None) -> State:
    """Probe `lane` (uint32 []) of the 64-bit stream `seed` (uint32 [2]) at its start: the
    stratum of `problem.masks`, or the root. Its draw at level j is `stream_bits(seed, j, lane)`;
    the driver runs call c's probes as lanes of the stream `call_seed` `(seed, c)`. Mask bits at
    or above n are dropped.

    Args:
      seed: uint32 [2], the 64-bit stream seed.
      lane: uint32 [], the probe's lane in the stream.
      config: the static `Config`.
      params: the (empty) `Params`.
      problem: the stratum (`Problem`); required when `config.depth > 0`.

    Returns:
      The probe's `State` at its start.

    Raises:
      QueensError: `seed` is not uint32 [2], or a probe at depth > 0 has no stratum.
    """
    base.check_type("config", config, Config)
    base.check_type("params", params, Params, "make it with estimate.default_params(config)")
    if problem is not None:
        base.check_type("problem", problem, Problem)
    if jnp.shape(seed) != (2,):
        raise QueensError(f"seed must be a 64-bit stream seed uint32 [2], got {jnp.shape(seed)}")
    words = config.words
    masks = None if problem is None else problem.masks
    if masks is None:
        if config.depth:
            raise QueensError(
                f"a probe at depth {config.depth} starts at a stratum: pass Problem(masks=...)"
            )
        masks = jnp.zeros((3, words), U32)
    masks = jnp.asarray(masks, U32)
    if masks.shape != (3, words):
        raise QueensError(f"Problem.masks must have shape (3, {words}), got {masks.shape}")
    n = config.n
    full = jnp.asarray([((1 << n) - 1 >> (32 * w)) & 0xFFFFFFFF for w in range(words)], U32)
    masks = masks & full
    return State(
        cols=masks[0],
        ld=masks[1],
        rd=masks[2],
        m=F32(1.0),
        e=I32(0),
        nodes=F32(0.0),
        alive=jnp.bool_(True),
        seed=jnp.asarray(seed, U32),
        lane=jnp.asarray(lane, U32),
    )


def init(key: jax.Array, config: Config, params: Params, problem: Problem | None = None) -> State:
    """A probe at its start: lane 0 of the stream `seed_of(key)`.

    Args:
      key: a typed `jax.random.key` (consumed).
      config: the static `Config`.
      params: the (empty) `Params`.
      problem: the stratum, as for `start`.

    Returns:
      The probe's `State` at its start.
    """
    return start(seed_of(key), 0, config, params, problem)


def placed(s: State) -> jax.Array:
    """[] int32 queens on the probe's board (the next column to fill).

    Args:
      s: the probe's `State`.

    Returns:
      [] int32.
    """
    return sum(_popcount(c) for c in _words(s.cols))


def done(s: State, config: Config, params: Params) -> jax.Array:
    """[] bool: the walk has died or reached depth n.

    Args:
      s: the probe's `State`.
      config: the static `Config`.
      params: the (empty) `Params`.

    Returns:
      [] bool.
    """
    return ~s.alive | (placed(s) >= config.n)


def step(s: State, config: Config, params: Params, problem: Problem | None = None) -> State:
    """One level down: a uniformly random free row of the next column, the weight multiplied by
    the number of free rows (a no-op once [`done`][jaxqueens.solvers.estimate.done]).

    Args:
      s: the probe's `State`.
      config: the static `Config`.
      params: the (empty) `Params`.
      problem: not read (the stratum is in the state).

    Returns:
      The next `State`.
    """
    base.check_type("state", s, State, "make it with estimate.init")
    lv = placed(s)
    nxt = _from_walk(_level(_walk(s), lv, s.seed, s.lane, config), s)
    return jax.tree.map(lambda a, b: jnp.where(lv < config.n, a, b), nxt, s)


def walk(seed, lane, config: Config, params: Params, problem: Problem | None = None) -> Result:
    """Probe `lane` of the stream `seed` ([`start`][jaxqueens.solvers.estimate.start]) down to depth
    n or death: a `fori_loop` over levels `config.depth .. n-1` whose level is the loop's counter
    (under `vmap` the hash's per-level half is shared by every lane);
    [`step`][jaxqueens.solvers.estimate.step] repeated gives the same probe.

    Args:
      seed: uint32 [2], the 64-bit stream seed.
      lane: uint32 [], the probe's lane in the stream.
      config: the static `Config`.
      params: the (empty) `Params`.
      problem: the stratum, as for `start`.

    Returns:
      The probe's `Result`.
    """
    s = start(seed, lane, config, params, problem)
    w = lax.fori_loop(
        config.depth, config.n, lambda lv, w: _level(w, lv, s.seed, s.lane, config), _walk(s)
    )
    return result(_from_walk(w, s), config, params)


def finish(s: State, config: Config, params: Params) -> Result:
    """The probe from any state `s` (at a level >= `config.depth`) down to depth n or death:
    [`step`][jaxqueens.solvers.estimate.step] repeated. For a probe at its start
    [`walk`][jaxqueens.solvers.estimate.walk] is the same and faster (its loop's counter is the
    level, shared by every lane under `vmap`).

    Args:
      s: the probe's `State`.
      config: the static `Config`.
      params: the (empty) `Params`.

    Returns:
      The probe's `Result`.
    """
    base.check_type("state", s, State, "make it with estimate.init")
    s = lax.fori_loop(0, config.n - config.depth, lambda _, s: step(s, config, params), s)
    return result(s, config, params)


def result(s: State, config: Config, params: Params) -> Result:
    """What the probe reports.

    Args:
      s: the probe's `State`.
      config: the static `Config`.
      params: the (empty) `Params`.

    Returns:
      The probe's `Result`.
    """
    depth = placed(s)
    return Result(s.m, s.e, s.nodes, s.alive & (depth == config.n), depth)


def run(key: jax.Array, config: Config, params: Params, problem: Problem | None = None) -> Result:
    """One probe from its start to depth n or death: lane 0 of the stream
    `seed_of(key)` ([`walk`][jaxqueens.solvers.estimate.walk]).

    Args:
      key: a typed `jax.random.key` (consumed).
      config: the static `Config`.
      params: the (empty) `Params`.
      problem: the stratum, as for `start`.

    Returns:
      The probe's `Result`.
    """
    return walk(seed_of(key), 0, config, params, problem)


def group_sums(results: Result, group: int) -> GroupSums:
    """Probes `[..., P]` (P a multiple of `group`) reduced per group of `group`: float32 sums of
    the first three powers, scaled by the group's largest exponent, `[..., P / group]` each (the
    host adds them up in float64 after `ldexp`; the third powers serve Hall's interval).

    Args:
      results: the probes' `Result`, leading axes `[..., P]`.
      group: probes per group (static; divides P).

    Returns:
      `GroupSums` with leading axes `[..., P / group]`.
    """
    m, e, nodes, hit = results.m, results.e, results.nodes, results.solved
    shape = (*m.shape[:-1], m.shape[-1] // group, group)
    m, e, nodes, hit = (x.reshape(shape) for x in (m, e, nodes, hit))
    top = jnp.max(e, axis=-1)
    scale = _pow2(e - top[..., None])
    w = jnp.where(hit, m * scale, 0.0)
    v = nodes * scale
    return GroupSums(
        top,
        jnp.sum(w, -1),
        jnp.sum(w * w, -1),
        jnp.sum(v, -1),
        jnp.sum(v * v, -1),
        jnp.sum(hit, -1, dtype=I32),
        jnp.sum(w * w * w, -1),
        jnp.sum(v * v * v, -1),
    )
