"""drivers.anneal: solving, settings and presets, reproducibility, best boards, errors."""

import functools

import numpy as np
import pytest

import jaxqueens
from jaxqueens.core import checker
from jaxqueens.core import constraints as cons
from jaxqueens.drivers import anneal as annealing
from jaxqueens.errors import QueensError


@pytest.mark.parametrize("method", ["ta", "sa"])
def test_nmof_setting_solves_most_chains(method):
    res = jaxqueens.anneal(8, method, chains=200, steps=10_000, rounds=10, neighbour="step", step=3)
    assert res.summary["success_rate"] >= 0.8
    assert checker.are_solutions(res.solutions).all()
    assert (res.run.best[res.run.solved] == 0).all() and (res.run.best[~res.run.solved] > 0).all()


def test_swap_neighbour_and_pairs_objective_solve():
    res = jaxqueens.anneal(16, "sa", chains=40, steps=20_000, neighbour="swap", objective="pairs")
    assert res.summary["solved"] > 20  # more than half (28 with this seed)


def test_same_seed_same_results_any_batch():
    a = jaxqueens.anneal(10, "ta", chains=24, steps=400, seed=3, batch=8)
    b = jaxqueens.anneal(10, "ta", chains=24, steps=400, seed=3, batch=24)
    for field in ("rows", "steps", "best", "solved"):
        np.testing.assert_array_equal(getattr(a.run, field), getattr(b.run, field))
    c = jaxqueens.anneal(10, "ta", chains=24, steps=400, seed=4, batch=24)
    assert not np.array_equal(a.run.rows, c.run.rows)


def test_traces_follow_the_first_chains():
    res = annealing.anneal(8, "sa", chains=6, steps=600, rounds=6, seed=1, trace_chains=2)
    assert res.traces.shape == (2, 600) and res.trace_every == 1
    np.testing.assert_array_equal(res.traces[:, -1], res.run.best[:2])  # same seeds as chains 0, 1
    assert np.all(np.diff(res.traces, axis=1) <= 0)


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        ({"neighbour": "step", "step": -1}, "--step must lie in 1..n-1"),
        ({"neighbour": "step", "step": 8}, "--step must lie in 1..n-1"),
        ({"step": 2}, "--neighbour swap does not use step"),  # the default neighbour
        ({"rounds": 0}, "rounds must be at least 1"),
        ({"steps": 5, "rounds": 10}, "--steps"),
        ({"method": "xx"}, "method"),
        ({"chains": 0}, "chains must be at least 1"),
        ({"q": 0.0}, "q"),
    ],
)
def test_bad_parameters(kwargs, needle):
    args = {"n": 8, "method": "ta", "chains": 4, "steps": 100, **kwargs}
    with pytest.raises(QueensError, match=needle):
        jaxqueens.anneal(**args)


# ---------------------------------------------------------------- NMOF's vignette (issue 14)
def test_vignette_setting_from_one_row_with_best_boards():
    """NMOF's vignette: p0 = rep(1, N), the far-end edge, LSopt; every solution verified, and the
    best board of every unsolved chain recovered with its objective and attacking pairs."""
    res = jaxqueens.anneal(
        8, "ls", chains=40, steps=600, edge="nmof", start=np.zeros(8, int), best_boards=True
    )
    run = res.run
    assert 0 < run.solved.sum() < 40 and checker.are_solutions(res.solutions).all()
    assert res.summary["edge"] == "nmof" and res.summary["start"] == [0] * 8
    np.testing.assert_array_equal(res.best_chains, run.chain_id[~run.solved])
    assert res.best_boards.shape == ((~run.solved).sum(), 8)
    np.testing.assert_array_equal(res.best_pairs, checker.attacking_pairs(res.best_boards))
    attacks = [
        sum(8 - len(set(x)) for x in (b, b - np.arange(8), b + np.arange(8)))
        for b in res.best_boards
    ]
    np.testing.assert_array_equal(attacks, run.best[~run.solved])
    assert (res.best_pairs > 0).all()


def test_non_permutation_start_needs_the_step_neighbour():
    with pytest.raises(QueensError, match="--neighbour swap never changes which rows"):
        jaxqueens.anneal(8, "ls", chains=2, steps=10, neighbour="swap", start=np.zeros(8, int))
    res = jaxqueens.anneal(
        8, "ls", chains=4, steps=50, neighbour="swap", start=[1, 3, 5, 7, 2, 0, 6, 4]
    )
    assert res.summary["chains"] == 4  # a permutation start is fine with swap
    with pytest.raises(QueensError, match="out of range"):
        jaxqueens.anneal(8, "ls", chains=2, steps=10, start=[8] * 8)


# ---------------------------------------------------------------- constrained boards (issue 16)


