"""``jaxqueens.drivers.compare``: same chains and budget per solver, censoring, ECDFs, the
recommendation and its bootstrap CI, against plain references."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxqueens.core import checker
from jaxqueens.drivers import compare as cmp
from jaxqueens.errors import QueensError


def fake(name, solved, steps, seconds):
    solved = np.asarray(solved, bool)
    return cmp.SolverRun(
        name,
        "minconflicts",
        {},
        solved,
        np.asarray(steps, np.int64),
        np.asarray(seconds, np.float64),
        float(np.sum(seconds)),
        0.0,
        stats=None,
    )


def test_parse_solvers():
    assert cmp.parse_solvers("all") == list(cmp.SOLVERS)
    assert cmp.parse_solvers("ta, mc-qs4,ta") == ["ta", "mc-qs4"]
    assert cmp.parse_solvers(["ls", "ga-permutation"]) == ["ls", "ga-permutation"]
    for bad in ("tabu", "", "ta,nope"):
        with pytest.raises(QueensError, match="unknown; use a comma list"):
            cmp.parse_solvers(bad)


def test_censor_cuts_at_the_budget():
    solved, steps, seconds = cmp._censor(
        np.array([5, 10, 40, 30]),
        np.array([True, True, True, False]),
        np.array([1.0, 2.0, 4.0, 3.0]),
        budget=10,
    )
    assert solved.tolist() == [True, True, False, False]
    assert steps.tolist() == [5, 10, 10, 10]
    assert np.allclose(seconds, [1.0, 2.0, 1.0, 1.0])  # seconds cut in proportion to the steps kept


def test_ecdf_and_success_curve_match_a_plain_count():
    rng = np.random.default_rng(1)
    steps = rng.integers(1, 500, 300)
    solved = rng.random(300) < 0.7
    run = fake("a", solved, steps, steps * 1e-6)
    x, f = cmp.ecdf(steps[solved], points=10_000)
    for xi, fi in zip(x, f):
        assert fi == pytest.approx(np.mean(steps[solved] <= xi))
    assert f[-1] == 1.0 and np.all(np.diff(x) >= 0)
    assert len(cmp.ecdf(steps, points=50)[0]) <= 50
    budgets, rate = cmp.success_curve(run, 500)
    assert budgets[0] == 0 and budgets[-1] == 500 and np.all(np.diff(budgets) > 0)
    for b, r in zip(budgets, rate):
        assert r == pytest.approx(np.sum(solved & (steps <= b)) / 300)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.integers(0, 300)), min_size=1, max_size=60),
    st.integers(1, 300),
    st.integers(1, 20),
)
def test_censor_ecdf_and_success_agree_with_plain_counts(chains, budget, points):
    """Censoring, ECDF and success curve against a plain per-value count (ties included)."""
    solved = np.array([c[0] for c in chains])
    steps = np.array([c[1] for c in chains])
    ok, spent, seconds = cmp._censor(steps, solved, steps * 1e-3, budget)
    assert ok.tolist() == [bool(a and b <= budget) for a, b in zip(solved, steps)]
    assert spent.tolist() == [min(b, budget) for b in steps]
    assert np.allclose(seconds, spent * 1e-3)
    x, f = cmp.ecdf(spent[ok], points)
    assert len(x) <= points and np.all(np.diff(x) > 0)
    for xi, fi in zip(x, f):
        assert fi == pytest.approx(np.mean(spent[ok] <= xi))
    if ok.any():
        assert x[-1] == spent[ok].max() and f[-1] == 1.0
    budgets, rate = cmp.success_curve(fake("p", ok, spent, seconds), budget)
    for b, r in zip(budgets, rate):
        assert r == pytest.approx(np.sum(ok & (spent <= b)) / len(chains))


def test_ert_and_recommendation_name_the_faster_solver():
    rng = np.random.default_rng(0)
    k = 400
    fast = fake("fast", np.ones(k, bool), np.ones(k), rng.exponential(1e-3, k))
    slow = fake("slow", rng.random(k) < 0.5, np.ones(k), rng.exponential(1e-3, k) * 3)
    assert fast.ert_s == pytest.approx(fast.seconds.sum() / k)
    assert slow.ert_s == pytest.approx(slow.seconds.sum() / slow.solved.sum())
    rec = cmp.recommend([slow, fast], n=8, steps=100, seed=0)
    assert rec["solver"] == "fast" and rec["runner_up"] == "slow"
    assert rec["margin"] == pytest.approx(slow.ert_s / fast.ert_s)
    lo, hi = rec["ci"]
    assert 1 < lo < rec["margin"] < hi and rec["significant"]
    assert "fast" in rec["line"] and "bootstrap CI" in rec["line"]
    assert cmp.ert_ratio_ci(fast, slow, seed=3) == cmp.ert_ratio_ci(
        fast, slow, seed=3
    )  # reproducible


def test_recommendation_of_equal_solvers_is_not_significant():
    rng = np.random.default_rng(5)
    secs = rng.exponential(1e-3, 600)
    a = fake("a", np.ones(300, bool), np.ones(300), secs[:300])
    b = fake("b", np.ones(300, bool), np.ones(300), secs[300:])
    rec = cmp.recommend([a, b], n=8, steps=100, seed=0)
    assert rec["ci"][0] < 1 < rec["ci"][1] and not rec["significant"]
    assert "not a clear difference" in rec["line"]


def test_recommendation_when_nothing_solved():
    none = fake("x", np.zeros(5, bool), np.full(5, 10), np.ones(5))
    rec = cmp.recommend([none], n=8, steps=10, seed=0)
    assert rec["solver"] is None and "raise --steps" in rec["line"]


def test_compare_runs_every_solver_on_the_same_chains_and_budget():
    """A real run: min-conflicts, TA and the permutation GA on n = 6 (4 solutions, 1 class)."""
    res = cmp.compare(6, 12, solvers="mc-qs4,ta,ga-permutation", steps=200, seed=1)
    assert [r.name for r in res.runs] == ["mc-qs4", "ta", "ga-permutation"]
    for r in res.runs:
        assert r.solved.shape == r.steps.shape == r.seconds.shape == (12,)
        assert np.all(r.steps <= 200) and np.all(r.seconds >= 0)
        rows = r.stats.samples.rows
        assert len(rows) == r.stats.samples.solved.sum() and checker.are_solutions(rows).all()
        assert r.stats.summary["exact_solutions"] == 4
        assert r.stats.summary["distinct_solutions"] <= 4
        assert set(res.curves[r.name]) == {"steps_ecdf", "seconds_ecdf", "success"}
    mc = res.runs[0]
    # solve's default period at n = 6 (18 steps: 6^2 / 2), restarted within the budget of 200
    assert mc.options["max_steps"] == 18 and mc.options["max_restarts"] == -(-200 // 18) - 1
    assert mc.solved.mean() > 0.5  # n = 6 traps some attempts in a local minimum
    ga_opts = res.runs[2].options  # the GA's measured defaults
    assert ga_opts["preset"] == "default" and ga_opts["pop"] == 10 and ga_opts["tournament"] == 4
    assert ga_opts["generations"] == (200 - 10) // 2
    assert res.runs[1].options["preset"] == "default" and res.runs[1].options["neighbour"] == "swap"
    s = res.summary
    assert s["n"] == 6 and s["chains"] == 12 and s["step_budget"] == 200
    assert (
        "measured-best defaults" in s["defaults_note"] and "tune-ga-cpu.json" in s["defaults_note"]
    )
    assert [p["solver"] for p in s["per_solver"]] == ["mc-qs4", "ta", "ga-permutation"]
    assert s["per_solver"][0]["success_rate"] == mc.solved.mean()
    assert s["per_solver"][0]["chi2_solutions"]["dof"] == 3  # the bias test over all 4 solutions
    assert res.recommendation["solver"] in {"mc-qs4", "ta", "ga-permutation"}


def test_compare_refuses_bad_settings():
    for kwargs, needle in (
        ({"n": 3}, "n >= 4"),
        ({"chains": 0}, "--chains"),
        ({"steps": 0}, "--steps"),
    ):
        args = {"n": 8, "chains": 2, "steps": 10, **kwargs}
        with pytest.raises(QueensError, match=needle):
            cmp.compare(args.pop("n"), args.pop("chains"), solvers="mc-qs4", **args)
    with pytest.raises(QueensError, match="initial population of 10 and one generation take 12"):
        cmp.compare(8, 2, solvers="ga-permutation", steps=11)  # population 10: 12 needed
