"""``jaxqueens.drivers.compare``: same chains and budget per solver, censoring, ECDFs, the
recommendation and its bootstrap CI, against plain references."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxqueens.core import checker
from jaxqueens.drivers import compare as cmp
from jaxqueens.drivers import compare_ert as ert
from jaxqueens.drivers import compare_setup as S
from jaxqueens.drivers import compare_solvers as runners
from jaxqueens.errors import QueensError
from jaxqueens.io import tables


def fake(name, solved, steps, seconds, repeats=()):
    solved = np.asarray(solved, bool)
    return ert.SolverRun(
        name,
        "minconflicts",
        {},
        solved,
        np.asarray(steps, np.int64),
        np.asarray(seconds, np.float64),
        float(np.sum(seconds)),
        0.0,
        stats=None,
        repeat_ert_s=tuple(repeats),
    )


def test_parse_solvers():
    assert S.parse_solvers("all") == list(S.COMPARE_SOLVERS)
    assert S.parse_solvers("ta, mc-qs4,ta") == ["ta", "mc-qs4"]
    assert S.parse_solvers(["ls", "ga-permutation"]) == ["ls", "ga-permutation"]
    for bad in ("tabu", "", "ta,nope"):
        with pytest.raises(QueensError, match="unknown; use a comma list"):
            S.parse_solvers(bad)


def test_censor_cuts_at_the_budget():
    solved, steps, seconds = runners._censor(
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
    for xi, fi in zip(x, f, strict=True):
        assert fi == pytest.approx(np.mean(steps[solved] <= xi))
    assert f[-1] == 1.0 and np.all(np.diff(x) >= 0)
    assert len(cmp.ecdf(steps, points=50)[0]) <= 50
    budgets, rate = cmp.curves(run, 500)["success"]
    assert budgets[0] == 0 and budgets[-1] == 500 and np.all(np.diff(budgets) > 0)
    for b, r in zip(budgets, rate, strict=True):
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
    ok, spent, seconds = runners._censor(steps, solved, steps * 1e-3, budget)
    assert ok.tolist() == [bool(a and b <= budget) for a, b in zip(solved, steps, strict=True)]
    assert spent.tolist() == [min(b, budget) for b in steps]
    assert np.allclose(seconds, spent * 1e-3)
    x, f = cmp.ecdf(spent[ok], points)
    assert len(x) <= points and np.all(np.diff(x) > 0)
    for xi, fi in zip(x, f, strict=True):
        assert fi == pytest.approx(np.mean(spent[ok] <= xi))
    if ok.any():
        assert x[-1] == spent[ok].max() and f[-1] == 1.0
    budgets, rate = cmp.curves(fake("p", ok, spent, seconds), budget)["success"]
    for b, r in zip(budgets, rate, strict=True):
        assert r == pytest.approx(np.sum(ok & (spent <= b)) / len(chains))


def test_ert_and_recommendation_name_the_faster_solver():
    rng = np.random.default_rng(0)
    k = 400
    fast = fake("fast", np.ones(k, bool), np.ones(k), rng.exponential(1e-3, k))
    slow = fake("slow", rng.random(k) < 0.5, np.ones(k), rng.exponential(1e-3, k) * 3)
    assert fast.ert_s == pytest.approx(fast.seconds.sum() / k)
    assert slow.ert_s == pytest.approx(slow.seconds.sum() / slow.solved.sum())
    rec = ert.recommend([slow, fast], n=8, steps=100, seed=0)
    assert rec["solver"] == "fast" and rec["runner_up"] == "slow"
    assert rec["margin"] == pytest.approx(slow.ert_s / fast.ert_s)
    lo, hi = rec["ci"]
    assert 1 < lo < rec["margin"] < hi and rec["significant"]
    assert "fast" in rec["line"] and "bootstrap CI" in rec["line"]
    assert ert.ert_ratio_ci(fast, slow, seed=3) == ert.ert_ratio_ci(
        fast, slow, seed=3
    )  # reproducible


def test_recommendation_of_equal_solvers_is_not_significant():
    rng = np.random.default_rng(5)
    secs = rng.exponential(1e-3, 600)
    a = fake("a", np.ones(300, bool), rng.integers(1, 99, 300), secs[:300])
    b = fake("b", np.ones(300, bool), rng.integers(1, 99, 300), secs[300:])
    rec = ert.recommend([a, b], n=8, steps=100, seed=0)
    assert rec["ci"][0] < 1 < rec["ci"][1] and not rec["significant"]
    assert "not a clear difference" in rec["line"]


def test_defect_identical_runs_ranked_as_two_solvers_on_timing_noise():
    """TA with zero thresholds is LS: the same chains, only the seconds differ. Ranking them
    ("31.71x faster than ta") was timing noise; they are not ranked apart, and a third solver
    is ranked against the faster of the two."""
    rng = np.random.default_rng(2)
    solved, steps = rng.random(200) < 0.9, rng.integers(1, 500, 200)
    ls = fake("ls", solved, steps, steps * 1e-6)
    ta = fake("ta", solved, steps, steps * 3e-5)
    rec = ert.recommend([ta, ls], n=8, steps=500, seed=0)
    assert rec["same_runs"] == {"ta": "ls"} and rec["margin"] is None and not rec["significant"]
    assert "not ranked" in rec["line"] and "faster than" not in rec["line"]
    sa = fake("sa", solved, steps + 1, (steps + 1) * 1e-4)
    rec = ert.recommend([ta, ls, sa], n=8, steps=500, seed=0)
    assert (rec["solver"], rec["runner_up"], rec["same_runs"]) == ("ls", "sa", {"ta": "ls"})
    assert "ta ran the same chains as ls" in rec["line"]


def test_defect_bootstrap_called_significant_what_the_repeats_do_not_confirm():
    """The bootstrap covers chain-to-chain variation only: with overlapping ERTs over the timed
    repeats the difference is not significant, whatever the bootstrap says; with disjoint ones
    it is."""
    rng = np.random.default_rng(0)
    k = 400
    fast = lambda reps: fake(
        "fast", np.ones(k, bool), rng.integers(1, 9, k), np.full(k, 1e-3), reps
    )
    slow = lambda reps: fake(
        "slow", np.ones(k, bool), rng.integers(1, 9, k), np.full(k, 2e-3), reps
    )
    rec = ert.recommend([fast((0.5e-3, 2.5e-3)), slow((1.5e-3, 2.5e-3))], n=8, steps=9, seed=0)
    assert rec["ci"][0] > 1 and rec["significant_by"] == {"bootstrap": True, "repeats": False}
    assert not rec["significant"] and "not a clear difference" in rec["line"]
    assert rec["repeat_spread"] == {"fast": [0.5e-3, 2.5e-3], "slow": [1.5e-3, 2.5e-3]}
    rec = ert.recommend([fast((0.9e-3, 1.1e-3)), slow((1.9e-3, 2.1e-3))], n=8, steps=9, seed=0)
    assert rec["significant"] and "repeats do not overlap" in rec["line"]


def test_defect_ga_announced_without_saying_it_runs_every_generation():
    """compare's GA runs every generation of every trial while its ERT counts each trial up to
    its first solution: the announcement says so (it said only "[5/5] ga-permutation")."""
    line = cmp._workload("ga-permutation", 100, {"steps": 210}, 1)
    assert "100 trials, each runs all 100 generations" in line and "first solution" in line


def test_recommendation_when_nothing_solved():
    none = fake("x", np.zeros(5, bool), np.full(5, 10), np.ones(5))
    rec = ert.recommend([none], n=8, steps=10, seed=0)
    assert rec["solver"] is None and "raise --steps" in rec["line"]


@pytest.fixture(scope="module")
def real_run():
    """A real run: min-conflicts, TA and the permutation GA on n = 6 (4 solutions, 1 class)."""
    return cmp.compare(6, 12, solvers="mc-qs4,ta,ga-permutation", steps=200, seed=1, repeats=2)


def test_compare_runs_every_solver_on_the_same_chains_and_budget(real_run):
    res = real_run
    assert [r.name for r in res.runs] == ["mc-qs4", "ta", "ga-permutation"]
    for r in res.runs:
        assert r.solved.shape == r.steps.shape == r.seconds.shape == (12,)
        assert np.all(r.steps <= 200) and np.all(r.seconds >= 0)
        rows = r.stats.samples.rows
        assert len(rows) == r.stats.samples.solved.sum() and checker.are_solutions(rows).all()
        assert r.stats.summary["exact_solutions"] == 4
        assert r.stats.summary["distinct_solutions"] <= 4
        assert set(res.curves[r.name]) == {
            "rtd_steps",
            "rtd_seconds",
            "steps_ecdf",
            "seconds_ecdf",
            "success",
        }
    mc = res.runs[0]
    # solve's default period at n = 6 (18 steps: 6^2 / 2), restarted within the budget of 200
    assert mc.options["max_steps"] == 18 and mc.options["max_restarts"] == -(-200 // 18) - 1
    assert mc.solved.mean() > 0.5  # n = 6 traps some attempts in a local minimum
    ga_opts = res.runs[2].options  # the GA's measured defaults
    assert ga_opts["preset"] == "default" and ga_opts["pop"] == 10 and ga_opts["tournament"] == 4
    assert ga_opts["generations"] == (200 - 10) // 2
    assert res.runs[1].options["preset"] == "default" and res.runs[1].options["neighbour"] == "swap"
    s = res.summary
    assert s["n"] == 6 and s["chains"] == 12 and s["steps_budget"] == 200
    assert (
        "measured-best defaults" in s["defaults_note"] and "tune-ga-cpu.json" in s["defaults_note"]
    )
    # no setting given: the note does not claim one replaced the defaults
    assert "settings given" not in s["defaults_note"] and s["settings_given"] == {}
    assert [p["solver"] for p in s["per_solver"]] == ["mc-qs4", "ta", "ga-permutation"]
    assert s["per_solver"][0]["success_rate"] == mc.solved.mean()
    assert s["per_solver"][0]["chi2_solutions"]["dof"] == 3  # the bias test over all 4 solutions
    assert res.recommendation["solver"] in {"mc-qs4", "ta", "ga-permutation"}


def test_defect_compare_timed_once_and_left_its_schedules_out_of_the_summary(real_run):
    """Two timed repeats of the same chains: each solver's ERT per repeat and their spread, the
    seconds the mean of the repeats; TA's calibrated thresholds are in summary.json."""
    s = real_run.summary
    assert s["repeats"] == 2 and "no compilation" in s["seconds_note"]
    solving = [(r, p) for r, p in zip(real_run.runs, s["per_solver"], strict=True) if p["solved"]]
    assert len(solving) >= 2
    for run, p in solving:
        assert len(run.repeat_ert_s) == 2 and p["ert_s_spread"] == sorted(p["ert_s_repeats"])
        assert p["ert_s"] == pytest.approx(np.mean(p["ert_s_repeats"]))
    ta = s["per_solver"][1]["options"]
    assert len(ta["schedule"]) == ta["rounds"] and all(x >= 0 for x in ta["schedule"])
    assert real_run.recommendation["significant_by"]["repeats"] is not None


