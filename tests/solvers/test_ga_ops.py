"""GA operators: validity (property tests), agreement with plain-Python references, batching."""

import functools
import itertools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxqueens.core import checker
from jaxqueens.core import constraints as cons
from jaxqueens.solvers import constrained as rules
from jaxqueens.solvers import ga_ops as O

SIZES = (3, 8, 20, 64)


def perms(rng, batch, n, dtype=np.int8):
    return np.argsort(rng.random((batch, n)), axis=1).astype(dtype)


def seeds(rng, batch):
    return jnp.asarray(rng.integers(0, 2**32, batch, dtype=np.uint64).astype(np.uint32))


@functools.cache
def _all_perm_ops(n):
    """One jitted function per n: every permutation operator on a batch of parent pairs."""

    def f(s, a, b, indpb):
        out = {}
        for name, cx in O.CROSSOVERS["permutation"].items():
            out[name] = jax.vmap(cx)(s, a, b)
        for name, mut in O.MUTATIONS["permutation"].items():
            out[name] = jax.vmap(mut, in_axes=(0, 0, None))(s, a, indpb)
        return out

    return jax.jit(f)


def _assert_perms(x, n):
    x = np.asarray(x)
    assert x.dtype == np.int8
    assert (np.sort(x, axis=1) == np.arange(n)).all()


@settings(max_examples=12, deadline=None)
@given(
    n=st.sampled_from(SIZES),
    seed=st.integers(0, 2**31 - 1),
    indpb=st.sampled_from([0.0, 0.1, 0.5, 1.0]),
)
def test_permutation_operators_return_permutations(n, seed, indpb):
    rng = np.random.default_rng(seed)
    a, b = perms(rng, 128, n), perms(rng, 128, n)
    out = _all_perm_ops(n)(seeds(rng, 128), a, b, indpb)
    for name, res in out.items():
        for child in res if isinstance(res, tuple) else (res,):
            _assert_perms(child, n)


# ----------------------------------------------------------------------------- references


def ref_keep_fill(a, b, lo, hi):
    n = len(a)
    child = [None] * n
    child[lo:hi] = a[lo:hi]
    fill = [b[(hi + k) % n] for k in range(n) if b[(hi + k) % n] not in set(a[lo:hi])]
    for k, pos in enumerate([(hi + k) % n for k in range(n - (hi - lo))]):
        child[pos] = fill[k]
    return child


def ref_pmx(a, b, lo, hi):
    def child(a, b):
        c, seg = list(a), set(b[lo:hi])
        c[lo:hi] = b[lo:hi]
        for i in [*range(lo), *range(hi, len(a))]:
            v = a[i]
            while v in seg:
                v = a[b.index(v)]
            c[i] = v
        return c

    return child(a, b), child(b, a)


def ref_cycle(a, b):
    n, label, cyc = len(a), [-1] * len(a), 0
    for start in range(n):
        if label[start] < 0:
            i = start
            while label[i] < 0:
                label[i] = cyc
                i = a.index(b[i])
            cyc += 1
    c1 = [a[i] if label[i] % 2 == 0 else b[i] for i in range(n)]
    c2 = [b[i] if label[i] % 2 == 0 else a[i] for i in range(n)]
    return c1, c2


def test_crossovers_match_references():
    rng = np.random.default_rng(1)
    keep_fill, pmx, cycle = jax.jit(O.keep_fill), jax.jit(O.pmx_at), jax.jit(O.cx_cycle)
    for _ in range(60):
        n = int(rng.choice([2, 5, 9]))
        a, b = [int(v) for v in rng.permutation(n)], [int(v) for v in rng.permutation(n)]
        lo = int(rng.integers(0, n))
        hi = int(rng.integers(lo + 1, n + 1))
        assert list(np.asarray(keep_fill(np.array(a), np.array(b), lo, hi))) == ref_keep_fill(
            a, b, lo, hi
        )
        c1, c2 = pmx(np.array(a), np.array(b), lo, hi)
        assert (list(np.asarray(c1)), list(np.asarray(c2))) == ref_pmx(a, b, lo, hi)
        c1, c2 = cycle(jnp.uint32(0), np.array(a), np.array(b))
        assert (list(np.asarray(c1)), list(np.asarray(c2))) == ref_cycle(a, b)


