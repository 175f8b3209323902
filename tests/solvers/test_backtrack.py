"""The backtracking kernel (jaxqueens.solvers.backtrack) against a plain-Python course solver."""

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.solvers import backtrack


def reference(n, order=None):
    """The classic course solver, iterative, in plain Python.

    Returns (rows or None, placements, backtracks).

    ``order[c]`` lists the rows of column c in the order they are tried (default increasing).
    """
    order = [list(range(n))] * n if order is None else [list(map(int, o)) for o in order]
    pos, col, start, placements, backtracks = [0] * n, 0, 0, 0, 0
    safe = lambda c, r: all(
        order[j][pos[j]] != r and abs(order[j][pos[j]] - r) != c - j for j in range(c)
    )
    while col < n:
        t = next((t for t in range(start, n) if safe(col, order[col][t])), None)
        if t is not None:
            pos[col], placements, col, start = t, placements + 1, col + 1, 0
        elif col == 0:
            return None, placements, backtracks
        else:
            col, backtracks = col - 1, backtracks + 1
            start = pos[col] + 1
    return [order[c][pos[c]] for c in range(n)], placements, backtracks


def test_reference_reproduces_the_classic_figures():
    assert reference(8) == ([0, 4, 7, 5, 2, 6, 1, 3], 113, 105)
    assert reference(17)[1:] == (5374, 5357)


class SearchKernelTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_search_with_random_orders_matches_reference(self):
        for seed, n in [(0, 6), (1, 8), (2, 9)]:
            cfg = backtrack.Config(n)
            order = backtrack.random_orders(jax.random.key(seed), n)
            s = self.variant(lambda o, cfg=cfg: backtrack.search(o, cfg))(order)
            rows, p, b = reference(n, np.asarray(order))
            assert (int(s.placements), int(s.backtracks)) == (p, b)
            assert int(s.status) == backtrack.SOLVED
            got = np.asarray(order)[np.arange(n), np.asarray(s.pos)]
            assert got.tolist() == rows
            chex.assert_shape(s.masks, (n + 1, 3))


def test_random_orders_are_permutations():
    o = np.asarray(backtrack.random_orders(jax.random.key(3), 12))
    assert (np.sort(o, axis=1) == np.arange(12)).all()
    assert len({tuple(r) for r in o}) > 1  # columns get different orders


def test_search_kernel_with_classic_order():
    cfg = backtrack.Config(8)
    order = jnp.broadcast_to(jnp.arange(8, dtype=jnp.int32), (8, 8))
    s = jax.jit(lambda o: backtrack.search(o, cfg))(order)
    assert (int(s.placements), int(s.backtracks)) == (113, 105)


def test_classic_kernel_figures():
    r = jax.jit(backtrack.classic, static_argnums=0)(backtrack.Config(8))
    assert np.asarray(r.rows).tolist() == [0, 4, 7, 5, 2, 6, 1, 3]
    assert (int(r.placements), int(r.backtracks)) == (113, 105) and bool(r.solved)
    r = backtrack.classic(backtrack.Config(3))
    assert not bool(r.solved) and (int(r.placements), int(r.backtracks)) == (5, 5)


def test_config_is_a_frozen_static_dataclass():
    cfg = backtrack.Config(8)
    assert cfg == backtrack.Config(8, backtrack.DEFAULT_MAX_STEPS) and hash(cfg) == hash(
        backtrack.Config(8)
    )
    try:
        cfg.n = 9
    except AttributeError:
        pass
    else:
        raise AssertionError("Config must be frozen")


class RandomisedVariantsTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_randomised_and_step(self):
        n = 7
        cfg = backtrack.Config(n)
        key = jax.random.key(5)
        r = self.variant(lambda k: backtrack.randomised(k, cfg))(key)
        chex.assert_shape(r.rows, (n,))
        chex.assert_shape([r.solved, r.placements, r.backtracks], ())
        rows, p, b = reference(n, np.asarray(backtrack.random_orders(key, n)))
        assert np.asarray(r.rows).tolist() == rows and (int(r.placements), int(r.backtracks)) == (
            p,
            b,
        )
        s = backtrack.init(backtrack.random_orders(key, n), cfg)
        s = self.variant(lambda s: backtrack.step(s, cfg))(s)
        assert int(s.placements) == 1 and int(s.col) == 1


def test_kernels_trace_once():
    chex.clear_trace_counter()
    cfg = backtrack.Config(9)
    randomised = jax.jit(chex.assert_max_traces(lambda k: backtrack.randomised(k, cfg), n=1))
    search = jax.jit(chex.assert_max_traces(lambda o: backtrack.search(o, cfg), n=1))
    for seed in range(3):
        randomised(jax.random.key(seed))
        search(backtrack.random_orders(jax.random.key(seed), 9))
