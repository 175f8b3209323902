"""Plain-Python O(n^2) references for the kernels (deliberately naive)."""

from __future__ import annotations

import itertools

from hypothesis import strategies as st

from jaxqueens.core.constraints import Constraints


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
        total += count_completions(
            n, cols | bit, ((ld | bit) << 1) & full, (rd | bit) >> 1, placed + 1
        )
    return total


# --- constrained boards (issue 16) ---------------------------------------------------------------
def torus_objective(rows, objective: str = "pairs") -> int:
    """Attacks (queens minus lines occupied) or attacking pairs, both diagonals modulo n."""
    n = len(rows)
    keys = [
        [int(r) for r in rows],
        [(int(r) + c) % n for c, r in enumerate(rows)],
        [(int(r) - c) % n for c, r in enumerate(rows)],
    ]
    if objective == "attacks":
        return sum(n - len(set(k)) for k in keys)
    return sum(k.count(v) * (k.count(v) - 1) // 2 for k in keys for v in set(k))


def torus_counts(rows):
    """Packed line counts [5n - 2] on the torus: rows | (r + c) mod n | (r - c) mod n, in the
    first n slots of each diagonal window of jaxqueens.core.lines' layout."""
    n = len(rows)
    out = [0] * (5 * n - 2)
    for c, r in enumerate(int(v) for v in rows):
        out[r] += 1
        out[n + (r + c) % n] += 1
        out[3 * n - 1 + (r - c) % n] += 1
    return out


def random_instance(data, n: int, sat: bool = True):
    """A random instance (hypothesis ``data``): fixed queens and blocked squares, around a known
    solution when ``sat`` (so it has one). Returns (Constraints, that solution)."""
    sols = all_solutions(n)
    sol = sols[data.draw(st.integers(0, len(sols) - 1))]
    fixed = data.draw(st.lists(st.integers(0, n - 1), max_size=n // 2, unique=True))
    fixed = (
        [(x, sol[x]) for x in fixed]
        if sat
        else [(x, data.draw(st.integers(0, n - 1))) for x in fixed]
    )
    squares = data.draw(
        st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=2 * n)
    )
    blocked = [(x, y) for x, y in squares if not sat or sol[x] != y]
    return Constraints(n, fixed=fixed, blocked=blocked), sol
