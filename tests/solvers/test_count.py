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
from jaxqueens.solvers import count_prefix as prefix_kernel
from jaxqueens.solvers.count_prefix import KernelConfig


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
    got = np.asarray(mapped(lambda p: prefix_kernel.count_prefix(p, cfg))(masks))
    want = [reference.count_completions(n, int(c), int(l), int(r), depth) for c, l, r, _ in masks]
    assert got[:, 1].sum() == 0 and got[:, 0].tolist() == want


@pytest.mark.parametrize("n,depth", [(6, 1), (7, 2), (8, 3)])
def test_kernel_counts_and_lists_the_reference_solutions(n, depth):
    masks, queens = expand_mirror(n, depth)
    cfg = KernelConfig(n, depth)
    counts, lists = mapped(lambda p: prefix_kernel.enumerate_prefix(p, cfg, 16))(masks)
    counts, lists = np.asarray(counts), np.asarray(lists)
    chex.assert_shape(lists, (len(masks), 16, cfg.width))
    alone = np.asarray(mapped(lambda p: prefix_kernel.count_prefix(p, cfg))(masks))
    for q, c, words, w in zip(queens, counts, lists, alone, strict=True):
        want = below(n, q)
        assert c.tolist() == w.tolist() == [len(want), 0]
        assert decode(words[: len(want)], q) == want


def test_enumeration_cap_keeps_the_count_exact():
    masks, queens = expand_mirror(8, 1)
    cfg = KernelConfig(8, 1)
    counts, lists = mapped(lambda p: prefix_kernel.enumerate_prefix(p, cfg, 2))(masks)
    for q, c, words in zip(queens, np.asarray(counts), np.asarray(lists), strict=True):
        want = below(8, q)
        assert int(c[0]) == len(want) > 2
        assert set(decode(words, q)) <= set(want)  # the first two, listed


def test_a_prefix_with_no_free_row_is_an_empty_search():
    cfg = KernelConfig(8, 2)
    lane = prefix_kernel.init_prefix(jnp.zeros(4, jnp.uint32), cfg)
    assert int(lane.d) == -1
    assert prefix_kernel.count_prefix(jnp.zeros(4, jnp.uint32), cfg).tolist() == [0, 0]


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
        fn = self.variant(lambda p: prefix_kernel.count_prefix(p, cfg))
        words = [fn(jnp.asarray(m)) for m in masks]
        chex.assert_shape(words[0], (2,))
        assert 2 * sum(int(w[0]) for w in words) == 40

    @chex.variants(with_jit=True, without_jit=True)
    def test_init_and_step_walk_the_tree(self):
        masks, _ = expand_mirror(6, 1)
        cfg = KernelConfig(6, 1)
        init = self.variant(lambda p: prefix_kernel.init_prefix(p, cfg))
        step = self.variant(lambda s: prefix_kernel.step_prefix(s, cfg))
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
        fn = self.variant(lambda p: prefix_kernel.enumerate_prefix(p, cfg, 4))
        found = []
        for m, q in zip(masks, queens, strict=True):
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
    count = jax.jit(chex.assert_max_traces(lambda p: prefix_kernel.count_prefix(p, cfg), n=1))
    listed = jax.jit(
        chex.assert_max_traces(lambda p: prefix_kernel.enumerate_prefix(p, cfg, 8), n=1)
    )
    init = jax.jit(chex.assert_max_traces(lambda p: prefix_kernel.init_prefix(p, cfg), n=1))
    step = jax.jit(chex.assert_max_traces(lambda s: prefix_kernel.step_prefix(s, cfg), n=1))
    add = jax.jit(chex.assert_max_traces(count_kernel.add64, n=1))
    for m in masks[:4]:
        p = jnp.asarray(m)
        count(p)
        listed(p)
        step(init(p))
        add(jnp.uint32(1), jnp.uint32(0), jnp.uint32(int(m[0])))


# --- the constellation search: level tables, skipped border columns, look-ahead, budget -------


