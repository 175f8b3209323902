"""The 8 symmetries of the square on device: board transforms, canonical forms, deduplication.

The JAX twin of `jaxqueens.core.symmetry` (same images in the same order, `NAMES`), for
solution sets too large to move through host NumPy comfortably. `canonical` gives the
lexicographically smallest of the 8 images, `stabilizer_sizes` and `class_sizes` the orbit
sizes; `dedup` finds the distinct boards of a batch by a lexicographic sort of the rows (no host
round trip, no hashing), so deduplicating canonical forms gives the fundamental classes. Shapes
are static: `dedup` returns `[B, ...]` arrays padded past `num_unique`.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens.core.symmetry import NAMES, images_of

__all__ = [
    "NAMES",
    "Dedup",
    "canonical",
    "class_sizes",
    "dedup",
    "inverse",
    "lex_less",
    "lex_order",
    "stabilizer_sizes",
    "transforms",
]


def inverse(boards: jax.Array) -> jax.Array:
    """Inverse permutations (the boards transposed).

    `inv[r]` is the first column c with `boards[c] == r` (0 if none), by one scatter-min per
    board: O(n) memory and work per board, not an `[n, n]` one-hot match.

    Args:
      boards: int `[..., n]`.

    Returns:
      `[..., n]`.
    """
    boards = jnp.asarray(boards)
    n = boards.shape[-1]
    cols = jnp.arange(n, dtype=boards.dtype)

    def one(b):
        inv = jnp.full(n, n, boards.dtype).at[b].min(cols)
        return jnp.where(inv == n, 0, inv)

    return jax.vmap(one)(boards.reshape(-1, n)).reshape(boards.shape)


@jax.jit
def transforms(boards: jax.Array) -> jax.Array:
    """All 8 images of every board under D4, in the order of `NAMES`.

    Args:
      boards: integer `[..., n]` permutations.

    Returns:
      `[8, ..., n]` of the same dtype (identity first).
    """
    boards = jnp.asarray(boards)
    top = jnp.asarray(boards.shape[-1] - 1, boards.dtype)
    return jnp.stack(images_of(boards, inverse(boards), top))


def lex_less(a: jax.Array, b: jax.Array) -> jax.Array:
    """Row-wise lexicographic `a < b`.

    Args:
      a: int `[..., n]`.
      b: int `[..., n]`.

    Returns:
      bool `[...]`.
    """
    diff = a != b
    first = jnp.argmax(diff, axis=-1)[..., None]
    av = jnp.take_along_axis(a, first, axis=-1)[..., 0]
    bv = jnp.take_along_axis(b, first, axis=-1)[..., 0]
    return jnp.any(diff, axis=-1) & (av < bv)


@jax.jit
def canonical(boards: jax.Array) -> jax.Array:
    """The lexicographically smallest of the 8 images of each board.

    Args:
      boards: int `[..., n]`.

    Returns:
      `[..., n]`.
    """
    images = transforms(boards)
    best = images[0]
    for k in range(1, 8):
        best = jnp.where(lex_less(images[k], best)[..., None], images[k], best)
    return best


@jax.jit
def stabilizer_sizes(boards: jax.Array) -> jax.Array:
    """How many of the 8 symmetries fix each board.

    Args:
      boards: int `[..., n]`.

    Returns:
      int32 `[...]` in {1, 2, 4, 8}.
    """
    images = transforms(boards)
    return jnp.sum(jnp.all(images == images[0][None], axis=-1), axis=0).astype(jnp.int32)


def class_sizes(boards: jax.Array) -> jax.Array:
    """The size of each board's symmetry class (orbit).

    Args:
      boards: int `[..., n]`.

    Returns:
      int32 `[...]` in {1, 2, 4, 8}.
    """
    return 8 // stabilizer_sizes(boards)


class Dedup(NamedTuple):
    """Distinct rows of a batch `[B, n]` (padded to B; only the first `num_unique` are real)."""

    unique: jax.Array  #: [B, n] distinct rows in lexicographic order, then padding
    counts: jax.Array  #: [B] int32 multiplicity of each distinct row (0 past num_unique)
    num_unique: jax.Array  #: [] int32
    inverse: jax.Array  #: [B] int32 index into `unique` of each input row
    first: jax.Array  #: [B] bool: the row's first occurrence in batch order


MULTIKEY_MAX_N = 32
"""Up to this n, rows are ordered by one `lax.sort` on all n columns (n + 1 operands, whose
compile time grows with n); beyond it, by one stable sort per column in a `fori_loop`, whose
compiled size does not. Both give the same order."""


def lex_order(boards: jax.Array, multikey: bool | None = None) -> jax.Array:
    """The stable lexicographic order of the rows of `boards` (equal rows keep their order).

    Args:
      boards: int `[B, n]`.
      multikey: one sort on all columns; else a least-significant-column-first pass of stable
        sorts (default: `n <= MULTIKEY_MAX_N`).

    Returns:
      int32 `[B]`.
    """
    b, n = boards.shape
    idx = jnp.arange(b, dtype=jnp.int32)
    if multikey if multikey is not None else n <= MULTIKEY_MAX_N:
        # Keys: the n columns in order, then the batch index (so equal rows keep batch order).
        return lax.sort((*tuple(boards[:, c] for c in range(n)), idx), num_keys=n + 1)[-1]

    def by_column(i, order):
        key = boards[order, n - 1 - i]
        return order[jnp.argsort(key, stable=True)]

    return lax.fori_loop(0, n, by_column, idx)


@jax.jit
def dedup(boards: jax.Array) -> Dedup:
    """Distinct boards with multiplicities, by a stable lexicographic sort of the rows
    (`lex_order`).

    Args:
      boards: integer `[B, n]` (any rows, not only permutations).

    Returns:
      `Dedup`. `unique[inverse[i]] == boards[i]` for every i.
    """
    b, _n = boards.shape
    idx = jnp.arange(b, dtype=jnp.int32)
    order = lex_order(boards)
    srt = boards[order]  # [B, n]
    start = jnp.concatenate([jnp.ones(1, bool), jnp.any(srt[1:] != srt[:-1], axis=1)])
    group = jnp.cumsum(start.astype(jnp.int32)) - 1  # [B] distinct index in sorted order
    num = group[-1] + 1 if b else jnp.int32(0)
    pos = jnp.nonzero(start, size=b, fill_value=b - 1)[0]
    unique = srt[pos]
    valid = idx < num
    unique = jnp.where(valid[:, None], unique, 0)
    counts = jnp.zeros(b, jnp.int32).at[group].add(1)
    inv = jnp.zeros(b, jnp.int32).at[order].set(group)
    first = jnp.zeros(b, bool).at[order].set(start)
    return Dedup(unique, counts, num.astype(jnp.int32), inv, first)
