"""Knuth's probe kernel (`jaxqueens.solvers.estimate`): its pieces and walks against Python,
the kernel contract (init/step/run with and without jit, under vmap over keys, strata and
Params with one trace, lax.scan of step), typed and legacy keys, and the group sums."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from absl.testing import parameterized
from jax import lax

from jaxqueens.core import prefixes, rng
from jaxqueens.core.oeis import A000170
from jaxqueens.errors import QueensError
from jaxqueens.solvers import estimate as S
from jaxqueens.solvers.base import seed_of


def ref_walk(n, depth_masks, u_of_level, depth):
    """The same walk in Python ints, given the hash stream's draw per level."""
    cols, ld, rd = depth_masks
    full = (1 << n) - 1
    w, nodes = 1, 0
    for level in range(depth, n):
        free = full & ~(cols | ld | rd)
        d = bin(free).count("1")
        if d == 0:
            return 0, nodes, level
        k = (int(u_of_level[level]) * d) >> 32
        row = [r for r in range(n) if free >> r & 1][k]
        bit = 1 << row
        cols, ld, rd = cols | bit, ((ld | bit) << 1) & full, (rd | bit) >> 1
        w *= d
        nodes += w
    return w, nodes, n


def _setup(n, depth=0):
    config = S.Config(n=n, depth=depth)
    return config, S.default_params(config)


def _strata(n, depth):
    """Every stratum of `depth` queens: masks uint64 [S, 3] and the kernel's [S, 3, W]."""
    masks64, _ = prefixes.expand(n, depth)
    return masks64, jnp.asarray(S.words_of(masks64, S.Config(n=n).words))


def _weight(res) -> np.ndarray:
    """The probes' Q(n) estimates as float64 (0 where the walk died)."""
    m, e, solved = (np.asarray(x) for x in (res.m, res.e, res.solved))
    return np.where(solved, np.ldexp(m.astype(np.float64), e), 0.0)


def _assert_same(a, b):
    chex.assert_trees_all_equal(jax.device_get(a), jax.device_get(b))


def _row(tree, i):
    return jax.tree.map(lambda x: x[i], tree)


def test_kth_bit_and_below():
    r = np.random.default_rng(0)
    xs = r.integers(1, 2**32, 500, dtype=np.uint64).astype(np.uint32)
    ks = np.array([r.integers(0, bin(int(x)).count("1")) for x in xs], np.int32)
    got = np.asarray(S._kth_bit(jnp.asarray(xs), jnp.asarray(ks)))
    want = [[i for i in range(32) if int(x) >> i & 1][k] for x, k in zip(xs, ks, strict=True)]
    np.testing.assert_array_equal(got, want)
    u = r.integers(0, 2**32, 500, dtype=np.uint64).astype(np.uint32)
    d = r.integers(1, 129, 500).astype(np.int32)
    got = np.asarray(S._below(jnp.asarray(u), jnp.asarray(d)))
    np.testing.assert_array_equal(got, (u.astype(object) * d.astype(object)) >> 32)


def _seed(x):
    """A 64-bit stream seed uint32 [2] whose two words both matter."""
    return jnp.asarray([x, x * 7 + 1], jnp.uint32)


# The reference's draws: one program per shape (op by op, every operation compiled anew per n).
STREAM_BITS = jax.jit(rng.stream_bits)


def _check_against_reference(n, depth, masks64, seed, lanes, res):
    """Results [S, L] of lanes `lanes` of stream `seed` on strata `masks64` vs Python."""
    m, e, nodes, solved, reached = (np.asarray(x) for x in res)
    u = np.asarray(STREAM_BITS(_seed(seed), jnp.arange(n)[:, None], lanes[None, :]))
    for s in range(len(masks64)):
        for lane in range(len(lanes)):
            w_ref, nodes_ref, depth_ref = ref_walk(
                n, [int(x) for x in masks64[s]], u[:, lane], depth
            )
            w = float(m[s, lane]) * 2.0 ** int(e[s, lane]) if solved[s, lane] else 0.0
            assert w == pytest.approx(float(w_ref), rel=1e-6)
            assert float(nodes[s, lane]) * 2.0 ** int(e[s, lane]) == pytest.approx(
                float(nodes_ref), rel=1e-6
            )
            assert reached[s, lane] == depth_ref and solved[s, lane] == (depth_ref == n)


