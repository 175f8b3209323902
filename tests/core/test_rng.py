"""The counter-based hash stream and the permutations drawn from it (jaxqueens.core.rng)."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxqueens.core import rng


def _chi2(counts):
    counts = np.asarray(counts, float)
    e = counts.sum() / counts.size
    return float(((counts - e) ** 2 / e).sum())


def test_hash_stream_uniform():
    ctr = jnp.arange(200_000, dtype=jnp.uint32)
    bits = np.asarray(rng.hash_bits(jnp.uint32(12345), ctr, jnp.uint32(0)))
    for shift in (0, 8, 16, 24, 28):  # 16 bins from several bit positions: chi2(15) < 45
        assert _chi2(np.bincount((bits >> shift) & 15, minlength=16)) < 45
    ints = np.asarray(rng.hash_randint(jnp.uint32(9), ctr, jnp.uint32(3), 10))
    assert _chi2(np.bincount(ints, minlength=10)) < 35  # chi2(9)
    lanes = np.asarray(rng.hash_bits(jnp.uint32(5), jnp.uint32(77), jnp.arange(100_000)))
    assert _chi2(np.bincount(lanes >> 28, minlength=16)) < 45
    assert abs(np.corrcoef(bits[:-1] >> 16, bits[1:] >> 16)[0, 1]) < 0.02


def test_streams_are_pinned():
    """Results of every solver depend on these exact values: a change here changes them all."""
    assert int(rng.hash_bits(jnp.uint32(1), jnp.uint32(2), jnp.uint32(3))) == 2709802795
    assert rng.random_permutation(jnp.uint32(5), jnp.uint32(0), 8).tolist() == [
        6,
        7,
        4,
        0,
        5,
        2,
        1,
        3,
    ]
    big = rng.random_permutation(jnp.uint32(5), jnp.uint32(3), 70)
    assert big[:12].tolist() == [40, 55, 59, 51, 58, 21, 42, 32, 39, 27, 48, 22]


@pytest.mark.parametrize("n", [1, 2, 8, 64, 65, 300])  # both methods: ranking (<= 64), Fisher-Yates
def test_random_permutation_is_a_permutation(n):
    perms = jax.vmap(lambda ct: rng.random_permutation(jnp.uint32(11), ct, n))(
        jnp.arange(20, dtype=jnp.uint32)
    )
    perms = np.asarray(perms)
    assert perms.dtype == np.int32 and perms.shape == (20, n)
    assert (np.sort(perms, axis=1) == np.arange(n)).all()
    if n >= 8:
        assert len({tuple(p) for p in perms}) == 20  # different counters differ


@pytest.mark.parametrize("n", [4, 70])
def test_random_permutation_uniform(n):
    perms = np.asarray(
        jax.jit(jax.vmap(lambda ct: rng.random_permutation(jnp.uint32(3), ct, n)))(
            jnp.arange(24_000, dtype=jnp.uint32)
        )
    )
    # where each value lands: uniform over the n positions
    for v in (0, n // 2, n - 1):
        pos = np.argmax(perms == v, axis=1)
        assert _chi2(np.bincount(pos, minlength=n)) < n + 6 * np.sqrt(2 * n)
    if n == 4:  # all 24 permutations equally likely
        codes = (perms * 4 ** np.arange(4)).sum(axis=1)
        _, counts = np.unique(codes, return_counts=True)
        assert counts.size == 24 and _chi2(counts) < 23 + 6 * np.sqrt(46)


def test_idx_bits():
    assert [rng.idx_bits(n) for n in (1, 2, 3, 4, 5, 8, 9, 1000)] == [1, 1, 2, 2, 3, 3, 4, 10]


def test_chain_seeds_do_not_depend_on_batch():
    key = jax.random.key(0)
    a = np.asarray(rng.chain_seeds(key, jnp.arange(10)))
    b = np.asarray(rng.chain_seeds(key, jnp.arange(4, 7)))
    np.testing.assert_array_equal(a[4:7], b)
    assert len(set(a.tolist())) == 10


class PermutationVariantsTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_same_with_and_without_jit(self):
        for n in (8, 100):
            p = self.variant(lambda sd, ct: rng.random_permutation(sd, ct, n))(
                jnp.uint32(2), jnp.uint32(5)
            )
            chex.assert_shape(p, (n,))
            want = jax.jit(lambda sd, ct: rng.random_permutation(sd, ct, n))(
                jnp.uint32(2), jnp.uint32(5)
            )
            np.testing.assert_array_equal(p, want)


def test_permutation_traces_once():
    chex.clear_trace_counter()
    perm = jax.jit(chex.assert_max_traces(lambda sd, ct: rng.random_permutation(sd, ct, 50), n=1))
    for seed in range(3):
        perm(jnp.uint32(seed), jnp.uint32(seed + 1))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, rng.SEED_MAX))
def test_seed_key_is_jaxs_key_of_the_seed(seed):
    made, jaxs = rng.seed_key(seed), jax.random.key(seed)
    assert made.dtype == jaxs.dtype and made.shape == jaxs.shape == ()
    np.testing.assert_array_equal(jax.random.key_data(made), jax.random.key_data(jaxs))
    np.testing.assert_array_equal(  # the same stream, not only the same bits
        jax.random.bits(jax.random.fold_in(made, 3), (4,)),
        jax.random.bits(jax.random.fold_in(jaxs, 3), (4,)),
    )


@pytest.mark.parametrize("seed", [0, 1, 2**31 - 1, 2**31, rng.SEED_MAX])
def test_seed_key_edges_and_another_prng_implementation(seed):
    np.testing.assert_array_equal(
        jax.random.key_data(rng.seed_key(np.uint32(seed))),
        jax.random.key_data(jax.random.key(seed)),
    )
    previous = jax.config.jax_default_prng_impl
    jax.config.update("jax_default_prng_impl", "rbg")  # not threefry: jax.random.key makes it
    try:
        made, jaxs = rng.seed_key(seed), jax.random.key(seed)
        assert made.dtype == jaxs.dtype
        np.testing.assert_array_equal(jax.random.key_data(made), jax.random.key_data(jaxs))
    finally:
        jax.config.update("jax_default_prng_impl", previous)