def constellation_items(n, depth):
    """Every task of n's canonical constellations as a fresh search item (the driver's layout,
    built here independently): items, weights, allow masks, owners, prefix masks, levels."""
    cfg, weights = constellations.constellations(n)
    allow = constellations.allow_masks(n, cfg)
    masks, owner = constellations.tasks(n, allow, depth)
    config = count_kernel.Config(n, constellations.table_levels(n, depth))
    tables = constellations.level_tables(n, cfg, allow, depth).reshape(len(cfg), -1)
    items = np.zeros((len(owner), config.width), np.uint32)
    row = count_kernel.HEAD
    items[:, row : row + 3] = masks[:, :3]
    items[:, row + count_kernel.BACK] = count_kernel.DONE
    items[:, row + count_kernel.AV] = masks[:, 3]
    items[:, config.state_width :] = tables[owner]
    _, levels = constellations.level_columns(n, cfg, depth)
    return config, items, weights[owner], allow, owner, masks, levels[owner]


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


@functools.partial(jax.jit, static_argnums=2)
def _resume(item, budget, config):
    """One call of ``budget`` edges on a packed item (unpack, walk, pack): one compile per
    Config, shared by every search of that Config whatever the budget."""
    state, table = count_kernel.unpack(item, config)
    walked, taken = count_kernel.walk(state, table, count_kernel.Params(budget), config)
    return count_kernel.pack(walked), taken


def searched(config, items, budget=count_kernel.MAX_BUDGET):
    """Each item searched to the end by calls of ``budget`` edges (unpack, walk, pack, resume):
    completions and edges per item, and the calls made."""
    found, edges, calls = [], [], 0
    for item in items:
        item, c, e = item.copy(), 0, 0
        while item[0] != count_kernel.DONE:
            state, taken = _resume(item, np.int32(budget), config)
            state, calls = np.asarray(state), calls + 1
            assert 0 <= int(taken) <= budget and state[1] <= taken
            c, e = c + int(state[1]), e + int(taken)
            item[: config.state_width] = state
        found.append(c)
        edges.append(e)
    return found, edges, calls


@pytest.mark.parametrize("n,depth", [(6, 1), (8, 2), (9, 3), (10, 2), (11, 1)])
def test_search_counts_each_task_like_the_reference(n, depth):
    config, items, weights, allow, owner, masks, levels = constellation_items(n, depth)
    want = [
        allowed_completions(n, allow[k], depth, int(t[0]), int(t[1]), int(t[2]))
        for t, k in zip(masks, owner, strict=True)
    ]
    # a task with one level is counted on the host (its free rows): the kernel never sees it
    one = levels == 1
    assert [bin(int(m)).count("1") for m in masks[one, 3]] == [
        w for w, o in zip(want, one, strict=True) if o
    ]
    items[one, 0] = count_kernel.DONE
    got, _, _ = searched(config, items)
    got = np.where(one, [bin(int(m)).count("1") for m in masks[:, 3]], got)
    assert got.tolist() == want
    assert int((got * weights).sum()) == A000170[n]


