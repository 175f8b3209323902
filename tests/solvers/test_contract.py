"""The public kernel contract (jaxqueens.solvers.base), family by family: typed and legacy keys,
init/step/run inside a user's jit, vmap over keys and over Params (one compile), lax.scan of step,
and results equal to the drivers' on the same seeds."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jaxqueens
from jaxqueens.errors import QueensError
from jaxqueens.solvers import anneal as sls
from jaxqueens.solvers import base, estimate, ga, large
from jaxqueens.solvers import minconflicts as mc

CONTRACT = ("Config", "Params", "default_params", "State", "Result", "init", "step", "run")
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
    chex.assert_trees_all_equal(
        family.run(typed, config, params), family.run(legacy, config, params)
    )
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
    sweep_run(values[::-1], keys)  # new values: no new trace
    for i, v in enumerate(np.asarray(values)):  # each row is the run with that value
        one = jax.vmap(lambda k, v=v: family.run(k, config, sweep(params, v)))(keys)
        chex.assert_trees_all_equal(jax.tree.map(lambda x, i=i: x[i], out), one)


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
    res = jaxqueens.solve(12, chains=20, seed=7, max_steps=50, quiet=True)
    config = res.config
    params = mc.default_params(config, max_steps=50)
    keys = base.chain_keys(jax.random.key(7), jnp.arange(20))
    out = jax.jit(jax.vmap(lambda k: mc.run(k, config, params)))(keys)
    np.testing.assert_array_equal(np.asarray(out.rows), res.run.rows)
    np.testing.assert_array_equal(np.asarray(out.steps), res.run.steps)
    np.testing.assert_array_equal(np.asarray(out.restarts), res.run.restarts)


def test_anneal_run_equals_the_driver_chain_by_chain():
    res = jaxqueens.anneal(8, "sa", chains=12, steps=600, seed=4, quiet=True)
    _, key = jax.random.split(jax.random.key(4))  # the driver's calibration takes the first half
    params = sls.Params(jnp.asarray(res.schedule))
    keys = base.chain_keys(key, jnp.arange(12))
    out = jax.jit(jax.vmap(lambda k: sls.run(k, res.config, params)))(keys)
    np.testing.assert_array_equal(np.asarray(out.rows), res.run.rows)
    np.testing.assert_array_equal(np.asarray(out.solved), res.run.solved)


def test_ga_run_equals_the_driver_trial_by_trial():
    """The GA kernel vmapped over the trials' keys under one jit: trial t stops at the driver's
    first solved generation with one of its solutions, or spends the budget."""
    generations, trials = 40, 6
    res = jaxqueens.evolve(10, 30, generations, trials, seed=3, quiet=True)
    params = ga.default_params(res.config, **res.params, generations=generations)
    keys = base.chain_keys(jax.random.key(3), jnp.arange(trials))
    out = jax.jit(jax.vmap(lambda k: ga.run(k, res.config, params)))(keys)
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