def test_cut_and_fill_is_the_classic_operator():
    a, b = np.arange(8), np.array([7, 6, 5, 4, 3, 2, 1, 0])
    # keep a[:3] = 0 1 2, then b from position 3 on, wrapping: 4 3 (2 1 0 skipped) 7 6 5
    assert list(np.asarray(O.keep_fill(a, b, 0, 3))) == [0, 1, 2, 4, 3, 7, 6, 5]


def test_combination_crossovers_recombine_genes():
    rng = np.random.default_rng(2)
    a, b = (
        rng.integers(0, 8, (256, 8)).astype(np.int8),
        rng.integers(0, 8, (256, 8)).astype(np.int8),
    )
    for cx in (O.cx_one_point, O.cx_uniform):
        c1, c2 = (np.asarray(c) for c in jax.jit(jax.vmap(cx))(seeds(rng, 256), a, b))
        assert ((c1 == a) | (c1 == b)).all()
        assert (c1.astype(int) + c2 == a.astype(int) + b).all()  # each gene pair is shared out
    c1, _ = jax.jit(jax.vmap(O.cx_one_point))(seeds(rng, 256), a, b)
    from_b = (np.asarray(c1) != a) | (np.arange(8) >= 8)
    first_b = np.where(from_b.any(axis=1), from_b.argmax(axis=1), 8)
    assert (first_b >= 1).all()  # the cut keeps at least one gene of a
    assert all((c1[r, : first_b[r]] == a[r, : first_b[r]]).all() for r in range(256))


def test_mutations_semantics():
    rng = np.random.default_rng(3)
    n, B = 12, 512
    x = perms(rng, B, n)
    s = seeds(rng, B)
    swap1 = np.asarray(jax.vmap(O.mut_swap, in_axes=(0, 0, None))(s, x, 0.0))
    assert ((swap1 != x).sum(axis=1) == 2).all()  # exactly one swap
    inv = np.asarray(jax.vmap(O.mut_inversion)(s, x))
    scr = np.asarray(jax.vmap(O.mut_scramble)(s, x))
    for y in (inv, scr):
        changed = y != x
        for row, ch in zip(range(B), changed):  # changes lie in one contiguous segment
            idx = np.flatnonzero(ch)
            if len(idx):
                assert set(y[row, idx[0] : idx[-1] + 1]) == set(x[row, idx[0] : idx[-1] + 1])
    c = rng.integers(0, n, (B, n)).astype(np.int8)
    reset1 = np.asarray(jax.vmap(O.mut_reset, in_axes=(0, 0, None))(s, c, 0.0))
    assert ((reset1 != c).sum(axis=1) <= 1).all() and (reset1 != c).any()
    reset_all = np.asarray(jax.vmap(O.mut_reset, in_axes=(0, 0, None))(s, c, 1.0))
    assert (reset_all.min() >= 0) and (reset_all.max() < n) and (reset_all != c).mean() > 0.8


def test_swap_matches_deap_mutshuffleindexes():
    """Same draws as DEAP's loop: gene i (in order) swapped with partner j != i when its coin is up."""
    rng = np.random.default_rng(4)
    n, indpb, B = 10, 0.3, 64
    s, x = seeds(rng, B), perms(rng, B, n)
    got = np.asarray(jax.jit(jax.vmap(O.mut_swap, in_axes=(0, 0, None)))(s, x, indpb))
    coins = np.asarray(jax.vmap(lambda s: O.uniform(s, 31, n))(s)) < indpb
    other = np.asarray(jax.vmap(lambda s: O.randint(s, 33, n, n - 1))(s))
    for r in range(B):
        y = list(x[r])
        for i in range(n):
            if coins[r, i]:
                j = other[r, i] + (other[r, i] >= i)
                y[i], y[j] = y[j], y[i]
        assert list(got[r]) == y


# ----------------------------------------------------------------------------- fitness, selection


@pytest.mark.parametrize("n", [4, 8, 20, 33, 64])
def test_fitness_matches_reference(n):
    rng = np.random.default_rng(n)
    boards = np.concatenate([rng.integers(0, n, (300, n)), perms(rng, 100, n, np.int64)]).astype(
        np.int8
    )
    got = np.asarray(jax.jit(jax.vmap(O.fitness))(boards))
    assert (got == checker.attacking_pairs(boards)).all()
    assert ((got == 0) == checker.are_solutions(boards)).all()


def test_fitness_counts_row_conflicts():
    assert int(O.fitness(jnp.array([1, 3, 0, 2], jnp.int8))) == 0
    assert int(O.fitness(jnp.array([1, 3, 1, 3], jnp.int8))) > 0  # rows repeat: not a solution


