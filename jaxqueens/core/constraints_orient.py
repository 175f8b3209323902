"""The 8 orientations of the board (the symmetries of the square) for a column-by-column search.

Every symmetry of the square maps attack lines (torus diagonals included) onto attack lines, so an
instance can be searched in any orientation (`jaxqueens.core.constraints.search_masks`) and its
solutions mapped back. Orientation t: transpose if t & 4, then mirror the columns (x -> n-1-x) if
t & 1, then the rows (y -> n-1-y) if t & 2.
"""

from __future__ import annotations

import numpy as np

ORIENTATIONS = 8
SCORE_COLUMNS = 8  # columns the orientation score looks at


def orient(squares: np.ndarray, t: int) -> np.ndarray:
    """A square grid seen in one of the board's 8 orientations.

    Args:
      squares: bool `[x, y]`.
      t: the orientation, 0..7 (0 is the identity).

    Returns:
      `squares[x, y]` seen in orientation `t`.
    """
    a = squares.T if t & 4 else squares
    a = a[::-1, :] if t & 1 else a
    return np.ascontiguousarray(a[:, ::-1] if t & 2 else a)


def masks_of(squares: np.ndarray) -> np.ndarray:
    """Row bitmasks of a square grid.

    Args:
      squares: bool `[x, y]`, n <= 64.

    Returns:
      uint64 `[n]`: bit y of entry x is `squares[x, y]`.
    """
    n = squares.shape[0]
    weights = np.left_shift(np.uint64(1), np.arange(n, dtype=np.uint64))
    return (squares.astype(np.uint64) * weights[None, :]).sum(axis=1, dtype=np.uint64)


def orientation_score(squares: np.ndarray) -> float:
    """How well an orientation orders a column-by-column search (smaller is better).

    Args:
      squares: bool `[x, y]` allowed squares in that orientation.

    Returns:
      The log of the product of the allowed squares of the first `SCORE_COLUMNS` columns.
    """
    counts = squares[:SCORE_COLUMNS].sum(axis=1)
    if not counts.all():
        return -np.inf  # an empty column: unsatisfiable, and found at once
    ties = (counts * 0.85 ** np.arange(len(counts))).sum()  # ties: the narrowest columns first
    return float(np.log(counts).sum() + 1e-3 * ties)
