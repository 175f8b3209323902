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


def _lane_cases(one):
    """``one`` (masked_apply of one lane, or the reference) under each of the vmaps of the test
    below, as one function of the test's arguments: one compiled program for all of them."""
    inner = (0, 0, None, 0)  # trials, each with its own m; an outer sweep over k
    outer = (0, 0, 0, None)  # both levels batched, m batched at the inner level only

    def cases(mask, x, k, m):
        xx, mm = jnp.stack([x, x + 1, x + 2]), jnp.stack([mask, ~mask, mask])
        return [
            jax.vmap(one, in_axes=(0, 0, 0, 0))(mask, x, k, m),
            jax.vmap(one, in_axes=(0, 0, None, 0))(mask, x, k[1], m),
            jax.vmap(one, in_axes=(None, None, 0, None))(mask[0], x[0], k, m[0]),  # only k
            jax.vmap(jax.vmap(one, in_axes=inner), in_axes=(None, None, 0, None))(mask, x, k, m),
            jax.vmap(jax.vmap(one, in_axes=inner), in_axes=outer)(mm, xx, k, m),
        ]

    return cases


def _fn(k, m, r):
    return (r * k + m[3], r - k)


@jax.jit
def _reference_lanes(mask, x, k, m):
    """The plain reference of every case: each lane's fn applied to every row, kept where the
    mask is set (the same for every capacity: compiled once)."""

    def ref(mk, x, k, m):
        return jax.tree.map(
            lambda o: jnp.where(mk[:, None], o, x), jax.vmap(lambda r: _fn(k, m, r))(x)
        )

    return _lane_cases(ref)(mask, x, k, m)


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

    def one(mk, x, k, m):
        return ga_masked.masked_apply(_fn, mk, (x,), (x, x), cap32, (k, m))

    got = jax.jit(_lane_cases(one))(mask, x, k, m)  # the five cases in one compiled program
    want = _reference_lanes(mask, x, k, m)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        chex.assert_trees_all_equal(g, w, custom_message=f"case {i}")
