"""The public kernel contract (jaxqueens.solvers.base), family by family: typed and legacy keys,
init/step/run inside a user's jit, vmap over keys and over Params (one compile), lax.scan of step,
and results equal to the drivers' on the same seeds (the exact families count and complete: equal
to OEIS A000170 and to the drivers' counts, decisions and boards)."""

import functools
from pathlib import Path

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jaxqueens
from jaxqueens.core import checker
from jaxqueens.core import constraints as C
from jaxqueens.core.oeis import A000170
from jaxqueens.drivers import complete as complete_driver
from jaxqueens.drivers import count as count_driver
from jaxqueens.errors import QueensError
from jaxqueens.io import instances as instio
from jaxqueens.solvers import anneal as sls
from jaxqueens.solvers import base, complete, count, estimate, ga, large
from jaxqueens.solvers import minconflicts as mc

PROB079 = Path(__file__).resolve().parents[2] / "instances" / "prob079"  # shipped (CC BY 4.0)

CONTRACT = ("Config", "Params", "default_params", "State", "Result", "init", "step", "run")


# One compiled batch per kernel and Config, shared by every test that runs it (a new jax.jit of a
# lambda compiles anew); Params are arguments, so other budgets or rates reuse the program.
@functools.partial(jax.jit, static_argnums=(0, 1))
def _chains(family, config, params, keys):
    """``family.run`` of each key [B] with the same params."""
    return jax.vmap(lambda k: family.run(k, config, params))(keys)


@functools.partial(jax.jit, static_argnums=(0, 1))
def _exact(family, config, params, problems):
    """``family.run`` (no key) of each problem [B] with the same params."""
    return jax.vmap(lambda p: family.run(None, config, params, p))(problems)


CHAIN_HOOKS = ("done", "result", "finish")


@pytest.mark.parametrize(
    "family", [mc, sls, ga, estimate, large], ids=lambda f: f.__name__.rsplit(".", 1)[-1]
)
def test_chain_families_expose_the_contract(family):
    for name in CONTRACT + CHAIN_HOOKS:
        assert hasattr(family, name), name
    assert family.Config.__dataclass_params__.frozen
    for cls in (family.Params, family.State, family.Result):
        assert issubclass(cls, tuple) and hasattr(cls, "_fields")  # NamedTuples: pytrees


def _families():
    """(name, config, params, sweep): each chain family with a small config, its default params
    and a function that varies one swept parameter over ``k`` values."""
    mc_cfg = mc.Config(n=10)
    sa_cfg = sls.Config(n=8, method="sa", rounds=4, steps_per_round=200)
    ga_cfg = ga.Config(n=8, pop=16, scheme="generational", crossover="pmx", tournament=3, elite=1)
    return [
        (
            "minconflicts",
            mc,
            mc_cfg,
            mc.default_params(mc_cfg),
            lambda p, v: p._replace(max_steps=v),
            jnp.array([5, 20, 80], jnp.int32),
        ),
        (
            "anneal",
            sls,
            sa_cfg,
            sls.default_params(sa_cfg),
            lambda p, v: p._replace(schedule=sls.sa_schedule(v, 0.5, sa_cfg.rounds)),
            jnp.array([0.1, 0.5, 2.0], jnp.float32),
        ),
        (
            "ga",
            ga,
            ga_cfg,
            ga.default_params(ga_cfg, generations=300),
            lambda p, v: p._replace(mutpb=v),
            jnp.array([0.05, 0.3, 1.0], jnp.float32),
        ),
    ]


FAMILIES = _families()
IDS = [f[0] for f in FAMILIES]


@pytest.mark.parametrize("name,family,config,params,sweep,values", FAMILIES, ids=IDS)
def test_typed_and_legacy_keys_agree_and_others_are_refused(
    name, family, config, params, sweep, values
):
    typed = jax.random.key(3)
    legacy = jax.random.PRNGKey(3)
    # compiled (outside jit each run compiled its while loop anew and its init op by op); each
    # family's run with and without jit is compared in its kernel's own variant tests
    run = jax.jit(family.run, static_argnums=1)
    chex.assert_trees_all_equal(run(typed, config, params), run(legacy, config, params))
    for bad in (3, jnp.uint32(3), jnp.zeros(2, jnp.float32)):
        with pytest.raises(QueensError, match=r"jax\.random\.key"):
            family.init(bad, config, params)


