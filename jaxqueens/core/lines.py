"""The packed line layout of a board: queens per row, diagonal and anti-diagonal in one array.

A board `rows[n]` (`rows[c]` = row of the queen in column `c`) has `5n - 2` lines, counted
in one int32 array `counts[5n - 2]`:

    [0, n)           rows           r
    [n, 3n - 1)      diagonals      r + c
    [3n - 1, 5n - 2) anti-diagonals r - c + n - 1

so the square `(c, r)` lies on the lines `positions` `(r, n + r + c, 4n - 2 + r - c)`.
Both diagonal windows of a column are contiguous slices, which makes scoring a column O(n) vector
work (`column_cost`); updates go through `jaxqueens.core.inplace`. Used by the min-conflicts and
LS/TA/SA kernels.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens.core import inplace


def size(n: int) -> int:
    """The length of the packed line counts: n rows, 2n - 1 diagonals, 2n - 1 anti-diagonals.

    Args:
      n: board size.

    Returns:
      `5n - 2`.
    """
    return 5 * n - 2


def positions(n: int, c, r) -> tuple:
    """The indices into the packed counts of one square's lines.

    Args:
      n: board size.
      c: the square's column.
      r: the square's row.

    Returns:
      `(row, diagonal, anti-diagonal)` indices.
    """
    return (r, n + r + c, 4 * n - 2 + r - c)


def counts_of(rows: jax.Array, n: int, scatter: bool = False, at=positions) -> jax.Array:
    """The packed line counts of a board.

    The default is an O(n) loop of `jaxqueens.core.inplace` writes; on a GPU that loop is n
    host-driven iterations of several kernels each, where one scatter is one kernel.

    Args:
      rows: int `[n]` board.
      n: board size (static).
      scatter: one scatter-add of the 3n lines instead (the same counts).
      at: `(n, c, r) -> (row, diagonal, anti-diagonal)` indices of a square's lines (default
        `positions`; the torus has its own).

    Returns:
      int32 `[5n-2]`.
    """
    if scatter:
        c = jnp.arange(n, dtype=jnp.int32)
        pos = jnp.concatenate(at(n, c, rows.astype(jnp.int32)))
        return jnp.zeros(size(n), jnp.int32).at[pos].add(1)

    def body(c, counts):
        for pos in at(n, c, rows[c]):
            counts = inplace.add(counts, pos, 1)
        return counts

    return lax.fori_loop(0, n, body, jnp.zeros(size(n), jnp.int32))


def conflicted_from_counts(rows: jax.Array, counts: jax.Array, n: int, at=positions) -> jax.Array:
    """Which queens share a line with another queen.

    Args:
      rows: int `[n]` board.
      counts: int32 `[5n-2]` its packed counts.
      n: board size.
      at: a square's line indices, as for `counts_of`.

    Returns:
      bool `[n]`, per column.
    """
    row, diag, anti = at(n, jnp.arange(n, dtype=jnp.int32), rows)
    return (counts[row] > 1) | (counts[diag] > 1) | (counts[anti] > 1)


def pairs_from_counts(counts: jax.Array) -> jax.Array:
    """The number of attacking queen pairs: the sum over lines of k(k-1)/2.

    Args:
      counts: int32 `[5n-2]` packed counts.

    Returns:
      int32 scalar.
    """
    return jnp.sum(counts * (counts - 1) // 2)


def column_cost(counts: jax.Array, c, r0, n: int) -> jax.Array:
    """The conflicts of each row of a column, its own queen lifted.

    Args:
      counts: int32 `[5n-2]` packed counts.
      c: the column.
      r0: the row of the queen lifted (-1: none).
      n: board size.

    Returns:
      int32 `[n]`, per row.
    """
    r = jnp.arange(n, dtype=jnp.int32)
    rowc = counts[:n]
    diag = lax.dynamic_slice(counts, (n + c,), (n,))
    anti = lax.dynamic_slice(counts, (4 * n - 2 - c,), (n,))
    return rowc + diag + anti - jnp.where(r == r0, 3, 0)