def test_selection():
    rng = np.random.default_rng(5)
    fit = jnp.asarray(rng.permutation(50).astype(np.int32))
    s = seeds(rng, 2000)
    two = np.asarray(jax.vmap(lambda s: O.tournament_best_two(s, fit, 5))(s))
    members = np.asarray(jax.vmap(lambda s: O.distinct_indices(s, 50, 5))(s))
    assert all(len(set(m)) == 5 for m in members)
    f = np.asarray(fit)
    for m, t in zip(members, two):
        assert list(t) == list(m[np.argsort(f[m])[:2]])
    one = np.asarray(jax.vmap(lambda s: O.tournament(s, fit, 3))(s))
    assert np.mean(f[one]) < 20  # best of 3 of uniform 0..49: mean ~12
    assert list(np.asarray(O.best_indices(fit, 3))) == list(np.argsort(f)[:3])
    assert list(np.asarray(O.worst_indices(fit, 2))) == list(np.argsort(-f)[:2])


def test_fisher_yates_uniform():
    p = np.asarray(
        jax.jit(jax.vmap(lambda s: O.fisher_yates(s, 4)))(jnp.arange(48000, dtype=jnp.uint32))
    )
    _, counts = np.unique(p, axis=0, return_counts=True)
    assert len(counts) == 24 and counts.min() > 1700 and counts.max() < 2300  # ~2000 each


def test_gather1d_scatter1d_batching_matches_indexing():
    rng = np.random.default_rng(6)
    x = jnp.asarray(rng.integers(0, 100, (3, 4, 10)).astype(np.int32))
    i = jnp.asarray(rng.integers(0, 10, (3, 4, 6)).astype(np.int32))
    got = jax.vmap(jax.vmap(O.gather1d))(x, i)
    assert (got == jnp.take_along_axis(x, i, axis=2)).all()
    idx = jnp.asarray(
        np.stack([rng.permutation(10)[:3] for _ in range(12)]).reshape(3, 4, 3).astype(np.int32)
    )
    idx = idx.at[0, 0, 0].set(10)  # out of range: dropped
    v = jnp.full((3, 4, 3), -1, jnp.int32)
    got = np.asarray(jax.vmap(jax.vmap(O.scatter1d))(x, idx, v))
    want = np.asarray(x).copy()
    for a in range(3):
        for b in range(4):
            for k in range(3):
                if idx[a, b, k] < 10:
                    want[a, b, idx[a, b, k]] = -1
    assert (got == want).all()


@pytest.mark.parametrize("cap32", [1, 8, 32])
def test_masked_apply_is_exact(cap32):
    rng = np.random.default_rng(7)
    x = jnp.asarray(rng.integers(0, 100, (500, 4)).astype(np.int32))
    mask = jnp.asarray(rng.random(500) < 0.4)
    fn = lambda r: r * 3 + 1
    got = jax.jit(lambda m, x: O.masked_apply(fn, m, (x,), x, cap32))(mask, x)
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
    one = lambda mk, x, k, m: O.masked_apply(fn, mk, (x,), (x, x), cap32, (k, m))
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


def test_dynamic_selection_sizes_equal_static_ones():
    """A tournament of ``size`` under a capacity k is exactly the static tournament of ``size``
    (the draws are a prefix of the capacity's), for both selections."""
    rng = np.random.default_rng(14)
    fit = jnp.asarray(rng.integers(0, 10, 40).astype(np.int32))  # ties too
    s = seeds(rng, 500)
    for size in (1, 3, 5):
        got = jax.vmap(lambda s, size=size: O.tournament(s, fit, 7, jnp.int32(size)))(s)
        chex.assert_trees_all_equal(
            got, jax.vmap(lambda s, size=size: O.tournament(s, fit, size))(s)
        )
    for size in (2, 4):
        got = jax.vmap(lambda s, size=size: O.tournament_best_two(s, fit, 6, jnp.int32(size)))(s)
        want = jax.vmap(lambda s, size=size: O.tournament_best_two(s, fit, size))(s)
        chex.assert_trees_all_equal(got, want)
        drawn = jax.vmap(lambda s, size=size: O.distinct_indices(s, 40, 6, jnp.int32(size)))(s)
        assert all(len(set(d[:size])) == size for d in np.asarray(drawn))
    sel = O.select_tournament(s[0], fit, jnp.int32(3), 40, max_size=5)
    want = jax.vmap(lambda q: O.tournament(q, fit, 3))(
        O.hash_bits(s[0], 1, jnp.arange(40, dtype=jnp.uint32))
    )
    chex.assert_trees_all_equal(sel, want)
    two = O.select_distinct_tournament(s[0], fit, jnp.int32(4), 2, max_size=5)
    chex.assert_trees_all_equal(two, O.tournament_best_two(s[0], fit, 4))


