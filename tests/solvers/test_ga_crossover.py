"""jaxqueens.solvers.ga_crossover: agreement with plain-Python references, with and without jit."""

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.solvers import ga_crossover
from tests.solvers.test_ga_genomes import seeds

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
    keep_fill, pmx, cycle = (
        jax.jit(ga_crossover.keep_fill),
        jax.jit(ga_crossover.pmx_at),
        jax.jit(ga_crossover.cx_cycle),
    )
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
    assert list(np.asarray(ga_crossover.keep_fill(a, b, 0, 3))) == [0, 1, 2, 4, 3, 7, 6, 5]


def test_combination_crossovers_recombine_genes():
    rng = np.random.default_rng(2)
    a, b = (
        rng.integers(0, 8, (256, 8)).astype(np.int8),
        rng.integers(0, 8, (256, 8)).astype(np.int8),
    )
    one_point = jax.jit(jax.vmap(ga_crossover.cx_one_point))  # one compile for both calls
    for cx in (one_point, jax.jit(jax.vmap(ga_crossover.cx_uniform))):
        c1, c2 = (np.asarray(c) for c in cx(seeds(rng, 256), a, b))
        assert ((c1 == a) | (c1 == b)).all()
        assert (c1.astype(int) + c2 == a.astype(int) + b).all()  # each gene pair is shared out
    c1 = np.asarray(one_point(seeds(rng, 256), a, b)[0])  # host rows: no op-by-op slicing
    from_b = (c1 != a) | (np.arange(8) >= 8)
    first_b = np.where(from_b.any(axis=1), from_b.argmax(axis=1), 8)
    assert (first_b >= 1).all()  # the cut keeps at least one gene of a
    assert all((c1[r, : first_b[r]] == a[r, : first_b[r]]).all() for r in range(256))


class CrossoverVariantsTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_pmx_and_keep_fill_match_references(self):
        rng, n = np.random.default_rng(13), 6
        pmx, keep_fill = self.variant(ga_crossover.pmx_at), self.variant(ga_crossover.keep_fill)
        for _ in range(3):
            a, b = [int(v) for v in rng.permutation(n)], [int(v) for v in rng.permutation(n)]
            lo = int(rng.integers(0, n))
            hi = int(rng.integers(lo + 1, n + 1))
            pa, pb = np.array(a, np.int32), np.array(b, np.int32)
            c1, c2 = pmx(pa, pb, lo, hi)
            assert (list(np.asarray(c1)), list(np.asarray(c2))) == ref_pmx(a, b, lo, hi)
            assert list(np.asarray(keep_fill(pa, pb, lo, hi))) == ref_keep_fill(a, b, lo, hi)
