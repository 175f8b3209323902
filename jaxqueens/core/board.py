"""Board model and conflict kernels (JAX).

A board is an integer array `rows[..., n]`: `rows[c]` is the 0-based row of the queen in column
`c` (the permutation encoding keeps rows distinct, the combination encoding lets them repeat);
its lines are the rows, the diagonals `r + c` and the anti-diagonals `r - c + n - 1`. Every
kernel is written for one board, vectorised over leading batch axes and jitted at the public
entry, which checks its input once (`as_size`, `as_board`); `attacking_pairs_one` and
`n_attacks_one` are the unchecked one-board forms for other kernels. The docs' core page gives
the input checks and integer widths.
"""

from __future__ import annotations

import operator
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.errors import QueensError, clip

PAIRWISE_MAX_N = 32
"""Largest n for which the dense pairwise form is used (it is faster than the scatter there)."""

INT32_SAFE_N = 65536
"""For n up to this, n (n - 1) / 2 < 2^31: int32 pair counts cannot overflow."""

PAIRS_SATURATED = np.iinfo(np.int32).max
"""Pair count reported (int32 mode, traced) when the exact total may not fit."""


class PairCountOverflow(QueensError, OverflowError):
    """The attacking-pair count of a board may not fit int32 (n > 65536 without x64)."""


def as_size(n: Any, what: str = "n") -> int:
    """A checked board size: ints and NumPy integers pass.

    Args:
      n: the value given.
      what: its name, for the message.

    Returns:
      `n` as a Python int.

    Raises:
      QueensError: `n` is not an integer.
    """
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise QueensError(
            f"{what} must be an integer, got {n!r} ({type(n).__name__}); pass e.g. {what} = 8"
        )
    return operator.index(n)


