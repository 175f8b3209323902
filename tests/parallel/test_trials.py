"""parallel.trials: GA trials in lockstep equal the per-trial kernel, trial by trial, for any
batch, chunking or device count."""

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from absl.testing import parameterized

from jaxqueens.core import checker
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
# The per-trial kernel compiled (op by op, its initialisation compiled a program per operation)
GENERATION = jax.jit(ga.generation, static_argnums=1)
INIT = jax.jit(ga.init, static_argnums=1)
INITIAL_METRICS = jax.jit(ga.initial_metrics, static_argnums=1)
# A chunk of generations of a batch, compiled once per (Config, chunk) for every batch of the
# same shapes (a jax.jit of a new lambda would compile it again): the lockstep and sweep tests
# run the same program.
GENERATIONS = jax.jit(trials.generations, static_argnums=(0, 5))
RUN_CHUNK = jax.jit(trials.run_chunk, static_argnums=(0, 5, 6))


def _row(tree, t):
    """Row t of every leaf, taken on the host (an eager index compiles a program per shape)."""
    return jax.tree.map(lambda x: np.asarray(x)[t], tree)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_lockstep_trials_equal_each_trial_alone(name):
    """Trial t of a batch is the per-trial kernel keyed fold_in(key, t): its initial state,
    generations and metrics (the batching rule of masked_apply folds the trials into one
    compaction and changes nothing)."""
    config, params, key = CONFIGS[name], PARAMS[name], jax.random.key(7)
    states, m0 = trials.init(config, key, 3, jnp.int32(0), params)
    chex.assert_shape(states.genes, (3, config.islands, config.pop, config.n))
    chex.assert_shape(states.gen, (3,))
    after, ms = GENERATIONS(config, states, params, None, jnp.int32(4), 5)
    chex.assert_shape(ms.best, (5, 3))
    keys = chain_keys(key, jnp.arange(3))
    for t in range(3):
        s = INIT(keys[t], config, params)
        chex.assert_trees_all_equal(s, _row(states, t))
        chex.assert_trees_all_equal(INITIAL_METRICS(s, config, params), _row(m0, t))
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
    # the batch sizes other tests compile (3: the lockstep test, 2: the trace test)
    three = trials.init(config, key, 3, jnp.int32(0), params)
    two = trials.init(config, key, 2, jnp.int32(1), params)
    chex.assert_trees_all_equal(jax.tree.map(lambda x: np.asarray(x)[1:], three), two)


@functools.cache
def _chunk_start():
    """The chunks test's batch, and its 6 generations as one chunk on one device."""
    config, params = CONFIGS["generational"], PARAMS["generational"]
    states, _ = trials.init(config, jax.random.key(1), 4, jnp.int32(0), params)
    return states, RUN_CHUNK(config, states, params, None, jnp.int32(6), 6, 1)


@pytest.mark.parametrize("num_devices", DEVICES)
def test_chunks_and_devices_do_not_change_the_trials(num_devices):
    """Two chunks of 3 generations on each device count end where one chunk of 6 on one device
    ends, with the same records."""
    config, params = CONFIGS["generational"], PARAMS["generational"]
    states, (whole, m_whole) = _chunk_start()
    half, m1 = RUN_CHUNK(config, states, params, None, jnp.int32(6), 3, num_devices)
    half, m2 = RUN_CHUNK(config, half, params, None, jnp.int32(6), 3, num_devices)
    chex.assert_trees_all_equal(whole, half)
    chex.assert_trees_all_equal(m_whole, jax.tree.map(lambda a, b: np.concatenate([a, b]), m1, m2))


def test_a_chunk_traces_once():
    chex.clear_trace_counter()
    config = CONFIGS["steady-islands"]
    run = jax.jit(chex.assert_max_traces(trials.generations, n=1), static_argnums=(0, 5))
    states, _ = trials.init(config, jax.random.key(0), 2, jnp.int32(0), PARAMS["steady-islands"])
    states, _ = run(config, states, PARAMS["steady-islands"], None, jnp.int32(9), 3)
    other = ga.default_params(config, cxpb=0.1, tournament=2, migrants=1, migrate_every=1)
    run(config, states, other, None, jnp.int32(4), 3)  # other rates and stop: no retrace


