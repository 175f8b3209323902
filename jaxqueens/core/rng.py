"""Counter-based random numbers for hot per-step loops.

Per-chain seeds come from ``jax.random`` (``fold_in(key, chain_id)``), so a
chain's stream does not depend on batch size, chunking or devices. Inside a
loop, a lowbias32 integer hash (C. Wellons' "hash prospector") of (seed,
counter, lane) replaces threefry, which costs 25x more per step on XLA:CPU
(``shared/PERFORMANCE.md``). Uniformity is tested in the test suite.
:func:`random_permutation` draws a permutation from that stream (used by the min-conflicts and
LS/TA/SA kernels).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.typing import ArrayLike

from jaxqueens.core import inplace

U32 = jnp.uint32
GOLD = 0x9E3779B9
_LANE = 0x85EBCA6B


def mix32(x: jax.Array) -> jax.Array:
    """lowbias32 integer hash (C. Wellons), uint32 -> uint32, elementwise."""
    x = x.astype(U32)
    x = x ^ (x >> 16)
    x = x * U32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * U32(0x846CA68B)
    return x ^ (x >> 16)


def hash_bits(seed: ArrayLike, ctr: ArrayLike, lane: ArrayLike) -> jax.Array:
    """Random uint32 for (seed, counter, lane); ``lane`` may be a vector."""
    base = mix32(jnp.asarray(seed, U32) ^ (jnp.asarray(ctr).astype(U32) * U32(GOLD)))
    return mix32(base + jnp.asarray(lane).astype(U32) * U32(_LANE))


def hash_randint(seed, ctr, lane, m) -> jax.Array:
    """Integer in [0, m) from the hash stream (modulo bias <= m / 2**32)."""
    return (hash_bits(seed, ctr, lane) % jnp.asarray(m).astype(U32)).astype(jnp.int32)


def chain_seeds(key: jax.Array, chain_ids: jax.Array) -> jax.Array:
    """uint32 seeds [C] for chains ``chain_ids`` [C]: ``bits(fold_in(key, i))``."""
    return jax.vmap(lambda i: jax.random.bits(jax.random.fold_in(key, i), (), jnp.uint32))(
        chain_ids
    )


def idx_bits(n: int) -> int:
    """Bits needed for an index in [0, n) (at least 1): the low bits of a packed key."""
    return max(1, int(n - 1).bit_length())


def _perm_rank(seed, ctr, n):
    """Random permutation by ranking packed random keys (O(n^2), small n)."""
    j = jnp.arange(n, dtype=U32)
    mask = U32((1 << idx_bits(n)) - 1)
    key = (hash_bits(seed, ctr, j) & ~mask) | j
    return jnp.sum(key[None, :] < key[:, None], axis=1).astype(jnp.int32)


def _perm_fisher_yates(seed, ctr, n):
    """Random permutation by Fisher-Yates in a fori_loop (O(n), in place)."""

    def body(k, q):
        i = n - 1 - k
        return inplace.swap(q, i, hash_randint(seed, ctr, i, i + 1))[0]

    return lax.fori_loop(0, n - 1, body, jnp.arange(n, dtype=jnp.int32))


def random_permutation(seed, ctr, n: int) -> jax.Array:
    """A permutation [n] int32 of 0..n-1 from the hash stream at (seed, ctr): ranking packed keys
    for n <= 64, Fisher-Yates above."""
    return _perm_rank(seed, ctr, n) if n <= 64 else _perm_fisher_yates(seed, ctr, n)
