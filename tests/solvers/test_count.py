"""The one-prefix counting kernel (solvers/count.py) against plain-Python references."""

import dataclasses
import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import reference
from jax import lax

from jaxqueens.core import constellations
from jaxqueens.core.oeis import A000170
from jaxqueens.core.prefixes import expand_mirror
from jaxqueens.solvers import count as count_kernel
from jaxqueens.solvers.count import KernelConfig


@functools.lru_cache
def solutions(n):
    return reference.all_solutions(n)


def below(n, queens):
    """The solutions (``reference.all_solutions``) whose first columns hold ``queens``."""
    head = tuple(int(q) for q in queens)
    return sorted(s for s in solutions(n) if s[: len(head)] == head)


def mapped(fn):
    """``fn`` on every prefix, one per ``lax.map`` iteration, jitted (the CPU batching)."""
    return jax.jit(lambda m: lax.map(fn, m))


def decode(words, queens):
    """Boards from the kernel's lists (consecutive ``cols`` masks differ by the queen's row)."""
    words = np.asarray(words, np.uint64)
    rows = np.log2((words[:, 1:] ^ words[:, :-1]).astype(np.float64)).astype(int)
    return sorted(tuple(int(q) for q in queens) + tuple(int(r) for r in row) for row in rows)


def test_config_is_a_frozen_hashable_static_argument():
    cfg = KernelConfig(8, 2)
    assert (
        cfg == KernelConfig(8, 2)
        and hash(cfg) == hash(KernelConfig(8, 2))
        and cfg != KernelConfig(8, 3)
    )
    assert (cfg.rows, cfg.width) == (7, 7)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.n = 9


@pytest.mark.parametrize("n,depth", [(8, 2), (9, 3), (10, 3)])
def test_kernel_counts_each_prefix_like_the_reference(n, depth):
    masks, _ = expand_mirror(n, depth)
    cfg = KernelConfig(n, depth)
    got = np.asarray(mapped(lambda p: count_kernel.count_prefix(p, cfg))(masks))
    want = [reference.count_completions(n, int(c), int(l), int(r), depth) for c, l, r, _ in masks]
    assert got[:, 1].sum() == 0 and got[:, 0].tolist() == want


@pytest.mark.parametrize("n,depth", [(6, 1), (7, 2), (8, 3)])
def test_kernel_counts_and_lists_the_reference_solutions(n, depth):
    masks, queens = expand_mirror(n, depth)
    cfg = KernelConfig(n, depth)
    counts, lists = mapped(lambda p: count_kernel.enumerate_prefix(p, cfg, 16))(masks)
    counts, lists = np.asarray(counts), np.asarray(lists)
    chex.assert_shape(lists, (len(masks), 16, cfg.width))
    alone = np.asarray(mapped(lambda p: count_kernel.count_prefix(p, cfg))(masks))
    for q, c, words, w in zip(queens, counts, lists, alone):
        want = below(n, q)
        assert c.tolist() == w.tolist() == [len(want), 0]
        assert decode(words[: len(want)], q) == want


def test_enumeration_cap_keeps_the_count_exact():
    masks, queens = expand_mirror(8, 1)
    cfg = KernelConfig(8, 1)
    counts, lists = mapped(lambda p: count_kernel.enumerate_prefix(p, cfg, 2))(masks)
    for q, c, words in zip(queens, np.asarray(counts), np.asarray(lists)):
        want = below(8, q)
        assert int(c[0]) == len(want) > 2
        assert set(decode(words, q)) <= set(want)  # the first two, listed


def test_a_prefix_with_no_free_row_is_an_empty_search():
    cfg = KernelConfig(8, 2)
    lane = count_kernel.init(jnp.zeros(4, jnp.uint32), cfg)
    assert int(lane.d) == -1
    assert count_kernel.count_prefix(jnp.zeros(4, jnp.uint32), cfg).tolist() == [0, 0]


def test_add64_carries_instead_of_wrapping():
    lo, hi = count_kernel.add64(jnp.uint32(2**32 - 3), jnp.uint32(7), jnp.uint32(5))
    assert (int(lo), int(hi)) == (2, 8)
    lo, hi = count_kernel.add64(jnp.uint32(2**32 - 1), jnp.uint32(2**32 - 2), jnp.uint32(1))
    assert (int(lo), int(hi)) == (0, 2**32 - 1)


class KernelTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_count_prefix(self):
        masks, _ = expand_mirror(7, 2)
        cfg = KernelConfig(7, 2)
        fn = self.variant(lambda p: count_kernel.count_prefix(p, cfg))
        words = [fn(jnp.asarray(m)) for m in masks]
        chex.assert_shape(words[0], (2,))
        assert 2 * sum(int(w[0]) for w in words) == 40

    @chex.variants(with_jit=True, without_jit=True)
    def test_init_and_step_walk_the_tree(self):
        masks, _ = expand_mirror(6, 1)
        cfg = KernelConfig(6, 1)
        init = self.variant(lambda p: count_kernel.init(p, cfg))
        step = self.variant(lambda s: count_kernel.step(s, cfg))
        total = 0
        for m in masks:
            lane = init(jnp.asarray(m))
            chex.assert_shape(lane.stack, (cfg.rows * 5,))
            chex.assert_type(
                [lane.d, lane.lo, lane.hi, lane.stack],
                [jnp.int32, jnp.uint32, jnp.uint32, jnp.uint32],
            )
            while int(lane.d) >= 0:
                lane = step(lane)
            total += int(lane.lo)
        assert 2 * total == A000170[6]

    @chex.variants(with_jit=True, without_jit=True)
    def test_enumerate_prefix(self):
        masks, queens = expand_mirror(6, 1)
        cfg = KernelConfig(6, 1)
        fn = self.variant(lambda p: count_kernel.enumerate_prefix(p, cfg, 4))
        found = []
        for m, q in zip(masks, queens):
            c, words = fn(jnp.asarray(m))
            chex.assert_shape(words, (4, cfg.width))
            found += decode(np.asarray(words)[: int(c[0])], q)
        assert sorted(found + [tuple(5 - r for r in s) for s in found]) == solutions(6)

    @chex.variants(with_jit=True, without_jit=True)
    def test_add64(self):
        fn = self.variant(count_kernel.add64)
        lo, hi = fn(jnp.uint32(2**32 - 1), jnp.uint32(0), jnp.uint32(2))
        assert (int(lo), int(hi)) == (1, 1)


