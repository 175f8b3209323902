"""What local-search kernels read of a constrained board: one place for all of them.

`constraints` builds an instance's allowed squares once, in NumPy; a kernel
reads them as a dynamic `Mask` (a new instance of the same n never recompiles) behind a
static `constrained` switch, and the toroidal attack rule behind a static `toroidal` switch,
so a plain board compiles none of their code. The line helpers here extend
`lines` to the torus: the packed counts keep their layout `[5n - 2]` and a
toroidal board uses the first n slots of each diagonal window, `(r + c) mod n` and
`(r - c) mod n` (the other slots stay 0). Used by `anneal` and
`minconflicts`.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import constraints as cons
from jaxqueens.core import lines
from jaxqueens.core.rng import U32, idx_bits, stream_bits


class Mask(NamedTuple):
    """One constrained instance as a kernel reads it; `mask_of` builds it."""

    allowed: jax.Array  #: [n, n] bool allowed[x, y]: a queen may stand on column x, row y
    free: jax.Array  #: [n] int32 the free (not fixed) columns first, then padding
    nfree: jax.Array  #: [] int32 number of free columns
    home: jax.Array  #: [n] int32 the row of a queen in a column without an allowed square


def mask_of(allowed: np.ndarray, fixed_rows: np.ndarray) -> Mask:
    """A `Mask` from bool `allowed[x, y]` [n, n] and int `fixed_rows` [n] (-1: free);
    a fixed column should allow its fixed row only
    (`allowed_squares`).

    Args:
      allowed: bool [n, n], `allowed[x, y]`: row y allowed in column x.
      fixed_rows: int [n], the fixed queen's row per column (-1: free).

    Returns:
      The `Mask`.
    """
    allowed = np.asarray(allowed, bool)
    fixed_rows = np.asarray(fixed_rows)
    free = np.flatnonzero(fixed_rows < 0).astype(np.int32)
    padded = np.concatenate([free, np.zeros(len(fixed_rows) - len(free), np.int32)])
    home = np.maximum(fixed_rows, 0).astype(np.int32)  # a fixed queen stays on its square
    return Mask(jnp.asarray(allowed), jnp.asarray(padded), jnp.int32(len(free)), jnp.asarray(home))


def mask_for(model: cons.Constraints) -> Mask:
    """The [`Mask`][jaxqueens.solvers.constrained.Mask] of an instance
    ([`Constraints`][jaxqueens.core.constraints.Constraints]): its allowed squares, every square a
    fixed queen attacks removed, and its fixed queens. Kernels read it under
    `Config(constrained=True)` (and `toroidal=model.toroidal`).

    Args:
      model: the instance.

    Returns:
      Its `Mask`.
    """
    return mask_of(cons.allowed_squares(model), cons.fixed_rows(model))


def allowed_start(seed: jax.Array, mask: Mask, ctr=0) -> jax.Array:
    """[n] int32 a uniformly random allowed row per column (ties of the packed random keys
    aside), `mask.home` in a column without one (a fixed queen's own row, else 0); a fixed
    column's one allowed row is its queen. Draws from the hash stream at (seed, ctr).

    Args:
      seed: [] uint32 hash seed.
      mask: the instance's `Mask`.
      ctr: the hash counter to draw at.

    Returns:
      [n] int32 board.
    """
    n = mask.allowed.shape[0]
    low = idx_bits(n)
    keys = stream_bits(seed, jnp.asarray(ctr, U32), jnp.arange(n * n, dtype=U32)).reshape(n, n)
    packed = (keys >> low << low) | jnp.arange(n, dtype=U32)[None, :]
    best = jnp.max(jnp.where(mask.allowed, packed, U32(0)), axis=1)
    rows = (best & U32((1 << low) - 1)).astype(jnp.int32)
    return jnp.where(mask.allowed.any(axis=1), rows, mask.home)


def stranded(rows: jax.Array, mask: Mask) -> jax.Array:
    """[] int32 queens on squares the mask forbids (the GA's penalty and anneal's objective).

    Args:
      rows: [n] board, any integer dtype (a GA genome is int8 or int16).
      mask: the instance's `Mask`.

    Returns:
      [] int32.
    """
    cols = jnp.arange(rows.shape[-1])
    return jnp.sum(~mask.allowed[cols, rows.astype(jnp.int32)], dtype=jnp.int32)


def positions(n: int, c, r, toroidal: bool) -> tuple:
    """Indices into the packed counts of the row and both diagonals of square (column c, row r):
    `positions`, or on the torus `(r + c) mod n`, `(r - c) mod n`.

    Args:
      n: board size.
      c: the square's column.
      r: the square's row.
      toroidal: diagonals taken modulo n.

    Returns:
      `(row, diagonal, anti-diagonal)` indices into the packed counts.
    """
    if not toroidal:
        return lines.positions(n, c, r)
    return (r, n + (r + c) % n, 3 * n - 1 + (r - c) % n)


def counts_of(rows: jax.Array, n: int, toroidal: bool, scatter: bool = False) -> jax.Array:
    """Packed line counts [5n-2] int32 of a board [n] under the attack rule
    (`jaxqueens.core.lines.counts_of` with this rule's `positions`).

    Args:
      rows: [n] int32 board.
      n: board size.
      toroidal: diagonals taken modulo n.
      scatter: count by one scatter-add.

    Returns:
      [5n-2] int32.
    """
    return lines.counts_of(rows, n, scatter, functools.partial(positions, toroidal=toroidal))


def conflicted(rows: jax.Array, counts: jax.Array, n: int, toroidal: bool) -> jax.Array:
    """[n] bool: queen c shares a line with another queen.

    Args:
      rows: [n] int32 board.
      counts: [5n-2] int32 its packed line counts.
      n: board size.
      toroidal: diagonals taken modulo n.

    Returns:
      [n] bool.
    """
    at = functools.partial(positions, toroidal=toroidal)
    return lines.conflicted_from_counts(rows, counts, n, at)


def column_cost(counts: jax.Array, c, r0, n: int, toroidal: bool) -> jax.Array:
    """[n] int32 conflicts of each row of column c with the queen at r0 lifted (r0 = -1: none).

    Args:
      counts: [5n-2] int32 packed line counts.
      c: the column.
      r0: the row of its queen, lifted (-1: none).
      n: board size.
      toroidal: diagonals taken modulo n.

    Returns:
      [n] int32.
    """
    if not toroidal:
        return lines.column_cost(counts, c, r0, n)
    r = jnp.arange(n, dtype=jnp.int32)
    return (
        counts[:n]
        + counts[n + (r + c) % n]
        + counts[3 * n - 1 + (r - c) % n]
        - jnp.where(r == r0, 3, 0)
    )
