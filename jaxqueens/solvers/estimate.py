"""Knuth's random probe of the backtrack tree, one probe per kernel call (the estimator's kernel).

Knuth (1975, "Estimating the efficiency of backtrack programs", Math. Comp. 29) walks the
backtrack tree from the root, in each column choosing a uniformly random safe row among the
``d_j`` free ones. The product ``d_0 d_1 ... d_{j-1}`` is an unbiased estimate of the number of
nodes at depth j, so a walk that reaches depth n estimates Q(n) by its product (0 if it dies),
and ``sum_j d_0 ... d_{j-1}`` estimates the tree's node count. :mod:`jaxqueens.drivers.estimate`
enumerates the top ``depth`` levels exactly (the strata) and sums these walks below them.

:func:`walk` is one probe: bitmask search state in ``W = ceil(n / 32)`` uint32 words (n <= 64),
a ``fori_loop`` over the levels, the row chosen by popcount and a 5-step binary search for the
k-th set bit, ``k`` from a counter-based hash (:mod:`jaxqueens.core.rng`) by multiply-shift.
Weights would overflow float32 (Q(64) ~ 1e61, and single walks go far beyond), so a walk keeps
its weight as an exact mantissa in [1, 2) times ``2^e`` (int32) and its node sum relative to
``2^e``. Probes are vmapped in lockstep (branch-free, so lockstep wastes nothing but dead walks'
levels) by :func:`strata_block`: all lanes at once on a GPU, blocks of ``config.block`` lanes
under ``lax.map`` on a CPU (the block's state stays in cache); each group of ``config.group``
probes is reduced on device after scaling by its largest exponent, and the host sums the groups
in float64. The driver (:func:`jaxqueens.drivers.estimate.run_call`) shards the strata over
devices and jits the call.
Compilation is ~0.5 s per (n, depth, shape), the levels being a ``fori_loop`` (unrolling them
was 2x slower and compiled for minutes at n = 64).
"""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxqueens.core.rng import hash_bits
from jaxqueens.solvers.choices import ESTIMATE_MAX_N as MAX_N  # noqa: F401  (re-exported: largest board, two uint32 words)

U32, I32, F32 = jnp.uint32, jnp.int32, jnp.float32


