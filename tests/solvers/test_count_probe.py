"""Knuth's probe of a counting task's tree (solvers/count_probe.py) against the exact search."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxqueens.core.oeis import A000170
from jaxqueens.solvers import count as count_kernel
from jaxqueens.solvers import count_probe


def _probe_all(probs, seed, lanes):
    """Every task probed ``lanes`` times: Probe of float64 ``[P, lanes]``."""
    config = probs.config
    one = jax.vmap(
        lambda p, t, lane: count_probe.probe(count_kernel.Problem(p, t), seed, lane, config)
    )
    reps = len(probs.tasks.prefix)
    ids = jnp.arange(reps * lanes, dtype=jnp.uint32)
    out = jax.jit(one)(
        jnp.repeat(probs.tasks.prefix, lanes, 0), jnp.repeat(probs.tasks.table, lanes, 0), ids
    )
    return count_probe.Probe(
        *(np.asarray(x, np.float64).reshape(reps, lanes) for x in (out.edges, out.found))
    )


@pytest.mark.parametrize("n", [8, 11])
def test_knuth_probes_estimate_each_tasks_edges_and_completions_without_bias(n):
    """Knuth's estimator is unbiased: the mean of many probes of a task is its exact edge and
    completion count (from `count.run`) within a few standard errors, summed over every task
    (a single-path tree is exact)."""
    probs = count_kernel.problems(n)
    params = count_kernel.default_params(probs.config)
    exact = jax.jit(jax.vmap(lambda p: count_kernel.run(None, probs.config, params, p)))(
        probs.tasks
    )
    edges = np.array([count_kernel.to_int(e) for e in np.asarray(exact.edges)], np.float64)
    found = np.array([count_kernel.to_int(f) for f in np.asarray(exact.found)], np.float64)
    out = _probe_all(probs, jnp.uint32(5), 256)
    for est, real in ((out.edges, edges), (out.found, found)):
        se = np.sqrt((est.var(axis=1, ddof=1) / est.shape[1]).sum())
        assert abs(est.mean(axis=1).sum() - real.sum()) <= 4 * se + 1e-6, (
            est.mean(1).sum(),
            real.sum(),
        )
        single = est.var(axis=1) == 0  # every probe of the task took the same walk: exact
        np.testing.assert_allclose(est[single, 0], real[single], rtol=1e-6)
    weighted = (out.found.mean(axis=1) * probs.weights).sum()
    assert abs(weighted - A000170[n]) < 0.2 * A000170[n]
    again = _probe_all(probs, jnp.uint32(5), 256)  # the same stream: the same walks
    np.testing.assert_array_equal(again.edges, out.edges)
    assert not np.array_equal(_probe_all(probs, jnp.uint32(6), 256).edges, out.edges)
