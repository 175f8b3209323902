"""drivers.anneal: schedules (TA thresholds, SA temperatures), solving, reproducibility, errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxqueens
from jaxqueens.core import checker
from jaxqueens.core.rng import chain_seeds
from jaxqueens.drivers import anneal as annealing
from jaxqueens.errors import QueensError
from jaxqueens.solvers import anneal as sls


def test_ta_thresholds_from_walk_quantiles():
    config = annealing.make_config(8, "ta", 1000, 5, "step", 3, "attacks")
    key = jax.random.key(0)
    thresholds, _ = annealing.calibrate(key, config, walk=500, q=0.5)
    again, _ = annealing.calibrate(key, config, walk=500, q=0.5)
    np.testing.assert_array_equal(thresholds, again)  # fixed key, fixed schedule
    seed = chain_seeds(key, jnp.arange(1))[0]
    deltas = np.abs(np.asarray(sls.random_walk_deltas(seed, config, 500)))
    want = np.quantile(deltas, 0.5 * np.array([4, 3, 2, 1, 0]) / 5)
    np.testing.assert_allclose(thresholds[:-1], want[:-1], rtol=1e-6)
    assert thresholds[-1] == 0 and np.all(np.diff(thresholds) <= 0) and thresholds[0] > 0
    ls, _ = annealing.calibrate(key, annealing.make_config(8, "ls", 1000, 5, "step", 3, "attacks"))
    assert not ls.any()


def test_sa_start_temperature():
    d = np.array([1.0, 1.0, 2.0, 3.0, -1.0, 0.0])
    t0 = annealing.sa_start_temperature(d, 0.4)
    assert np.mean(np.exp(-d[d > 0] / t0)) == pytest.approx(0.4, abs=1e-6)
    assert annealing.sa_start_temperature(np.array([1.0]), 0.4) == pytest.approx(-1 / np.log(0.4))
    config = annealing.make_config(8, "sa", 1000, 4, "step", 3, "attacks")
    temps, _ = annealing.calibrate(jax.random.key(1), config, alpha=0.5)
    np.testing.assert_allclose(temps[1:] / temps[:-1], 0.5, rtol=1e-5)


def test_make_config_splits_the_steps_over_rounds():
    config = annealing.make_config(10, "sa", 1001, 10, "swap", 2, "pairs")
    assert (config.n, config.method, config.neighbour, config.step, config.objective) == \
        (10, "sa", "swap", 2, "pairs")
    assert config.rounds == 10 and config.steps_per_round == 101 and config.total_steps >= 1001


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


@pytest.mark.parametrize("kwargs,needle", [
    ({"step": -1}, "--step must lie in 1..n-1"), ({"step": 8}, "--step must lie in 1..n-1"),
    ({"rounds": 0}, "--rounds must be at least 1"), ({"steps": 5, "rounds": 10}, "--steps"),
    ({"method": "xx"}, "method"), ({"chains": 0}, "--chains"), ({"q": 0.0}, "q"),
])
def test_bad_parameters(kwargs, needle):
    args = {"n": 8, "method": "ta", "chains": 4, "steps": 100, **kwargs}
    with pytest.raises(QueensError, match=needle):
        jaxqueens.anneal(**args)