def test_excess_fitness_is_deaps():
    """DEAP's fitness: sum over lines of (queens - 1); 0 exactly for solutions."""
    rng = np.random.default_rng(8)
    boards = perms(rng, 200, 12)
    got = np.asarray(jax.jit(jax.vmap(O.excess))(boards))
    want = []
    for b in boards.astype(int):
        total = 0
        for keys in (b + np.arange(12), b - np.arange(12)):
            _, counts = np.unique(keys, return_counts=True)
            total += int(np.sum(counts[counts > 1] - 1))
        want.append(total)
    assert (got == np.array(want)).all()
    assert ((got == 0) == checker.are_solutions(boards)).all()


# ----------------------------------------------------------------------------- jit / no jit, retracing


def _operator_cases(rng, n=5, batch=8):
    """(name, operator batched over a population, its arguments) for every operator (small n:
    without jit every shape of every op compiles on its own)."""
    s = seeds(rng, batch)
    a, b = perms(rng, batch, n), perms(rng, batch, n)
    c = rng.integers(0, n, (batch, n)).astype(np.int8)
    fit = jnp.asarray(rng.permutation(20).astype(np.int32))
    mask = jnp.asarray(rng.random(batch) < 0.4)
    cases = [
        (f"cx_{name}", jax.vmap(cx), (s, a, b)) for name, cx in O.CROSSOVERS["permutation"].items()
    ]
    cases += [
        (f"cx_{name}", jax.vmap(cx), (s, c, c[::-1]))
        for name, cx in O.CROSSOVERS["combination"].items()
    ]
    cases += [
        (f"mut_{name}", jax.vmap(mut, in_axes=(0, 0, None)), (s, a, jnp.float32(0.3)))
        for name, mut in O.MUTATIONS["permutation"].items()
    ]
    cases += [("mut_reset", jax.vmap(O.mut_reset, in_axes=(0, 0, None)), (s, c, jnp.float32(0.3)))]
    cases += [(f"fitness_{name}", jax.vmap(f), (c,)) for name, f in O.FITNESS.items()]
    cases += [
        ("fisher_yates", jax.vmap(lambda s: O.fisher_yates(s, n)), (s,)),
        ("tournament", jax.vmap(lambda s, f: O.tournament(s, f, 3), in_axes=(0, None)), (s, fit)),
        (
            "tournament_best_two",
            jax.vmap(lambda s, f: O.tournament_best_two(s, f, 4), in_axes=(0, None)),
            (s, fit),
        ),
        ("best_indices", lambda f: O.best_indices(f, 3), (fit,)),
        ("worst_indices", lambda f: O.worst_indices(f, 2), (fit,)),
        (
            "masked_apply",
            lambda m, x: O.masked_apply(lambda r: r * 3 + 1, m, (x,), x, 8),
            (mask, jnp.asarray(c, jnp.int32)),
        ),
    ]
    return cases


def _traced_once(fn, name="plain"):
    """``(guard, jitted guard)``: ``fn`` behind a guard that fails on a second trace (the guard's
    counter is keyed by source and name: each case gets its own name)."""

    def plain(*args):
        return fn(*args)

    plain.__name__ = name
    guard = chex.assert_max_traces(plain, n=1)
    return guard, jax.jit(guard)


@functools.cache
def _guarded_cases():
    """Every operator case behind its own retrace guard, with a second set of arguments of the
    same shapes; jit caches by function, so each compiles once for all the tests below."""
    chex.clear_trace_counter()
    first = _operator_cases(np.random.default_rng(10))
    second = _operator_cases(np.random.default_rng(11))
    return [
        (name, *_traced_once(fn, f"guarded_{name}"), args, other)
        for (name, fn, args), (_, _, other) in zip(first, second)
    ]


