"""The packed line layout (jaxqueens.core.lines) against the plain-Python references."""

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import reference
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxqueens.core import lines


def packed_reference(rows) -> np.ndarray:
    """rows | diagonals r + c | anti-diagonals r - c + n - 1, from tests/reference.py."""
    rc, dc, ac = reference.line_counts([int(r) for r in rows])
    return np.asarray(rc + dc + ac)


def random_boards(n, k, seed=0):
    return np.random.default_rng(seed).integers(0, n, size=(k, n)).astype(np.int32)


_counts = jax.jit(lines.counts_of, static_argnums=1)
_cost = jax.jit(lines.column_cost, static_argnums=3)


@settings(max_examples=30, deadline=None)
@given(st.integers(4, 9).flatmap(lambda n: st.lists(st.integers(0, n - 1), min_size=n, max_size=n)))
def test_counts_match_reference(rows):
    n = len(rows)
    counts = np.asarray(_counts(jnp.asarray(rows, jnp.int32), n))
    assert counts.shape == (lines.size(n),) == (5 * n - 2,)
    np.testing.assert_array_equal(counts, packed_reference(rows))
    assert int(lines.pairs_from_counts(counts)) == reference.attacking_pairs(rows)
    conflicted = np.asarray(lines.conflicted_from_counts(jnp.asarray(rows), counts, n))
    np.testing.assert_array_equal(conflicted, np.asarray(reference.queen_conflicts(rows)) > 0)


def test_hand_built_boards():
    solution = [1, 3, 0, 2]
    counts = np.asarray(lines.counts_of(jnp.asarray(solution), 4))
    assert counts.max() == 1 and int(lines.pairs_from_counts(counts)) == 0
    assert not np.asarray(lines.conflicted_from_counts(jnp.asarray(solution), counts, 4)).any()
    same_row = [2, 2, 2, 2]  # one row with 4 queens: 6 pairs, all conflicted
    counts = np.asarray(lines.counts_of(jnp.asarray(same_row), 4))
    assert counts[2] == 4 and int(lines.pairs_from_counts(counts)) == 6
    diagonal = [0, 1, 2, 3]  # the main anti-diagonal r - c = 0: index 4n - 2 + 0
    counts = np.asarray(lines.counts_of(jnp.asarray(diagonal), 4))
    assert counts[4 * 4 - 2] == 4 and int(lines.pairs_from_counts(counts)) == 6


def test_positions_index_the_three_lines():
    """Counting every queen at its three positions gives the reference's line counts."""
    for n in (4, 7, 12):
        for rows in random_boards(n, 4, seed=n):
            counts = np.zeros(lines.size(n), int)
            for c, r in enumerate(rows):
                for pos in lines.positions(n, c, int(r)):
                    counts[pos] += 1
            np.testing.assert_array_equal(counts, packed_reference(rows))


@pytest.mark.parametrize("n", [5, 16])
def test_column_cost_matches_reference(n):
    for rows in random_boards(n, 5, seed=n):
        counts = _counts(jnp.asarray(rows), n)
        for c in range(n):
            cost = np.asarray(_cost(counts, c, int(rows[c]), n))
            want = []
            for r in range(n):
                moved = rows.copy()
                moved[c] = r
                want.append(reference.queen_conflicts(moved)[c])
            np.testing.assert_array_equal(cost, want)
        # r0 = -1: no queen lifted (the greedy start): every queen of the board counts
        raw = np.asarray(_cost(counts, 0, -1, n))
        np.testing.assert_array_equal(
            raw, [np.asarray(counts)[list(lines.positions(n, 0, r))].sum() for r in range(n)]
        )


class LinesVariantsTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_counts_and_cost(self):
        n = 9
        rows = jnp.asarray(random_boards(n, 1, seed=3)[0])
        counts = self.variant(lambda b: lines.counts_of(b, n))(rows)
        chex.assert_shape(counts, (5 * n - 2,))
        np.testing.assert_array_equal(counts, packed_reference(np.asarray(rows)))
        cost = self.variant(lambda k, c, r0: lines.column_cost(k, c, r0, n))(
            counts, jnp.int32(4), rows[4]
        )
        chex.assert_shape(cost, (n,))
        mask = self.variant(lambda b, k: lines.conflicted_from_counts(b, k, n))(rows, counts)
        chex.assert_shape(mask, (n,))


def test_counts_trace_once():
    chex.clear_trace_counter()
    counts = jax.jit(chex.assert_max_traces(lambda b: lines.counts_of(b, 10), n=1))
    for rows in random_boards(10, 3):
        counts(jnp.asarray(rows))


# The counts are compiled once per n and depend on n only through the shape: the smallest n,
# odd and even sizes, one past a power of two and the largest drawn before, so hypothesis spends
# its examples on the rows.
@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from([4, 5, 8, 13, 17, 32, 40]).flatmap(
        lambda n: st.lists(st.integers(0, n - 1), min_size=n, max_size=n)
    )
)
def test_scatter_counts_equal_the_loop(rows):
    """The lockstep lanes' formulation (one scatter-add) gives the loop's counts, on the plain
    board and on the torus (issue 23: a GPU runs the loop as n host-driven iterations)."""
    n, board = len(rows), jnp.asarray(rows, jnp.int32)
    scatter, loop, torus_scatter, torus_loop = _counts_both_ways(board, n)
    np.testing.assert_array_equal(scatter, loop)
    np.testing.assert_array_equal(torus_scatter, torus_loop)


@functools.partial(jax.jit, static_argnums=1)
def _counts_both_ways(board, n):
    """The four counts of test_scatter_counts_equal_the_loop, compiled once per n (called op by
    op, each call compiled the loop anew and the scatter's operations one by one)."""
    from jaxqueens.solvers import constrained

    return (
        lines.counts_of(board, n, True),
        lines.counts_of(board, n),
        constrained.counts_of(board, n, True, True),
        constrained.counts_of(board, n, True),
    )