def test_kernels_trace_once_per_config():
    masks, _ = expand_mirror(8, 2)
    cfg = KernelConfig(8, 2)
    count = jax.jit(chex.assert_max_traces(lambda p: count_kernel.count_prefix(p, cfg), n=1))
    listed = jax.jit(
        chex.assert_max_traces(lambda p: count_kernel.enumerate_prefix(p, cfg, 8), n=1)
    )
    init = jax.jit(chex.assert_max_traces(lambda p: count_kernel.init(p, cfg), n=1))
    step = jax.jit(chex.assert_max_traces(lambda s: count_kernel.step(s, cfg), n=1))
    add = jax.jit(chex.assert_max_traces(count_kernel.add64, n=1))
    for m in masks[:4]:
        p = jnp.asarray(m)
        count(p)
        listed(p)
        step(init(p))
        add(jnp.uint32(1), jnp.uint32(0), jnp.uint32(int(m[0])))


# --- constellation tasks: the same DFS with per-column allow masks ------------------------------


def constellation_tasks(n, depth):
    cfg, weights = constellations.constellations(n)
    allow = constellations.allow_masks(n, cfg)
    masks, owner = constellations.tasks(n, allow, depth)
    return (
        np.concatenate([masks, allow[owner]], axis=1).astype(np.uint32),
        weights[owner],
        allow,
        owner,
    )


def allowed_completions(n, allow, col, cols, ld, rd):
    """Plain recursive count of completions whose column k uses a row of ``allow[k]``."""
    if col == n:
        return 1
    full, total = (1 << n) - 1, 0
    av = full & ~(cols | ld | rd) & int(allow[col])
    while av:
        bit = av & -av
        av ^= bit
        total += allowed_completions(
            n, allow, col + 1, cols | bit, ((ld | bit) << 1) & full, (rd | bit) >> 1
        )
    return total


@pytest.mark.parametrize("n,depth", [(6, 1), (8, 2), (9, 3), (10, 2)])
def test_task_kernel_counts_each_task_like_the_reference(n, depth):
    tasks, weights, allow, owner = constellation_tasks(n, depth)
    cfg = KernelConfig(n, depth)
    got = np.asarray(mapped(lambda t: count_kernel.count_task(t, cfg))(tasks))
    want = [
        allowed_completions(n, allow[k], depth, int(t[0]), int(t[1]), int(t[2]))
        for t, k in zip(tasks, owner)
    ]
    assert got[:, 1].sum() == 0 and got[:, 0].tolist() == want
    assert int((got[:, 0].astype(np.int64) * weights).sum()) == A000170[n]


def test_all_rows_allowed_is_the_plain_kernel():
    masks, _ = expand_mirror(9, 3)
    cfg = KernelConfig(9, 3)
    full = np.full((len(masks), 9), (1 << 9) - 1, np.uint32)
    tasks = np.concatenate([masks, full], axis=1)
    plain = np.asarray(mapped(lambda p: count_kernel.count_prefix(p, cfg))(masks))
    assert (np.asarray(mapped(lambda t: count_kernel.count_task(t, cfg))(tasks)) == plain).all()


class TaskKernelTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_count_task(self):
        tasks, weights, _, _ = constellation_tasks(6, 2)
        cfg = KernelConfig(6, 2)
        fn = self.variant(lambda t: count_kernel.count_task(t, cfg))
        words = [fn(jnp.asarray(t)) for t in tasks]
        chex.assert_shape(words[0], (2,))
        assert sum(int(w) * int(c[0]) for w, c in zip(weights, words)) == A000170[6]

    @chex.variants(with_jit=True, without_jit=True)
    def test_init_task(self):
        tasks, _, allow, owner = constellation_tasks(7, 2)
        cfg = KernelConfig(7, 2)
        lane = self.variant(lambda t: count_kernel.init_task(t, cfg))(jnp.asarray(tasks[0]))
        chex.assert_shape([lane.stack, lane.allow], [(cfg.rows * 5,), (7,)])
        chex.assert_type(
            [lane.d, lane.lo, lane.hi, lane.stack, lane.allow],
            [jnp.int32, jnp.uint32, jnp.uint32, jnp.uint32, jnp.uint32],
        )
        assert np.asarray(lane.allow).tolist() == allow[owner[0]].tolist()


def test_task_kernel_traces_once_per_config():
    tasks, _, _, _ = constellation_tasks(8, 2)
    cfg = KernelConfig(8, 2)
    count = jax.jit(chex.assert_max_traces(lambda t: count_kernel.count_task(t, cfg), n=1))
    init = jax.jit(chex.assert_max_traces(lambda t: count_kernel.init_task(t, cfg), n=1))
    for t in tasks[:4]:
        count(jnp.asarray(t))
        init(jnp.asarray(t))
