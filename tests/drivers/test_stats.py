"""Solution-count statistics (:mod:`jaxqueens.drivers.stats`): coverage, chi-square, and runs of
the solvers."""

import numpy as np
import pytest

import jaxqueens  # noqa: F401
from jaxqueens.core import checker
from jaxqueens.drivers import stats as stats
from jaxqueens.errors import QueensError


def _check_result(res, n, total, classes):
    s = res.summary
    assert s["distinct_solutions"] == total and s["fundamental_classes"] == classes
    assert s["exact_solutions"] == total and s["solutions_coverage"] == 1.0
    checker.require_solutions(res.distinct, n=n)
    assert res.counts.sum() == len(res.samples.rows) == s["solved"]
    assert res.all_counts.sum() == s["solved"] and len(res.all_counts) == total
    assert res.class_sizes.sum() == total and set(res.class_sizes.tolist()) <= {1, 2, 4, 8}
    cov = res.coverage
    assert np.all(np.diff(cov["distinct"]) >= 0) and cov["distinct"][-1] == total
    assert cov["fundamental"][-1] == classes and np.all(cov["fundamental"] <= cov["distinct"])
    assert np.all(cov["expected"] <= total + 1e-9) and np.all(cov["expected"] <= cov["solved"] + 1e-9)
    assert 0 <= s["chi2_solutions"]["p_value"] <= 1 and s["chi2_solutions"]["dof"] == total - 1
    assert s["chi2_classes"]["dof"] == classes - 1


def test_minconflicts_n6_finds_all_4():
    res = stats.stats(6, "minconflicts", chains=400, seed=1)
    _check_result(res, 6, 4, 1)
    assert res.summary["chi2_solutions"]["valid"]


def test_minconflicts_n8_finds_all_92_in_12_classes():
    res = stats.stats(8, "minconflicts", chains=3000, seed=0)
    _check_result(res, 8, 92, 12)
    assert sorted(res.class_sizes.tolist()) == [4] + [8] * 11


def test_anneal_samples_are_verified_and_budget_by_chains():
    res = stats.stats(6, "anneal", chains=64, method="sa", steps=3000, seed=2)
    assert res.samples.chains == 64 and res.summary["solved"] >= 32
    assert res.summary["distinct_solutions"] == 4


def test_ga_if_available():
    pytest.importorskip("jaxqueens.drivers.ga")
    res = stats.stats(6, "ga", chains=8, pop=20, generations=200, seed=0)
    assert res.samples.chains == 8 and res.samples.step_unit == "generations"
    if len(res.samples.rows):
        checker.require_solutions(res.samples.rows, n=6)


def test_solution_budget_and_errors():
    res = stats.stats(8, "minconflicts", solutions=40, seed=0)
    assert res.summary["distinct_solutions"] == 40 and res.summary["stopped_by"] == "solutions"
    with pytest.raises(QueensError):
        stats.stats(6, "minconflicts", solutions=5)
    with pytest.raises(QueensError):
        stats.stats(6, "nope", chains=10)
    with pytest.raises(QueensError):
        stats.stats(6, "minconflicts", chains=10, pop=4)


def test_success_curve_and_unknown_total():
    res = stats.stats(30, "minconflicts", chains=64, seed=0)
    assert res.summary["exact_solutions"] is None and res.chi2 is None
    assert res.coverage["expected"] is None and res.summary["distinct_solutions"] == 64
    budgets, rate = stats.success_curve(res.samples)
    assert np.all(np.diff(rate) >= 0) and rate[-1] == pytest.approx(res.summary["success_rate"])
    np.testing.assert_array_equal(res.success[0], budgets)
    np.testing.assert_array_equal(res.success[1], rate)
