"""The large-n kernel (jaxqueens.solvers.large): QS4 initialisation and swap repair against plain
NumPy counts, and the kernel contract: init/step/run with and without jit, under vmap (keys and
Params, one trace), lax.scan of step, typed and legacy keys."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax

from jaxqueens.core import checker
from jaxqueens.errors import QueensError
from jaxqueens.solvers import large
from jaxqueens.solvers.base import chain_keys, seed_of


def kernel_setup(n, list_size=4096, trace_size=4096, **params):
    config = large.Config(n=n, list_size=list_size, trace_size=trace_size)
    return config, large.default_params(config, **params)


# The kernels compiled once per Config with dynamic Params, shared by the tests below (op by op,
# every operation compiled a program of its own and every while loop its own); KernelVariantsTest
# runs them without jit. A new jax.jit of the same function (chex's with_jit variant) finds the
# same compiled program; a new lambda compiles it again.
INIT = jax.jit(large.init, static_argnums=1)
STEP = jax.jit(large.step, static_argnums=1)
RUN = jax.jit(large.run, static_argnums=1)


def key(seed: int) -> jax.Array:
    return jax.random.key(seed)


def _np_counts(rows):
    n = len(rows)
    c = np.arange(n)
    return (
        np.bincount(rows + c, minlength=2 * n - 1),
        np.bincount(rows - c + n - 1, minlength=2 * n - 1),
    )


def _np_pairs(rows) -> int:
    d, a = _np_counts(rows)
    return int((d * (d - 1) // 2).sum() + (a * (a - 1) // 2).sum())


def _assert_consistent(s):
    """The state's board is a permutation and its counts and pair count are exact."""
    rows = np.asarray(s.rows)
    assert sorted(rows) == list(range(len(rows)))
    d, a = _np_counts(rows)
    np.testing.assert_array_equal(s.diag, d)
    np.testing.assert_array_equal(s.anti, a)
    assert int(s.pairs) == _np_pairs(rows) == checker.attacking_pairs(rows)


def _assert_same(a, b):
    chex.assert_trees_all_equal(jax.device_get(a), jax.device_get(b))


def _row(tree, i):
    """Row ``i`` of a batched pytree."""
    return jax.tree.map(lambda x: x[i], tree)


def test_qs4_init_is_a_permutation_with_exact_counts_whatever_the_column_ranges():
    n = 5000
    config, params = kernel_setup(n)
    place = jax.jit(lambda s, a, b: large.place(s, config, params, a, b))
    s = large.empty(key(3), config, params)
    assert int(s.pairs) == -1  # not placed yet
    for start in range(0, n, 1300):  # in chunks, as the driver calls it
        s = place(s, start, min(n, start + 1300))
    s = large.ready(s, config, params)
    _assert_consistent(s)
    _assert_same(s, jax.jit(lambda k: large.init(k, config, params))(key(3)))
    # QS4 leaves few conflicts: far below a random permutation's ~n/2 conflicted queens.
    assert int(np.asarray(large.conflicted(s)).sum()) < 100


def test_tries_one_is_a_uniform_permutation_and_free_tail_is_used():
    """tries 1 (the driver's --init permutation) is Fisher-Yates: each queen's row uniform."""
    n, draws = 6, 3000
    config, params = kernel_setup(n, tries=1)
    init = jax.jit(jax.vmap(lambda k: large.init(k, config, params)))
    rows = np.asarray(init(chain_keys(key(0), jnp.arange(draws))).rows)
    freq = np.stack([np.bincount(rows[:, c], minlength=n) for c in range(n)]) / draws
    assert np.abs(freq - 1 / n).max() < 0.04
    # free_tail = n places every column with one swap too: the same boards as tries 1
    _, tail = kernel_setup(n, tries=100, free_tail=n)
    same = jax.jit(jax.vmap(lambda k: large.init(k, config, tail)))
    np.testing.assert_array_equal(same(chain_keys(key(0), jnp.arange(50))).rows, rows[:50])


LISTED = jax.jit(large._listed, static_argnums=1)


# (n, size): n enters the listing only through its blocks of LIST_BLOCK and the padding of the
# last: one block, partly filled or full, one entry past it, several blocks with short and full
# last blocks, up to 200; slots fewer than, equal to and more than n and LIST_BLOCK.
BLOCK = large.LIST_BLOCK
LISTING_SHAPES = [
    (1, 1),
    (2, 3),
    (3, 64),
    (BLOCK - 1, BLOCK),
    (BLOCK, BLOCK + 1),
    (BLOCK + 1, BLOCK),
    (2 * BLOCK + 1, 3),
    (4 * BLOCK, 64),
    (100, BLOCK + 1),
    (200, 64),
]