@pytest.mark.parametrize("n,depth", [(6, 0), (12, 2), (31, 3), (33, 1), (40, 2), (64, 1)])
def test_walk_matches_python_reference(n, depth):
    masks64, words = _strata(n, depth)
    masks64, words = masks64[:3], words[:3]
    config, params = _setup(n, depth)
    seed, lanes = 12345, jnp.arange(20, dtype=jnp.uint32)
    walk = jax.jit(
        jax.vmap(
            jax.vmap(
                lambda mk, ln: S.walk(_seed(seed), ln, config, params, S.Problem(mk)),
                (None, 0),
            ),
            (0, None),
        )
    )
    _check_against_reference(n, depth, masks64, seed, lanes, walk(words, lanes))


class KernelTest(parameterized.TestCase):
    """init, step and run of one probe, traced and untraced."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_walk_matches_python_with_and_without_jit(self):
        n, depth, seed, stratum = 7, 1, _seed(77), 3
        masks64, words = _strata(n, depth)
        config, params = _setup(n, depth)
        lanes = jnp.arange(8, dtype=jnp.uint32)
        probe = self.variant(
            jax.vmap(lambda mk, ln: S.walk(seed, ln, config, params, S.Problem(mk)), (None, 0))
        )
        res = probe(words[stratum], lanes)
        chex.assert_shape(list(res), (len(lanes),))
        res = jax.tree.map(lambda x: x[None], res)
        _check_against_reference(n, depth, masks64[stratum : stratum + 1], 77, lanes, res)

    @chex.variants(with_jit=True, without_jit=True)
    def test_init_step_run(self):
        n = 9
        config, params = _setup(n)
        key = jax.random.key(3)
        s = self.variant(lambda k: S.init(k, config, params))(key)
        chex.assert_shape([s.cols, s.ld, s.rd], (1,))
        chex.assert_shape([s.m, s.e, s.nodes, s.alive, s.lane], ())
        chex.assert_shape(s.seed, (2,))
        assert int(S.placed(s)) == 0 and not bool(S.done(s, config, params))
        step = self.variant(lambda s: S.step(s, config, params))
        for j in range(3):
            s = step(s)
            assert int(S.placed(s)) == j + 1 or not bool(s.alive)
        res = self.variant(lambda k: S.run(k, config, params))(key)
        chex.assert_shape(list(res), ())
        assert 1 <= int(res.depth) <= n and bool(res.solved) == (int(res.depth) == n)


@pytest.mark.parametrize("n,depth", [(5, 0), (8, 0), (10, 2), (40, 1)])
def test_scan_of_step_is_the_walk_and_then_a_no_op(n, depth):
    """n - depth steps under lax.scan end where the walk ends; further steps change nothing."""
    config, params = _setup(n, depth)
    _, words = _strata(n, depth)
    lanes = jnp.arange(64, dtype=jnp.uint32)
    seed = _seed(2024)

    def scanned(mk, ln):
        def body(s, _):
            s = S.step(s, config, params)
            return s, S.done(s, config, params)

        s, finished = lax.scan(
            body, S.start(seed, ln, config, params, S.Problem(mk)), None, length=n - depth + 2
        )
        return S.result(s, config, params), finished

    both = jax.vmap(jax.vmap(scanned, (None, 0)), (0, None))
    walk = jax.vmap(
        jax.vmap(lambda mk, ln: S.walk(seed, ln, config, params, S.Problem(mk)), (None, 0)),
        (0, None),
    )
    (res, finished), want = jax.jit(lambda w: (both(w, lanes), walk(w, lanes)))(words[:4])
    _assert_same(res, want)
    assert np.asarray(finished)[..., -1].all()
    assert not np.asarray(res.solved).all() or n <= 5  # some walks die on the way


@pytest.mark.parametrize("k", [0, 1, 3, 12])
def test_finish_from_any_step_is_the_run(k):
    """k steps, then finish: the probe run reports (k = 12 > n - depth: already done)."""
    config, params = _setup(10)
    keys = jax.random.split(jax.random.key(k), 256)

    def stepped(key):
        s = lax.fori_loop(0, k, lambda _, s: S.step(s, config, params), S.init(key, config, params))
        return S.finish(s, config, params)

    got = jax.jit(jax.vmap(stepped))(keys)
    _assert_same(got, jax.jit(jax.vmap(lambda key: S.run(key, config, params)))(keys))


def test_run_is_lane_zero_of_the_keys_stream_and_takes_legacy_keys():
    config, params = _setup(11)
    key = jax.random.key(5)
    _assert_same(S.run(key, config, params), S.walk(seed_of(key), 0, config, params))
    _assert_same(S.init(key, config, params), S.start(seed_of(key), 0, config, params))
    legacy = jax.random.PRNGKey(5)
    _assert_same(
        S.run(legacy, config, params), S.run(jax.random.wrap_key_data(legacy), config, params)
    )
    with pytest.raises(QueensError, match=r"jax\.random\.key"):
        S.run(5, config, params)


def test_vmap_over_keys_is_an_unbiased_estimate_and_equals_one_probe_at_a_time():
    config, params = _setup(8)
    keys = jax.random.split(jax.random.key(0), 200_000)
    res = jax.jit(jax.vmap(lambda k: S.run(k, config, params)))(keys)
    w = _weight(res)
    assert abs(w.mean() - A000170[8]) < 4 * w.std() / np.sqrt(len(w))
    for i in (0, 1, 99_999):
        _assert_same(_row(res, i), S.run(keys[i], config, params))


def test_vmap_over_strata_keys_and_params_traces_once():
    """One compiled call sweeps keys, strata and (empty) Params: nothing retraces."""
    chex.clear_trace_counter()
    n, depth = 10, 2
    config, params = _setup(n, depth)
    _, words = _strata(n, depth)
    run = jax.jit(chex.assert_max_traces(lambda k, p, mk: S.run(k, config, p, S.Problem(mk)), n=1))
    sweep = jax.vmap(run, in_axes=(0, 0, 0))
    keys = jax.random.split(jax.random.key(1), len(words))
    stacked = jax.tree.map(lambda *x: jnp.stack(x), *[params] * len(words))
    out = jax.jit(sweep)(keys, stacked, words)
    chex.assert_shape(list(out), (len(words),))
    for i in (0, len(words) - 1):
        _assert_same(_row(out, i), run(keys[i], params, words[i]))
    assert S.Params() == params == S.default_params(config)  # a probe has nothing to sweep


def test_kernels_trace_once():
    """New keys, seeds, lanes and strata reuse the compiled kernels."""
    chex.clear_trace_counter()
    config, params = _setup(9, 1)
    _, words = _strata(9, 1)
    init = jax.jit(
        chex.assert_max_traces(lambda k, mk: S.init(k, config, params, S.Problem(mk)), n=1)
    )
    step = jax.jit(chex.assert_max_traces(lambda s: S.step(s, config, params), n=1))
    walk = jax.jit(
        chex.assert_max_traces(
            lambda sd, ln, mk: S.walk(sd, ln, config, params, S.Problem(mk)), n=1
        )
    )
    for seed in range(3):
        step(init(jax.random.key(seed), words[seed]))
        walk(_seed(seed), jnp.uint32(seed + 1), words[seed])


def test_group_sums_match_float64():
    r = np.random.default_rng(1)
    shape = (3, 64)
    res = S.Result(
        m=jnp.asarray(r.uniform(1, 2, shape), jnp.float32),
        e=jnp.asarray(
            r.integers(120, 150, shape), jnp.int32
        ),  # spread < 2^42: cubes stay in float32
        nodes=jnp.asarray(r.uniform(1, 4, shape), jnp.float32),
        solved=jnp.asarray(r.random(shape) < 0.3),
        depth=jnp.zeros(shape, jnp.int32),
    )
    g = jax.device_get(S.group_sums(res, 16))
    chex.assert_shape(list(g), (3, 4))
    m, e, nodes, hit = (
        np.asarray(x).astype(np.float64) for x in (res.m, res.e, res.nodes, res.solved)
    )
    w, v = np.where(hit > 0, np.ldexp(m, e.astype(int)), 0.0), np.ldexp(nodes, e.astype(int))
    for name, x, p in (
        ("w", w, 1),
        ("w2", w * w, 2),
        ("w3", w**3, 3),
        ("nodes", v, 1),
        ("nodes2", v * v, 2),
        ("nodes3", v**3, 3),
    ):
        got = np.ldexp(getattr(g, name).astype(np.float64), p * g.top.astype(int))
        np.testing.assert_allclose(got, x.reshape(3, 4, 16).sum(-1), rtol=1e-5)
    np.testing.assert_array_equal(g.hits, hit.reshape(3, 4, 16).sum(-1))


def test_config_and_problem_are_checked():
    for kw in ({"n": 0}, {"n": 65}, {"n": 8, "depth": 9}, {"n": 8, "depth": -1}):
        with pytest.raises(ValueError):
            S.Config(**kw)
    config, params = _setup(8, 1)
    with pytest.raises(ValueError, match="starts at a stratum"):
        S.init(jax.random.key(0), config, params)
    with pytest.raises(ValueError, match="shape"):
        S.init(jax.random.key(0), config, params, S.Problem(jnp.zeros((3, 2), jnp.uint32)))
