"""The counter-based hash stream and the permutations drawn from it (jaxqueens.core.rng)."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxqueens.core import rng

PINNED_BITS = 2905760190
PINNED_PERM = [4, 1, 5, 0, 7, 3, 2, 6]
PINNED_BIG = [38, 56, 41, 60, 2, 33, 25, 44, 57, 7, 36, 66]


def S(lo, hi=0x5EED):
    """A 64-bit stream seed uint32 [2] (low, high word)."""
    return jnp.asarray([lo, hi], jnp.uint32)


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
    assert int(rng.stream_bits(S(1, 9), jnp.uint32(2), jnp.uint32(3))) == PINNED_BITS
    assert rng.random_permutation(S(5), jnp.uint32(0), 8).tolist() == PINNED_PERM
    big = rng.random_permutation(S(5), jnp.uint32(3), 70)
    assert big[:12].tolist() == PINNED_BIG


def test_stream_uniform_in_both_words():
    ctr = jnp.arange(200_000, dtype=jnp.uint32)
    for seed in (S(12345, 0), S(12345, 1), S(0, 0xFFFFFFFF)):
        bits = np.asarray(rng.stream_bits(seed, ctr, jnp.uint32(0)))
        for shift in (0, 8, 16, 24, 28):
            assert _chi2(np.bincount((bits >> shift) & 15, minlength=16)) < 45
    ints = np.asarray(rng.stream_randint(S(9, 4), ctr, jnp.uint32(3), 10))
    assert _chi2(np.bincount(ints, minlength=10)) < 35


def test_defect_streams_that_share_a_low_word_are_unrelated():
    """Two seeds equal in one word (all a 32-bit seed had) give uncorrelated streams."""
    ctr = jnp.arange(100_000, dtype=jnp.uint32)
    a = np.asarray(rng.stream_bits(S(7, 1), ctr, jnp.uint32(0)))
    b = np.asarray(rng.stream_bits(S(7, 2), ctr, jnp.uint32(0)))
    c = np.asarray(rng.stream_bits(S(8, 1), ctr, jnp.uint32(0)))
    for x, y in ((a, b), (a, c)):
        assert np.mean(x == y) < 1e-3
        assert abs(np.corrcoef(x >> 16, y >> 16)[0, 1]) < 0.02
        assert abs(np.mean(((x ^ y) >> 31) & 1) - 0.5) < 0.01


def test_next_seed_keeps_distinct_seeds_distinct():
    seeds = jnp.asarray([[1, 5], [2, 5], [1, 6]], jnp.uint32)
    nxt = np.asarray(rng.next_seed(seeds))
    assert len({tuple(x) for x in nxt.tolist()}) == 3
    np.testing.assert_array_equal(nxt[:, 1], [5, 5, 6])  # the high word kept
    assert not (nxt == np.asarray(seeds)).all(axis=1).any()


@pytest.mark.parametrize("n", [1, 2, 8, 64, 65, 300])  # both methods: ranking (<= 64), Fisher-Yates
def test_random_permutation_is_a_permutation(n):
    # jitted (one program per n); PermutationVariantsTest compares jit with op by op
    perms = jax.jit(jax.vmap(lambda ct: rng.random_permutation(S(11), ct, n)))(
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
        jax.jit(jax.vmap(lambda ct: rng.random_permutation(S(3), ct, n)))(
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
    chex.assert_shape(a, (10, 2))
    np.testing.assert_array_equal(a[4:7], b)
    assert len({tuple(x) for x in a.tolist()}) == 10


def test_defect_chains_of_one_run_shared_a_32_bit_stream():
    """Chains 21617 and 73597 of seed 0 drew the same 32-bit seed, so ``solve -n 32 --chains
    100000`` ran them as one chain; their 64-bit stream seeds differ."""
    key = jax.random.key(0)
    ids = jnp.asarray([21617, 73597], jnp.uint32)
    old = [int(jax.random.bits(jax.random.fold_in(key, i), (), jnp.uint32)) for i in ids]
    assert old[0] == old[1]  # the collision the 32-bit seeds had
    new = np.asarray(rng.chain_seeds(key, ids))
    assert new[0, 0] == new[1, 0] and new[0, 1] != new[1, 1]  # the low word is the old seed
    draws = [np.asarray(rng.stream_bits(x, jnp.arange(64), jnp.uint32(0))) for x in new]
    assert (draws[0] != draws[1]).all()


def test_no_two_of_ten_million_chains_share_a_stream_seed():
    """The stream seeds of chains 0 .. 10^7 - 1 of a run are pairwise distinct (a 32-bit seed
    repeats among them ~11,600 times)."""
    ids = jnp.arange(10_000_000, dtype=jnp.uint32)
    seeds = np.asarray(jax.jit(lambda i: rng.chain_seeds(jax.random.key(0), i))(ids))
    wide = seeds.copy().view(np.uint64).ravel()
    wide.sort()
    assert not (wide[1:] == wide[:-1]).any()
    low = np.sort(seeds[:, 0])
    assert (low[1:] == low[:-1]).sum() > 10_000  # the low word alone repeats, as 32 bits do


class PermutationVariantsTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_same_with_and_without_jit(self):
        for n in (8, 100):
            # `n=n` binds this iteration's n; each lambda is called within the iteration.
            p = self.variant(lambda sd, ct, n=n: rng.random_permutation(sd, ct, n))(
                S(2), jnp.uint32(5)
            )
            chex.assert_shape(p, (n,))
            want = jax.jit(lambda sd, ct, n=n: rng.random_permutation(sd, ct, n))(
                S(2), jnp.uint32(5)
            )
            np.testing.assert_array_equal(p, want)


def test_permutation_traces_once():
    chex.clear_trace_counter()
    perm = jax.jit(chex.assert_max_traces(lambda sd, ct: rng.random_permutation(sd, ct, 50), n=1))
    for seed in range(3):
        perm(S(seed), jnp.uint32(seed + 1))


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