def test_compare_runs_csv_fills_restarts_and_best_attacking_pairs(real_run, tmp_path):
    """runs.csv as solve, stats and evolve write it: min-conflicts' restarts (empty for the
    solvers that never restart) and 0 attacking pairs for every solved run."""
    import csv

    from jaxqueens.io import compare as io_compare

    io_compare.write_outputs(real_run, tmp_path)
    with open(tmp_path / "runs.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    for r in real_run.runs:
        mine = [row for row in rows if row["solver"] == r.name]
        assert [row["solved"] == "1" for row in mine] == r.solved.tolist()
        restarts = [row["restarts"] for row in mine]
        if r.family == "minconflicts":
            assert restarts == [str(k) for k in r.restarts] and max(r.restarts) > 0
        else:
            assert set(restarts) == {""}
        pairs = [row["best_attacking_pairs"] for row in mine]
        assert all(p == "0" for p, ok in zip(pairs, r.solved, strict=True) if ok)
        assert all(p == "" or int(p) > 0 for p, ok in zip(pairs, r.solved, strict=True) if not ok)
    ga = [row for row in rows if row["solver"] == "ga-permutation" and row["solved"] == "0"]
    assert all(row["best_attacking_pairs"] != "" for row in ga)  # its last generation's best


def test_compare_refuses_bad_settings():
    for kwargs, needle in (
        ({"n": 3}, "n >= 4"),
        ({"chains": 0}, "^chains must be at least 1"),  # the library names parameters
        ({"steps": 0}, "^steps must be at least 1"),
    ):
        args = {"n": 8, "chains": 2, "steps": 10, **kwargs}
        with pytest.raises(QueensError, match=needle):
            cmp.compare(args.pop("n"), args.pop("chains"), solvers="mc-qs4", **args)
    with pytest.raises(QueensError, match="initial population of 10 and one generation take 12"):
        cmp.compare(8, 2, solvers="ga-permutation", steps=11)  # population 10: 12 needed


def strict_loads(text):
    """``json.loads`` that refuses Infinity, -Infinity and NaN (as JSON.parse does)."""

    def refuse(name):
        raise ValueError(f"not strict JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def test_unconditional_rtd_against_a_hand_computed_reference():
    """Five runs, budget 10: solved at 3, 0 and 7 steps, two unsolved (censored at 10). The RTD
    is the fraction of ALL five runs solved by t: 0.2 at 0, 0.4 at 3, 0.6 from 7 on, flat to the
    budget (never 1, as the conditional ECDF would be)."""
    run = fake("a", [True, True, False, True, False], [3, 0, 10, 7, 10], [3.0, 0.5, 9, 6, 9])
    run.budget = 10
    x, f = cmp.rtd(run.steps, run.solved, 10)
    assert x.tolist() == [0, 3, 7, 10]
    assert f.tolist() == pytest.approx([0.2, 0.4, 0.6, 0.6])
    xs, fs = cmp.curves(run)["rtd_seconds"]  # censored at the longest run's seconds
    assert xs.tolist() == [0.0, 0.5, 3.0, 6.0, 9.0]
    assert fs.tolist() == pytest.approx([0.0, 0.2, 0.4, 0.6, 0.6])
    _, conditional = cmp.curves(run)["steps_ecdf"]
    assert conditional[-1] == 1.0  # the extra: conditional on success
    none = fake("b", [False] * 3, [10] * 3, [1.0] * 3)
    assert [v.tolist() for v in cmp.rtd(none.steps, none.solved, 10)] == [[0, 10], [0.0, 0.0]]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.integers(0, 300)), min_size=1, max_size=60),
    st.integers(1, 300),
)
def test_rtd_is_the_fraction_of_all_runs_solved_by_t(chains, budget):
    solved = np.array([c[0] for c in chains])
    steps = np.array([c[1] for c in chains])
    ok, spent, _ = runners._censor(steps, solved, steps * 1e-3, budget)
    x, f = cmp.rtd(spent, ok, budget, points=10_000)
    assert x[0] == 0 and x[-1] == budget and np.all(np.diff(x) > 0)
    for xi, fi in zip(x, f, strict=True):
        assert fi == pytest.approx(np.sum(ok & (spent <= xi)) / len(chains))


