"""Solution-count statistics: chi-square machinery, coverage, and runs of the solvers."""

import argparse
import json
import math

import numpy as np
import pytest

import jaxqueens  # noqa: F401
from jaxqueens.core import checker
from jaxqueens.drivers import stats as stats
from jaxqueens.errors import QueensError


@pytest.mark.parametrize("a,x", [(0.5, 0.1), (1.0, 2.0), (2.5, 2.5), (5.0, 20.0), (45.5, 40.0),
                                 (45.5, 60.0), (1e4, 1.01e4), (1.8e5, 1.79e5), (3.0, 1e-8)])
def test_gamma_q_against_scipy(a, x):
    special = pytest.importorskip("scipy.special")
    assert stats.gamma_q(a, x) == pytest.approx(float(special.gammaincc(a, x)), rel=1e-9, abs=1e-14)


def test_chi2_sf_closed_forms_and_table_values():
    for x in (0.0, 0.5, 3.0, 17.0):  # 2 dof: exp(-x / 2)
        assert stats.chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)
    for k in (1, 3, 6):  # even dof 2k: Poisson tail
        x = 7.3
        want = math.exp(-x / 2) * sum((x / 2) ** j / math.factorial(j) for j in range(k))
        assert stats.chi2_sf(x, 2 * k) == pytest.approx(want, rel=1e-12)
    assert stats.chi2_sf(18.307, 10) == pytest.approx(0.05, abs=1e-4)  # textbook critical values
    assert stats.chi2_sf(6.635, 1) == pytest.approx(0.01, abs=1e-4)
    assert stats.chi2_sf(124.342, 100) == pytest.approx(0.05, abs=1e-4)
    assert stats.chi2_sf(1e4, 10) == 0.0


def test_uniformity_test_counts_unseen_cells():
    observed = np.array([5, 0, 3, 0, 12])
    expected = np.full(5, 4.0)
    full = stats.uniformity_test(observed, expected)
    seen = observed > 0
    short = stats.uniformity_test(observed[seen], expected[seen], unseen_expected=8.0, cells=5)
    assert short["statistic"] == pytest.approx(full["statistic"])
    assert short["dof"] == full["dof"] == 4 and short["p_value"] == pytest.approx(full["p_value"])


def test_uniform_samples_pass_and_biased_samples_fail():
    rng = np.random.default_rng(0)
    q, s = 92, 50_000
    uni = np.bincount(rng.integers(0, q, s), minlength=q)
    assert stats.uniformity_test(uni, np.full(q, s / q))["p_value"] > 0.01
    p = rng.dirichlet(np.full(q, 20.0))
    biased = np.bincount(rng.choice(q, s, p=p), minlength=q)
    assert stats.uniformity_test(biased, np.full(q, s / q))["p_value"] < 1e-6


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
    pytest.importorskip("jaxqueens.solvers.ga")
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


def test_stats_command_writes_tables_and_plots(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    stats.add_command(parser.add_subparsers())
    args = parser.parse_args(["stats", "-n", "6", "--chains", "300", "--quiet", "--out", str(tmp_path)])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "4 of 4 distinct solutions, 1 of 1 fundamental classes" in out and "p = " in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["distinct_solutions"] == 4 and summary["chains"] == 300
    freq = (tmp_path / "frequencies.csv").read_text().splitlines()
    assert freq[0] == "solution,count,canonical,class_size" and len(freq) == 5
    assert sum(int(line.split(",")[1]) for line in freq[1:]) == 300
    for name in ("classes.csv", "coverage.csv", "steps.csv", "success.csv", "coverage.png",
                 "frequency_hist.png", "steps_hist.png", "steps_ecdf.png", "success_rate.png"):
        assert (tmp_path / name).stat().st_size > 0, name
