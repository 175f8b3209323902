"""jaxqueens.solvers.ga_mutation: what each mutation changes; swap draws as DEAP's loop does."""

import jax
import numpy as np

from jaxqueens.solvers import ga_genomes, ga_mutation
from tests.solvers.test_ga_genomes import perms, seeds


def _batched(mut, rate=True):
    """`mut` over a batch of genomes, jitted: one compile (test_ga_operators runs every mutation
    without jit too)."""
    return jax.jit(jax.vmap(mut, in_axes=(0, 0, None) if rate else (0, 0)))


def test_mutations_semantics():
    rng = np.random.default_rng(3)
    n, B = 12, 512
    x = perms(rng, B, n)
    s = seeds(rng, B)
    swap1 = np.asarray(_batched(ga_mutation.mut_swap)(s, x, 0.0))
    assert ((swap1 != x).sum(axis=1) == 2).all()  # exactly one swap
    inv = np.asarray(_batched(ga_mutation.mut_inversion, rate=False)(s, x))
    scr = np.asarray(_batched(ga_mutation.mut_scramble, rate=False)(s, x))
    for y in (inv, scr):
        changed = y != x
        for row, ch in zip(range(B), changed, strict=True):  # changes lie in one contiguous segment
            idx = np.flatnonzero(ch)
            if len(idx):
                assert set(y[row, idx[0] : idx[-1] + 1]) == set(x[row, idx[0] : idx[-1] + 1])
    c = rng.integers(0, n, (B, n)).astype(np.int8)
    reset = _batched(ga_mutation.mut_reset)  # the rate is dynamic: one compile for both
    reset1 = np.asarray(reset(s, c, 0.0))
    assert ((reset1 != c).sum(axis=1) <= 1).all() and (reset1 != c).any()
    reset_all = np.asarray(reset(s, c, 1.0))
    assert (reset_all.min() >= 0) and (reset_all.max() < n) and (reset_all != c).mean() > 0.8


def test_swap_matches_deap_mutshuffleindexes():
    """Same draws as DEAP's loop: gene i (in order) swapped with partner j != i when its coin is
    up."""
    rng = np.random.default_rng(4)
    n, indpb, B = 10, 0.3, 64
    s, x = seeds(rng, B), perms(rng, B, n)
    got = np.asarray(jax.jit(jax.vmap(ga_mutation.mut_swap, in_axes=(0, 0, None)))(s, x, indpb))
    coins = np.asarray(jax.vmap(lambda s: ga_genomes.uniform(s, 31, n))(s)) < indpb
    other = np.asarray(jax.vmap(lambda s: ga_genomes.randint(s, 33, n, n - 1))(s))
    for r in range(B):
        y = list(x[r])
        for i in range(n):
            if coins[r, i]:
                j = other[r, i] + (other[r, i] >= i)
                y[i], y[j] = y[j], y[i]
        assert list(got[r]) == y
