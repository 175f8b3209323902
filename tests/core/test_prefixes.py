"""Bitmask prefixes (core/prefixes.py) against a plain Python enumeration of partial boards."""

import numpy as np
import pytest
import reference

from jaxqueens.core import prefixes
from jaxqueens.core.oeis import A000170


def partial_boards(n, depth):
    """Every placement of queens in columns 0..depth-1 with no two attacking, lexicographic
    (column by column: a board of depth d extends one of depth d - 1)."""
    boards = [()]
    for _ in range(depth):
        boards = [
            (*b, r) for b in boards for r in range(n) if reference.attacking_pairs((*b, r)) == 0
        ]
    return boards


def masks_of(n, queens):
    """(cols, ld, rd) of a partial board: rows taken, and rows attacked in the next column."""
    d = len(queens)
    cols = sum(1 << r for r in queens)
    ld = sum(1 << (r + d - c) for c, r in enumerate(queens) if r + d - c < n)
    rd = sum(1 << (r - (d - c)) for c, r in enumerate(queens) if r - (d - c) >= 0)
    return cols, ld, rd


def free(n, queens):
    """Rows open to the next queen."""
    d = len(queens)
    return [r for r in range(n) if reference.attacking_pairs((*queens, r)) == 0] if d < n else []


def mirror_allowed(n, queens):
    """The mirror restriction: first queen in the lower half (or the middle row for odd n, and
    then the second queen in the lower half)."""
    half = n // 2
    if queens and (queens[0] > half or (queens[0] == half and n % 2 == 0)):
        return False
    return not (n % 2 and len(queens) > 1 and queens[0] == half and queens[1] >= half)


def rows_of(mask, n):
    return [r for r in range(n) if int(mask) >> r & 1]


@pytest.mark.parametrize("n,depth", [(1, 1), (4, 2), (5, 3), (6, 0), (6, 4), (8, 3), (9, 2)])
def test_expand_lists_every_partial_board(n, depth):
    masks, counts = prefixes.expand(n, depth)
    boards = partial_boards(n, depth)
    assert masks.shape == (len(boards), 3) and masks.dtype == np.uint64
    assert counts == [len(partial_boards(n, d)) for d in range(depth + 1)] and counts[0] == 1
    assert [tuple(int(x) for x in m) for m in masks] == [masks_of(n, q) for q in boards]


@pytest.mark.parametrize(
    "n,depth", [(4, 2), (5, 2), (6, 2), (7, 3), (8, 3), (9, 2), (9, 4), (10, 1)]
)
def test_expand_mirror_keeps_the_lower_half_with_a_free_row(n, depth):
    masks, queens = prefixes.expand_mirror(n, depth)
    want = [q for q in partial_boards(n, depth) if mirror_allowed(n, q) and free(n, q)]
    assert masks.dtype == np.uint32 and queens.dtype == np.uint8
    assert masks.shape == (len(want), 4) and queens.shape == (len(want), depth)
    assert [tuple(q) for q in queens.tolist()] == want
    for m, q in zip(masks, want, strict=True):
        assert tuple(int(x) for x in m[:3]) == masks_of(n, q)
        assert rows_of(m[3], n) == free(n, q)


def test_expand_mirror_covers_half_the_tree():
    for n, depth in [(6, 2), (8, 3), (9, 2), (9, 4), (10, 1)]:
        masks, queens = prefixes.expand_mirror(n, depth)
        assert queens.shape == (len(masks), depth) and masks.dtype == np.uint32
        assert queens[:, 0].max() <= n // 2  # mirror restriction
        sub = sum(
            reference.count_completions(n, int(c), int(l), int(r), depth) for c, l, r, _ in masks
        )
        assert 2 * sub == A000170[n]
    for n, depth in [(6, 2), (7, 2), (8, 3)]:  # the same against the permutation reference
        _, queens = prefixes.expand_mirror(n, depth)
        heads = {tuple(q) for q in queens.tolist()}
        assert 2 * sum(s[:depth] in heads for s in reference.all_solutions(n)) == A000170[n]


def test_expand_mirror_depth_limits():
    for n, depth in [(8, 0), (8, 7), (9, 1)]:
        with pytest.raises(ValueError, match="out of range"):
            prefixes.expand_mirror(n, depth)


@pytest.mark.parametrize("n,limit", [(4, 1), (4, 3), (6, 10), (6, 1000), (8, 60), (8, 300)])
def test_deepest_level(n, limit):
    sizes = [len(partial_boards(n, d)) for d in range(n + 1)]
    want = next((d for d in range(n) if sizes[d + 1] > limit), n)
    assert prefixes.deepest_level(n, limit) == want
