"""Solution-count statistics (:mod:`jaxqueens.drivers.stats`): coverage, chi-square, and
runs of the solvers."""

import time

import numpy as np
import pytest
import reference

from jaxqueens.core import checker, symmetry
from jaxqueens.drivers import stats as stats
from jaxqueens.drivers import stats_samples as sampling
from jaxqueens.drivers import stats_setup
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
    assert np.all(cov["expected"] <= total + 1e-9) and np.all(
        cov["expected"] <= cov["solved"] + 1e-9
    )
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
    # (the size, population and batch of test_issue28_ga_rounds_end_by_the_time_budget)
    res = stats.stats(10, "ga", chains=8, pop=20, generations=2000, seed=0)
    assert res.samples.chains == 8 and res.samples.step_unit == "generations"
    if len(res.samples.rows):
        checker.require_solutions(res.samples.rows, n=10)


def test_solution_budget_and_errors():
    res = stats.stats(8, "minconflicts", solutions=40, seed=0, batch=3000)  # n8's calls
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
    samples = res.samples
    budgets, rate = stats.success_curve(samples.steps, samples.solved, samples.chains)
    assert np.all(np.diff(rate) >= 0) and rate[-1] == pytest.approx(res.summary["success_rate"])
    np.testing.assert_array_equal(res.success[0], budgets)
    np.testing.assert_array_equal(res.success[1], rate)
    assert budgets[-1] == samples.steps[samples.solved].max()  # up to the most steps a solve took
    nothing = np.zeros(samples.chains, bool)  # nothing solved: no curve
    assert [a.size for a in stats.success_curve(samples.steps, nothing, samples.chains)] == [0, 0]


def test_defect_8_n1_has_one_solution_and_full_coverage():
    """Q(1) = 1: the coupon-collector curve is 1 after the first sample, not a math domain error."""
    res = stats.stats(1, chains=3)
    s = res.summary
    assert s["distinct_solutions"] == 1 and s["fundamental_classes"] == 1
    np.testing.assert_allclose(res.coverage["expected"], 1.0)
    assert s["expected_distinct_if_uniform"] == 1.0


def test_defect_8_coverage_expectation_unchanged_for_larger_totals():
    samples = sampling.Samples(
        8,
        "minconflicts",
        {},
        np.ones(3, bool),
        np.ones(3, np.int64),
        np.array([[0, 4, 7, 5, 2, 6, 1, 3]] * 3, np.int32),
        "steps",
        1.0,
        0.0,
        "chains",
    )
    exp = stats.analyse(samples).coverage["expected"]
    m = np.arange(1, 4)
    np.testing.assert_allclose(exp, 92 * (1 - (1 - 1 / 92) ** m), rtol=1e-12)


def test_analysis_batch_buckets_hold_the_samples_with_at_most_a_quarter_of_padding():
    assert stats.analysis_batch(1) == stats.analysis_batch(64) == stats.ANALYSIS_MIN_BATCH
    for s in range(65, 5000):
        b = stats.analysis_batch(s)
        assert s <= b <= 1.25 * s and stats.analysis_batch(b) == b
        assert b <= stats.analysis_batch(s + 1)  # buckets grow with the samples
    assert len({stats.analysis_batch(s) for s in range(65, 4097)}) == 24  # 4 per octave