class TrialsVariantsTest(chex.TestCase):
    """init and generations give the same batch with and without jit, with the documented
    shapes, and their records agree with a NumPy reference computed from the states."""

    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.named_parameters(*((name, name) for name in CONFIGS))
    def test_batch_against_a_numpy_reference(self, name):
        config, params, key = CONFIGS[name], PARAMS[name], jax.random.key(5)
        T, I, P, n, K = 3, config.islands, config.pop, config.n, config.sols_per_gen
        init = self.variant(lambda k, p: trials.init(config, k, T, jnp.int32(0), p))
        chunk = self.variant(lambda s, p, stop: trials.generations(config, s, p, None, stop, 1))
        states, m0 = init(key, params)
        chex.assert_trees_all_equal((states, m0), trials.init(config, key, T, jnp.int32(0), params))
        chex.assert_shape(states.genes, (T, I, P, n))
        chex.assert_shape(states.fit, (T, I, P))
        chex.assert_shape(states.seed, (T, I, 2))
        chex.assert_shape([states.gen, states.best_fit], (T,))
        chex.assert_shape(states.best_rows, (T, n))
        chex.assert_shape([m0.best, m0.avg, m0.worst, m0.nevals], (T,))
        chex.assert_shape(m0.sols, (T, I, K, n))
        best_seen = np.asarray(states.best_fit)
        # op by op every call compiles its generation anew: two generations there (the second
        # migrates, migrate_every = 2), three with jit
        gens = 2 if self.variant.type is chex.ChexVariantType.WITHOUT_JIT else 3
        for g in range(gens):
            states, m = chunk(states, params, jnp.int32(3))
            chex.assert_shape([m.best, m.avg, m.worst, m.nevals], (1, T))
            chex.assert_shape(m.sols, (1, T, I, K, n))
            chex.assert_shape(m.sols_ok, (1, T, I, K))
            genes = np.asarray(states.genes).reshape(T, I * P, n)
            fit = checker.attacking_pairs(genes.reshape(-1, n)).reshape(T, I * P)
            np.testing.assert_array_equal(np.asarray(states.fit).reshape(T, -1), fit)
            np.testing.assert_array_equal(np.asarray(m.best[0]), fit.min(axis=1))
            np.testing.assert_array_equal(np.asarray(m.worst[0]), fit.max(axis=1))
            np.testing.assert_allclose(np.asarray(m.avg[0]), fit.mean(axis=1), rtol=1e-6)
            best_seen = np.minimum(best_seen, fit.min(axis=1))
            np.testing.assert_array_equal(np.asarray(states.best_fit), best_seen)
            rows = np.asarray(states.best_rows)
            np.testing.assert_array_equal(checker.attacking_pairs(rows), best_seen)
            sols, ok = np.asarray(m.sols[0]).reshape(-1, n), np.asarray(m.sols_ok[0]).ravel()
            assert (checker.are_solutions(sols)[ok]).all()
            assert (np.asarray(states.gen) == g + 1).all()


def test_a_swept_params_leaf_is_one_trace_and_each_lane_its_own_run():
    """vmap over a Params leaf (8 mutation rates) of a batch of trials: one trace for any rates,
    and lane i is the batch run alone with rate i (the lockstep test's compiled chunk)."""
    chex.clear_trace_counter()
    config, params = CONFIGS["generational"], PARAMS["generational"]
    states, _ = trials.init(config, jax.random.key(2), 3, jnp.int32(0), params)

    @jax.jit
    @chex.assert_max_traces(n=1)
    def sweep(rates, states):
        def lane(rate):
            return trials.generations(config, states, params._replace(mutpb=rate), None, 4, 5)

        return jax.vmap(lane)(rates)

    rates = jnp.linspace(0.0, 1.0, 8, dtype=jnp.float32)
    out, ms = sweep(rates, states)
    chex.assert_shape(out.genes, (8, 3, config.islands, config.pop, config.n))
    chex.assert_shape(ms.best, (8, 5, 3))
    sweep(rates[::-1] * 0.5, states)  # other rates: no new trace
    for i in (0, 5, 7):
        alone = GENERATIONS(config, states, params._replace(mutpb=rates[i]), None, jnp.int32(4), 5)
        chex.assert_trees_all_equal(_row((out, ms), i), alone)
    assert not np.array_equal(np.asarray(out.genes[0]), np.asarray(out.genes[7]))
