"""Counter-based random numbers for hot per-step loops.

Per-chain seeds come from `jax.random` (`fold_in(key, chain_id)`), so a chain's stream does not
depend on batch size, chunking or devices. Inside a loop, a lowbias32 integer hash (C. Wellons'
"hash prospector") of (seed, counter, lane) replaces threefry, which costs far more per step on
XLA:CPU.

A chain's stream seed is 64 bits, `uint32 [2]` (`stream_seed`), and `stream_bits` mixes both
words into every draw, so two chains share a stream only if their 64-bit seeds are equal: among
`C` chains that happens with probability about `C**2 / 2**65`. `hash_bits` is the 32-bit form,
for draws whose seed is itself drawn per call (the GA's operators).
"""

from __future__ import annotations

from typing import cast

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.typing import ArrayLike

from jaxqueens.core import inplace
from jaxqueens.core.arguments import SEED_MAX

U32 = jnp.uint32
GOLD = 0x9E3779B9
_LANE = 0x85EBCA6B


def mix32(x: jax.Array) -> jax.Array:
    """The lowbias32 integer hash (C. Wellons), elementwise.

    Args:
      x: uint32 array.

    Returns:
      uint32, the shape of `x`.
    """
    x = x.astype(U32)
    x = x ^ (x >> 16)
    x = x * U32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * U32(0x846CA68B)
    return x ^ (x >> 16)


def _counter_base(seed: ArrayLike, ctr: ArrayLike) -> jax.Array:
    """The per-counter word of a 32-bit seed's stream (shared by every lane of the counter)."""
    return mix32(jnp.asarray(seed, U32) ^ (jnp.asarray(ctr).astype(U32) * U32(GOLD)))


def _lane_bits(base: jax.Array, lane: ArrayLike) -> jax.Array:
    return mix32(base + jnp.asarray(lane).astype(U32) * U32(_LANE))


def hash_bits(seed: ArrayLike, ctr: ArrayLike, lane: ArrayLike) -> jax.Array:
    """Random bits from a 32-bit seed's hash stream.

    Args:
      seed: uint32 seed.
      ctr: the draw's counter.
      lane: the draw's lane (a scalar or a vector).

    Returns:
      uint32, the shape of `lane`.
    """
    return _lane_bits(_counter_base(seed, ctr), lane)


def hash_randint(seed, ctr, lane, m) -> jax.Array:
    """A random integer in `[0, m)` from the 32-bit hash stream (modulo bias <= m / 2**32).

    Args:
      seed: uint32 seed.
      ctr: the draw's counter.
      lane: the draw's lane (a scalar or a vector).
      m: the bound (a scalar or broadcastable to `lane`).

    Returns:
      int32, the shape of `lane`.
    """
    return (hash_bits(seed, ctr, lane) % jnp.asarray(m).astype(U32)).astype(jnp.int32)


def stream_bits(seed: ArrayLike, ctr: ArrayLike, lane: ArrayLike) -> jax.Array:
    """Random bits from a chain's 64-bit stream.

    Both words pass through the mixer before the lane is added: two seeds that differ in either
    word give unrelated draws at every counter.

    Args:
      seed: uint32 `[2]` stream seed (low, high word).
      ctr: the draw's counter.
      lane: the draw's lane (a scalar or a vector).

    Returns:
      uint32, the shape of `lane`.
    """
    s = jnp.asarray(seed, U32)
    return _lane_bits(mix32(_counter_base(s[..., 0], ctr) ^ s[..., 1]), lane)


def stream_randint(seed, ctr, lane, m) -> jax.Array:
    """A random integer in `[0, m)` from a 64-bit stream (modulo bias <= m / 2**32).

    Args:
      seed: uint32 `[2]` stream seed.
      ctr: the draw's counter.
      lane: the draw's lane (a scalar or a vector).
      m: the bound (a scalar or broadcastable to `lane`).

    Returns:
      int32, the shape of `lane`.
    """
    return (stream_bits(seed, ctr, lane) % jnp.asarray(m).astype(U32)).astype(jnp.int32)


