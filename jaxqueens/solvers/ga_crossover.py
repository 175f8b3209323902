"""Crossovers of the GA kernels, each for ONE pair of parents `[n]` giving two children.

Permutation encoding (every child a permutation): `cx_cut` (classic one-cut "cut and
fill"), `cx_pmx` (Goldberg & Lingle 1985), `cx_ox1` (Davis 1985) and
`cx_cycle` (Oliver et al. 1987). Combination encoding: `cx_one_point`,
`cx_uniform`. `CROSSOVERS` names them per encoding; `Crossover` is the
signature a user's crossover keeps.

PMX chains and the cycles of cycle crossover are followed by pointer doubling (`ceil(log2 n)`
gathers); "fill from the other parent in order" (`keep_fill`) is a cumsum and a scatter.
PMX is the textbook operator; DEAP's `cxPartialyMatched` swaps in place and can give other
children when segment values chain (both give permutations).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import jax
import jax.numpy as jnp

from jaxqueens.solvers.ga_genomes import gather1d, index_of, randint, scatter1d, two_cuts, uniform

I32 = jnp.int32


def keep_fill(a: jax.Array, b: jax.Array, lo, hi) -> jax.Array:
    """Child keeping `a[lo:hi]`; the other positions, from `hi` on (wrapping), get `b`'s
    genes in `b`'s order from position `hi` on (wrapping), skipping those already kept.

    Args:
      a: [n] the parent whose segment is kept.
      b: [n] the parent that fills the rest.
      lo: [] int32 start of the kept segment.
      hi: [] int32 end (exclusive) of the kept segment.

    Returns:
      [n] the child.
    """
    n = a.shape[-1]
    ar = jnp.arange(n, dtype=I32)
    rot = (ar + hi) % n  # rotated coordinates: the kept segment is the last hi - lo slots
    a_r, b_r = gather1d(a, rot), gather1d(b, rot)
    p = gather1d(index_of(a), b_r.astype(I32))
    keep = (p < lo) | (p >= hi)  # b's gene not in the kept segment of a
    rank = jnp.cumsum(keep.astype(I32)) - 1
    child_r = scatter1d(a_r, jnp.where(keep, rank, n), b_r)
    return gather1d(child_r, (ar - hi) % n)


def cx_cut(seed, a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Classic one-cut "cut and fill": child 1 keeps `a[:cut]` and fills the rest with `b`'s
    genes in `b`'s order from the cut on, wrapping around, skipping genes already present;
    child 2 likewise with the parents' roles swapped. `cut` is uniform in 1..n-1.

    Args:
      seed: [] uint32 hash seed (consumed).
      a: [n] first parent.
      b: [n] second parent.

    Returns:
      `(child1, child2)`, [n] each.
    """
    n = a.shape[-1]
    cut = 1 + randint(seed, 21, 1, max(n - 1, 1))[0]
    return keep_fill(a, b, 0, cut), keep_fill(b, a, 0, cut)


