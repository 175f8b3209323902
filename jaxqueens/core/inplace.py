"""Scalar reads and writes inside loops that XLA:CPU compiles to one native loop, without copies.

Two rules:
- Write with `lax.dynamic_update_slice` of one element, never a scatter (`.at[].set`): a
  scatter keeps the loop from compiling as one function.
- Read every value a step needs before its first write to the same array, in one small gather
  (`a[jnp.stack([i, j])]`). Two `dynamic_slice` reads feeding later writes (a swap) let XLA
  fuse the reads into the writes and copy the whole array each iteration to keep the old values.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax


def get(a, i):
    """`a[i]` for a 1-D array and a traced index.

    Args:
      a: 1-D array.
      i: the index.

    Returns:
      The element.
    """
    return lax.dynamic_slice(a, (i,), (1,))[0]


def put(a, i, v):
    """`a[i] = v` in place.

    Args:
      a: 1-D array.
      i: the index.
      v: the value.

    Returns:
      The updated array.
    """
    return lax.dynamic_update_slice(a, jnp.asarray(v, a.dtype)[None], (i,))


def add(a, i, v):
    """`a[i] += v` in place (one read, then the write).

    Args:
      a: 1-D array.
      i: the index.
      v: the increment.

    Returns:
      The updated array.
    """
    return lax.dynamic_update_slice(a, lax.dynamic_slice(a, (i,), (1,)) + v, (i,))


def swap(a, i, j):
    """`a[i], a[j] = a[j], a[i]` in place.

    Args:
      a: 1-D array.
      i: one index.
      j: the other.

    Returns:
      `(a, old a[i], old a[j])`.
    """
    aj, ai = a[jnp.stack([j, i])]
    return put(put(a, i, aj), j, ai), ai, aj
