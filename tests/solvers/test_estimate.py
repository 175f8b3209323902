"""Knuth's probe kernel (:mod:`jaxqueens.solvers.estimate`): its pieces and walks against Python,
with and without jit, one trace per shape."""

import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from absl.testing import parameterized

from jaxqueens.core import prefixes, rng
from jaxqueens.solvers import estimate as S


def ref_walk(n, depth_masks, u_of_level, depth):
    """The same walk in Python ints, given the hash stream's draw per level."""
    cols, ld, rd = depth_masks
    full = (1 << n) - 1
    w, nodes = 1, 0
    for level in range(depth, n):
        free = full & ~(cols | ld | rd)
        d = bin(free).count("1")
        if d == 0:
            return 0, nodes
        k = (int(u_of_level[level]) * d) >> 32
        row = [r for r in range(n) if free >> r & 1][k]
        bit = 1 << row
        cols, ld, rd = cols | bit, ((ld | bit) << 1) & full, (rd | bit) >> 1
        w *= d
        nodes += w
    return w, nodes


def test_kth_bit_and_below():
    r = np.random.default_rng(0)
    xs = r.integers(1, 2**32, 500, dtype=np.uint64).astype(np.uint32)
    ks = np.array([r.integers(0, bin(int(x)).count("1")) for x in xs], np.int32)
    got = np.asarray(S._kth_bit(jnp.asarray(xs), jnp.asarray(ks)))
    want = [[i for i in range(32) if int(x) >> i & 1][k] for x, k in zip(xs, ks)]
    np.testing.assert_array_equal(got, want)
    u = r.integers(0, 2**32, 500, dtype=np.uint64).astype(np.uint32)
    d = r.integers(1, 129, 500).astype(np.int32)
    got = np.asarray(S._below(jnp.asarray(u), jnp.asarray(d)))
    np.testing.assert_array_equal(got, (u.astype(object) * d.astype(object)) >> 32)


@pytest.mark.parametrize("n,depth", [(6, 0), (12, 2), (31, 3), (33, 1), (40, 2), (64, 1)])
def test_walk_matches_python_reference(n, depth):
    masks64, _ = prefixes.expand(n, depth)
    masks64 = masks64[:3]
    cfg = S.Config(n=n, depth=depth, strata=1, per_call=1, group=1)
    words = jnp.asarray(S.words_of(masks64, cfg.words))
    seed, lanes = 12345, jnp.arange(20, dtype=jnp.uint32)
    walk = jax.jit(
        jax.vmap(
            jax.vmap(lambda mk, ln: S.walk(mk, jnp.uint32(seed), ln, cfg), (None, 0)), (0, None)
        )
    )
    m, e, nodes, alive = (np.asarray(x) for x in walk(words, lanes))
    u = np.asarray(
        rng.hash_bits(jnp.uint32(seed), jnp.arange(n)[:, None], lanes[None, :])
    )  # [n, L]
    for s in range(len(masks64)):
        for lane in range(len(lanes)):
            w_ref, nodes_ref = ref_walk(n, [int(x) for x in masks64[s]], u[:, lane], depth)
            w = float(m[s, lane]) * 2.0 ** int(e[s, lane]) if alive[s, lane] else 0.0
            assert w == pytest.approx(float(w_ref), rel=1e-6)
            assert float(nodes[s, lane]) * 2.0 ** int(e[s, lane]) == pytest.approx(
                float(nodes_ref), rel=1e-6
            )


def _strata(n, depth, per_call=8, group=4, block=0):
    """Every stratum of ``depth`` queens, padded to an even count (dead rows), and its Config."""
    masks64, _ = prefixes.expand(n, depth)
    cfg = S.Config(n=n, depth=depth, strata=0, per_call=per_call, group=group, block=block)
    words = S.words_of(masks64, cfg.words)
    pad = np.full((len(words) % 2, 3, cfg.words), 0xFFFFFFFF, np.uint32)
    words = np.concatenate([words, pad])
    cfg = S.Config(n=n, depth=depth, strata=len(words), per_call=per_call, group=group, block=block)
    return jnp.asarray(words), jnp.arange(len(words), dtype=jnp.int32), cfg


class KernelTest(parameterized.TestCase):
    """The kernels of one probe and of a block of strata, traced and untraced."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_walk_matches_python_with_and_without_jit(self):
        n, depth, seed, stratum = 7, 1, jnp.uint32(77), 3
        masks64, _ = prefixes.expand(n, depth)
        cfg = S.Config(n=n, depth=depth, strata=1, per_call=1, group=1)
        words = jnp.asarray(S.words_of(masks64, cfg.words))[stratum]
        lanes = jnp.arange(8, dtype=jnp.uint32)
        probe = self.variant(jax.vmap(lambda mk, ln: S.walk(mk, seed, ln, cfg), (None, 0)))
        m, e, nodes, alive = (np.asarray(x) for x in probe(words, lanes))
        chex.assert_shape((m, e, nodes, alive), (len(lanes),))
        u = np.asarray(rng.hash_bits(seed, jnp.arange(n)[:, None], lanes[None, :]))  # [n, L]
        for lane in range(len(lanes)):
            w_ref, nodes_ref = ref_walk(n, [int(x) for x in masks64[stratum]], u[:, lane], depth)
            w = float(m[lane]) * 2.0 ** int(e[lane]) if alive[lane] else 0.0
            assert w == pytest.approx(float(w_ref), rel=1e-6)
            assert float(nodes[lane]) * 2.0 ** int(e[lane]) == pytest.approx(
                float(nodes_ref), rel=1e-6
            )

    @chex.variants(with_jit=True, without_jit=True)
    def test_strata_block_lockstep_equals_blocks(self):
        masks, ids, cfg = _strata(6, 1, per_call=8, group=4)
        blocked = dataclasses.replace(cfg, block=16)
        whole = self.variant(lambda mk, i, s: S.strata_block(mk, i, s, cfg))(
            masks, ids, jnp.uint32(5)
        )
        parts = self.variant(lambda mk, i, s: S.strata_block(mk, i, s, blocked))(
            masks, ids, jnp.uint32(5)
        )
        chex.assert_trees_all_equal(whole, parts)
        chex.assert_shape(list(whole), (len(ids), 8 // 4))
        assert int(np.asarray(whole.hits).sum()) > 0


def test_walk_and_strata_block_trace_once_per_shape():
    masks, ids, cfg = _strata(6, 1)
    walk = jax.jit(chex.assert_max_traces(lambda mk, s, ln: S.walk(mk, s, ln, cfg), n=1))
    block = jax.jit(chex.assert_max_traces(lambda mk, i, s: S.strata_block(mk, i, s, cfg), n=1))
    for seed in range(3):
        walk(masks[0], jnp.uint32(seed), jnp.uint32(seed + 1))
        block(masks, ids, jnp.uint32(seed))
