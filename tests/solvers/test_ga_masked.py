"""jaxqueens.solvers.ga_masked: masked_apply is exact, alone and under vmap."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxqueens.solvers import ga_masked


@pytest.mark.parametrize("cap32", [1, 8, 32])
def test_masked_apply_is_exact(cap32):
    rng = np.random.default_rng(7)
    x = jnp.asarray(rng.integers(0, 100, (500, 4)).astype(np.int32))
    mask = jnp.asarray(rng.random(500) < 0.4)
    fn = lambda r: r * 3 + 1
    got = jax.jit(lambda m, x: ga_masked.masked_apply(fn, m, (x,), x, cap32))(mask, x)
    assert (got == jnp.where(mask[:, None], fn(x), x)).all()


@pytest.mark.parametrize("cap32", [1, 8, 32])
def test_masked_apply_under_vmap_equals_each_lane(cap32):
    """The batching rule folds vmapped lanes into one compaction; each row reads its own lane's
    shared values (batched at one level, at the other, or at both of two nested vmaps)."""
    rng = np.random.default_rng(9)
    t, b = 3, 50
    x = jnp.asarray(rng.integers(0, 100, (t, b, 4)).astype(np.int32))
    mask = jnp.asarray(rng.random((t, b)) < 0.3)
    k = jnp.asarray([2, 3, 5], jnp.int32)
    m = jnp.asarray(rng.integers(0, 9, (t, 7)).astype(np.int32))
    fn = lambda k, m, r: (r * k + m[3], r - k)
    one = lambda mk, x, k, m: ga_masked.masked_apply(fn, mk, (x,), (x, x), cap32, (k, m))
    ref = lambda mk, x, k, m: jax.tree.map(
        lambda o: jnp.where(mk[:, None], o, x), jax.vmap(lambda r: fn(k, m, r))(x)
    )
    cases = [((0, 0, 0, 0), (mask, x, k, m)), ((0, 0, None, 0), (mask, x, k[1], m))]
    cases += [((None, None, 0, None), (mask[0], x[0], k, m[0]))]  # only the shared k batched
    for axes, args in cases:
        got = jax.jit(jax.vmap(one, in_axes=axes))(*args)
        chex.assert_trees_all_equal(got, jax.vmap(ref, in_axes=axes)(*args))
    inner = (0, 0, None, 0)  # trials, each with its own m; an outer sweep over k
    nested = jax.vmap(jax.vmap(one, in_axes=inner), in_axes=(None, None, 0, None))
    want = jax.vmap(jax.vmap(ref, in_axes=inner), in_axes=(None, None, 0, None))
    chex.assert_trees_all_equal(jax.jit(nested)(mask, x, k, m), want(mask, x, k, m))
    outer = (0, 0, 0, None)  # both levels batched, m batched at the inner level only
    xx, mm = jnp.stack([x, x + 1, x + 2]), jnp.stack([mask, ~mask, mask])
    nested = jax.vmap(jax.vmap(one, in_axes=inner), in_axes=outer)
    want = jax.vmap(jax.vmap(ref, in_axes=inner), in_axes=outer)
    chex.assert_trees_all_equal(jax.jit(nested)(mm, xx, k, m), want(mm, xx, k, m))
