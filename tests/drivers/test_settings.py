"""drivers/settings.py: which options each method, scheme and solver uses (issue 28, item 10),
and the checks that run before JAX (compare's step budgets, LS/TA/SA ranges)."""

import pytest

from jaxqueens.drivers import settings as S
from jaxqueens.errors import QueensError


@pytest.mark.parametrize(
    "method, neighbour, given, needle",
    [
        ("ls", "step", {"alpha": 0.5}, "anneal --method ls does not use alpha (--alpha): only SA"),
        ("sa", "step", {"q": 0.3}, "anneal --method sa does not use q (--q): only TA"),
        ("ta", "step", {"t0": "nmof"}, "does not use t0 (--t0)"),
        ("ta", "swap", {"step": 2}, "anneal --neighbour swap does not use step (--step)"),
        ("ta", "swap", {"edge": "nmof"}, "does not use edge (--edge)"),
    ],
)
def test_defect_28_10_anneal_options_the_method_does_not_use(method, neighbour, given, needle):
    with pytest.raises(QueensError) as err:
        S.resolve(S.ANNEAL, {"method": method, "neighbour": neighbour}, given, "anneal")
    assert needle in str(err.value)


def test_defect_28_10_defaults_and_several_methods():
    got = S.resolve(S.ANNEAL, {"method": "sa", "neighbour": "step"}, {"alpha": 0.8}, "anneal")
    assert got == {
        "q": 0.5,
        "init_prob": 0.4,
        "alpha": 0.8,
        "t0": "worsening",
        "step": 3,
        "edge": "wrap",
    }
    runs = [{"method": m, "neighbour": "step"} for m in ("ls", "ta", "sa")]
    ls = S.resolve(S.ANNEAL, runs[0], {"alpha": 0.8}, "anneal", also=runs)
    assert ls["alpha"] == 0.9  # --method all --alpha: only SA gets it, LS keeps its default


@pytest.mark.parametrize(
    "setting, given, needle",
    [
        ({"scheme": "steady"}, {"elite": 2}, "evolve --scheme steady does not use elite"),
        ({"mutation": "inversion"}, {"indpb": 0.1}, "--mutation inversion does not use indpb"),
        ({"islands": 1}, {"migrate_every": 5}, "--islands 1 does not use migrate_every"),
        ({"islands": 4, "migrate_every": 0}, {"migrants": 2}, "does not use migrants"),
    ],
)
def test_defect_28_10_ga_options_the_scheme_does_not_use(setting, given, needle):
    with pytest.raises(QueensError) as err:
        S.resolve(S.GA, {"scheme": "steady", "islands": 1, **setting}, given, "evolve")
    assert needle in str(err.value)
    ok = S.resolve(S.GA, {"scheme": "generational", "islands": 2, "migrate_every": 3}, {}, "evolve")
    assert ok == {"elite": 1, "indpb": 0.0, "migrate_every": 0, "migrants": 1}


@pytest.mark.parametrize(
    "solver, given, needle",
    [
        ("minconflicts", {"alpha": 0.5}, "stats --solver minconflicts does not use alpha"),
        ("anneal", {"pop": 10}, "only --solver ga does"),
        ("ga", {"max_steps": 10}, "does not use max_steps (--maxsteps)"),
        ("ga", {"nonsense": 1}, "'nonsense' is not an option of any solver"),
    ],
)
def test_defect_28_10_stats_other_solvers_options(solver, given, needle):
    with pytest.raises(QueensError) as err:
        S.check_stats_options(solver, given)
    assert needle in str(err.value)
    S.check_stats_options("anneal", {"method": "sa", "alpha": 0.5})


def test_defect_28_msg_compare_budget_is_checked_for_every_solver_up_front():
    with pytest.raises(QueensError) as err:
        S.check_compare(8, 10, "mc-qs4,ls,ga-permutation", 5, 0)
    msg = str(err.value)
    assert "--steps 5 is too small for ls, ga-permutation" in msg and "--steps 102" in msg
    assert "--rounds" not in msg
    assert S.check_compare(8, 10, "mc-qs4", 5, 0)[2] == ["mc-qs4"]


def test_anneal_checks_ranges_without_jax():
    base = {
        "n": 8,
        "method": "ta",
        "chains": 1,
        "steps": 100,
        "rounds": 10,
        "neighbour": "step",
        "objective": "attacks",
        "edge": "wrap",
        "step": 3,
        "q": 0.5,
        "init_prob": 0.4,
        "alpha": 0.9,
        "t0": "worsening",
        "walk": 2000,
        "seed": 0,
        "batch": None,
    }
    assert S.check_anneal(**base)["steps"] == 100
    for change, needle in (
        ({"steps": 5}, "--steps (5) must be at least --rounds (10)"),
        ({"n": 3}, "local search needs n >= 4"),
        ({"alpha": 2.0}, "--alpha = 2.0 is out of range"),
        ({"seed": -1}, "--seed must be at least 0"),
        ({"step": 8}, "--step must lie in 1..n-1"),
    ):
        with pytest.raises(QueensError) as err:
            S.check_anneal(**{**base, **change})
        assert needle in str(err.value)


def test_used_passes_each_setting_only_what_it_uses():
    given = {"alpha": 0.5, "q": 0.3, "step": None}
    assert S.used(S.ANNEAL, {"method": "sa", "neighbour": "step"}, given) == {"alpha": 0.5}
    assert S.used(S.ANNEAL, {"method": "ta", "neighbour": "step"}, given) == {"q": 0.3}
    assert S.used(S.ANNEAL, {"method": "ls", "neighbour": "step"}, given) == {}