def cx_ox1(seed, a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Order crossover OX1: keep `a[lo:hi]`, fill from `b` in order starting after `hi`.

    Args:
      seed: [] uint32 hash seed (consumed).
      a: [n] first parent.
      b: [n] second parent.

    Returns:
      `(child1, child2)`, [n] each.
    """
    lo, hi = two_cuts(seed, 22, a.shape[-1])
    return keep_fill(a, b, lo, hi), keep_fill(b, a, lo, hi)


def _doublings(n: int) -> int:
    return max(1, math.ceil(math.log2(max(n, 2))))


def cx_pmx(seed, a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Partially matched crossover (PMX) with DEAP's cut points (segment `[lo, hi)`).

    Child 1 takes `b`'s segment; outside it, `a`'s gene, mapped through the correspondence
    `b[j] -> a[j]` (j in the segment) until it leaves `b`'s segment; child 2 likewise the
    other way. Those correspondences form paths from a value of `b[seg] - a[seg]` to one of
    `a[seg] - b[seg]`: child 1 maps starts to ends (pointer doubling), child 2 ends to starts
    (one scatter of the same paths).

    Args:
      seed: [] uint32 hash seed (consumed).
      a: [n] first parent.
      b: [n] second parent.

    Returns:
      `(child1, child2)`, [n] each.
    """
    lo, hi = two_cuts(seed, 23, a.shape[-1])
    return pmx_at(a, b, lo, hi)


def pmx_at(a: jax.Array, b: jax.Array, lo, hi) -> tuple[jax.Array, jax.Array]:
    """PMX children of `a` and `b` for the segment `[lo, hi)`.

    Args:
      a: [n] first parent (a permutation).
      b: [n] second parent (a permutation).
      lo: [] int32 start of the segment.
      hi: [] int32 end (exclusive) of the segment.

    Returns:
      `(child1, child2)`, [n] each, in the parents' dtypes.
    """
    n = a.shape[-1]
    ar = jnp.arange(n, dtype=I32)
    seg = (ar >= lo) & (ar < hi)
    ai, bi = a.astype(I32), b.astype(I32)
    pos_b = index_of(bi)
    in_b_seg = gather1d(seg, pos_b)  # [v]: value v lies in b's segment
    end = jnp.where(in_b_seg, gather1d(ai, pos_b), ar)  # one step along the correspondence
    for _ in range(_doublings(n)):
        end = gather1d(end, end)
    in_a_seg = scatter1d(jnp.zeros(n, bool), jnp.where(seg, ai, n), jnp.ones(n, bool))
    start = scatter1d(ar, jnp.where(in_b_seg & ~in_a_seg, end, n), ar)  # end of a path -> its start
    c1 = jnp.where(seg, bi, gather1d(end, ai))
    c2 = jnp.where(seg, ai, gather1d(start, bi))
    return c1.astype(a.dtype), c2.astype(b.dtype)


def cx_cycle(seed, a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Cycle crossover: cycles of positions, taken alternately from `a` and `b` (the cycle
    through position 0 from `a`) for child 1, the other way round for child 2. Deterministic.

    Args:
      seed: [] uint32 hash seed (not used: the crossover is deterministic).
      a: [n] first parent.
      b: [n] second parent.

    Returns:
      `(child1, child2)`, [n] each.
    """
    del seed
    n = a.shape[-1]
    ar = jnp.arange(n, dtype=I32)
    step = gather1d(index_of(a), b.astype(I32))  # position i -> position of b[i] in a
    lead = ar
    for _ in range(_doublings(n)):
        lead = jnp.minimum(lead, gather1d(lead, step))
        step = gather1d(step, step)
    order = jnp.cumsum((lead == ar).astype(I32)) - 1  # rank of each cycle by its first position
    from_a = gather1d(order, lead) % 2 == 0
    return jnp.where(from_a, a, b), jnp.where(from_a, b, a)


def cx_one_point(seed, a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """One-point crossover: swap the tails after a cut uniform in 1..n-1.

    Args:
      seed: [] uint32 hash seed (consumed).
      a: [n] first parent.
      b: [n] second parent.

    Returns:
      `(child1, child2)`, [n] each.
    """
    n = a.shape[-1]
    cut = 1 + randint(seed, 24, 1, max(n - 1, 1))[0]
    head = jnp.arange(n, dtype=I32) < cut
    return jnp.where(head, a, b), jnp.where(head, b, a)


def cx_uniform(seed, a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Uniform crossover: each gene swapped between the children with probability 1/2.

    Args:
      seed: [] uint32 hash seed (consumed).
      a: [n] first parent.
      b: [n] second parent.

    Returns:
      `(child1, child2)`, [n] each.
    """
    swap = uniform(seed, 25, a.shape[-1]) < 0.5
    return jnp.where(swap, b, a), jnp.where(swap, a, b)


Crossover = Callable[[jax.Array, jax.Array, jax.Array], tuple[jax.Array, jax.Array]]
"""`crossover(seed [] uint32, a [n], b [n]) -> (child1 [n], child2 [n])`."""


CROSSOVERS: dict[str, dict[str, Crossover]] = {
    "permutation": {"cut": cx_cut, "pmx": cx_pmx, "ox1": cx_ox1, "cycle": cx_cycle},
    "combination": {"one_point": cx_one_point, "uniform": cx_uniform},
}


DEFAULT_CROSSOVER = {"permutation": "cut", "combination": "one_point"}
