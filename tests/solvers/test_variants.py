"""jaxqueens.solvers.variants: the kernels' names, limits and min-conflicts' default restart
period (JAX-free)."""

import pytest

from jaxqueens.solvers import variants


def _restart_period(n: int) -> int:
    """The measured default period, written out (scripts/bench_restarts.py)."""
    return max(1, min(n * n // 2, max(500, 2 * n)))


@pytest.mark.parametrize("n", [1, 4, 5, 8, 12, 16, 31, 32, 33, 100, 249, 250, 251, 1000, 46340])
def test_default_restart_period_is_the_measured_one(n):
    assert variants.default_max_steps(n) == _restart_period(n)
    assert variants.default_max_steps(n, plain=False) == max(4000, 2 * n)