class OperatorVariantsTest(chex.TestCase):
    """Every operator gives the same result with and without jit, and compiles once per shape."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_operators_agree_with_the_compiled_reference(self):
        permutation_ops = (
            [f"cx_{k}" for k in O.CROSSOVERS["permutation"]]
            + [f"mut_{k}" for k in O.MUTATIONS["permutation"]]
            + ["fisher_yates"]
        )
        for name, guard, jitted, args, _ in _guarded_cases():
            want = jitted(*args)
            got = self.variant(guard)(*args)
            chex.assert_trees_all_equal(got, want, custom_message=name)
            if name in permutation_ops:
                for child in got if isinstance(got, tuple) else (got,):
                    chex.assert_shape(child, (8, 5))
                    assert (np.sort(np.asarray(child), axis=1) == np.arange(5)).all(), name

    @chex.variants(with_jit=True, without_jit=True)
    def test_pmx_and_keep_fill_match_references(self):
        rng, n = np.random.default_rng(13), 6
        pmx, keep_fill = self.variant(O.pmx_at), self.variant(O.keep_fill)
        for _ in range(3):
            a, b = [int(v) for v in rng.permutation(n)], [int(v) for v in rng.permutation(n)]
            lo = int(rng.integers(0, n))
            hi = int(rng.integers(lo + 1, n + 1))
            pa, pb = np.array(a, np.int32), np.array(b, np.int32)
            c1, c2 = pmx(pa, pb, lo, hi)
            assert (list(np.asarray(c1)), list(np.asarray(c2))) == ref_pmx(a, b, lo, hi)
            assert list(np.asarray(keep_fill(pa, pb, lo, hi))) == ref_keep_fill(a, b, lo, hi)

    def test_operators_trace_once(self):
        """New seeds, genomes and rates of the same shapes reuse the compiled operator."""
        for name, _, jitted, args, other in _guarded_cases():
            jitted(*args)
            jitted(*other)  # a second trace would raise AssertionError
        _, mut = _traced_once(jax.vmap(O.mut_swap, in_axes=(0, 0, None)), "guarded_swap_rates")
        rng = np.random.default_rng(12)
        s, x = seeds(rng, 8), perms(rng, 8, 10)
        for indpb in (0.0, 0.1, 1.0):  # a swept rate is a dynamic argument
            mut(s, x, jnp.float32(indpb))

    def test_the_guard_catches_a_retrace(self):
        _, guarded = _traced_once(jax.vmap(O.fitness), "guarded_fitness_shapes")
        guarded(jnp.zeros((4, 6), jnp.int8))
        with pytest.raises(AssertionError, match="traced"):
            guarded(jnp.zeros((4, 7), jnp.int8))  # a new shape traces again


# ----------------------------------------------------------------------------- the GA report's score (issue 14)
def ref_diagonal_pairs(rows) -> int:
    """Plain reference of the report's score: pairs on a common diagonal, rows ignored."""
    rows = [int(r) for r in rows]
    return sum(
        abs(rows[i] - rows[j]) == j - i for i in range(len(rows)) for j in range(i + 1, len(rows))
    )


@pytest.mark.parametrize("n", [4, 8, 33, 40])  # both forms: shifted slices (n <= 32), line counts
def test_report_score_counts_diagonal_pairs_only(n):
    rng = np.random.default_rng(100 + n)
    boards = np.concatenate(
        [rng.integers(0, n, (40, n)), perms(rng, 20, n, np.int64), np.zeros((1, n), np.int64)]
    ).astype(np.int8)
    got = np.asarray(jax.jit(jax.vmap(O.report_diagonals_only))(boards))
    assert got.tolist() == [ref_diagonal_pairs(b) for b in boards]
    np.testing.assert_array_equal(
        got[40:60], checker.attacking_pairs(boards[40:60])
    )  # permutations
    assert got[-1] == 0 and not checker.are_solutions(boards[-1:])[0]  # one row: the report's "0"
    assert O.FITNESS[O.REPORT_FITNESS] is O.report_diagonals_only


# ---------------------------------------------------------------- constrained boards (issue 16)
def _excess_torus(rows) -> int:
    return ref.torus_objective(rows, "attacks")  # queens minus lines occupied = sum(k - 1)


@pytest.mark.parametrize("n", [5, 7, 8, 40])  # shifted slices (n <= 32) and line counts
def test_toroidal_fitness_matches_reference(n):
    rng = np.random.default_rng(n)
    boards = np.concatenate([perms(rng, 30, n), rng.integers(0, n, (30, n)).astype(np.int8)])
    pairs = np.asarray(jax.jit(jax.vmap(O.toroidal_fitness))(boards))
    excess = np.asarray(jax.jit(jax.vmap(O.toroidal_excess))(boards))
    assert pairs.tolist() == [ref.torus_objective(b) for b in boards]
    assert excess.tolist() == [_excess_torus(b) for b in boards]
    torus = cons.Constraints(n, toroidal=True)
    assert pairs.tolist() == [checker.check_constrained(b, torus).attacking_pairs for b in boards]


