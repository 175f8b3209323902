"""Knuth's estimator's kernel calls (drivers/estimate_calls.py): one trace per shape, the same
sums on any number of devices or blocks, and a call's probes the kernel's walks of its stream."""

import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxqueens.core import prefixes
from jaxqueens.drivers import estimate_calls as EC
from jaxqueens.solvers import estimate as kernel


def _strata(n, depth, per_call, group, block=0):
    masks64, _ = prefixes.expand(n, depth)
    words = kernel.words_of(masks64, 1)
    words = np.concatenate([words, np.full((len(words) % 2, 3, 1), 0xFFFFFFFF, np.uint32)])
    plan = EC.Plan(kernel.Config(n=n, depth=depth), per_call=per_call, group=group, block=block)
    return jnp.asarray(words), jnp.arange(len(words), dtype=jnp.int32), plan


def test_run_call_traces_once_per_shape():
    masks, ids, plan = _strata(6, 1, 8, 4)
    call = jax.jit(chex.assert_max_traces(EC.run_call.__wrapped__, n=1), static_argnums=(3, 4))
    for seed in range(3):
        call(masks, ids, EC.call_seed(seed, 0), plan, 1)


def test_run_call_same_sums_on_one_device_or_two():
    if jax.local_device_count() < 2:
        pytest.skip("needs two host devices")
    masks, ids, plan = _strata(8, 1, 8, 8)
    one = EC.run_call(masks, ids, EC.call_seed(3, 0), plan, 1)
    two = EC.run_call(masks, ids, EC.call_seed(3, 0), plan, 2)
    chex.assert_trees_all_equal(one, two)
    chex.assert_trees_all_equal(one, EC.strata_block(masks, ids, EC.call_seed(3, 0), plan))


class StrataBlockTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_strata_block_lockstep_equals_blocks(self):
        masks, ids, plan = _strata(6, 1, per_call=8, group=4)
        blocked = dataclasses.replace(plan, block=16)
        whole = self.variant(lambda mk, i, s: EC.strata_block(mk, i, s, plan))(
            masks, ids, EC.call_seed(5, 0)
        )
        parts = self.variant(lambda mk, i, s: EC.strata_block(mk, i, s, blocked))(
            masks, ids, EC.call_seed(5, 0)
        )
        chex.assert_trees_all_equal(whole, parts)
        chex.assert_shape(list(whole), (len(ids), 8 // 4))
        assert int(np.asarray(whole.hits).sum()) > 0


def test_a_call_is_the_kernels_probes_of_its_stream():
    """A call's sums are the kernel's walks: lane stratum * per_call + j of call_seed(seed, c)."""
    masks, ids, plan = _strata(9, 2, per_call=16, group=8, block=32)
    seed = EC.call_seed(7, 3)
    params = kernel.default_params(plan.probe)
    lanes = ids[:, None].astype(jnp.uint32) * 16 + jnp.arange(16, dtype=jnp.uint32)
    walks = jax.jit(
        jax.vmap(
            jax.vmap(
                lambda mk, ln: kernel.walk(seed, ln, plan.probe, params, kernel.Problem(mk)),
                (None, 0),
            )
        )
    )(masks, lanes)
    got = EC.run_call(masks, ids, seed, plan, 1)
    chex.assert_trees_all_equal(got, kernel.group_sums(walks, 8))