@pytest.mark.parametrize("budget", [1, 7, 1000])
def test_a_budget_pauses_the_search_and_a_resume_finishes_it_exactly(budget):
    """Issue 28: a run stops after ``budget`` edges with its stack intact; resuming from the
    packed state gives the same completions over the same edges as one unbounded run."""
    config, items, _, _, _, _, levels = constellation_items(9, 2)
    items = items[levels > 1]
    whole, edges, calls = searched(config, items)
    assert calls == len(items)
    got, got_edges, got_calls = searched(config, items, budget)
    assert got == whole and got_edges == edges
    assert got_calls == sum(max(1, -(-e // budget)) for e in edges)


def test_one_shared_budget_over_a_batch():
    """search(): the items run one after the other under ONE budget; the ones it did not reach
    come back unchanged, and the edges taken never exceed it."""
    config, items, _, _, _, _, levels = constellation_items(9, 2)
    items = items[levels > 1][:40]
    _, edges, _ = searched(config, items)
    fn = jax.jit(lambda x, b: count_kernel.search(x, count_kernel.Params(b), config))
    i = next(i for i in range(10, 40) if edges[i] > 1)  # the budget stops inside item i
    states, taken = fn(items, np.int32(sum(edges[:i]) + 1))
    states = np.asarray(states)
    chex.assert_shape(states, (40, config.state_width))
    assert int(taken) == sum(edges[:i]) + 1
    assert (states[:i, 0] == count_kernel.DONE).all() and states[i, 0] != count_kernel.DONE
    assert (states[i + 1 :] == items[i + 1 :, : config.state_width]).all()
    assert (states[i + 1 :, 1] == 0).all()
    states, taken = fn(items, np.int32(count_kernel.MAX_BUDGET))
    assert int(taken) == sum(edges) and (np.asarray(states)[:, 0] == count_kernel.DONE).all()


def test_the_look_ahead_and_the_skipped_columns_shrink_the_tree():
    """Fewer edges than the plain DFS over every column (the kernel before issue 27: 6.0 M
    edges at n = 14 against 3.8 M now), the count unchanged."""
    n, depth = 10, 2
    config, items, _weights, allow, owner, masks, levels = constellation_items(n, depth)
    keep = levels > 1
    _, edges, _ = searched(config, items[keep])

    def plain_edges(allow, col, cols, ld, rd):  # edges of the plain DFS (last column counted)
        if col == n - 1:
            return 0
        full, total = (1 << n) - 1, 0
        av = full & ~(cols | ld | rd) & int(allow[col])
        while av:
            bit = av & -av
            av ^= bit
            total += 1
            nc, nl, nr = cols | bit, ((ld | bit) << 1) & full, (rd | bit) >> 1
            if full & ~(nc | nl | nr) & int(allow[col + 1]):
                total += plain_edges(allow, col + 1, nc, nl, nr)
        return total

    plain = sum(
        plain_edges(allow[k], depth, int(t[0]), int(t[1]), int(t[2]))
        for t, k in zip(masks[keep], owner[keep], strict=True)
    )
    assert sum(edges) < 0.8 * plain


class SearchTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_step_and_run(self):
        config, items, weights, _, _, _, levels = constellation_items(7, 2)
        step = self.variant(lambda s, t: count_kernel.edge(s, t, config))
        run = self.variant(lambda s, t, b: count_kernel.walk(s, t, count_kernel.Params(b), config))
        total = 0
        for item, w, lv in zip(items, weights, levels, strict=True):
            if lv == 1:
                continue
            state, table = count_kernel.unpack(jnp.asarray(item), config)
            chex.assert_shape([state.stack, table], [(config.rows * 5,), (config.levels * 8,)])
            chex.assert_type(
                [state.d, state.found, state.stack], [jnp.int32, jnp.uint32, jnp.uint32]
            )
            walked = state
            steps = 0
            while int(walked.d) >= 0:
                walked, steps = step(walked, table), steps + 1
            ran, taken = run(state, table, jnp.int32(count_kernel.MAX_BUDGET))
            assert int(taken) == steps and int(ran.found) == int(walked.found)
            total += int(w) * int(walked.found)
        one = [
            int(w) * bin(int(m[count_kernel.HEAD + count_kernel.AV])).count("1")
            for m, w, lv in zip(items, weights, levels, strict=True)
            if lv == 1
        ]
        assert total + sum(one) == A000170[7]


def test_search_traces_once_per_config_whatever_the_budget():
    config, items, _, _, _, _, _ = constellation_items(8, 2)
    fn = jax.jit(
        chex.assert_max_traces(
            lambda x, b: count_kernel.search(x, count_kernel.Params(b), config), n=1
        )
    )
    for budget in (1, 7, 1000, count_kernel.MAX_BUDGET):
        fn(items[:8], np.int32(budget))


def test_config_is_checked():
    assert count_kernel.Config(17, 16).width == count_kernel.HEAD + 5 * 32 + 8 * 16
    for bad in [(0, 16), (33, 16), (8, 12), (8, 1)]:
        with pytest.raises(ValueError):
            count_kernel.Config(*bad)
