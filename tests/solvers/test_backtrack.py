"""First-solution backtracking: the classic figures, a plain-Python reference, the random variant."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxqueens  # noqa: F401
from jaxqueens.solvers import backtrack
from jaxqueens.core import checker
from jaxqueens.errors import QueensError


def reference(n, order=None):
    """The classic course solver, iterative, in plain Python: (rows or None, placements, backtracks).

    ``order[c]`` lists the rows of column c in the order they are tried (default increasing).
    """
    order = [list(range(n))] * n if order is None else [list(map(int, o)) for o in order]
    pos, col, start, placements, backtracks = [0] * n, 0, 0, 0, 0
    safe = lambda c, r: all(  # noqa: E731
        order[j][pos[j]] != r and abs(order[j][pos[j]] - r) != c - j for j in range(c))
    while col < n:
        t = next((t for t in range(start, n) if safe(col, order[col][t])), None)
        if t is not None:
            pos[col], placements, col, start = t, placements + 1, col + 1, 0
        elif col == 0:
            return None, placements, backtracks
        else:
            col, backtracks = col - 1, backtracks + 1
            start = pos[col] + 1
    return [order[c][pos[c]] for c in range(n)], placements, backtracks


def test_classic_figures_n8_and_n17():
    rows, p, b = backtrack.first_solution(8)
    assert rows.tolist() == [0, 4, 7, 5, 2, 6, 1, 3] and (p, b) == (113, 105)
    rows, p, b = backtrack.first_solution(17)
    assert rows.tolist() == [0, 2, 4, 1, 7, 10, 14, 6, 15, 13, 16, 3, 5, 8, 11, 9, 12]
    assert (p, b) == (5374, 5357)


def test_reference_reproduces_the_classic_figures():
    assert reference(8) == ([0, 4, 7, 5, 2, 6, 1, 3], 113, 105)
    assert reference(17)[1:] == (5374, 5357)


@pytest.mark.parametrize("n", range(1, 14))
def test_matches_reference(n):
    rows, p, b = backtrack.first_solution(n)
    want_rows, want_p, want_b = reference(n)
    assert (p, b) == (want_p, want_b)
    assert p - b == (n if want_rows is not None else 0)
    if want_rows is None:
        assert rows is None
    else:
        assert rows.tolist() == want_rows and checker.is_solution(rows)


def test_no_solution_boards_return_none():
    assert backtrack.first_solution(2) == (None, 2, 2)
    assert backtrack.first_solution(3) == (None, 5, 5)


@pytest.mark.parametrize("n", [0, 33, -1])
def test_bad_n_is_a_user_error(n):
    with pytest.raises(QueensError, match="out of range"):
        backtrack.first_solution(n)


def test_step_budget_is_reported():
    with pytest.raises(QueensError, match="max_steps"):
        backtrack.first_solution(17, max_steps=100)


class SearchKernelTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_search_with_random_orders_matches_reference(self):
        for seed, n in [(0, 6), (1, 8), (2, 9)]:
            cfg = backtrack.Config(n)
            order = backtrack.random_orders(jax.random.key(seed), n)
            s = self.variant(lambda o: backtrack.search(o, cfg))(order)
            rows, p, b = reference(n, np.asarray(order))
            assert (int(s.placements), int(s.backtracks)) == (p, b)
            assert int(s.status) == backtrack.SOLVED
            got = np.asarray(order)[np.arange(n), np.asarray(s.pos)]
            assert got.tolist() == rows
            chex.assert_shape(s.masks, (n + 1, 3))


def test_random_orders_are_permutations():
    o = np.asarray(backtrack.random_orders(jax.random.key(3), 12))
    assert (np.sort(o, axis=1) == np.arange(12)).all()
    assert len({tuple(r) for r in o}) > 1  # columns get different orders


def test_random_batch_properties():
    key = jax.random.key(0)
    r = backtrack.random_first_solutions(key, 12, 37)
    chex.assert_shape([r.placements, r.backtracks, r.solved], (37,))
    chex.assert_shape(r.rows, (37, 12))
    assert r.solved.all() and checker.are_solutions(r.rows).all()
    assert ((r.placements - r.backtracks) == 12).all()
    # same key: identical; a smaller batch is a prefix (independent of batch size)
    r2 = backtrack.random_first_solutions(key, 12, 5)
    assert (r2.rows == r.rows[:5]).all() and (r2.placements == r.placements[:5]).all()
    # different key: different searches
    r3 = backtrack.random_first_solutions(jax.random.key(1), 12, 37)
    assert not (r3.placements == r.placements).all()
    # each search equals the reference run with its own row orders
    for i in (0, 7, 36):
        order = np.asarray(backtrack.random_orders(jax.random.fold_in(key, i), 12))
        rows, p, b = reference(12, order)
        assert r.rows[i].tolist() == rows and (r.placements[i], r.backtracks[i]) == (p, b)


def test_random_no_solution_and_budget():
    r = backtrack.random_first_solutions(jax.random.key(0), 3, 4)
    assert not r.solved.any() and (r.placements == r.backtracks).all()
    r = backtrack.random_first_solutions(jax.random.key(0), 24, 3, max_steps=50)
    assert not r.solved.any() and ((r.placements + r.backtracks) == 50).all()


def test_search_kernel_with_classic_order():
    cfg = backtrack.Config(8)
    order = jnp.broadcast_to(jnp.arange(8, dtype=jnp.int32), (8, 8))
    s = jax.jit(lambda o: backtrack.search(o, cfg))(order)
    assert (int(s.placements), int(s.backtracks)) == (113, 105)