def as_board(rows: Any, n: int, what: str = "board") -> np.ndarray:
    """A user's board, checked: integers, n columns, rows in `0..n-1`.

    Args:
      rows: the board, `rows[x]` per column.
      n: board size.
      what: its name, for the message.

    Returns:
      int32 `[n]`.

    Raises:
      QueensError: naming the first problem.
    """
    arr = np.asarray(rows)
    if arr.ndim != 1:
        raise QueensError(f"{what}: expected one board rows[n], got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise QueensError(f"{what}: rows must be integers, got dtype {arr.dtype}")
    if arr.shape[0] != n:
        raise QueensError(
            f"{what} has {arr.shape[0]} columns but n = {n}; "
            f"pass -n {arr.shape[0]} or another board"
        )
    bad = np.flatnonzero((arr < 0) | (arr >= n))
    if bad.size:
        c = int(bad[0])
        raise QueensError(
            f"{what}: column {c}: row {arr[c]} out of range 0..{n - 1}; rows must be 0-based"
        )
    return arr.astype(np.int32)


def _widen(rows: jax.Array) -> jax.Array:
    """int32 rows (int64 kept): narrow or unsigned dtypes would wrap in `r + c`, `r - c`."""
    if rows.dtype == jnp.int32 or rows.dtype == jnp.int64:
        return rows
    return rows.astype(jnp.int32)


class LineCounts(NamedTuple):
    """Occupancy of every line of one board (leading batch dims allowed)."""

    rows: jax.Array  #: [..., n] int32: queens per row
    diag: jax.Array  #: [..., 2n-1] int32: queens per diagonal r + c
    anti: jax.Array  #: [..., 2n-1] int32: queens per anti-diagonal r - c + n - 1


def _x64() -> bool:
    # JAX's documented read of the flag (it follows jax.enable_x64 contexts); its Config stub does
    # not declare the per-option attributes
    return bool(jax.config.jax_enable_x64)  # type: ignore[attr-defined]


def _pairs_dtype():
    return jnp.int64 if _x64() else jnp.int32


def _line_indices(rows: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """Row, diagonal and anti-diagonal index of every queen: three [n] arrays."""
    n = rows.shape[-1]
    cols = jnp.arange(n, dtype=rows.dtype)
    return rows, rows + cols, rows - cols + (n - 1)


def _line_counts_one(rows: jax.Array) -> LineCounts:
    rows = _widen(rows)
    n = rows.shape[-1]
    r, d, a = _line_indices(rows)
    add = lambda size, idx: jnp.zeros(size, jnp.int32).at[idx].add(1)
    return LineCounts(add(n, r), add(2 * n - 1, d), add(2 * n - 1, a))


def _attack_matrix(rows: jax.Array) -> jax.Array:
    """[n, n] bool: queens i != j share a line (the dense pairwise form)."""
    n = rows.shape[-1]
    cols = jnp.arange(n, dtype=rows.dtype)
    dr = rows[:, None] - rows[None, :]
    dc = cols[:, None] - cols[None, :]
    return ((dr == 0) | (dr == dc) | (dr == -dc)) & (dc != 0)


def _pairs_from_counts(counts: LineCounts) -> jax.Array:
    dtype = _pairs_dtype()
    r, d, a = (jnp.sum(k.astype(dtype) * (k.astype(dtype) - 1) // 2) for k in counts)
    return r + d + a


def attacking_pairs_one(rows: jax.Array) -> jax.Array:
    """`attacking_pairs` of one board inside a kernel: no input check, no batch axes (vmap it).

    Args:
      rows: int `[n]`, trusted in `0..n-1`.

    Returns:
      int32 scalar (int64 under x64).
    """
    rows = _widen(rows)
    n = rows.shape[-1]
    if n <= PAIRWISE_MAX_N:
        return jnp.sum(_attack_matrix(rows), dtype=_pairs_dtype()) // 2
    counts = _line_counts_one(rows)
    pairs = _pairs_from_counts(counts)
    if n <= INT32_SAFE_N or _x64():
        return pairs
    # sum_l k(k-1)/2 <= (max_k - 1) * n / 2 per line type: a rigorous bound.
    bound = sum((jnp.max(k).astype(jnp.float32) - 1.0) for k in counts) * (n / 2)
    return jnp.where(bound < 0.99 * 2.0**31, pairs, PAIRS_SATURATED)


def _queen_conflicts_one(rows: jax.Array) -> jax.Array:
    rows = _widen(rows)
    n = rows.shape[-1]
    if n <= PAIRWISE_MAX_N:
        return jnp.sum(_attack_matrix(rows), axis=1, dtype=jnp.int32)
    counts = _line_counts_one(rows)
    r, d, a = _line_indices(rows)
    return counts.rows[r] + counts.diag[d] + counts.anti[a] - 3


def n_attacks_one(rows: jax.Array) -> jax.Array:
    """`n_attacks` of one board inside a kernel: no input check, no batch axes (vmap it).

    Args:
      rows: int `[n]`, trusted in `0..n-1`.

    Returns:
      int32 scalar.
    """
    rows = _widen(rows)
    n = rows.shape[-1]
    if n <= PAIRWISE_MAX_N:
        # A queen adds one attack per line type on which an earlier column's queen sits.
        cols = jnp.arange(n, dtype=rows.dtype)
        earlier = cols[None, :] < cols[:, None]
        total = jnp.zeros((), jnp.int32)
        for idx in _line_indices(rows):
            total += jnp.sum(
                jnp.any((idx[:, None] == idx[None, :]) & earlier, axis=1), dtype=jnp.int32
            )
        return total
    counts = _line_counts_one(rows)
    r, d, a = (jnp.count_nonzero(k).astype(jnp.int32) for k in counts)
    return 3 * n - (r + d + a)


def _is_solution_one(rows: jax.Array) -> jax.Array:
    rows = _widen(rows)
    n = rows.shape[-1]
    in_range = jnp.all((rows >= 0) & (rows < n))
    if n <= PAIRWISE_MAX_N:
        return in_range & ~jnp.any(_attack_matrix(rows))
    counts = _line_counts_one(rows)
    return (
        in_range
        & (jnp.max(counts.rows) <= 1)
        & (jnp.max(counts.diag) <= 1)
        & (jnp.max(counts.anti) <= 1)
    )


_line_counts = jax.jit(jnp.vectorize(_line_counts_one, signature="(n)->(n),(m),(m)"))
_attacking_pairs = jax.jit(jnp.vectorize(attacking_pairs_one, signature="(n)->()"))
_queen_conflicts = jax.jit(jnp.vectorize(_queen_conflicts_one, signature="(n)->(n)"))
_n_attacks = jax.jit(jnp.vectorize(n_attacks_one, signature="(n)->()"))
_is_solution = jax.jit(jnp.vectorize(_is_solution_one, signature="(n)->()"))


def _boundary(rows, what: str, solution: bool = False):
    """The one input check of the public kernels (dtype and range, once per call, vectorised).

    Traced values and JAX arrays: the dtype only (their range is trusted, or checked inside
    `is_solution`'s kernel). Host boards (NumPy arrays, lists): an integer dtype and rows in
    `0..n-1`; out of range, `solution` marks the board's rows -1 (never a solution: the
    kernel's own range check says False) and the counting kernels raise. Rows wider than int32
    are narrowed only once they are known to be in range (no wrap-around)."""
    arr: Any
    if isinstance(rows, (jax.Array, jax.core.Tracer)):
        arr = rows
    else:
        try:
            arr = np.asarray(rows)
        except (ValueError, TypeError) as err:  # ragged nested lists and the like
            raise QueensError(f"{what}: boards must be an integer array [..., n] ({err})") from None
    dtype = np.dtype(arr.dtype)
    if not np.issubdtype(dtype, np.integer):
        raise QueensError(
            f"{what}: boards must hold integers (rows 0..n-1), got dtype {dtype}; "
            "a float, complex or bool board is never read as one (round and cast it first)"
        )
    if arr.ndim < 1:
        raise QueensError(f"{what}: expected boards [..., n], got a scalar")
    if not isinstance(arr, np.ndarray) or not arr.size:
        return arr
    n = arr.shape[-1]
    bad = (arr < 0) | (arr >= n)
    if bad.any():
        if not solution:
            where = np.argwhere(bad)[0]
            index = [int(i) for i in where[:-1]]
            board_at = f"board {index[0] if len(index) == 1 else tuple(index)}, " if index else ""
            row = clip(str(arr[tuple(where)]), 30)
            raise QueensError(
                f"{what}: {board_at}column {int(where[-1])}: row {row} out "
                f"of range 0..{n - 1}; rows must be 0-based (check untrusted boards with "
                "jaxqueens.check_board)"
            )
        marked = bad.any(axis=-1, keepdims=True)
        return np.where(marked, -1, arr.astype(np.int64)).astype(np.int32)
    if dtype.itemsize > 4 or dtype == np.uint32:
        arr = arr.astype(np.int32)  # in range now (or -1): no wrap
    return arr


def queen_conflicts(rows) -> jax.Array:
    """Per-queen conflicts: other queens on each queen's row and diagonals.

    Args:
      rows: [..., n] int board(s), values in 0..n-1 (checked: a QueensError otherwise).

    Returns:
      [..., n] int32.
    """
    return _queen_conflicts(_boundary(rows, "queen_conflicts"))


def n_attacks(rows) -> jax.Array:
    """NMOF's attack count: for rows, diagonals and anti-diagonals, queens minus lines occupied.

    Args:
      rows: [..., n] int board(s), values in 0..n-1 (checked: a QueensError otherwise).

    Returns:
      [...] int32; 0 exactly for solutions.
    """
    return _n_attacks(_boundary(rows, "n_attacks"))


def is_solution(rows) -> jax.Array:
    """True where the board has every value in range and no two queens on a line.

    Args:
      rows: [..., n] integer board(s); a non-integer dtype (float, complex, bool) is a
        QueensError, a row outside 0..n-1 (of any width) makes the board False.

    Returns:
      [...] bool.
    """
    return _is_solution(_boundary(rows, "is_solution", solution=True))


def line_counts(rows) -> LineCounts:
    """Queens per row, per diagonal (r + c) and per anti-diagonal (r - c + n - 1).

    Args:
      rows: [..., n] int board(s), values in 0..n-1 (checked: a QueensError otherwise).

    Returns:
      LineCounts of [..., n], [..., 2n-1] and [..., 2n-1] int32 arrays.
    """
    return LineCounts(*_line_counts(_boundary(rows, "line_counts")))


def attacking_pairs(rows) -> jax.Array:
    """Attacking pairs, sum over lines of k (k - 1) / 2: the min-conflicts objective.

    Args:
      rows: [..., n] int board(s), values in 0..n-1 (checked: a QueensError otherwise).

    Returns:
      [...] int32 (int64 under x64). Without x64 and for n > 65536 the result
      saturates at `PAIRS_SATURATED` when traced, and an eager call raises
      OverflowError instead of returning a value that may not fit.
    """
    rows = _boundary(rows, "attacking_pairs")
    pairs = _attacking_pairs(rows)
    if isinstance(pairs, jax.core.Tracer) or jnp.shape(rows)[-1] <= INT32_SAFE_N or _x64():
        return pairs
    if np.any(np.asarray(pairs) == PAIRS_SATURATED):
        raise PairCountOverflow(
            "attacking-pair count may exceed 2^31 - 1 for this board; "
            "enable 64-bit integers (JAX_ENABLE_X64=1) for an exact count"
        )
    return pairs


def conflicted_mask(rows) -> jax.Array:
    """True for every queen attacked by at least one other queen.

    Args:
      rows: [..., n] int board(s), values in 0..n-1 (checked: a QueensError otherwise).

    Returns:
      [..., n] bool.
    """
    return queen_conflicts(rows) > 0
