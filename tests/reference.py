"""Plain-Python O(n^2) references for the kernels (deliberately naive)."""

from __future__ import annotations

import itertools


def attacks(rows, i, j) -> bool:
    """Queens in columns i != j share a row, diagonal or anti-diagonal."""
    return rows[i] == rows[j] or abs(int(rows[i]) - int(rows[j])) == abs(i - j)


def attacking_pairs(rows) -> int:
    return sum(attacks(rows, i, j) for i, j in itertools.combinations(range(len(rows)), 2))


def queen_conflicts(rows) -> list[int]:
    n = len(rows)
    return [sum(attacks(rows, i, j) for j in range(n) if j != i) for i in range(n)]


def n_attacks(rows) -> int:
    """NMOF: for rows, diagonals and anti-diagonals, queens minus distinct lines."""
    n = len(rows)
    lines = (
        [int(r) for r in rows],
        [int(r) + c for c, r in enumerate(rows)],
        [int(r) - c for c, r in enumerate(rows)],
    )
    return sum(n - len(set(line)) for line in lines)


def line_counts(rows):
    n = len(rows)
    rc, dc, ac = [0] * n, [0] * (2 * n - 1), [0] * (2 * n - 1)
    for c, r in enumerate(rows):
        rc[r] += 1
        dc[r + c] += 1
        ac[r - c + n - 1] += 1
    return rc, dc, ac


def all_solutions(n: int) -> list[tuple[int, ...]]:
    """Every solution by brute force over permutations (n <= 8 or so)."""
    return [p for p in itertools.permutations(range(n)) if attacking_pairs(p) == 0]


def count_completions(n, cols=0, ld=0, rd=0, placed=0):
    """Plain recursive bitmask counter (completions of a partial board)."""
    if placed == n:
        return 1
    full, total = (1 << n) - 1, 0
    av = full & ~(cols | ld | rd)
    while av:
        bit = av & -av
        av ^= bit
        total += count_completions(n, cols | bit, ((ld | bit) << 1) & full, (rd | bit) >> 1, placed + 1)
    return total
