"""parallel.trials: GA trials in lockstep equal the per-trial kernel, trial by trial, for any
batch, chunking or device count."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxqueens.parallel import trials
from jaxqueens.solvers import ga
from jaxqueens.solvers.base import chain_keys

DEVICES = [1, jax.local_device_count()] if jax.local_device_count() > 1 else [1]
CONFIGS = {
    "steady-islands": ga.Config(n=6, pop=8, islands=2, migrants=2, tournament=3),
    "generational": ga.Config(
        n=6,
        pop=8,
        scheme="generational",
        crossover="pmx",
        tournament=3,
        elite=1,
        islands=2,
        cx_cap32=16,
        mut_cap32=8,
        eval_cap32=20,
    ),
}
PARAMS = {
    name: ga.default_params(c, cxpb=0.6, mutpb=0.3, indpb=0.2, migrate_every=2)
    for name, c in CONFIGS.items()
}
GENERATION = jax.jit(ga.generation, static_argnums=1)


def _row(tree, t):
    return jax.tree.map(lambda x: x[t], tree)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_lockstep_trials_equal_each_trial_alone(name):
    """Trial t of a batch is the per-trial kernel keyed fold_in(key, t): its initial state,
    generations and metrics (the batching rule of masked_apply folds the trials into one
    compaction and changes nothing)."""
    config, params, key = CONFIGS[name], PARAMS[name], jax.random.key(7)
    states, m0 = trials.init(config, key, 3, jnp.int32(0), params)
    chex.assert_shape(states.genes, (3, config.islands, config.pop, config.n))
    chex.assert_shape(states.gen, (3,))
    run = jax.jit(trials.generations, static_argnums=(0, 5))
    after, ms = run(config, states, params, None, jnp.int32(4), 5)
    chex.assert_shape(ms.best, (5, 3))
    for t in range(3):
        s = ga.init(chain_keys(key, jnp.arange(3))[t], config, params)
        chex.assert_trees_all_equal(s, _row(states, t))
        chex.assert_trees_all_equal(ga.initial_metrics(s, config, params), _row(m0, t))
        for g in range(4):
            s, m = GENERATION(s, config, params)
            chex.assert_trees_all_equal(m, _row(_row(ms, g), t))
        chex.assert_trees_all_equal(s, _row(after, t))
    for x in jax.tree.leaves(_row(ms, 4)):  # past stop: skipped
        assert not np.asarray(x).any()
    assert (np.asarray(after.gen) == 4).all()


def test_trials_do_not_depend_on_their_neighbours():
    """Trial t draws from fold_in(key, t) only: the same trial in a smaller or shifted batch
    (the driver tests check that whole runs agree too)."""
    config, params, key = CONFIGS["steady-islands"], PARAMS["steady-islands"], jax.random.key(7)
    five = trials.init(config, key, 5, jnp.int32(0), params)
    two = trials.init(config, key, 2, jnp.int32(3), params)
    chex.assert_trees_all_equal(jax.tree.map(lambda x: x[3:], five), two)


@pytest.mark.parametrize("num_devices", DEVICES)
def test_chunks_and_devices_do_not_change_the_trials(num_devices):
    config, params = CONFIGS["generational"], PARAMS["generational"]
    states, _ = trials.init(config, jax.random.key(1), 4, jnp.int32(0), params)
    run = jax.jit(trials.run_chunk, static_argnums=(0, 5, 6))
    whole, m_whole = run(config, states, params, None, jnp.int32(6), 6, num_devices)
    half, m1 = run(config, states, params, None, jnp.int32(6), 3, num_devices)
    half, m2 = run(config, half, params, None, jnp.int32(6), 3, num_devices)
    chex.assert_trees_all_equal(whole, half)
    chex.assert_trees_all_equal(m_whole, jax.tree.map(lambda a, b: jnp.concatenate([a, b]), m1, m2))


def test_a_chunk_traces_once():
    chex.clear_trace_counter()
    config = CONFIGS["steady-islands"]
    run = jax.jit(chex.assert_max_traces(trials.generations, n=1), static_argnums=(0, 5))
    states, _ = trials.init(config, jax.random.key(0), 2, jnp.int32(0), PARAMS["steady-islands"])
    states, _ = run(config, states, PARAMS["steady-islands"], None, jnp.int32(9), 3)
    other = ga.default_params(config, cxpb=0.1, tournament=2, migrants=1, migrate_every=1)
    run(config, states, other, None, jnp.int32(4), 3)  # other rates and stop: no retrace