@pytest.mark.parametrize("name,family,config,params,sweep,values", FAMILIES, ids=IDS)
def test_vmap_over_params_compiles_once(name, family, config, params, sweep, values):
    chex.clear_trace_counter()
    keys = base.chain_keys(jax.random.key(0), jnp.arange(6))

    @jax.jit
    @chex.assert_max_traces(n=1)
    def sweep_run(values, keys):
        def one(v):
            return jax.vmap(lambda k: family.run(k, config, sweep(params, v)))(keys)

        return jax.vmap(one)(values)

    out = sweep_run(values, keys)
    chex.assert_shape(out.rows, (values.shape[0], 6, config.n))
    back = sweep_run(values[::-1], keys)  # new values: no new trace; awaited, the same lanes
    chex.assert_trees_all_equal(back, jax.tree.map(lambda x: np.asarray(x)[::-1], out))
    # The reference: each key run alone with one value at a time, by the compiled run of
    # test_typed_and_legacy_keys_agree (a new jax.jit of the same function reuses its program;
    # outside jit, each call compiled its while loop anew); its Params are arguments.
    run = jax.jit(family.run, static_argnums=1)
    for i, v in enumerate(np.asarray(values)):  # each lane is the run of its key and value
        p = sweep(params, v)
        for j in range(keys.shape[0]):
            lane = jax.tree.map(lambda x, i=i, j=j: x[i, j], out)
            chex.assert_trees_all_equal(lane, run(keys[j], config, p))


@pytest.mark.parametrize("name,family,config,params,sweep,values", FAMILIES, ids=IDS)
def test_scan_of_step_reaches_what_run_reports(name, family, config, params, sweep, values):
    key = jax.random.key(11)

    @jax.jit
    def scanned(key):
        s = family.init(key, config, params)
        s, _ = lax.scan(lambda s, _: (family.step(s, config, params), None), s, None, length=4000)
        return family.done(s, config, params), family.result(s, config, params)

    finished, got = scanned(key)
    assert bool(finished)
    chex.assert_trees_all_equal(got, jax.jit(family.run, static_argnums=1)(key, config, params))


def test_minconflicts_run_equals_the_driver_chain_by_chain():
    res = jaxqueens.solve(12, chains=20, seed=7, max_steps=50)
    config = res.config
    params = mc.default_params(config, max_steps=50)
    keys = base.chain_keys(jax.random.key(7), jnp.arange(20))
    out = _chains(mc, config, params, keys)
    np.testing.assert_array_equal(np.asarray(out.rows), res.run.rows)
    np.testing.assert_array_equal(np.asarray(out.steps), res.run.steps)
    np.testing.assert_array_equal(np.asarray(out.restarts), res.run.restarts)


def test_anneal_run_equals_the_driver_chain_by_chain():
    res = jaxqueens.anneal(8, "sa", chains=12, steps=100, seed=4)
    _, key = jax.random.split(jax.random.key(4))  # the driver's calibration takes the first half
    params = sls.Params(jnp.asarray(res.schedule))
    keys = base.chain_keys(key, jnp.arange(12))
    out = _chains(sls, res.config, params, keys)
    np.testing.assert_array_equal(np.asarray(out.rows), res.run.rows)
    np.testing.assert_array_equal(np.asarray(out.solved), res.run.solved)
    # steps is steps spent in the kernel and the driver alike; the best board's step is its own
    np.testing.assert_array_equal(np.asarray(out.steps), res.run.steps)
    np.testing.assert_array_equal(np.asarray(out.best_step), res.run.best_step)
    assert not res.run.solved.all()  # an unsolved chain spends its budget, not its best step


def test_ga_run_equals_the_driver_trial_by_trial():
    """The GA kernel vmapped over the trials' keys under one jit: trial t stops at the driver's
    first solved generation with one of its solutions, or spends the budget."""
    generations, trials, seed = 40, 6, 4  # a seed whose trials end both ways
    res = jaxqueens.evolve(10, 30, generations, trials, seed=seed)
    params = ga.default_params(res.config, **res.params, generations=generations)
    keys = base.chain_keys(jax.random.key(seed), jnp.arange(trials))
    out = _chains(ga, res.config, params, keys)
    solved = res.first_solved >= 0
    np.testing.assert_array_equal(np.asarray(out.solved), solved)
    np.testing.assert_array_equal(
        np.asarray(out.steps), np.where(solved, res.first_solved, generations)
    )
    found = {tuple(b) for b in res.solutions}
    assert all(tuple(r) in found for r in np.asarray(out.rows)[solved])
    assert solved.any() and not solved.all()  # both outcomes are compared