@dataclasses.dataclass(frozen=True)
class Config:
    """Static configuration (shapes): a jit static argument."""

    n: int
    depth: int  # levels enumerated exactly on the host
    strata: int  # strata per call, padded to a multiple of the devices
    per_call: int  # probes per stratum and call (a multiple of ``group``)
    group: int  # probes per on-device reduction group
    block: int = 0  # lanes per lax.map iteration (0: all lanes at once, the accelerator way)

    @property
    def words(self) -> int:
        return max(1, -(-self.n // 32))


class Walk(NamedTuple):
    """One probe between two levels (``W = config.words`` words per mask)."""

    cols: tuple  # W x [] uint32 rows taken
    ld: tuple  # W x [] uint32 rows attacked in the next column along one diagonal
    rd: tuple  # W x [] uint32 rows attacked in the next column along the other diagonal
    m: jax.Array  # [] float32 weight mantissa in [1, 2)
    e: jax.Array  # [] int32 weight exponent: the weight is m * 2^e
    nodes: jax.Array  # [] float32 node sum below the stratum, relative to 2^e
    alive: jax.Array  # [] bool: the walk has found a free row at every level so far


class Probe(NamedTuple):
    """What one probe reports (:func:`walk`)."""

    m: jax.Array  # [] float32 weight mantissa in [1, 2)
    e: jax.Array  # [] int32 weight exponent
    nodes: jax.Array  # [] float32 node sum below the stratum, relative to 2^e
    alive: jax.Array  # [] bool: reached depth n (the weight counts as 0 otherwise)


class GroupSums(NamedTuple):
    """A block of strata's probes, reduced per group of ``config.group`` (:func:`strata_block`)."""

    top: jax.Array  # [S, G] int32 the group's largest exponent; sums below scaled by 2^-top
    w: jax.Array  # [S, G] float32 sum of weights
    w2: jax.Array  # [S, G] float32 sum of squared weights (scaled by 2^-2top)
    nodes: jax.Array  # [S, G] float32 sum of node sums
    nodes2: jax.Array  # [S, G] float32 sum of squared node sums (scaled by 2^-2top)
    hits: jax.Array  # [S, G] int32 probes that reached depth n


def words_of(masks64: np.ndarray, words: int) -> np.ndarray:
    """The kernel's mask layout: uint64 ``[S, 3]`` -> uint32 ``[S, 3, W]`` (host NumPy)."""
    return np.stack(
        [
            ((masks64 >> np.uint64(32 * w)) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
            for w in range(words)
        ],
        axis=-1,
    )


def _popcount(x):
    return lax.population_count(x).astype(I32)


def _kth_bit(x, k):
    """Position (int32) of the k-th (0-based) set bit of uint32 ``x``; needs k < popcount(x)."""
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
    """Integer in [0, d) from uint32 ``u`` by multiply-shift (bias <= d / 2^32), d < 2^16."""
    d = d.astype(U32)
    return (((u >> U32(16)) * d + (((u & U32(0xFFFF)) * d) >> U32(16))) >> U32(16)).astype(I32)


def _pow2(t):
    """2^t as float32 for int32 t (0 below 2^-126)."""
    return lax.bitcast_convert_type((jnp.maximum(t + 127, 0) << 23).astype(I32), F32)


def _level(state: Walk, level, seed, lane, config: Config) -> Walk:
    """Advance one probe by one column (a no-op once the walk has died)."""
    n, words = config.n, config.words
    full = [U32(((1 << n) - 1 >> (32 * w)) & 0xFFFFFFFF) for w in range(words)]
    cols, ld, rd, m, e, nodes, alive = state
    free = [~(cols[w] | ld[w] | rd[w]) & full[w] for w in range(words)]
    cnt = [_popcount(f) for f in free]
    d = sum(cnt)
    ok = alive & (d > 0)
    u = hash_bits(seed, level, lane)
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
    cols = tuple(c | b for c, b in zip(cols, bit))
    lb = [a | b for a, b in zip(ld, bit)]
    rb = [a | b for a, b in zip(rd, bit)]
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
    return Walk(cols, ld, rd, m, e, nodes, ok)


def walk(masks, seed, lane, config: Config) -> Probe:
    """One Knuth probe from a stratum's partial board down to depth n.

    Args:
      masks: uint32 ``[3, W]``: occupied rows, left- and right-diagonal attacks of the stratum.
      seed: uint32 stream seed of this call; lane: uint32 probe id within the call.
      config: static configuration (levels ``depth .. n-1`` are walked).

    Returns:
      :class:`Probe` ``(m, e, nodes, alive)``: the walk's weight ``m * 2^e`` (m float32 in
      [1, 2), e int32; 0 if not ``alive`` at depth n) and its node sum below the stratum,
      ``nodes * 2^e`` (float32).
    """
    words = config.words
    state = Walk(
        tuple(masks[0, w] for w in range(words)),
        tuple(masks[1, w] for w in range(words)),
        tuple(masks[2, w] for w in range(words)),
        F32(1.0),
        I32(0),
        F32(0.0),
        jnp.bool_(True),
    )
    state = lax.fori_loop(
        config.depth, config.n, lambda lv, s: _level(s, lv, seed, lane, config), state
    )
    return Probe(state.m, state.e, state.nodes, state.alive)


def _reduce_groups(m, e, nodes, alive, group: int) -> GroupSums:
    """Per group of ``group`` probes (last axis): scaled float32 sums, for the host's float64."""
    shape = m.shape[:-1] + (m.shape[-1] // group, group)
    m, e, nodes, alive = (x.reshape(shape) for x in (m, e, nodes, alive))
    top = jnp.max(e, axis=-1)
    scale = _pow2(e - top[..., None])
    w = jnp.where(alive, m * scale, 0.0)
    v = nodes * scale
    return GroupSums(
        top,
        jnp.sum(w, -1),
        jnp.sum(w * w, -1),
        jnp.sum(v, -1),
        jnp.sum(v * v, -1),
        jnp.sum(alive, -1, dtype=I32),
    )


def strata_block(masks, ids, seed, config: Config) -> GroupSums:
    """Probes of a block of strata: masks ``[S, 3, W]``, ids ``[S]`` -> group sums ``[S, G]``."""
    s, per = ids.shape[0], config.per_call
    lanes = (ids[:, None].astype(U32) * U32(per) + jnp.arange(per, dtype=U32)).reshape(-1)
    probe = jax.vmap(lambda mk, ln: walk(mk, seed, ln, config))
    total = s * per
    block = math.gcd(total, config.block) if config.block else total
    if block == total:
        out = probe(jnp.repeat(masks, per, axis=0), lanes)
    else:
        stratum = (jnp.arange(total, dtype=I32) // per).reshape(-1, block)
        out = lax.map(lambda a: probe(masks[a[0]], a[1]), (stratum, lanes.reshape(-1, block)))
    m, e, nodes, alive = (x.reshape(s, per) for x in out)
    return _reduce_groups(m, e, nodes, alive, config.group)
