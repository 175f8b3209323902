"""drivers/settings.py: which options each method, scheme and solver uses (issue 28, item 10),
and the checks that run before JAX (compare's step budgets, LS/TA/SA ranges)."""

import dataclasses

import pytest

from jaxqueens.drivers import compare_setup, solve_setup, stats_setup
from jaxqueens.drivers import settings as S
from jaxqueens.errors import QueensError
from jaxqueens.solvers import variants


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
        S.anneal_settings(method, neighbour=neighbour, **given)
    assert needle in str(err.value)
    with pytest.raises(QueensError) as err:  # the same refusal, as compare makes it
        S.anneal_neighbour(method, None, {"neighbour": neighbour, **given})
    assert needle in str(err.value)


def test_defect_28_10_defaults_and_several_methods():
    got = S.anneal_settings("sa", neighbour="step", alpha=0.8)
    assert got == S.SASettings(  # the defaults are the measured preset's (issue 27)
        preset="default",
        neighbour="step",
        step=3,
        edge="wrap",
        objective="attacks",
        rounds=100,
        init_prob=0.1,
        alpha=0.8,
        t_end=None,  # alpha given: SA cools by it
        t0="worsening",
    )
    assert S.anneal_settings("sa", "classic").init_prob == 0.4
    ls = S.anneal_settings("ls", "classic", also=["ls", "ta", "sa"], alpha=0.8, t_end=None)
    assert not hasattr(ls, "alpha")  # --method all --alpha: only SA gets it
    assert ls.values()["alpha"] == 0.9  # (what LS records: the preset's)
    # --method all --t-end: only SA gets it (LS stopped on the preset's missing t_end)
    assert S.anneal_settings("ls", also=["ls", "sa"], t_end=0.01) == S.anneal_settings("ls")


def test_anneal_settings_are_one_frozen_class_per_method_checked_once():
    sa = S.anneal_settings("sa", t0="2.5")
    assert type(sa) is S.SASettings and sa.t0 == 2.5 and sa.rounds == 100
    with pytest.raises(dataclasses.FrozenInstanceError):
        sa.rounds = 3  # type: ignore[misc]
    assert not hasattr(S.anneal_settings("ta"), "init_prob")  # an option TA does not use
    assert set(S.anneal_settings("ls").values()) == set(S.ANNEAL_SETTINGS)
    base = {"preset": "default", "neighbour": "swap", "step": 3, "edge": "wrap"}
    base.update(objective="attacks", rounds=10, init_prob=0.1, t0="worsening")
    with pytest.raises(QueensError, match="not both"):
        S.SASettings(**base, alpha=0.9, t_end=0.01)  # made directly: checked the same
    with pytest.raises(QueensError, match=r"^rounds must be at least 1"):
        S.SASettings(**{**base, "rounds": 0}, alpha=None, t_end=0.01)
    with pytest.raises(QueensError, match=r"^objective 'x' is unknown"):
        S.LSSettings(
            **{k: v for k, v in base.items() if k not in ("init_prob", "t0")} | {"objective": "x"}
        )


def test_anneal_settings_refuse_unused_options_and_take_the_preset():
    with pytest.raises(QueensError, match="anneal --method ta does not use t_end"):
        S.anneal_settings("ta", t_end=0.01)
    with pytest.raises(QueensError, match="anneal --neighbour swap does not use step"):
        S.anneal_settings("ls", step=2)  # the default preset's neighbour is swap
    assert S.anneal_settings("ls", step=2, needs_step=True).step == 2  # instance: step
    assert S.anneal_settings("ls", "classic", step=2).step == 2  # classic: step neighbour
    sa = S.anneal_settings("sa", also=["ls", "ta"], q=0.3)  # --method all --q: only TA gets it
    assert sa.values()["q"] == 0.5 and sa.rounds == 100
    assert S.anneal_settings("ls", "nmof").edge == "nmof"
    with pytest.raises(QueensError, match=r"^preset 'fast' is unknown"):
        S.anneal_settings("ls", "fast")