def test_default_params_are_checked():
    config = mc.Config(n=8, tabu=2)
    assert int(mc.default_params(config).tabu) == 2
    for bad in ({"max_steps": 0}, {"tabu": 3}, {"max_restarts": -1}, {"qs4_tries": 0}):
        with pytest.raises(ValueError):
            mc.default_params(config, **bad)


def test_a_shorter_tabu_tenure_is_a_params_value():
    """Params.tabu up to Config.tabu: a tenure equal to the capacity is the classic rule, and
    another tenure is one more value of the same compiled kernel."""
    chex.clear_trace_counter()
    config = mc.Config(n=16, tabu=4)
    keys = base.chain_keys(jax.random.key(1), jnp.arange(32))
    run = jax.jit(
        chex.assert_max_traces(lambda p: jax.vmap(lambda k: mc.run(k, config, p))(keys), n=1)
    )
    for tenure in (0, 2, 4):
        out = run(mc.default_params(config, max_steps=200, tabu=tenure))
        assert np.asarray(out.solved).all()


# --- the exact families: count (one task) and complete (one constrained instance) --------------

EXACT_HOOKS = ("Problem", "done", "result", "finish", "resume")


@pytest.mark.parametrize("family", [count, complete], ids=["count", "complete"])
def test_exact_families_expose_the_contract(family):
    for name in CONTRACT + EXACT_HOOKS:
        assert hasattr(family, name), name
    assert family.Config.__dataclass_params__.frozen
    for cls in (family.Params, family.State, family.Result, family.Problem):
        assert issubclass(cls, tuple) and hasattr(cls, "_fields")


def _words(x) -> np.ndarray:
    """uint32 words [..., 2] (low, high) as exact uint64."""
    w = np.asarray(x).astype(np.uint64)
    return w[..., 0] | (w[..., 1] << np.uint64(32))


def _count_case(n=8):
    probs = count.problems(n)
    return probs, count.default_params(probs.config)


def _complete_cases():
    """(name, config, problems [B, n], models): count, decide and enumerate configurations over
    instances with known answers (SAT and UNSAT, a torus, excluded diagonals)."""
    models = [
        C.Constraints(8),
        C.completion(8, [(1, 3), (3, 4)]),
        C.completion(8, [(0, 0), (1, 1)]),  # two queens on a diagonal: UNSAT
        C.excluded_diagonals(8, [[3, 1], [6, 0], [9, 1]]),
    ]
    allowed = np.stack([complete.problem(m).allowed for m in models])
    return [
        (mode, complete.Config(8, cap=cap, decide=decide), complete.Problem(allowed), models)
        for mode, cap, decide in (("count", 0, False), ("decide", 0, True), ("enumerate", 6, False))
    ]


def test_exact_families_take_no_key_typed_or_legacy_alike_and_refuse_others():
    probs, params = _count_case()
    task = jax.tree.map(lambda x: x[5], probs.tasks)
    # one compiled run per kind of key (outside jit, every call compiled its while loop anew)
    run = jax.jit(count.run, static_argnums=1)
    runs = [run(k, probs.config, params, task) for k in (None, *_keys())]
    for got in runs[1:]:
        chex.assert_trees_all_equal(got, runs[0])
    _, config, problems, _ = _complete_cases()[0]
    inst = jax.tree.map(lambda x: x[1], problems)
    cparams = complete.default_params(config)
    run = jax.jit(complete.run, static_argnums=1)
    runs = [run(k, config, cparams, inst) for k in (None, *_keys())]
    for got in runs[1:]:
        chex.assert_trees_all_equal(got, runs[0])
    for bad in (3, jnp.uint32(3), jnp.zeros(2, jnp.float32)):
        with pytest.raises(QueensError, match=r"jax\.random\.key"):
            count.init(bad, probs.config, params, task)
        with pytest.raises(QueensError, match=r"jax\.random\.key"):
            complete.init(bad, config, cparams, inst)


def _keys():
    return jax.random.key(3), jax.random.PRNGKey(3), jax.random.key(4)