def test_not_solved_is_worded_and_the_json_is_strict():
    """A runner-up that never solved: no "inf" anywhere, "not solved" in the line and the
    ranking, null ERTs with a reason, strict JSON."""
    rng = np.random.default_rng(2)
    fast = fake("fast", np.ones(50, bool), np.full(50, 5), rng.exponential(1e-3, 50))
    slow = fake("slow", rng.random(50) < 0.5, np.full(50, 9), rng.exponential(3e-3, 50))
    never = fake("never", np.zeros(50, bool), np.full(50, 100), np.full(50, 1e-2))
    never.budget = 100
    rec = ert.recommend([never, fast, slow], n=64, steps=100, seed=0)
    line = rec["line"]
    assert "inf" not in line.lower() and "nan" not in line.lower()
    assert rec["solver"] == "fast" and rec["runner_up"] == "slow"
    assert "not solved: never" in line and rec["not_solved"] == ["never"]
    assert rec["ranking"][-1] == {
        "solver": "never",
        "ert_s": None,
        "solved": 0,
        "note": "not solved (0 of 50 chains within 100 steps)",
    }
    only = ert.recommend([never, fast], n=64, steps=100, seed=0)
    assert "the only solver that solved a chain" in only["line"] and only["margin"] is None
    assert "inf" not in only["line"]
    nothing = ert.recommend([never], n=64, steps=100, seed=0)
    assert nothing["solver"] is None and "inf" not in nothing["line"]
    doc = ert.ert_ci(never, seed=0)
    assert doc["ert_s"] is None and doc["ert_note"].startswith("not solved (0 of 50")
    rare = fake("rare", np.arange(50) == 0, np.full(50, 9), np.full(50, 1e-3))
    ci = ert.ert_ci(rare, seed=0)
    assert ci["ert_s"] == pytest.approx(50e-3) and ci["ert_s_ci"][1] is None
    assert "no upper bound" in ci["ert_note"]
    hi = ert.ert_ratio_ci(fast, rare, seed=0)[1]
    assert not np.isfinite(hi)  # the raw bound; the recommendation words it "unbounded"
    rec = ert.recommend([rare, fast], n=64, steps=100, seed=0)
    assert "to unbounded" in rec["line"] and rec["ci"][1] is None and "no upper" in rec["note"]
    for doc in (
        rec,
        only,
        nothing,
        tables.strict({"x": float("inf"), "y": [np.float64("nan")]}, reasons=False),
    ):
        strict_loads(json.dumps(doc, allow_nan=False))