def test_toroidal_solutions_score_zero():
    # n = 5: the 10 toroidal solutions (OEIS A051906) are exactly the permutations scoring 0
    boards = np.array(list(itertools.permutations(range(5))), np.int8)
    zero = np.asarray(jax.vmap(O.toroidal_fitness)(boards)) == 0
    assert zero.sum() == 10
    assert all(
        checker.check_constrained(b, cons.Constraints(5, toroidal=True)).ok for b in boards[zero]
    )


class ToroidalVariantsTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_toroidal_fitness_hand_built(self):
        # n = 4: [0, 2, 0, 2] has 2 row pairs; (r + c) mod 4 = 0, 3, 2, 1 and (r - c) mod 4 = 0, 1, 2, 3
        # are all distinct: 2 pairs, excess 2. [0, 1, 2, 3]: one (r - c) diagonal holding all four
        # queens (6 pairs, excess 3), and (r + c) mod 4 = 0, 2, 0, 2 (2 pairs, excess 2).
        boards = jnp.asarray(np.array([[0, 2, 0, 2], [0, 1, 2, 3]], np.int8))
        pairs = self.variant(jax.vmap(O.toroidal_fitness))(boards)
        excess = self.variant(jax.vmap(O.toroidal_excess))(boards)
        chex.assert_shape(pairs, (2,))
        assert np.asarray(pairs).tolist() == [2, 8] and np.asarray(excess).tolist() == [2, 5]


def _mask(model):
    return rules.mask_of(cons.allowed_squares(model), cons.fixed_rows(model))


class RepairTest(chex.TestCase):
    MODEL = cons.Constraints(6, fixed=((1, 4), (4, 0), (5, 2)), blocked=((0, 0), (2, 3)))

    @chex.variants(with_jit=True, without_jit=True)
    def test_repairs_put_fixed_queens_back(self):
        mask = _mask(self.MODEL)
        rng = np.random.default_rng(0)
        x = perms(rng, 6, 6)
        fix_p = self.variant(
            jax.vmap(lambda x, m: O.repair_permutation(x, O.fixed_of(m)), in_axes=(0, None))
        )
        fix_c = self.variant(
            jax.vmap(lambda x, m: O.repair_combination(x, O.fixed_of(m)), in_axes=(0, None))
        )
        y = np.asarray(fix_p(jnp.asarray(x), mask))
        chex.assert_shape(y, (6, 6))
        _assert_perms(y, 6)
        assert (y[:, [1, 4, 5]] == [4, 0, 2]).all()
        # one swap per fixed queen: at most 2 genes change per fixed queen
        assert ((y != x).sum(axis=1) <= 2 * 3).all()
        assert (np.asarray(fix_p(jnp.asarray(y), mask)) == y).all()  # a repaired genome is kept
        z = rng.integers(0, 6, (6, 6)).astype(np.int8)
        w = np.asarray(fix_c(jnp.asarray(z), mask))
        assert (w[:, [1, 4, 5]] == [4, 0, 2]).all() and (w[:, [0, 2, 3]] == z[:, [0, 2, 3]]).all()

    @chex.variants(with_jit=True, without_jit=True)
    def test_forbidden_counts_forbidden_squares(self):
        mask = _mask(self.MODEL)
        boards = np.array([[1, 4, 2, 5, 0, 2], [0, 4, 3, 5, 1, 2], [0, 0, 0, 0, 0, 0]], np.int8)
        got = np.asarray(
            self.variant(jax.vmap(O.forbidden, in_axes=(0, None)))(jnp.asarray(boards), mask)
        )
        fixed = dict(self.MODEL.fixed)

        def closed(x, y):  # blocked, a fixed column's other rows, a square a fixed queen attacks
            if x in fixed:
                return fixed[x] != y
            return (x, y) in self.MODEL.blocked or any(
                y == fy or abs(y - fy) == abs(x - fx) for fx, fy in fixed.items()
            )

        want = [sum(closed(x, y) for x, y in enumerate(b)) for b in boards.tolist()]
        assert got.tolist() == want == [1, 3, 5]