@pytest.mark.parametrize("n,s", [(6, 1), (7, 63), (8, 64), (8, 65), (8, 80), (8, 81), (7, 300)])
def test_the_analysis_of_padded_batches_is_numpys(n, s):
    """Distinct solutions, classes and first occurrences of ``s`` samples (a batch padded to its
    bucket, or exactly full) against plain NumPy: sorted unique rows and canonical forms."""
    sols = np.asarray(reference.all_solutions(n), np.int32)
    rows = sols[np.random.default_rng(s).integers(0, len(sols), s)]
    samples = sampling.Samples(
        n, "minconflicts", {}, np.ones(s, bool), np.ones(s, np.int64), rows, "steps", 1.0, 0.0,
        "chains",
    )  # fmt: skip
    res = stats.analyse(samples)
    distinct, counts = np.unique(rows, axis=0, return_counts=True)
    np.testing.assert_array_equal(res.distinct, distinct)
    np.testing.assert_array_equal(res.counts, counts)
    classes, class_counts = np.unique(symmetry.canonical(rows), axis=0, return_counts=True)
    np.testing.assert_array_equal(res.classes, classes)
    np.testing.assert_array_equal(res.class_counts, class_counts)
    np.testing.assert_array_equal(res.class_sizes, 8 // symmetry.stabilizer_sizes(classes))
    np.testing.assert_array_equal(res.distinct_sizes, 8 // symmetry.stabilizer_sizes(distinct))
    seen = [len({tuple(r) for r in rows[: i + 1]}) for i in range(s)]
    np.testing.assert_array_equal(res.coverage["distinct"], seen)
    canon = symmetry.canonical(rows)
    seen_classes = [len({tuple(r) for r in canon[: i + 1]}) for i in range(s)]
    np.testing.assert_array_equal(res.coverage["fundamental"], seen_classes)


def _explicit_solution(n):
    evens, odds = list(range(2, n + 1, 2)), list(range(1, n + 1, 2))
    if n % 6 == 2:
        odds = [3, 1, *odds[3:], 5]
    return np.asarray(evens + odds, np.int32) - 1


def test_defect_17_analysis_at_n5000_takes_seconds():
    """`stats -n 5000 --chains 2` took 414 s and 6.1 GB in the analysis (a 5001-key sort and a
    [B, n, n] inverse); it now costs about as much as the solve (seconds)."""
    sol = _explicit_solution(5000)
    rows = np.stack([sol, sol[::-1], sol])
    samples = sampling.Samples(
        5000,
        "minconflicts",
        {},
        np.ones(3, bool),
        np.ones(3, np.int64),
        rows,
        "steps",
        1.0,
        0.0,
        "chains",
    )
    t0 = time.perf_counter()
    res = stats.analyse(samples)
    assert time.perf_counter() - t0 < 30
    assert res.summary["distinct_solutions"] == 2 and res.summary["fundamental_classes"] == 1
    assert res.counts.tolist() == [2, 1] or res.counts.tolist() == [1, 2]


def test_defect_10_numpy_integer_size():
    res = stats.stats(np.int64(6), chains=400, seed=1)  # test_minconflicts_n6_finds_all_4's
    assert res.summary["n"] == 6 and type(res.summary["n"]) is int


def test_defect_28_10_stats_refuses_another_solvers_options():
    with pytest.raises(QueensError, match=r"stats --solver minconflicts does not use alpha"):
        stats.stats(6, "minconflicts", chains=5, alpha=0.5)
    with pytest.raises(QueensError, match=r"--method ls does not use q"):
        stats.stats(6, "anneal", chains=5, method="ls", q=0.3)
    with pytest.raises(QueensError, match=r"^seed must be an integer"):
        stats.stats(6, "minconflicts", chains=5, seed=1.5)


def test_issue28_ga_rounds_end_by_the_time_budget(monkeypatch):
    """``stats --solver ga --time T``: each round gets the time left and stops at the chunk of
    generations that passes it (before: a round of 1024 trials ran all its generations, 10-20 s
    past ``--time 1`` at n = 16)."""
    from jaxqueens.drivers import ga

    given, real = [], ga.evolve
    monkeypatch.setattr(
        ga, "evolve", lambda *a, **k: given.append(k.get("seconds")) or real(*a, **k)
    )
    settings = stats_setup.check_stats(10, "ga", seconds=1e-6, pop=20, generations=2000, batch=8)
    samples = stats.collect(settings)
    assert given == [1e-6]  # one round: its wall passed the budget
    assert len(samples.solved) == 8 and samples.steps.max() < 2000