@pytest.mark.parametrize("n", range(1, 11))
def test_count_run_over_the_problems_of_n_is_a000170_and_the_driver(n):
    """sum(weights * found) over problems(n) = Q(n) = the driver's total, at the driver's depth
    with the same tree edges (less one virtual edge per task the driver counts on the host)."""
    probs, params = _count_case(n)
    out = _exact(count, probs.config, params, probs.tasks)
    assert np.asarray(out.finished).all()
    assert count.total(out, probs.weights) == A000170[n]
    if n < 4:
        return
    deep = count.problems(n, n - 2)  # one-level tasks (one virtual edge each) from n = 5 on
    params = count.default_params(deep.config)
    out = _exact(count, deep.config, params, deep.tasks)
    assert count.total(out, deep.weights) == A000170[n]
    res = count_driver.count_solutions(n)
    assert res.total == A000170[n]
    probs = count.problems(n, res.depth)
    params = count.default_params(probs.config)
    out = _exact(count, probs.config, params, probs.tasks)
    assert count.total(out, probs.weights) == res.total
    real = np.asarray(probs.tasks.prefix)[:, 0] != 0  # virtual tasks start on an empty board
    assert int(_words(out.edges)[real].sum()) == res.edges


def test_count_vmap_over_params_compiles_once_and_resume_reaches_the_same_total():
    chex.clear_trace_counter()
    probs, _ = _count_case(9)
    config, tasks = probs.config, probs.tasks

    @jax.jit
    @chex.assert_max_traces(n=1)
    def sweep(budgets, tasks):
        def one(b):
            params = count.Params(b)
            return jax.vmap(lambda p: count.run(None, config, params, p))(tasks)

        return jax.vmap(one)(budgets)

    budgets = jnp.array([1, 7, 40, count.MAX_BUDGET], jnp.int32)
    out = sweep(budgets, tasks)
    chex.assert_shape(out.found, (4, len(probs.weights), 2))
    back = sweep(budgets[::-1], tasks)  # new values: no new trace; awaited, the same lanes
    chex.assert_trees_all_equal(back, jax.tree.map(lambda x: np.asarray(x)[::-1], out))
    edges = _words(out.edges)
    assert (edges <= np.asarray(budgets)[:, None]).all()
    assert np.asarray(out.finished[-1]).all() and not np.asarray(out.finished[0]).all()

    # calls of 7 edges, resumed until every task is searched: the same total and edges
    params = count.default_params(config, budget=7)
    resume = jax.jit(jax.vmap(lambda s, p: count.resume(s, config, params, p)))
    # jitted: op by op, vmap compiles every primitive of init and done once more
    state = jax.jit(jax.vmap(lambda p: count.init(None, config, params, p)))(tasks)
    done = jax.jit(lambda s: count.done(s, config, params))
    calls = 0
    while not np.asarray(done(state)).all():
        state, calls = resume(state, tasks), calls + 1
    got = count.result(state, config, params)
    assert calls > 1
    assert count.total(got, probs.weights) == A000170[9]
    np.testing.assert_array_equal(_words(got.edges), edges[-1])


def test_count_scan_of_step_reaches_what_run_reports():
    probs, params = _count_case(8)
    config = probs.config

    @jax.jit
    def scanned(task):
        s = count.init(None, config, params, task)
        s, _ = lax.scan(lambda s, _: (count.step(s, config, params, task), None), s, None, 600)
        return count.done(s, config, params), count.result(s, config, params)

    finished, got = jax.vmap(scanned)(probs.tasks)
    assert np.asarray(finished).all()
    want = _exact(count, config, params, probs.tasks)
    chex.assert_trees_all_equal(got, want)


def test_count_totals_carry_past_2_to_the_32():
    """A state's completions are two words: one more past 2^32 - 1 carries (no silent wrap),
    and total() sums in Python ints."""
    probs = count.problems(8, 6)  # 6 columns placed: every task's first level is its last
    params = count.default_params(probs.config)
    found = count.run(None, probs.config, params, jax.tree.map(lambda x: x[0], probs.tasks))
    i = int(np.flatnonzero(np.asarray(probs.tasks.prefix)[:, 0] == 0)[0])  # a one-edge task
    task = jax.tree.map(lambda x, i=i: x[i], probs.tasks)
    s = count.init(None, probs.config, params, task)
    s = s._replace(found=jnp.array([0xFFFFFFFF, 0], jnp.uint32))
    s = count.step(s, probs.config, params, task)
    assert count.to_int(s.found) == 2**32 and bool(count.done(s, probs.config, params))
    big = count.Result(jnp.array([[0xFFFFFFFF, 7]], jnp.uint32), jnp.array([True]), found.edges)
    assert count.total(big, [8]) == 8 * (7 * 2**32 + 2**32 - 1)


