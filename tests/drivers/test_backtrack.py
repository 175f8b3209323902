"""First solutions by backtracking (jaxqueens.drivers.backtrack): the classic figures, the
randomised batch, errors."""

import chex
import jax
import numpy as np
import pytest

from jaxqueens.core import checker
from jaxqueens.drivers import backtrack
from jaxqueens.errors import QueensError
from jaxqueens.solvers import backtrack as kernel
from tests.solvers.test_backtrack import reference


def test_classic_figures_n8_and_n17():
    rows, p, b = backtrack.first_solution(8)
    assert rows.tolist() == [0, 4, 7, 5, 2, 6, 1, 3] and (p, b) == (113, 105)
    rows, p, b = backtrack.first_solution(17)
    assert rows.tolist() == [0, 2, 4, 1, 7, 10, 14, 6, 15, 13, 16, 3, 5, 8, 11, 9, 12]
    assert (p, b) == (5374, 5357)


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
        order = np.asarray(kernel.random_orders(jax.random.fold_in(key, i), 12))
        rows, p, b = reference(12, order)
        assert r.rows[i].tolist() == rows and (r.placements[i], r.backtracks[i]) == (p, b)


def test_random_no_solution_and_budget():
    r = backtrack.random_first_solutions(jax.random.key(0), 3, 4)
    assert not r.solved.any() and (r.placements == r.backtracks).all()
    r = backtrack.random_first_solutions(jax.random.key(0), 24, 3, max_steps=50)
    assert not r.solved.any() and ((r.placements + r.backtracks) == 50).all()
