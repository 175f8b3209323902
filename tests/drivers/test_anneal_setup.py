"""drivers.anneal_setup: the kernel config, and NMOF's schedules (TA thresholds from a walk's
quantiles, SA start temperatures by both rules)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxqueens.drivers import anneal_setup as setup
from jaxqueens.drivers.settings import t0_rule
from jaxqueens.errors import QueensError
from jaxqueens.solvers import anneal as sls
from jaxqueens.solvers.base import chain_keys


def test_ta_thresholds_from_walk_quantiles():
    config = setup.make_config(8, "ta", 1000, 5, "step", 3, "attacks")
    key = jax.random.key(0)
    thresholds, _ = setup.calibrate(key, config, walk=500, q=0.5)
    again, _ = setup.calibrate(key, config, walk=500, q=0.5)
    np.testing.assert_array_equal(thresholds, again)  # fixed key, fixed schedule
    chain0 = chain_keys(key, jnp.arange(1))[0]
    deltas = np.abs(np.asarray(sls.random_walk_deltas(chain0, config, 500)))
    want = np.quantile(deltas, 0.5 * np.array([4, 3, 2, 1, 0]) / 5)
    np.testing.assert_allclose(thresholds[:-1], want[:-1], rtol=1e-6)
    assert thresholds[-1] == 0 and np.all(np.diff(thresholds) <= 0) and thresholds[0] > 0
    ls, _ = setup.calibrate(key, setup.make_config(8, "ls", 1000, 5, "step", 3, "attacks"))
    assert not ls.any()


def test_sa_start_temperature():
    d = np.array([1.0, 1.0, 2.0, 3.0, -1.0, 0.0])
    t0 = setup.sa_start_temperature(d, 0.4)
    assert np.mean(np.exp(-d[d > 0] / t0)) == pytest.approx(0.4, abs=1e-6)
    assert setup.sa_start_temperature(np.array([1.0]), 0.4) == pytest.approx(-1 / np.log(0.4))
    config = setup.make_config(8, "sa", 1000, 4, "step", 3, "attacks")
    temps, _ = setup.calibrate(jax.random.key(1), config, alpha=0.5)
    np.testing.assert_allclose(temps[1:] / temps[:-1], 0.5, rtol=1e-5)


def test_make_config_splits_the_steps_over_rounds():
    config = setup.make_config(10, "sa", 1001, 10, "swap", 2, "pairs")
    assert (config.n, config.method, config.neighbour, config.step, config.objective) == (
        10,
        "sa",
        "swap",
        2,
        "pairs",
    )
    assert config.rounds == 10 and config.steps_per_round == 101 and config.total_steps >= 1001


def _nmof_reference_t0(d, p):
    """A plain search for SAopt's root: scan T on a fine log grid, then take the two neighbours
    that bracket mean(exp(-|d| / T)) = p (a different method from the driver's bisection)."""
    d = np.abs(d)
    grid = np.geomspace(1e-5, 1.0, 200_001)
    acc = np.exp(-d[None, :] / grid[:, None]).mean(axis=1)
    i = int(np.searchsorted(acc, p))
    return grid[i - 1], grid[i]


def test_nmof_start_temperature_rule():
    d = np.array([0.0, 1.0, -1.0, 2.0, 0.0, 1.0, 3.0, -2.0, 1.0, 0.0])  # 30% zeros, as SAopt counts
    t0 = setup.sa_start_temperature_nmof(d, 0.4)
    lo, hi = _nmof_reference_t0(d, 0.4)
    assert lo <= t0 <= hi and np.mean(np.exp(-np.abs(d) / t0)) == pytest.approx(0.4, abs=1e-9)
    assert t0 != pytest.approx(setup.sa_start_temperature(d, 0.4), rel=0.05)  # another rule
    with pytest.raises(QueensError, match="no start temperature in SAopt's interval"):
        setup.sa_start_temperature_nmof(np.array([0.0, 0.0, 0.0, 5.0]), 0.4)  # 75% zeros
    assert t0_rule("nmof") == "nmof" and t0_rule("2.5") == 2.5
    for bad in ("hot", "0", "-1", "inf"):
        with pytest.raises(QueensError, match="--t0"):
            t0_rule(bad)


def test_calibrate_nmof_t0_walks_from_the_start_board():
    config = setup.make_config(8, "sa", 1000, 4, "step", 3, "attacks", "nmof")
    key, start = jax.random.key(3), np.zeros(8, np.int32)
    temps, _ = setup.calibrate(key, config, walk=400, t0="nmof", start=start)
    chain0 = chain_keys(key, jnp.arange(1))[0]
    problem = sls.Problem(start=jnp.asarray(start))
    deltas = np.asarray(sls.random_walk_deltas(chain0, config, 400, problem))
    assert temps[0] == pytest.approx(setup.sa_start_temperature_nmof(deltas, 0.4), rel=1e-6)
    fixed, _ = setup.calibrate(key, config, walk=400, t0=2.0, alpha=0.5)
    np.testing.assert_allclose(fixed, 2.0 * 0.5 ** np.arange(4), rtol=1e-6)