def test_count_bad_arguments():
    with pytest.raises(ValueError, match="budget"):
        count.default_params(count.Config(8, 8), budget=-1)
    with pytest.raises(ValueError, match="n must lie"):
        count.problems(33)
    with pytest.raises(ValueError, match="depth"):
        count.problems(8, 7)
    probs, _ = _count_case(8)
    params = count.default_params(probs.config, budget=1)
    out = _exact(count, probs.config, params, probs.tasks)
    with pytest.raises(ValueError, match="not finished"):
        count.total(out, probs.weights)


def _check_against_driver(models, mode, cap, out):
    """The contract's results [B] for ``models`` equal the driver's (as given: orient=False),
    and every solution passes the checker."""
    want = complete_driver.solve_instances(models, mode, cap=max(cap, 1), orient=False)
    for i, (m, w) in enumerate(zip(models, want.instances, strict=True)):
        assert complete.STATUS[int(out.status[i])] == w.status, (i, mode)
        assert bool(out.finished[i])
        found = int(_words(out.found[i]))
        if w.solutions is not None:
            assert found == w.solutions
        if w.status != "SAT":
            assert (np.asarray(out.rows[i]) == -1).all()
            continue
        rows = np.asarray(out.rows[i])
        assert checker.check_constrained(rows, m).ok
        np.testing.assert_array_equal(rows, w.boards[0])
        listed = min(found, cap) if cap else 1
        boards = np.asarray(out.boards[i])
        np.testing.assert_array_equal(boards[:listed], w.boards[:listed])
        assert (boards[listed:] == -1).all()
        for b in boards[:listed]:
            assert checker.check_constrained(b, m).ok


@pytest.mark.parametrize("case", _complete_cases(), ids=lambda c: c[0])
def test_complete_run_equals_the_driver(case):
    mode, config, problems, models = case
    out = _exact(complete, config, complete.default_params(config), problems)
    _check_against_driver(models, mode, config.cap, out)


@pytest.mark.parametrize("mode", ["decide", "count"])
def test_complete_run_on_shipped_prob079_instances_equals_the_driver(mode):
    arc = PROB079 / "diag-10.tar.gz"
    loaded = instio.load_instances([str(arc)], diags=8).instances[::97][:8]
    models = [i.model for i in loaded]
    config = complete.Config(10, decide=mode == "decide")
    problems = complete.Problem(np.stack([complete.problem(m).allowed for m in models]))
    out = _exact(complete, config, complete.default_params(config), problems)
    assert {complete.STATUS[int(s)] for s in out.status} == {"SAT", "UNSAT"}  # both kinds
    _check_against_driver(models, mode, 0, out)


@pytest.mark.parametrize("case", _complete_cases(), ids=lambda c: c[0])
def test_complete_scan_of_step_reaches_what_run_reports(case):
    _, config, problems, _ = case
    params = complete.default_params(config)

    @jax.jit
    def scanned(p):
        s = complete.init(None, config, params, p)
        s, _ = lax.scan(lambda s, _: (complete.step(s, config, params, p), None), s, None, 2500)
        return complete.done(s, config, params), complete.result(s, config, params)

    finished, got = jax.vmap(scanned)(problems)
    assert np.asarray(finished).all()
    want = _exact(complete, config, params, problems)
    chex.assert_trees_all_equal(got, want)