def test_stats_anneal_defaults_are_the_presets():
    got, numbers = stats_setup.check_stats_anneal(8, {"method": "sa"}, None, 0, None)
    assert (got.rounds, got.neighbour, got.init_prob, numbers["steps"]) == (
        100,
        "swap",
        0.1,
        10_000,
    )
    got, _ = stats_setup.check_stats_anneal(8, {"preset": "classic"}, None, 0, None)
    assert (got.method, got.rounds, got.neighbour, got.q) == ("ta", 10, "step", 0.5)
    with pytest.raises(QueensError, match="stats --solver minconflicts does not use preset"):
        stats_setup.check_stats_options("minconflicts", {"preset": "classic"})
    with pytest.raises(QueensError, match=r"^preset 'nmof' is unknown"):
        stats_setup.check_stats_options("ga", {"preset": "nmof"})


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
    run = {"scheme": "steady", "mutation": None, "islands": 1, "migrate_every": None, **setting}
    with pytest.raises(QueensError) as err:
        S.ga_unused(given, **run)
    assert needle in str(err.value)
    with pytest.raises(QueensError) as err:  # the same refusal, as the constructor makes it
        S.ga_settings("default", "permutation", run.pop("scheme"), **{**run, **given})
    assert needle in str(err.value)
    ok = S.ga_settings(scheme="generational", islands=2, migrate_every=3)
    assert (ok.elite, ok.indpb, ok.migrate_every, ok.migrants) == (1, 0.0, 3, 1)
    assert not hasattr(S.ga_settings("classic"), "elite")  # an option the steady state lacks