@settings(max_examples=30, deadline=None)
@given(shape=st.sampled_from(LISTING_SHAPES), seed=st.integers(0, 2**32 - 1))
def test_listing_of_conflicted_queens_equals_nonzero(shape, seed):
    """The repair round's two-level listing is ``jnp.nonzero(mask, size, fill_value=0)`` for every
    block layout (blocks padded at the end), fewer or more set entries than slots: every density
    at each drawn shape (one compile per shape)."""
    n, size = shape
    rng = np.random.default_rng(seed)
    for density in (0.0, 0.02, 0.3, 1.0):
        mask = rng.random(n) < density
        want = np.flatnonzero(mask)[:size]
        want = np.concatenate([want, np.zeros(size - want.size, np.int64)])
        np.testing.assert_array_equal(LISTED(jnp.asarray(mask), size), want)


def test_repair_keeps_counts_exact_and_never_worsens():
    n = 3000
    config, params = kernel_setup(
        n, tries=2, max_steps=500
    )  # a poor init leaves work for the repair
    s = INIT(key(9), config, params)
    pairs = int(s.pairs)
    conflicted = int(np.asarray(large.conflicted(s)).sum())
    s = jax.jit(lambda s: large.repair(s, config, params))(s)
    _assert_consistent(s)
    assert int(s.pairs) <= pairs and int(s.conflicted) == conflicted
    assert int(s.steps) == 500 and 0 < int(s.moves) <= 500 and int(s.rounds) == 1
    assert int(s.best) == int(s.pairs) and int(s.stalled) == 0
    trace = np.asarray(s.trace)
    trace = trace[trace >= 0]
    assert len(trace) == 500 and trace[-1] == int(s.pairs)
    assert np.all(np.diff(trace) <= 0)  # only improving swaps without sideways


def test_a_stalled_chain_restarts_from_the_next_seed_with_its_totals():
    config, params = kernel_setup(6, stall_rounds=2)
    s = INIT(key(11), config, params)
    s = s._replace(stalled=jnp.int32(2), steps=jnp.int32(7), rounds=jnp.int32(3))
    assert bool(large.retry(s, config, params)) and not bool(large.done(s, config, params))
    t = STEP(s, config, params)
    assert int(t.restarts) == 1 and int(t.stalled) == 0 and int(t.best) == large.PAIRS_NONE
    assert int(t.steps) == 7 and int(t.rounds) == 3  # a restart is no repair round
    assert not np.array_equal(t.seed, s.seed)
    _assert_consistent(t)
    fresh = INIT(key(11), config, params)
    _assert_same(  # the next attempt is QS4 from the next seed of the chain's stream
        large.place(large.renew(fresh, config, params), config, params, 0, 6).rows, t.rows
    )


@pytest.mark.parametrize("n", [4, 6, 8, 30, 1000])
def test_run_solves_and_reports_consistently(n):
    config, params = kernel_setup(n)
    keys = chain_keys(key(n), jnp.arange(4))
    res = jax.device_get(
        jax.jit(lambda ks: lax.map(lambda k: large.run(k, config, params), ks))(keys)
    )
    assert res.solved.all() and (res.pairs == 0).all()
    assert all(checker.is_solution(b) for b in res.rows)
    assert (res.steps >= res.moves).all() and (res.moves >= 0).all()


def test_budgets_are_honoured():
    config, params = kernel_setup(3000, tries=1, max_steps=50)
    res = RUN(key(2), config, params)
    assert not bool(res.solved) and int(res.steps) == 50
    assert int(res.pairs) == checker.attacking_pairs(np.asarray(res.rows)) > 0
    _, rounds = kernel_setup(3000, tries=1, max_rounds=2)
    res = RUN(key(2), config, rounds)  # other Params: the same compiled run
    assert not bool(res.solved) and int(res.rounds) == 2


def test_step_is_a_no_op_once_done_and_finish_runs_from_any_state():
    config, params = kernel_setup(8)
    step = lambda s: STEP(s, config, params)
    res = RUN(key(0), config, params)
    s = INIT(key(0), config, params)
    two = step(step(s))
    while not bool(large.done(s, config, params)):
        s = step(s)
    _assert_same(step(s), s)
    _assert_same(large.result(s, config, params), res)
    _assert_same(jax.jit(lambda s: large.finish(s, config, params))(two), res)


def test_scan_of_step_reaches_run_through_restarts():
    """A chain with restarts (n = 6, key 11): K steps under lax.scan end where run ends."""
    config, params = kernel_setup(6)
    res = RUN(key(11), config, params)
    assert int(res.restarts) > 0 and bool(res.solved)

    def body(s, _):
        s = large.step(s, config, params)
        return s, s.pairs

    s, pairs = jax.jit(
        lambda k: lax.scan(body, large.init(k, config, params), None, length=int(res.rounds) + 40)
    )(key(11))
    _assert_same(large.result(s, config, params), res)
    assert np.asarray(pairs)[-1] == 0