def test_complete_vmap_over_params_compiles_once_and_resume_reaches_the_same_answer():
    chex.clear_trace_counter()
    _, config, problems, models = _complete_cases()[0]  # count mode

    @jax.jit
    @chex.assert_max_traces(n=1)
    def sweep(budgets, problems):
        def one(b):
            params = complete.Params(b)
            return jax.vmap(lambda p: complete.run(None, config, params, p))(problems)

        return jax.vmap(one)(budgets)

    budgets = jnp.array([3, 30, complete.MAX_BUDGET], jnp.int32)
    out = sweep(budgets, problems)
    chex.assert_shape(out.rows, (3, len(models), 8))
    back = sweep(budgets[::-1], problems)  # new values: no new trace; awaited, the same lanes
    chex.assert_trees_all_equal(back, jax.tree.map(lambda x: np.asarray(x)[::-1], out))
    assert (np.asarray(out.steps) <= np.asarray(budgets)[:, None]).all()
    assert complete.STATUS[int(out.status[0, 0])] == "unknown"  # 3 edges: no answer yet
    full = jax.tree.map(lambda x: x[-1], out)

    params = complete.default_params(config, budget=5)
    resume = jax.jit(jax.vmap(lambda s, p: complete.resume(s, config, params, p)))
    result = jax.jit(jax.vmap(lambda s: complete.result(s, config, params)))
    # jitted: op by op, vmap compiles every primitive of init once more
    state = jax.jit(jax.vmap(lambda p: complete.init(None, config, params, p)))(problems)
    calls = 0
    while not np.asarray(result(state).finished).all():
        state, calls = resume(state, problems), calls + 1
    assert calls > 1
    got = result(state)
    chex.assert_trees_all_equal(got, full)  # the same edges, the same answers


def test_complete_bad_arguments():
    config = complete.Config(8)
    with pytest.raises(ValueError, match="budget"):
        complete.default_params(config, budget=2**31)
    with pytest.raises(ValueError, match="shape"):
        complete.init(None, config, complete.default_params(config), complete.Problem(np.ones(7)))


# ----------------------------------------------------------------------------- checked boundaries


def _all_families():
    """(module, config, params, problem) of every public kernel family, small."""
    probs, _ = _count_case(8)
    cc = complete.Config(8)
    ec = estimate.Config(8)
    return [
        (mc, mc.Config(n=8), mc.default_params(mc.Config(n=8)), None),
        (sls, sls.Config(n=8), sls.default_params(sls.Config(n=8)), None),
        (ga, ga.Config(n=8, pop=8), ga.default_params(ga.Config(n=8, pop=8)), None),
        (large, large.Config(n=8), large.default_params(large.Config(n=8)), None),
        (estimate, ec, estimate.default_params(ec), None),
        (count, probs.config, count.default_params(probs.config), _first_task(probs)),
        (complete, cc, complete.default_params(cc), complete.problem(C.Constraints(8))),
    ]


def _first_task(probs):
    return jax.tree.map(lambda x: x[0], probs.tasks)


def _call(family, key, config, params, problem):
    if family in (large,):
        return family.run(key, config, params)
    return family.run(key, config, params, problem)


@pytest.mark.parametrize(
    "index",
    range(7),
    ids=["minconflicts", "anneal", "ga", "large", "estimate", "count", "complete"],
)
def test_defect_wrong_arguments_leaked_attribute_errors(index):
    """run(k, {"n": 8}, p), run(k, cfg, None), another family's Config and step((1, 2), cfg, p)
    raised AttributeError from inside the kernel; every family names what it wants."""
    family, config, params, problem = _all_families()[index]
    key = jax.random.key(0)
    other = mc.Config(n=8) if family is not mc else sls.Config(n=8)
    for args, needle in (
        (({"n": 8}, params), "config must be a"),
        ((config, None), "params must be a"),
        ((other, params), "config must be a"),
    ):
        with pytest.raises(QueensError, match=needle):
            _call(family, key, *args, problem)
    step_args = (config, params) if family is large else (config, params, problem)
    with pytest.raises(QueensError, match="state must be a"):
        family.step((1, 2), *step_args)


@pytest.mark.parametrize("size", [8.0, 8.5, True, "8"])
def test_defect_configs_took_sizes_that_are_not_whole_numbers(size):
    """Config(n=8.0) and (n=8.5) were accepted by minconflicts, anneal, estimate and count."""
    for make in (
        lambda: mc.Config(n=size),
        lambda: sls.Config(n=size),
        lambda: estimate.Config(n=size),
        lambda: count.Config(n=size, levels=16),
        lambda: large.Config(n=size),
        lambda: complete.Config(n=size),
        lambda: ga.Config(n=size, pop=8),
    ):
        with pytest.raises(QueensError, match="n must be a whole number"):
            make()