def next_seed(seed: ArrayLike) -> jax.Array:
    """The stream seed of a chain's next attempt.

    The low word is hashed (`mix32(low + golden)`, a bijection) and the high word kept, so
    distinct seeds stay distinct.

    Args:
      seed: uint32 `[2]` stream seed.

    Returns:
      uint32 `[2]`.
    """
    s = jnp.asarray(seed, U32)
    return s.at[..., 0].set(mix32(s[..., 0] + U32(GOLD)))


THREEFRY = "threefry2x32"


def seed_data(seed: int) -> np.ndarray | None:
    """The data of `jax.random.key(seed)`, where it is known on the host.

    With JAX's default threefry implementation, the key of a seed in `0..2**32 - 1` holds
    `[0, seed]` (whether or not 64-bit mode is on).

    Args:
      seed: the integer seed.

    Returns:
      uint32 `[2]`, or None for any other implementation (`jax_default_prng_impl`) or seed.
    """
    if (
        jax.config.values["jax_default_prng_impl"] == THREEFRY
        and isinstance(seed, int | np.integer)
        and 0 <= seed <= SEED_MAX
    ):
        return np.array([0, seed], np.uint32)
    return None


def wrap_threefry(data: np.ndarray) -> jax.Array:
    """The typed threefry key of host data, made without running a program.

    Args:
      data: uint32 `[..., 2]` host array (`jax.random.wrap_key_data` would type it as a JAX
        array first).

    Returns:
      A typed key array of shape `data.shape[:-1]`.
    """
    return jax.random.wrap_key_data(cast(jax.Array, data), impl=THREEFRY)


def seed_key(seed: int) -> jax.Array:
    """`jax.random.key(seed)`, made on the host (`seed_data`) where it can be.

    The same typed key, without the XLA programs that `jax.random.key` compiles and runs eagerly
    to make it.

    Args:
      seed: the integer seed.

    Returns:
      A typed scalar key.
    """
    data = seed_data(seed)
    return jax.random.key(seed) if data is None else wrap_threefry(data)


def stream_seed(key: jax.Array) -> jax.Array:
    """The 64-bit stream seed of a typed key: 64 bits drawn from the whole key.

    Args:
      key: a typed scalar key.

    Returns:
      uint32 `[2]`.
    """
    return jax.random.bits(key, (2,), U32)


def chain_seeds(key: jax.Array, chain_ids: ArrayLike) -> jax.Array:
    """The stream seeds of chains: `stream_seed(fold_in(key, i))` per chain id.

    Args:
      key: the run's typed key.
      chain_ids: int `[C]` chain ids.

    Returns:
      uint32 `[C, 2]`.
    """
    return jax.vmap(lambda i: stream_seed(jax.random.fold_in(key, i)))(chain_ids)


def idx_bits(n: int) -> int:
    """The bits an index in `[0, n)` needs (at least 1): the low bits of a packed key.

    Args:
      n: the index bound.

    Returns:
      The number of bits.
    """
    return max(1, int(n - 1).bit_length())


def _perm_rank(seed, ctr, n):
    """Random permutation by ranking packed random keys (O(n^2), small n)."""
    j = jnp.arange(n, dtype=U32)
    mask = U32((1 << idx_bits(n)) - 1)
    key = (stream_bits(seed, ctr, j) & ~mask) | j
    return jnp.sum(key[None, :] < key[:, None], axis=1).astype(jnp.int32)


def _perm_fisher_yates(seed, ctr, n):
    """Random permutation by Fisher-Yates in a fori_loop (O(n), in place)."""

    def body(k, q):
        i = n - 1 - k
        return inplace.swap(q, i, stream_randint(seed, ctr, i, i + 1))[0]

    return lax.fori_loop(0, n - 1, body, jnp.arange(n, dtype=jnp.int32))


def random_permutation(seed, ctr, n: int) -> jax.Array:
    """A random permutation of `0..n-1` from a 64-bit stream.

    Ranks packed keys for n <= 64, shuffles by Fisher-Yates above.

    Args:
      seed: uint32 `[2]` stream seed.
      ctr: the counter of the first draw.
      n: the permutation's length (static).

    Returns:
      int32 `[n]`.
    """
    return _perm_rank(seed, ctr, n) if n <= 64 else _perm_fisher_yates(seed, ctr, n)