def test_ert_ci_brackets_the_ert_in_seconds_and_steps():
    rng = np.random.default_rng(4)
    run = fake("a", rng.random(300) < 0.6, rng.integers(1, 100, 300), rng.exponential(1e-3, 300))
    doc = ert.ert_ci(run, seed=1)
    assert doc["ert_s"] == pytest.approx(run.seconds.sum() / run.solved.sum())
    assert doc["ert_steps"] == pytest.approx(run.steps.sum() / run.solved.sum())
    assert doc["ert_s_ci"][0] < doc["ert_s"] < doc["ert_s_ci"][1]
    assert doc["ert_steps_ci"][0] < doc["ert_steps"] < doc["ert_steps_ci"][1]
    assert doc["ert_note"] is None and ert.ert_ci(run, seed=1) == doc  # reproducible


def test_per_solver_settings_are_applied_and_reported():
    """Each solver's own settings reach its run (its own budget too) and summary.json holds
    every effective setting, defaults filled in."""
    res = cmp.compare(
        6,
        12,  # real_run's chains: min-conflicts runs its program
        solvers="mc-qs4,sa,ga-permutation",
        steps=200,
        seed=2,
        settings_of={
            "mc-qs4": {"maxsteps": 7},
            "sa": {"rounds": 4, "steps": 400, "init_prob": 0.3},
            "ga-permutation": {"pop": 6, "generations": 40, "tournament": 3, "cxpb": 0.5},
        },
    )
    mc, sa, ga = res.runs
    assert mc.options["max_steps"] == 7 and mc.steps_budget == 200
    assert sa.steps_budget == 400 and np.all(sa.steps <= 400)
    assert sa.options["rounds"] == 4 and sa.options["init_prob"] == 0.3
    assert sa.options["alpha"] == pytest.approx(0.001 ** (1 / 3))  # t_end's default filled in
    assert ga.steps_budget == 6 + 2 * 40 and ga.options["generations"] == 40
    assert (ga.options["pop"], ga.options["tournament"], ga.options["cxpb"]) == (6, 3, 0.5)
    assert ga.options["mutpb"] == 1.0 and ga.options["crossover"] == "cut"  # defaults filled in
    s = strict_loads(json.dumps(res.summary, allow_nan=False))
    assert s["steps_budgets"] == {"mc-qs4": 200, "sa": 400, "ga-permutation": 86}
    assert s["settings_given"]["sa"] == {"rounds": 4, "steps": 400, "init_prob": 0.3}
    assert [p["steps_budget"] for p in s["per_solver"]] == [200, 400, 86]
    assert s["per_solver"][1]["options"]["rounds"] == 4
    assert "own budgets differ" in s["budget_note"]
    assert s["defaults_note"].endswith(
        "settings given per solver replace them (options in per_solver)"
    )


