"""Partial boards as bitmasks, expanded breadth-first on the host (NumPy).

Column by column, a partial board is three `n`-bit masks: rows taken (`cols`), and the rows
attacked in the next column along the two diagonal directions (`ld`, `rd`). Expanding a level
places one more queen in every free row of every node. The exact counter
(`count`) searches below each prefix of a chosen depth; Knuth's estimator
(`estimate`) enumerates its top levels exactly and walks below them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

ONE = np.uint64(1)


def place(
    cols: np.ndarray, ld: np.ndarray, rd: np.ndarray, n: int, allowed: np.ndarray | None = None
):
    """Every child of every node: the next queen in each free (and allowed) row.

    Args:
      cols: uint64 `[N]` occupied rows of the nodes.
      ld: uint64 `[N]` rows attacked along one diagonal.
      rd: uint64 `[N]` rows attacked along the other.
      n: board size.
      allowed: uint64 `[N]` rows each node may use (default all).

    Returns:
      `(parent [M], row [M], cols [M], ld [M], rd [M])`: the children in lexicographic order.
    """
    full = np.uint64((1 << n) - 1)
    free = free_rows(cols, ld, rd, n)
    if allowed is not None:
        free &= allowed
    parent, row = np.nonzero((free[:, None] >> np.arange(n, dtype=np.uint64)) & ONE)
    bit = ONE << row.astype(np.uint64)
    return (
        parent,
        row,
        cols[parent] | bit,
        ((ld[parent] | bit) << ONE) & full,
        (rd[parent] | bit) >> ONE,
    )


def root() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The empty board: one node with no queen.

    Returns:
      `(cols, ld, rd)`, each uint64 `[1]` zeros.
    """
    z = np.zeros(1, np.uint64)
    return z, z, z


def free_rows(cols: np.ndarray, ld: np.ndarray, rd: np.ndarray, n: int) -> np.ndarray:
    """The rows open to the next queen of each node.

    Args:
      cols: uint64 `[N]` occupied rows.
      ld: uint64 `[N]` rows attacked along one diagonal.
      rd: uint64 `[N]` rows attacked along the other.
      n: board size.

    Returns:
      uint64 `[N]` row bitmasks.
    """
    return np.uint64((1 << n) - 1) & ~(cols | ld | rd)


def place_bytes(parents: int, children: int, n: int) -> int:
    """The peak bytes of `place`: the parents' masks, the `[parents, n]` uint64 bit matrix (two
    temporaries) and about eight uint64 per child.

    Args:
      parents: nodes placed from.
      children: nodes made.
      n: board size.

    Returns:
      Bytes.
    """
    return 8 * (3 * parents + 2 * n * parents + 8 * children)


def expand(
    n: int, depth: int, reserve: Callable[[int, int, int], None] | None = None
) -> tuple[np.ndarray, list[int]]:
    """Every partial board of `depth` queens (columns 0..depth-1), exactly.

    Args:
      n: board size.
      depth: queens placed.
      reserve: called as `reserve(level, nodes, nbytes)` before level `level` (1..depth) is
        built, with its node count (counted from the free rows, nothing allocated) and the peak
        bytes of building it (`place_bytes`); it raises to refuse (a memory check).

    Returns:
      masks: uint64 `[N_depth, 3]` (cols, ld, rd); counts: `[N_0, ..., N_depth]` nodes per
      level (N_0 = 1, the root).
    """
    cols, ld, rd = root()
    counts = [1]
    for level in range(1, depth + 1):
        if reserve is not None:
            children = int(np.bitwise_count(free_rows(cols, ld, rd, n)).sum())
            reserve(level, children, place_bytes(len(cols), children, n))
        _, _, cols, ld, rd = place(cols, ld, rd, n)
        counts.append(len(cols))
    return np.stack([cols, ld, rd], axis=1), counts


def deepest_level(n: int, limit: int) -> int:
    """The deepest level (0..n) whose nodes number at most `limit`.

    Args:
      n: board size.
      limit: the most nodes allowed.

    Returns:
      The level.
    """
    cols, ld, rd = root()
    for depth in range(n):
        parent, _, c, l, r = place(cols, ld, rd, n)
        if len(parent) > limit:
            return depth
        cols, ld, rd = c, l, r
    return n


def expand_mirror(n: int, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Partial boards of `depth` queens under the mirror restriction of the first column.

    The first queen takes the lower half of the rows (and, for odd n, the middle row, whose
    second queen then takes the lower half), so every solution is counted once or, mirrored,
    twice: the total is twice the count below these prefixes.

    Args:
      n: board size.
      depth: queens placed.

    Returns:
      `(masks, queens)`: masks uint32 `[P, 4]` (cols, ld, rd, free) ready for the kernel, dead
      ends dropped; queens uint8 `[P, depth]`, the rows of the placed queens, in lexicographic
      order.
    """
    if not 1 <= depth <= n - 2 or (n % 2 and depth < 2):
        raise ValueError(f"depth {depth} out of range for n = {n}")
    full, half = (1 << n) - 1, n // 2
    low = (1 << half) - 1
    cols, ld, rd = root()
    queens = np.zeros((1, 0), np.uint8)
    for level in range(depth):
        allowed = np.full(cols.shape, full, np.uint64)
        if level == 0:
            allowed[:] = low | ((1 << half) if n % 2 else 0)
        elif level == 1 and n % 2:
            allowed[queens[:, 0] == half] = low
        parent, row, cols, ld, rd = place(cols, ld, rd, n, allowed)
        queens = np.concatenate([queens[parent], row[:, None].astype(np.uint8)], axis=1)
    av = free_rows(cols, ld, rd, n)
    keep = av != 0
    masks = np.stack([cols, ld, rd, av], axis=1)[keep].astype(np.uint32)
    return masks, queens[keep]