def test_ga_settings_are_one_frozen_class_per_scheme_checked_once():
    g = S.ga_settings("classic", "combination", "generational", pop=30)
    assert type(g) is S.GenerationalSettings and (g.pop, g.tournament, g.elite) == (30, 3, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        g.pop = 3  # type: ignore[misc]
    base = {"preset": "default", "encoding": "permutation", "pop": 10, "tournament": 4}
    base.update(cxpb=0.2, mutpb=1.0)
    assert S.SteadySettings(**base) == S.ga_settings()
    for change, needle in (
        ({"pop": 1}, r"^pop = 1 is too small"),
        ({"tournament": 11}, r"^pop = 10 is smaller than the tournament size 11"),
        ({"cxpb": 1.5}, r"^cxpb = 1\.5 must lie in \[0, 1\]"),
        ({"migrants": 10}, r"^migrants = 10 must lie in 1\.\.pop-1 \(9\)"),
        ({"encoding": "binary"}, r"^encoding 'binary' is unknown"),
        ({"tournament": 2.5}, r"^tournament must be an integer, got 2\.5"),
    ):
        with pytest.raises(QueensError, match=needle):
            S.SteadySettings(**{**base, **change})  # made directly: checked the same
    with pytest.raises(QueensError, match=r"^elite = 10 must lie in 0\.\.pop-1"):
        S.GenerationalSettings(**base, elite=10)
    with pytest.raises(QueensError, match=r"^scheme 'annealing' is unknown"):
        S.ga_settings(scheme="annealing")
    with pytest.raises(QueensError, match=r"^--preset 'nmof': use one of default, classic"):
        S.ga_settings("nmof")


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
        stats_setup.check_stats_options(solver, given)
    assert needle in str(err.value)
    stats_setup.check_stats_options("anneal", {"method": "sa", "alpha": 0.5})


def test_defect_28_msg_compare_budget_is_checked_for_every_solver_up_front():
    with pytest.raises(QueensError) as err:
        compare_setup.check_compare(8, 10, "mc-qs4,ls,ga-permutation", 5, 0)
    msg = str(err.value)
    assert "--steps 5 is too small for ls, ga-permutation" in msg and "--steps 12" in msg
    assert "--rounds" not in msg
    assert compare_setup.check_compare(8, 10, "mc-qs4", 5, 0).names == ["mc-qs4"]
    # the least budgets are those of the measured defaults compare runs at (issue 27)
    assert [compare_setup.least_steps(s) for s in ("mc-qs4", "ls", "ta", "sa")] == [1, 10, 10, 100]
    assert [compare_setup.least_steps(s) for s in ("ga-permutation", "ga-combination")] == [12, 102]


def test_anneal_checks_ranges_without_jax():
    base = {"n": 8, "chains": 1, "steps": 100, "walk": 2000, "seed": 0, "batch": None}
    classic = S.anneal_settings("ta", "classic")
    assert S.check_anneal(classic, **base)["steps"] == 100
    for change, needle in (
        ({"steps": 5}, "--steps (5) must be at least --rounds (10)"),
        ({"n": 3}, "local search needs n >= 4"),
        ({"seed": -1}, "seed must be at least 0"),
        ({"n": 3.5}, "n must be an integer"),
    ):
        with pytest.raises(QueensError) as err:
            S.check_anneal(classic, **{**base, **change})
        assert needle in str(err.value)
    with pytest.raises(QueensError, match=r"--step must lie in 1\.\.n-1"):
        S.check_anneal(S.anneal_settings("ta", "classic", step=8), **base)
    with pytest.raises(QueensError, match=r"alpha = 2\.0 is out of range"):
        S.anneal_settings("sa", alpha=2.0)


def test_defect_auto_path_is_continuous_in_n_and_chains():
    # -n 4999 ran 1000 batched chains for 24 s while -n 5000 ran one board on the large path.
    for chains in (None, 1, 4, 16, 1000):
        paths = [solve_setup.auto_path(n, chains) for n in range(4, 46_341, 97)]
        first = paths.index("large")
        assert set(paths[:first]) == {"batched"} and set(paths[first:]) == {"large"}, chains
        assert solve_setup.auto_path(4999, chains) == solve_setup.auto_path(5000, chains)
    assert abs(solve_setup.default_chains(4999) - solve_setup.default_chains(5000)) <= 1
    assert solve_setup.default_chains(8) == 1000 and solve_setup.default_chains(20_000) == 1
    assert all(
        solve_setup.default_chains(n) >= solve_setup.default_chains(n + 50)
        for n in range(4, 40_000, 50)
    )
    # options only the batched path has keep a run batched; past its limit the large path runs
    assert solve_setup.auto_path(20_000, None, solutions=3) == "batched"
    assert solve_setup.auto_path(20_000, None, seconds=5) == "batched"
    assert solve_setup.auto_path(60_000, 1000) == "large"


def test_solve_setting_fills_the_defaults_of_the_path_without_changing_what_was_given():
    given = {"chains": 3, "maxsteps": None, "init": None, "max_restarts": None, "move": None}
    before = dict(given)
    s, capped = solve_setup.batched_setting(8, given)
    assert given == before  # the caller's options are not rewritten
    assert s.max_steps == variants.default_max_steps(8) and s.init == "permutation"
    assert s.max_restarts == 1_000_000 and not capped and (s.batch, s.trace_steps) == (None, 0)
    cisc, capped = solve_setup.batched_setting(100, {"move": "cisc352"})
    assert (cisc.init, cisc.max_restarts, cisc.max_steps) == ("qs4", 99, 31)
    assert not capped  # its cap of 100 attempts is a default: chains are still awaited
    given = {"move": "cisc352", "init": "random", "maxsteps": 7, "max_restarts": 0, "seed": 5}
    cisc, capped = solve_setup.batched_setting(100, given)
    assert (cisc.init, cisc.max_restarts, cisc.max_steps, cisc.seed) == ("random", 0, 7, 5)
    assert capped  # given: what was given wins over the cisc352 defaults
    inst, capped = solve_setup.batched_setting(8, {"instance": "board.txt"})
    assert inst.max_restarts == solve_setup.INSTANCE_MAX_RESTARTS and capped
    assert inst.max_steps == variants.default_max_steps(8, plain=False)
    torus, _ = solve_setup.batched_setting(1000, {"toroidal": True, "plot": True, "batch": 3})
    assert torus.max_steps == variants.default_max_steps(1000, plain=False)
    assert (torus.trace_steps, torus.batch) == (torus.max_steps, 3)
    plot, _ = solve_setup.batched_setting(8, {"plot": True, "maxsteps": 200_000})
    assert plot.trace_steps == 100_000
    large = solve_setup.solve_setting({}, "large")
    assert large.get("init") is None and large.get("maxsteps") is None  # QS4, no step limit
    assert large["seed"] == 0 and large["max_restarts"] == 1_000_000
    assert solve_setup.solve_setting({}, "backtrack")["init"] == "permutation"


@pytest.mark.parametrize(
    "given, path, needle",
    [
        ({"chains": 0}, "batched", "--chains must be at least 1"),
        ({"max_restarts": -1}, "batched", "--max-restarts must be at least 0"),
        ({"maxsteps": 0}, "batched", "--maxsteps must be at least 1"),
        ({"maxsteps": 2**31}, "batched", "max_steps must be at most 2,147,483,647"),
        ({"max_restarts": 0}, "large", "--max-restarts is not used by the large-n path"),
        ({"show_initial": True}, "backtrack", "--show-initial is not used by --method backtrack"),
        ({"init": "greedy"}, "large", "--init greedy is not available on the large-n path"),
    ],
)
def test_solve_setting_refuses_in_one_line(given, path, needle):
    with pytest.raises(QueensError, match=needle):
        if path == "batched":
            solve_setup.batched_setting(1000, given)
        else:
            solve_setup.solve_setting(given, path)


def test_solve_settings_fill_the_problems_defaults_and_are_checked_once():
    plain = solve_setup.solve_settings(8, seed=3)
    assert (plain.max_steps, plain.max_restarts) == (variants.default_max_steps(8), 1_000_000)
    inst = solve_setup.solve_settings(8, plain=False, instance=True, max_steps=None)
    assert inst.max_steps == variants.default_max_steps(8, plain=False)
    assert inst.max_restarts == solve_setup.INSTANCE_MAX_RESTARTS
    given = solve_setup.solve_settings(8, instance=True, max_steps=7, max_restarts=0, tabu=2)
    assert (given.max_steps, given.max_restarts, given.name) == (7, 0, "mc-tabu")
    # what the summary and a checkpoint record, in the summary's order
    assert list(plain.search()) == ["init", "tabu", "max_steps", "max_restarts", "move", "seed"]
    assert solve_setup.SOLVE_DEFAULTS == {
        "init": "permutation",
        "tabu": 0,
        "max_restarts": 1_000_000,
        "move": "minconflicts",
        "seed": 0,
    }
    with pytest.raises(dataclasses.FrozenInstanceError):
        plain.seed = 4  # type: ignore[misc]
    for bad, needle in (
        ({"seed": -1}, "seed must be at least 0"),
        ({"batch": 0}, "batch must be at least 1"),
        ({"max_steps": 2.0}, "max_steps must be an integer"),
        ({"tabu": -1}, "tabu must be at least 0"),
        ({"trace_steps": -1}, "trace_steps must be at least 0"),
        ({"init": "nope"}, "init 'nope' is unknown"),
        ({"move": "nope"}, "move 'nope' is unknown"),
    ):
        with pytest.raises(QueensError, match=needle):
            solve_setup.solve_settings(8, **bad)


def test_solve_path():
    assert solve_setup.solve_path(8, {"method": "backtrack"}) == "backtrack"
    assert solve_setup.solve_path(8, {"mode": "large"}) == "large"
    assert solve_setup.solve_path(20_000, {}) == "large"
    assert solve_setup.solve_path(20_000, {"tabu": 2}) == "batched"  # only the batched path has it
    assert solve_setup.solve_path(60_000, {"tabu": 2}) == "large"  # beyond the batched kernel


def test_compare_settings_fill_each_solvers_budget_and_refuse_without_jax():
    """Per-solver settings of compare (issue 26): own budgets (GA: from generations), the run's
    budget otherwise; the budget check per solver names the key to raise."""
    own = compare_setup.compare_settings(
        64,
        ["mc-qs4", "sa", "ga-permutation", "ga-combination"],
        10_000,
        {
            "sa": {"steps": 30_000, "rounds": 200},
            "ga-permutation": {"pop": 20, "generations": 100},
            "ga-combination": {"scheme": "generational", "pop": 30, "generations": 10},
        },
    )
    assert {k: v["steps"] for k, v in own.items()} == {
        "mc-qs4": 10_000,
        "sa": 30_000,
        "ga-permutation": 20 + 2 * 100,
        "ga-combination": 30 + 30 * 10,  # generational: the whole population per generation
    }
    assert compare_setup.least_steps("sa", {"rounds": 200}) == 200
    assert compare_setup.least_steps("ga-permutation", {"pop": 20}) == 22
    with pytest.raises(QueensError, match="settings for sa must be a table"):
        compare_setup.compare_settings(8, ["sa"], 100, {"sa": 3})
    with pytest.raises(QueensError, match=r"--steps 60 is too small for sa \("):
        compare_setup.compare_settings(
            8, ["sa", "ga-permutation"], 60, {"ga-permutation": {"pop": 50}}
        )
    with pytest.raises(QueensError, match=r"ga-permutation\.steps 30 is too small"):
        compare_setup.compare_settings(
            8, ["ga-permutation"], 100, {"ga-permutation": {"steps": 30, "pop": 29}}
        )


@pytest.mark.parametrize(
    "given, needle",
    [
        ({"sa": {"q": 3}}, "compare sa --method sa does not use q (--q): only TA"),
        ({"ga-permutation": {"elite": -1}}, "compare ga-permutation --scheme steady does not use"),
        ({"ta": {"q": 3}}, "ta.q = 3 is out of range"),  # a setting ta uses: its range
    ],
)
def test_compare_setting_out_of_range_that_the_solver_does_not_use_is_named_unused(given, needle):
    with pytest.raises(QueensError) as err:
        compare_setup.compare_settings(8, ["sa", "ta", "ga-permutation"], 10_000, given)
    assert needle in str(err.value)