@pytest.mark.parametrize("n,method,steps", [(5, "ta", 5000), (7, "sa", 20_000), (11, "sa", 50_000)])
def test_toroidal_solutions_pass_the_toroidal_checker(n, method, steps):
    res = annealing.anneal(n, method, chains=24, steps=steps, toroidal=True, best_boards=True)
    torus = cons.Constraints(n, toroidal=True)
    assert res.status == "SAT" and res.summary["status"] == "SAT" and res.instance == torus
    for board in res.solutions:
        assert checker.check_constrained(board, torus).ok
    # the best boards of unsolved chains carry their toroidal attacking pairs
    for board, pairs in zip(res.best_boards, res.best_pairs, strict=True):
        assert pairs == checker.check_constrained(board, torus).attacking_pairs > 0


def test_toroidal_boards_without_solutions_are_unknown():
    res = annealing.anneal(6, "ta", chains=8, steps=500, toroidal=True)  # A051906(6) = 0
    assert (
        res.status == "unknown" and res.summary["status"] == "unknown" and not res.run.solved.any()
    )


SAT = cons.Constraints(8, fixed=((0, 2), (3, 1)), blocked=((1, 0), (2, 2)), sums=(10,), diffs=(2,))
"""One solution, 2 5 3 1 7 4 6 0: x - y = -5 (diffs 2) excludes the other completion of the two
fixed queens, 2 5 7 1 3 0 6 4."""


def test_an_instance_is_solved_within_its_constraints():
    assert checker.check_constrained(np.array([2, 5, 3, 1, 7, 4, 6, 0]), SAT).ok
    assert not checker.check_constrained(np.array([2, 5, 7, 1, 3, 0, 6, 4]), SAT).ok
    res = annealing.anneal(None, "sa", chains=60, steps=4000, instance=SAT, best_boards=True)
    assert res.status == "SAT" and res.summary["instance"] == SAT.to_dict()
    checker.require_constrained(res.solutions, SAT)
    assert {tuple(b) for b in res.solutions} == {(2, 5, 3, 1, 7, 4, 6, 0)}
    allowed = cons.allowed_squares(SAT)
    for board in np.concatenate([res.run.rows, res.best_boards]):  # final and best boards alike
        assert board[0] == 2 and board[3] == 1 and allowed[np.arange(8), board].all()


def test_an_unsolvable_instance_is_unknown_never_unsat():
    # no 8-queens solution holds both queens, but no plain proof says so (issue 28: a plainly
    # UNSAT instance, e.g. fixed queens attacking each other, is UNSAT before any chain runs)
    unsat = cons.Constraints(8, fixed=((0, 0), (1, 2)))
    res = annealing.anneal(None, "ta", chains=6, steps=300, instance=unsat, best_boards=True)
    assert res.status == "unknown" and res.summary["status"] == "unknown"
    assert "UNSAT" not in str(res.summary)
    assert (res.best_boards[:, 0] == 0).all() and (res.best_boards[:, 1] == 2).all()


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        ({"neighbour": "swap"}, "needs --neighbour step"),
        ({"start": np.arange(8)}, "drop the start board"),
        ({"n": 9}, "instance has n = 8"),
        ({"instance": "x"}, "must be a jaxqueens Constraints"),
    ],
)
def test_instance_errors(kwargs, needle):
    args = {"n": None, "instance": SAT, **kwargs}
    with pytest.raises(QueensError, match=needle):
        annealing.anneal(args.pop("n"), "ta", chains=2, steps=100, **args)


# ---------------------------------------------------------------- measured defaults (issue 27)


def test_settings_take_the_preset_and_the_values_given():
    sa = annealing.settings("sa")
    assert (sa["neighbour"], sa["rounds"], sa["init_prob"], sa["t_end"]) == (
        "swap",
        100,
        0.1,
        0.001,
    )
    assert sa["alpha"] == pytest.approx(0.001 ** (1 / 99))  # the last temperature: t_end x first
    assert annealing.settings("ta")["q"] == 0.4 and annealing.settings("ls")["neighbour"] == "swap"
    classic = annealing.settings("sa", "classic")
    assert (classic["neighbour"], classic["rounds"], classic["alpha"]) == ("step", 10, 0.9)
    assert classic["t_end"] is None and classic["t0"] == "worsening" and classic["q"] == 0.5
    nmof = annealing.settings("ta", "nmof")
    assert nmof["edge"] == "nmof" and nmof["t0"] == "nmof" and nmof["neighbour"] == "step"
    assert annealing.settings("sa", rounds=10)["alpha"] == pytest.approx(0.001 ** (1 / 9))
    assert annealing.settings("sa", alpha=0.5)["alpha"] == 0.5
    assert annealing.settings("sa", "classic", t_end=0.01)["alpha"] == pytest.approx(
        0.01 ** (1 / 9)
    )
    with pytest.raises(QueensError, match="not both"):
        annealing.settings("sa", alpha=0.5, t_end=0.01)
    with pytest.raises(QueensError, match=r"^preset"):
        annealing.settings("sa", "fast")
    with pytest.raises(QueensError, match=r"^t_end"):
        annealing.anneal(8, "sa", chains=2, steps=100, t_end=2.0)


