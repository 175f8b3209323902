"""Genomes of the GA kernels and the per-genome primitives every operator builds on.

A genome is a board `rows[n]` in the `permutation` encoding (all rows distinct) or the
`combination` encoding (rows may repeat), stored in `gene_dtype` (`int8`/`int16`); operators
compute in int32. `gather1d` and `scatter1d` batch as one flat gather/scatter with row offsets,
which XLA:CPU runs faster than the batched gather `vmap` emits. Every operator takes `seed`, a
uint32 scalar, and draws from the counter-based hash of `jaxqueens.core.rng` (`bits`,
`uniform`, `randint`, `two_cuts`); the seed is consumed, so derive a fresh one per individual
and generation.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens.core.rng import hash_bits

I32 = jnp.int32


_GATHER = lax.GatherDimensionNumbers(
    offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)
)


_SCATTER = lax.ScatterDimensionNumbers(
    update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)


_IN_BOUNDS = lax.GatherScatterMode.PROMISE_IN_BOUNDS


def _offsets(axis_size: int, m: int, idx: jax.Array) -> jax.Array:
    return (jnp.arange(axis_size, dtype=idx.dtype) * m).reshape(
        (axis_size,) + (1,) * (idx.ndim - 1)
    )


@jax.custom_batching.custom_vmap
def gather1d(x: jax.Array, idx: jax.Array) -> jax.Array:
    """`x[idx]` for a 1-D `x` and int32 `idx` in `0..len(x)-1` (trusted, not clipped).

    Args:
      x: [m] 1-D array.
      idx: int32 indices in `0..m-1`, any shape.

    Returns:
      `x[idx]`, the shape of `idx`.
    """
    return lax.gather(x, idx[..., None], _GATHER, slice_sizes=(1,), mode=_IN_BOUNDS)


@gather1d.def_vmap
def _gather1d_vmap(axis_size, in_batched, x, idx):
    x_b, i_b = in_batched
    if not x_b:
        return gather1d(x, idx), i_b
    if not i_b:
        idx = jnp.broadcast_to(idx, (axis_size, *idx.shape))
    return gather1d(x.reshape(-1), idx + _offsets(axis_size, x.shape[-1], idx)), True


@jax.custom_batching.custom_vmap
def scatter1d(x: jax.Array, idx: jax.Array, val: jax.Array) -> jax.Array:
    """`x.at[idx].set(val)` for 1-D `x`; indices outside `0..len(x)-1` drop their value;
    in-range indices must be distinct.

    Args:
      x: [m] 1-D array.
      idx: int32 indices.
      val: the values to write, the shape of `idx`.

    Returns:
      [m] `x` with the values written.
    """
    return lax.scatter(
        x,
        idx[..., None],
        val.astype(x.dtype),
        _SCATTER,
        unique_indices=False,
        mode=lax.GatherScatterMode.FILL_OR_DROP,
    )


@scatter1d.def_vmap
def _scatter1d_vmap(axis_size, in_batched, x, idx, val):
    x_b, i_b, v_b = in_batched
    x = x if x_b else jnp.broadcast_to(x, (axis_size, *x.shape))
    idx = idx if i_b else jnp.broadcast_to(idx, (axis_size, *idx.shape))
    val = val if v_b else jnp.broadcast_to(val, (axis_size, *val.shape))
    m = x.shape[-1]
    flat = jnp.where((idx >= 0) & (idx < m), idx + _offsets(axis_size, m, idx), axis_size * m)
    return scatter1d(x.reshape(-1), flat, val).reshape(x.shape), True


def gene_dtype(n: int):
    """The smallest signed integer dtype that holds rows 0..n-1 (storage only; ops compute in
    int32).

    Args:
      n: board size.

    Returns:
      `jnp.int8`, `jnp.int16` or `jnp.int32`.
    """
    return jnp.int8 if n <= 127 else jnp.int16 if n <= 32767 else jnp.int32


def bits(seed, salt: int, count: int) -> jax.Array:
    """uint32 `[count]` from the hash stream of `seed`; `salt` separates the uses in an op.

    Args:
      seed: [] uint32 hash seed.
      salt: separates the draws of one operator (static).
      count: values to draw (static).

    Returns:
      uint32 `[count]`.
    """
    return hash_bits(seed, salt, jnp.arange(count, dtype=jnp.uint32))


def uniform(seed, salt: int, count: int) -> jax.Array:
    """float32 `[count]` in [0, 1) (24-bit resolution).

    Args:
      seed: [] uint32 hash seed.
      salt: separates the draws of one operator (static).
      count: values to draw (static).

    Returns:
      float32 `[count]`.
    """
    return (bits(seed, salt, count) >> 8).astype(jnp.float32) * (1.0 / (1 << 24))


def randint(seed, salt: int, count: int, high) -> jax.Array:
    """int32 `[count]` in [0, high) (modulo bias <= high / 2^32).

    Args:
      seed: [] uint32 hash seed.
      salt: separates the draws of one operator (static).
      count: values to draw (static).
      high: the exclusive upper bound, scalar or `[count]`.

    Returns:
      int32 `[count]`.
    """
    return (bits(seed, salt, count) % jnp.asarray(high).astype(jnp.uint32)).astype(I32)


def two_cuts(seed, salt: int, n: int) -> tuple[jax.Array, jax.Array]:
    """Cut points `0 <= lo < hi <= n` drawn as DEAP's `cxPartialyMatched` does.

    Args:
      seed: [] uint32 hash seed.
      salt: separates the draws of one operator (static).
      n: genome length (static).

    Returns:
      `(lo, hi)`, [] int32 each.
    """
    r = randint(seed, salt, 2, jnp.array([n, n - 1], jnp.uint32))
    a, b = r[0], r[1]
    b = jnp.where(b >= a, b + 1, b)
    return jnp.minimum(a, b), jnp.maximum(a, b)


def index_of(perm: jax.Array) -> jax.Array:
    """Where each value sits: `index_of(p)[p[i]] == i` (the inverse permutation).

    Args:
      perm: [n] a permutation of 0..n-1.

    Returns:
      [n] int32 the inverse permutation.
    """
    n = perm.shape[-1]
    return scatter1d(jnp.zeros(n, I32), perm.astype(I32), jnp.arange(n, dtype=I32))


def fisher_yates(seed, n: int) -> jax.Array:
    """A uniformly random permutation of 0..n-1 (Fisher-Yates: n - 1 swaps, O(1) work each,
    cheaper on XLA:CPU than a batched argsort of random keys).

    Args:
      seed: [] uint32 hash seed (consumed).
      n: genome length (static).

    Returns:
      [n] int32 permutation.
    """
    r = bits(seed, 0, n)

    def swap(k, x):
        i = n - 1 - k
        j = (gather1d(r, i) % (i + 1).astype(jnp.uint32)).astype(I32)
        ij = jnp.stack([i, j])
        return scatter1d(x, ij, gather1d(x, ij[::-1]))

    return lax.fori_loop(0, n - 1, swap, jnp.arange(n, dtype=I32))
