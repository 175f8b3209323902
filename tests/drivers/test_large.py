"""The large-n driver (jaxqueens.drivers.large): solve, verify, seeds, memory check, errors."""

import numpy as np
import pytest

from jaxqueens.core import checker
from jaxqueens.drivers import large as large_solve
from jaxqueens.errors import QueensError


@pytest.mark.parametrize("n", [4, 5, 10, 100, 10_000, 100_000])
def test_solves_and_verifies(n):
    res = large_solve.solve_large(n, seed=1)
    assert res.rows.shape == (n,) and checker.is_solution(res.rows)
    s = res.summary
    assert s["verified"] and s["steps"] >= s["moves"] >= 0 and s["init_s"] >= 0
    assert s["conflicted_after_init"] >= 0 and s["pairs_after_init"] >= 0


def test_same_seed_same_solution():
    a = large_solve.solve_large(20_000, seed=5)
    b = large_solve.solve_large(20_000, seed=5)
    c = large_solve.solve_large(20_000, seed=6)
    np.testing.assert_array_equal(a.rows, b.rows)
    assert not np.array_equal(a.rows, c.rows)


def test_errors():
    for n in (0, -5, 2, 3):
        with pytest.raises(QueensError, match="no solution"):
            large_solve.solve_large(n)
    with pytest.raises(QueensError, match=r"needs about .* GiB .* available"):
        large_solve.check_memory(10**9, available=8 * 2**30)
    large_solve.check_memory(10**6, available=8 * 2**30)  # fits


def test_progress_columns_in_calls(monkeypatch):
    """QS4 runs in calls of INIT_CALL_COLUMNS columns; the result does not depend on it."""
    whole = large_solve.solve_large(3000, seed=4)
    monkeypatch.setattr(large_solve, "INIT_CALL_COLUMNS", 700)
    parts = large_solve.solve_large(3000, seed=4)
    np.testing.assert_array_equal(whole.rows, parts.rows)
    assert whole.summary["steps"] == parts.summary["steps"]


def test_trivial_board():
    res = large_solve.solve_large(1)
    assert res.rows.tolist() == [0] and res.summary["verified"]


def test_defect_step_limit_and_init_are_honoured():
    res = large_solve.solve_large(3000, seed=2, init="permutation", max_steps=50, give_up=True)
    s = res.summary
    assert not s["solved"] and s["steps"] <= 50 and s["init"] == "permutation" and s["tries"] == 1
    assert s["pairs"] == checker.attacking_pairs(res.rows) > 0
    with pytest.raises(QueensError, match="no solution within"):
        large_solve.solve_large(3000, seed=2, init="permutation", max_steps=50)
    ok = large_solve.solve_large(3000, seed=2, init="permutation")
    assert ok.summary["solved"] and checker.is_solution(ok.rows)
    with pytest.raises(QueensError, match="--init greedy is not available on the large-n path"):
        large_solve.solve_large(100, init="greedy")


def test_on_an_accelerator_the_chain_runs_on_the_host_cpu(monkeypatch):
    """Issue 23: the GPU executable of the large path copies its whole state per swap attempt,
    so on an accelerator the chain runs on the host CPU device, with the same result."""
    from jaxqueens.parallel import devices as backend

    want = large_solve.solve_large(2000, seed=3).rows
    monkeypatch.setattr(backend, "is_accelerator", lambda: True)
    got = large_solve.solve_large(2000, seed=3)
    assert (got.rows == want).all() and got.summary["verified"]