# The Config of the variants test, shared with the tests of vmap and keys (one compiled run)
VARIANTS = kernel_setup(200, tries=3, trace_size=64)


class KernelVariantsTest(chex.TestCase):
    """init, step, run and the board figures with and without jit; both give the jitted run's
    result."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_init_step_run(self):
        n = 200
        config, params = VARIANTS
        s = self.variant(large.init, static_argnums=1)(key(5), config, params)
        chex.assert_shape(s.rows, (n,))
        chex.assert_shape([s.diag, s.anti], (2 * n - 1,))
        chex.assert_shape(s.trace, (64,))
        _assert_consistent(s)
        chex.assert_shape(self.variant(large.conflicted)(s), (n,))
        step = self.variant(large.step, static_argnums=1)
        # op by op every step compiles its repair round anew: one round (the branch each of the
        # jitted variant's three takes) is enough there
        rounds = 1 if self.variant.type is chex.ChexVariantType.WITHOUT_JIT else 3
        for _ in range(rounds):
            pairs = int(s.pairs)
            s = step(s, config, params)
            _assert_consistent(s)
            assert int(s.pairs) <= pairs
        res = self.variant(large.run, static_argnums=1)(key(5), config, params)
        chex.assert_shape(res.rows, (n,))
        chex.assert_shape([res.solved, res.steps, res.moves, res.rounds, res.pairs], ())
        assert bool(res.solved) and checker.is_solution(np.asarray(res.rows))
        _assert_same(res, RUN(key(5), config, params))  # the variants agree


def test_vmap_over_keys_equals_one_chain_at_a_time():
    config, params = VARIANTS
    keys = chain_keys(key(1), jnp.arange(6))
    lockstep = jax.jit(jax.vmap(lambda k: large.run(k, config, params)))(keys)
    for i in range(6):
        _assert_same(_row(lockstep, i), RUN(keys[i], config, params))


def test_vmap_over_params_is_one_compiled_sweep():
    """A sweep over every Params field runs in one trace; each row equals its own run."""
    chex.clear_trace_counter()
    config = large.Config(n=60, trace_size=16)
    settings = [
        {"tries": 1},
        {"tries": 3, "free_tail": 10},
        {"tries": 100, "stall_rounds": 1},
        {"max_steps": 40},
        {"max_rounds": 1},
    ]
    rows = [large.default_params(config, **kw) for kw in settings]
    sweep = jax.tree.map(lambda *x: jnp.stack(x), *rows)
    run = jax.jit(chex.assert_max_traces(lambda k, p: large.run(k, config, p), n=1))
    out = jax.vmap(run, in_axes=(None, 0))(key(4), sweep)
    for i, p in enumerate(rows):
        _assert_same(_row(out, i), run(key(4), p))
    assert int(out.steps[3]) <= 40 and int(out.rounds[4]) <= 1


def test_kernels_trace_once():
    """New keys, Params values and column ranges reuse the compiled kernels (no retracing)."""
    chex.clear_trace_counter()
    config = large.Config(n=300)
    init = jax.jit(chex.assert_max_traces(lambda k, p: large.init(k, config, p), n=1))
    place = jax.jit(chex.assert_max_traces(lambda s, p, a, b: large.place(s, config, p, a, b), n=1))
    step = jax.jit(chex.assert_max_traces(lambda s, p: large.step(s, config, p), n=1))
    for seed in range(3):
        p = large.default_params(config, tries=1 + seed, stall_rounds=1 + seed, max_steps=50)
        s = place(large.empty(key(seed), config, p), p, 0, 100)
        place(s, p, 100, 300)
        step(init(key(seed), p), p)


def test_typed_and_legacy_keys():
    config, params = VARIANTS
    legacy = jax.random.PRNGKey(7)
    _assert_same(RUN(legacy, config, params), RUN(jax.random.wrap_key_data(legacy), config, params))
    s = large.empty(key(7), config, params)
    np.testing.assert_array_equal(s.seed, seed_of(key(7)))
    with pytest.raises(QueensError, match=r"jax\.random\.key"):
        large.init(7, config, params)


def test_config_and_params_are_checked():
    for kw in ({"n": 3}, {"n": 2**30}, {"n": 10, "list_size": 0}, {"n": 10, "trace_size": 0}):
        with pytest.raises(ValueError):
            large.Config(**kw)
    config = large.Config(n=10)
    for kw in (
        {"tries": 0},
        {"free_tail": 11},
        {"free_tail": -1},
        {"stall_rounds": 0},
        {"max_steps": 0},
        {"max_steps": 2**31},
        {"max_rounds": 0},
    ):
        with pytest.raises(ValueError):
            large.default_params(config, **kw)
    p = large.default_params(config)
    assert all(x.dtype == np.int32 and x.shape == () for x in p)