@pytest.mark.parametrize(
    "method, expect",
    [("ls", "85515527c0156e4f"), ("ta", "f4a8c049f40b0869"), ("sa", "ea2f7b65473b0458")],
)
def test_classic_preset_reproduces_the_earlier_defaults(method, expect):
    # recorded with the code before issue 27 at its defaults (then NMOF's settings, step neighbour),
    # and again once the chains' streams took 64-bit seeds (the same settings, other draws)
    import hashlib

    res = jaxqueens.anneal(10, method, chains=30, steps=2000, seed=2, preset="classic")
    run = res.run
    # the step of each chain's best board was its reported steps then; steps are now spent
    got = hashlib.sha256(
        np.asarray(run.rows, np.int32).tobytes() + np.asarray(run.best_step, np.int64).tobytes()
    ).hexdigest()[:16]
    assert got == expect
    spent = np.where(run.solved, run.best_step, res.config.total_steps)
    np.testing.assert_array_equal(run.steps, spent)


@functools.cache
def _n16_at_defaults(method):
    """40 chains at n = 16 with the method's defaults and compare's budget (one run a method,
    read by several tests)."""
    return jaxqueens.anneal(16, method, chains=40, steps=10_000, seed=1)


@pytest.mark.parametrize("method", ["ls", "ta", "sa"])
def test_defaults_solve_n16_within_compares_budget(method):
    # measured: 100% / 100% / 99.7% of 300 chains (scripts/tune_defaults.py anneal)
    res = _n16_at_defaults(method)
    assert res.summary["neighbour"] == "swap" and res.summary["preset"] == "default"
    assert res.summary["success_rate"] >= 0.9
    assert checker.are_solutions(res.solutions).all()


def test_ta_at_its_defaults_is_not_ls():
    """TA's default thresholds come from a quantile level above the share of calibration-walk
    moves that change nothing: its first threshold is positive, so TA and LS at the same seed run
    differently (a level below that share made every threshold 0 and TA ran as LS)."""
    ta, ls = _n16_at_defaults("ta"), _n16_at_defaults("ls")
    assert ta.schedule[0] > 0 and ta.schedule[-1] == 0
    assert not np.array_equal(ta.run.steps, ls.run.steps)
    assert not np.array_equal(ta.run.rows, ls.run.rows)


def test_default_swap_falls_back_to_step_where_a_swap_cannot_go():
    res = jaxqueens.anneal(8, "ls", chains=4, steps=200, start=np.zeros(8, int))
    assert res.summary["neighbour"] == "step"  # rows repeat: swaps could never leave them
    # (TA's chains and budget of test_an_unsolvable_instance_is_unknown_never_unsat: one program)
    res = annealing.anneal(None, "ta", chains=6, steps=300, instance=SAT)
    assert res.summary["neighbour"] == "step"  # a constrained instance needs the step neighbour


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"method": "ls", "alpha": 0.5}, "anneal --method ls does not use alpha"),
        ({"method": "ta", "init_prob": 0.3}, "does not use init_prob"),
        ({"neighbour": "swap", "edge": "nmof"}, "anneal --neighbour swap does not use edge"),
        ({"chains": 2.0}, "chains must be an integer"),
        ({"seed": True}, "seed must be an integer"),
        ({"seed": 2**32}, "seed must be at most"),
    ],
)
def test_defect_28_10_and_16_anneal_refuses_unused_options_and_wrong_types(kwargs, needle):
    with pytest.raises(QueensError) as err:
        jaxqueens.anneal(**{"n": 8, "method": "ta", "chains": 2, "steps": 100, **kwargs})
    assert needle in str(err.value)


def test_run_takes_the_settings_checked_where_they_entered():
    """`run` (what `jaxqueens anneal` calls with the settings it checked before JAX loads) runs
    the same chains as `anneal` given the same values, and finds the same best boards."""
    from jaxqueens.drivers import settings

    st = settings.anneal_settings("sa", "classic")
    # the size, chains and budget of test_classic_preset_reproduces_the_earlier_defaults
    c = settings.check_anneal(st, n=10, chains=30, steps=2000, walk=2000, seed=3, batch=None)
    a = annealing.run(st, c, best_boards=True)
    b = annealing.anneal(10, "sa", 30, 2000, seed=3, preset="classic", best_boards=True)
    for field in ("rows", "steps", "best", "best_step", "solved"):
        np.testing.assert_array_equal(getattr(a.run, field), getattr(b.run, field))
    np.testing.assert_array_equal(a.best_boards, b.best_boards)
    timings = ("wall_s", "compile_s", "solutions_per_s")
    assert {k: v for k, v in a.summary.items() if k not in timings} == {
        k: v for k, v in b.summary.items() if k not in timings
    }