@pytest.mark.parametrize(
    "given, needle",
    [
        ({"nope": {}}, "settings for solver 'nope': no such solver"),
        ({"ls": {"rounds": 2}}, "ls is not among the solvers run"),
        ({"sa": {"speed": 2}}, "sa: unknown setting 'speed' (valid for sa: steps, preset"),
        ({"sa": {"rounds": "many"}}, "sa.rounds must be an integer"),
        ({"sa": {"q": 0.5}}, "compare sa --method sa does not use q"),
        ({"sa": {"alpha": 1.5}}, "sa.alpha"),
        ({"sa": {"steps": 50}}, "sa.steps 50 is too small"),
        ({"ga-permutation": {"elite": 1}}, "does not use elite"),
        ({"ga-permutation": {"steps": 100, "generations": 5}}, "not both"),
        ({"ga-permutation": {"pop": 3, "tournament": 4}}, "smaller than the tournament"),
        ({"ga-permutation": {"crossover": "zip"}}, "ga-permutation: crossover 'zip'"),
        ({"mc-qs4": {"init": "random"}}, "unknown setting 'init'"),
    ],
)
def test_bad_per_solver_settings_are_refused_before_any_run(monkeypatch, given, needle):
    ran = []
    monkeypatch.setattr(runners, "run_solver", lambda name, *a, **k: ran.append(name))
    with pytest.raises(QueensError) as err:
        cmp.compare(8, 2, solvers="mc-qs4,sa,ga-permutation", steps=200, settings_of=given)
    assert needle in str(err.value) and "\n" not in str(err.value)
    assert ran == []
