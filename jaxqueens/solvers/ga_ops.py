"""Genetic-algorithm operators for N-Queens, each written for ONE individual or ONE pair.

Encodings (a genome is a board ``rows[n]``: ``rows[c]`` is the row of the queen in column c):

- ``permutation``: all rows distinct; every permutation operator below returns a permutation.
- ``combination``: rows may repeat; the fitness counts row conflicts too, so a genome with two
  queens on a row is never a solution.

Fitness is the number of attacking pairs (``jaxqueens.core.board``), minimised: 0 is a solution.
:func:`report_diagonals_only` is the GA report's score (the University of Idaho report's
combination-encoding GA): pairs on a diagonal only, rows ignored, so a score of 0 is NOT always a
solution; it is an explicitly named option and callers check every such board.

Operators (callers ``vmap`` them over a population; see :mod:`jaxqueens.solvers.ga`):

- selection: :func:`tournament` (best of k drawn with replacement, DEAP's ``selTournament``),
  :func:`tournament_best_two` (the best two of k *distinct* individuals: the classic steady-state
  GA), both with a dynamic size up to a static capacity; the kernel's selections
  :data:`SELECTIONS` (:func:`select_tournament`, :func:`select_distinct_tournament`) in the
  signature a user's selection has too; :func:`best_indices` / :func:`worst_indices`
  (truncation and elitism helpers).
- permutation crossover: :func:`cx_cut` (classic one-cut "cut and fill"), :func:`cx_pmx`
  (Goldberg & Lingle 1985), :func:`cx_ox1` (Davis 1985) and :func:`cx_cycle` (Oliver et al. 1987).
- combination crossover: :func:`cx_one_point`, :func:`cx_uniform`.
- mutation: :func:`mut_swap` (DEAP's ``mutShuffleIndexes`` for ``indpb > 0``, else one swap),
  :func:`mut_inversion`, :func:`mut_scramble` (permutation); :func:`mut_reset` (combination:
  DEAP's ``mutUniformInt`` for ``indpb > 0``, else one gene reset).

Constrained boards (issue 16; :mod:`jaxqueens.solvers.ga` applies them behind static switches):
:data:`TOROIDAL_FITNESS` (diagonals modulo n), :func:`forbidden` with :func:`forbidden_weight`
(the penalty of a queen on a square the instance's :class:`~jaxqueens.solvers.constrained.Mask`
closes: blocked, excluded, or attacked by a fixed queen), and the repairs :data:`REPAIRS` that
put every fixed queen (:func:`fixed_of`) back on its square after crossover and mutation.

The signatures of :data:`Fitness`, :data:`Selection`, :data:`Crossover` and :data:`Mutation` are
those a user's operator keeps (:mod:`jaxqueens.solvers.ga`, "Bring your own operator").

Randomness: every operator takes ``seed``, a uint32 scalar, and draws from the counter-based hash
of :mod:`jaxqueens.core.rng` (threefry costs far more per draw on XLA:CPU, ``PERFORMANCE.md``);
derive a fresh seed per individual and generation (``jaxqueens.solvers.ga`` does), because the
seed is consumed.

Implementation notes: per-genome gathers and scatters go through :func:`gather1d` and
:func:`scatter1d`, whose batching rule flattens the batch into one 1-D gather/scatter with row
offsets: XLA:CPU runs that 3-4x faster than the batched gather ``vmap`` emits (measured,
n = 20); :func:`index_of` (inverse permutation) and :func:`fisher_yates` (random genomes) are
built on them, unlike the board-level helpers of :mod:`jaxqueens.core`. The only
data-dependent loop is in :func:`mut_swap` (one iteration per swap, lowest gene first, as many as
the most-mutated genome of a batch needs). PMX chains and the cycles of cycle crossover are
followed by pointer doubling (``ceil(log2 n)`` gathers); "fill from the other parent in order"
is a cumsum and a scatter. PMX is the textbook operator; DEAP's ``cxPartialyMatched`` swaps
in place and can give other children when segment values chain (both give permutations).
:func:`masked_apply` runs an operator only on the rows that need it (crossover with probability
cxpb, ...), in compacted passes, exactly; under ``jax.vmap`` (trials, a swept rate) its batching
rule folds the batch into the rows, so one compaction serves the whole batch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens.core.board import PAIRWISE_MAX_N, _attacking_pairs_one, _n_attacks_one
from jaxqueens.core.rng import hash_bits
from jaxqueens.solvers.constrained import Mask

I32 = jnp.int32
_GATHER = lax.GatherDimensionNumbers(
    offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,)
)
_SCATTER = lax.ScatterDimensionNumbers(
    update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
)
_IN_BOUNDS = lax.GatherScatterMode.PROMISE_IN_BOUNDS


def _offsets(axis_size: int, m: int, idx: jax.Array) -> jax.Array:
    return (jnp.arange(axis_size, dtype=idx.dtype) * m).reshape(
        (axis_size,) + (1,) * (idx.ndim - 1)
    )


@jax.custom_batching.custom_vmap
def gather1d(x: jax.Array, idx: jax.Array) -> jax.Array:
    """``x[idx]`` for a 1-D ``x`` and int32 ``idx`` in ``0..len(x)-1`` (trusted, not clipped)."""
    return lax.gather(x, idx[..., None], _GATHER, slice_sizes=(1,), mode=_IN_BOUNDS)


@gather1d.def_vmap
def _gather1d_vmap(axis_size, in_batched, x, idx):
    x_b, i_b = in_batched
    if not x_b:
        return gather1d(x, idx), i_b
    if not i_b:
        idx = jnp.broadcast_to(idx, (axis_size, *idx.shape))
    return gather1d(x.reshape(-1), idx + _offsets(axis_size, x.shape[-1], idx)), True


@jax.custom_batching.custom_vmap
def scatter1d(x: jax.Array, idx: jax.Array, val: jax.Array) -> jax.Array:
    """``x.at[idx].set(val)`` for 1-D ``x``; indices outside ``0..len(x)-1`` drop their value;
    in-range indices must be distinct."""
    return lax.scatter(
        x,
        idx[..., None],
        val.astype(x.dtype),
        _SCATTER,
        unique_indices=False,
        mode=lax.GatherScatterMode.FILL_OR_DROP,
    )


@scatter1d.def_vmap
def _scatter1d_vmap(axis_size, in_batched, x, idx, val):
    x_b, i_b, v_b = in_batched
    x = x if x_b else jnp.broadcast_to(x, (axis_size, *x.shape))
    idx = idx if i_b else jnp.broadcast_to(idx, (axis_size, *idx.shape))
    val = val if v_b else jnp.broadcast_to(val, (axis_size, *val.shape))
    m = x.shape[-1]
    flat = jnp.where((idx >= 0) & (idx < m), idx + _offsets(axis_size, m, idx), axis_size * m)
    return scatter1d(x.reshape(-1), flat, val).reshape(x.shape), True


def gene_dtype(n: int):
    """Smallest signed integer dtype that holds rows 0..n-1 (storage only; ops compute in int32)."""
    return jnp.int8 if n <= 127 else jnp.int16 if n <= 32767 else jnp.int32


SHIFT_MAX_N = PAIRWISE_MAX_N
"""Largest n whose fitness uses the shifted-slice pairwise form (measured 2x faster than
``board``'s dense form at n = 20 on XLA:CPU; ``board``'s O(n) line counts win at n = 64)."""


def excess(x: jax.Array) -> jax.Array:
    """Queens beyond the first on each row, diagonal and anti-diagonal, ``sum(k - 1)``: DEAP's
    N-Queens fitness (its example counts diagonals only; permutations have no row excess).
    0 exactly for solutions, like :func:`fitness`. int32 scalar."""
    return _n_attacks_one(x.astype(I32)).astype(I32)


def fitness(x: jax.Array) -> jax.Array:
    """Attacking pairs of one genome ``[n]`` (rows, diagonals, anti-diagonals): int32 scalar.

    Small n: every pair once, as shift k compares ``x[k:]`` with ``x[:-k]`` (static slices, no
    gathers, n (n - 1) / 2 pairs instead of the dense n^2); larger n: ``board``'s kernel.
    """
    x = x.astype(I32)
    n = x.shape[-1]
    if n > SHIFT_MAX_N:
        return _attacking_pairs_one(x).astype(I32)
    total = jnp.zeros((), I32)
    for k in range(1, n):
        d = x[k:] - x[:-k]
        total += jnp.sum((d == 0) | (d == k) | (d == -k), dtype=I32)
    return total


def report_diagonals_only(x: jax.Array) -> jax.Array:
    """The GA report's score of one genome ``[n]``: pairs of queens on a common diagonal or
    anti-diagonal, rows IGNORED (the report's fitness checks diagonals only, so in the
    combination encoding, where rows may repeat, a genome can score 0 and not be a solution).
    int32 scalar; equals :func:`fitness` on permutations."""
    x = x.astype(I32)
    n = x.shape[-1]
    if n > SHIFT_MAX_N:  # O(n) line counts
        c = jnp.arange(n, dtype=I32)
        total = jnp.zeros((), I32)
        for idx in (x - c + n - 1, x + c):
            line = jnp.zeros(2 * n - 1, I32).at[idx].add(1)
            total += jnp.sum(line * (line - 1) // 2, dtype=I32)
        return total
    total = jnp.zeros((), I32)
    for k in range(1, n):
        d = x[k:] - x[:-k]
        total += jnp.sum((d == k) | (d == -k), dtype=I32)
    return total


# ----------------------------------------------------------------------------- constrained boards


def _torus_lines(x: jax.Array) -> tuple[jax.Array, ...]:
    """Counts ``[n]`` of queens per row and per modular diagonal ``(x + c) mod n`` and
    ``(x - c) mod n``."""
    n = x.shape[-1]
    c = jnp.arange(n, dtype=I32)
    return tuple(jnp.zeros(n, I32).at[idx].add(1) for idx in (x, (x + c) % n, (x - c) % n))


def toroidal_fitness(x: jax.Array) -> jax.Array:
    """Attacking pairs of one genome ``[n]`` on the torus (diagonals taken modulo n): int32.

    Pairs are counted per line, as the checker counts them (for even n a pair k = n / 2 columns
    apart can share both modular diagonals: two). Small n: shift k compares ``x[k:]`` with
    ``x[:-k]``; the row difference d of a pair on the ``(r - c)`` diagonal is ``k`` modulo n
    (``k`` or ``k - n``, as |d| < n), on the ``(r + c)`` diagonal ``-k`` modulo n (``-k`` or
    ``n - k``); larger n: line counts.
    """
    x = x.astype(I32)
    n = x.shape[-1]
    if n > SHIFT_MAX_N:
        r, a, b = (jnp.sum(k * (k - 1) // 2, dtype=I32) for k in _torus_lines(x))
        return r + a + b
    total = jnp.zeros((), I32)
    for k in range(1, n):
        d = x[k:] - x[:-k]
        total += jnp.sum(
            (d == 0).astype(I32) + ((d == k) | (d == k - n)) + ((d == -k) | (d == n - k)), dtype=I32
        )  # even n, k = n / 2: both diagonals, counted per line (checker)
    return total


def toroidal_excess(x: jax.Array) -> jax.Array:
    """:func:`excess` on the torus: queens beyond the first on each row and modular diagonal."""
    r, a, b = (jnp.sum(jnp.maximum(k - 1, 0), dtype=I32) for k in _torus_lines(x.astype(I32)))
    return r + a + b


TOROIDAL_FITNESS = {"pairs": toroidal_fitness, "excess": toroidal_excess}
"""The honest fitnesses on the torus (0 exactly for toroidal solutions)."""


def forbidden_weight(n: int) -> int:
    """What one queen on a forbidden square adds to the fitness: ``n (n - 1) / 2 + 1``, more than
    all attacking pairs of a board together, so a board that uses a forbidden square always scores
    worse than any board that does not, and never 0."""
    return n * (n - 1) // 2 + 1


def forbidden(x: jax.Array, mask: Mask) -> jax.Array:
    """[] int32 queens of one genome ``[n]`` on squares ``mask`` forbids."""
    n = x.shape[-1]
    return jnp.sum(~mask.allowed[jnp.arange(n), x.astype(I32)], dtype=I32)


class Fixed(NamedTuple):
    """The fixed queens of an instance, as the repair reads them (:func:`fixed_of`)."""

    cols: jax.Array  # [n] int32 fixed columns first, then padding n
    rows: jax.Array  # [n] int32 the row of each of those fixed queens (padding: 0)
    num: jax.Array  # [] int32 number of fixed queens
    is_fixed: jax.Array  # [n] bool column holds a fixed queen
    home: jax.Array  # [n] int32 row of the fixed queen of each column (free columns: 0)


def fixed_of(mask: Mask) -> Fixed:
    """The fixed queens of ``mask``: every column not among ``mask.free[:mask.nfree]``."""
    n = mask.free.shape[0]
    ar = jnp.arange(n, dtype=I32)
    is_free = jnp.zeros(n, I32).at[mask.free].max((ar < mask.nfree).astype(I32)) > 0
    cols = jnp.nonzero(~is_free, size=n, fill_value=n)[0].astype(I32)
    rows = jnp.where(cols < n, mask.home[jnp.minimum(cols, n - 1)], 0).astype(I32)
    home = jnp.where(is_free, 0, mask.home).astype(I32)
    return Fixed(cols, rows, n - jnp.sum(is_free, dtype=I32), ~is_free, home)


def repair_permutation(x: jax.Array, fixed: Fixed) -> jax.Array:
    """Put every fixed queen of a permutation ``x [n]`` back on its row by one swap each (the
    gene holding that row moves to where the fixed gene was), so ``x`` stays a permutation.
    Fixed queens must have distinct rows (the driver checks), so a later swap never moves an
    earlier fixed queen."""

    def put(i, y):
        c = fixed.cols[i]
        j = jnp.argmax(y == fixed.rows[i].astype(y.dtype)).astype(I32)
        ij = jnp.stack([c, j])
        return scatter1d(y, ij, gather1d(y, ij[::-1]))

    return lax.fori_loop(0, fixed.num, put, x)


def repair_combination(x: jax.Array, fixed: Fixed) -> jax.Array:
    """Set every fixed column of ``x [n]`` to its fixed row."""
    return jnp.where(fixed.is_fixed, fixed.home.astype(x.dtype), x)


REPAIRS = {"permutation": repair_permutation, "combination": repair_combination}


# ----------------------------------------------------------------------------- random draws


def bits(seed, salt: int, count: int) -> jax.Array:
    """uint32 ``[count]`` from the hash stream of ``seed``; ``salt`` separates the uses in an op."""
    return hash_bits(seed, salt, jnp.arange(count, dtype=jnp.uint32))


def uniform(seed, salt: int, count: int) -> jax.Array:
    """float32 ``[count]`` in [0, 1) (24-bit resolution)."""
    return (bits(seed, salt, count) >> 8).astype(jnp.float32) * (1.0 / (1 << 24))


def randint(seed, salt: int, count: int, high) -> jax.Array:
    """int32 ``[count]`` in [0, high) (modulo bias <= high / 2^32)."""
    return (bits(seed, salt, count) % jnp.asarray(high).astype(jnp.uint32)).astype(I32)


def two_cuts(seed, salt: int, n: int) -> tuple[jax.Array, jax.Array]:
    """Cut points ``0 <= lo < hi <= n`` drawn as DEAP's ``cxPartialyMatched`` does."""
    r = randint(seed, salt, 2, jnp.array([n, n - 1], jnp.uint32))
    a, b = r[0], r[1]
    b = jnp.where(b >= a, b + 1, b)
    return jnp.minimum(a, b), jnp.maximum(a, b)


def index_of(perm: jax.Array) -> jax.Array:
    """Where each value sits: ``index_of(p)[p[i]] == i`` (the inverse permutation)."""
    n = perm.shape[-1]
    return scatter1d(jnp.zeros(n, I32), perm.astype(I32), jnp.arange(n, dtype=I32))


def fisher_yates(seed, n: int) -> jax.Array:
    """A uniformly random permutation of 0..n-1 (Fisher-Yates: n - 1 swaps, O(1) work each;
    a batched argsort of random keys was 10x slower for 10^6 genomes of n = 64 on XLA:CPU)."""
    r = bits(seed, 0, n)

    def swap(k, x):
        i = n - 1 - k
        j = (gather1d(r, i) % (i + 1).astype(jnp.uint32)).astype(I32)
        ij = jnp.stack([i, j])
        return scatter1d(x, ij, gather1d(x, ij[::-1]))

    return lax.fori_loop(0, n - 1, swap, jnp.arange(n, dtype=I32))


# ----------------------------------------------------------------------------- selection


def _worst_value(dtype):
    """The largest value of a fitness dtype: what an aspirant left out of a tournament scores."""
    return jnp.inf if jnp.issubdtype(dtype, jnp.floating) else jnp.iinfo(dtype).max


def tournament(seed, fit: jax.Array, k: int, size=None) -> jax.Array:
    """Index of the best (lowest fitness) of ``size`` individuals drawn with replacement.

    DEAP's ``selTournament`` for one slot: ties go to the first aspirant drawn. ``k`` (static)
    is the most aspirants drawn; ``size`` (dynamic, 1..k; default k) how many of them compete,
    so a swept tournament size never recompiles and ``size == k`` gives exactly the draw of a
    static tournament of k.
    """
    idx = randint(seed, 11, k, fit.shape[0])
    f = gather1d(fit, idx)
    if size is not None:
        f = jnp.where(jnp.arange(k) < size, f, _worst_value(f.dtype))
    return idx[jnp.argmin(f)]


def distinct_indices(seed, size: int, k: int, count=None) -> jax.Array:
    """``k`` distinct indices of ``range(size)`` (Floyd's algorithm, k unrolled steps).

    With ``count`` (dynamic, 1..k) only the first ``count`` are drawn (Floyd's algorithm for
    ``count``; the rest of the ``[k]`` result is unspecified); ``count == k`` gives the draw of
    a static ``k``."""
    r = bits(seed, 12, k)
    top = size - k if count is None else size - jnp.asarray(count, I32)
    chosen: list[jax.Array] = []
    for t in range(k):
        j = top + t
        c = (r[t] % jnp.asarray(j + 1).astype(jnp.uint32)).astype(I32)
        if chosen:
            c = jnp.where(jnp.any(jnp.stack(chosen) == c), j, c).astype(I32)
        chosen.append(c)
    return jnp.minimum(jnp.stack(chosen), size - 1)  # only the unused tail can pass size - 1


def tournament_best_two(seed, fit: jax.Array, k: int, size=None) -> jax.Array:
    """Indices ``[2]`` of the two best of ``size`` (dynamic, 2..k; default k) distinct random
    individuals (needs k >= 2)."""
    return best_of_distinct(seed, fit, k, 2, size)


def best_of_distinct(seed, fit: jax.Array, k: int, count: int, size=None) -> jax.Array:
    """Indices ``[count]`` of the ``count`` best of ``size`` (dynamic, count..k; default k)
    distinct random individuals, best first (ties: the earlier drawn)."""
    idx = distinct_indices(seed, fit.shape[0], k, size)
    score = -gather1d(fit, idx).astype(jnp.float32)
    if size is not None:
        score = jnp.where(jnp.arange(k) < size, score, -jnp.inf)
    _, order = lax.top_k(score, count)
    return idx[order]


def select_tournament(seed, fit: jax.Array, size, count: int, *, max_size: int) -> jax.Array:
    """Selection ``[count]``: ``count`` independent tournaments (DEAP's ``selTournament``), slot
    i from the seed ``hash_bits(seed, 1, i)``; at most ``max_size`` (static) aspirants each."""
    slots = hash_bits(seed, 1, jnp.arange(count, dtype=jnp.uint32))
    return jax.vmap(lambda s: tournament(s, fit, max_size, size))(slots)


def select_distinct_tournament(
    seed, fit: jax.Array, size, count: int, *, max_size: int
) -> jax.Array:
    """Selection ``[count]``: the ``count`` best of one tournament of ``size`` distinct random
    individuals (the classic steady-state GA: the best two of five)."""
    return best_of_distinct(seed, fit, max_size, count, size)


def best_indices(fit: jax.Array, m: int) -> jax.Array:
    """Indices ``[m]`` of the ``m`` lowest fitness values (ties: lower index first)."""
    if m == 1:
        return jnp.argmin(fit)[None].astype(I32)
    return lax.top_k(-fit.astype(jnp.float32), m)[1]


def worst_indices(fit: jax.Array, m: int) -> jax.Array:
    """Indices ``[m]`` of the ``m`` highest fitness values (ties: lower index first)."""
    if m == 1:
        return jnp.argmax(fit)[None].astype(I32)
    return lax.top_k(fit.astype(jnp.float32), m)[1]


# ---------------------------------------------------------------------------- permutation crossover


def keep_fill(a: jax.Array, b: jax.Array, lo, hi) -> jax.Array:
    """Child keeping ``a[lo:hi]``; the other positions, from ``hi`` on (wrapping), get ``b``'s
    genes in ``b``'s order from position ``hi`` on (wrapping), skipping those already kept."""
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
    """Classic one-cut "cut and fill": child 1 keeps ``a[:cut]`` and fills the rest with ``b``'s
    genes in ``b``'s order from the cut on, wrapping around, skipping genes already present;
    child 2 likewise with the parents' roles swapped. ``cut`` is uniform in 1..n-1."""
    n = a.shape[-1]
    cut = 1 + randint(seed, 21, 1, max(n - 1, 1))[0]
    return keep_fill(a, b, 0, cut), keep_fill(b, a, 0, cut)


def cx_ox1(seed, a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Order crossover OX1: keep ``a[lo:hi]``, fill from ``b`` in order starting after ``hi``."""
    lo, hi = two_cuts(seed, 22, a.shape[-1])
    return keep_fill(a, b, lo, hi), keep_fill(b, a, lo, hi)


def _doublings(n: int) -> int:
    return max(1, math.ceil(math.log2(max(n, 2))))


def cx_pmx(seed, a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Partially matched crossover (PMX) with DEAP's cut points (segment ``[lo, hi)``).

    Child 1 takes ``b``'s segment; outside it, ``a``'s gene, mapped through the correspondence
    ``b[j] -> a[j]`` (j in the segment) until it leaves ``b``'s segment; child 2 likewise the
    other way. Those correspondences form paths from a value of ``b[seg] - a[seg]`` to one of
    ``a[seg] - b[seg]``: child 1 maps starts to ends (pointer doubling), child 2 ends to starts
    (one scatter of the same paths).
    """
    lo, hi = two_cuts(seed, 23, a.shape[-1])
    return pmx_at(a, b, lo, hi)


def pmx_at(a: jax.Array, b: jax.Array, lo, hi) -> tuple[jax.Array, jax.Array]:
    """PMX children of ``a`` and ``b`` for the segment ``[lo, hi)``."""
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
    """Cycle crossover: cycles of positions, taken alternately from ``a`` and ``b`` (the cycle
    through position 0 from ``a``) for child 1, the other way round for child 2. Deterministic."""
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


# ---------------------------------------------------------------------------- combination crossover


def cx_one_point(seed, a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """One-point crossover: swap the tails after a cut uniform in 1..n-1."""
    n = a.shape[-1]
    cut = 1 + randint(seed, 24, 1, max(n - 1, 1))[0]
    head = jnp.arange(n, dtype=I32) < cut
    return jnp.where(head, a, b), jnp.where(head, b, a)


def cx_uniform(seed, a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Uniform crossover: each gene swapped between the children with probability 1/2."""
    swap = uniform(seed, 25, a.shape[-1]) < 0.5
    return jnp.where(swap, b, a), jnp.where(swap, a, b)


# ----------------------------------------------------------------------------- mutation


def _coins(seed, n: int, indpb) -> jax.Array:
    """Genes to mutate: each with probability ``indpb``; exactly one (uniform) if ``indpb <= 0``."""
    per_gene = uniform(seed, 31, n) < indpb
    one = jnp.arange(n, dtype=I32) == randint(seed, 32, 1, n)[0]
    return jnp.where(indpb > 0, per_gene, one)


def _pack(mask: jax.Array) -> jax.Array:
    """bool ``[n]`` -> uint32 words ``[ceil(n / 32)]``, gene k at bit k % 32 of word k // 32."""
    n = mask.shape[-1]
    w = -(-n // 32)
    m = jnp.pad(mask, (0, 32 * w - n)).reshape(w, 32).astype(jnp.uint32)
    return jnp.sum(m << jnp.arange(32, dtype=jnp.uint32), axis=1, dtype=jnp.uint32)


def _first_bit(words: jax.Array) -> jax.Array:
    """Index of the lowest set bit of packed words; 0 when none is set."""
    if words.shape[0] == 1:
        word, x = I32(0), words[0]
    else:
        word = jnp.argmax(words != 0).astype(I32)
        x = gather1d(words, word)
    low = 31 - lax.clz(x & (~x + jnp.uint32(1))).astype(I32)
    return word * 32 + jnp.maximum(low, 0)


def mut_swap(seed, x: jax.Array, indpb) -> jax.Array:
    """Swap mutation. ``indpb > 0``: DEAP's ``mutShuffleIndexes`` (for each gene i in order, with
    probability indpb, swap it with a uniform other position); ``indpb <= 0``: one such swap.

    The genes to swap are packed in a bit mask and visited lowest first (count-trailing-zeros),
    so the loop runs once per swap: as many iterations as the most-mutated genome of a batch.
    """
    n = x.shape[-1]
    ar = jnp.arange(n, dtype=I32)
    other = randint(seed, 33, n, max(n - 1, 1))
    other = jnp.where(other >= ar, other + 1, other)  # partner of gene i: uniform over j != i

    def body(carry):
        words, y = carry
        i = _first_bit(words)
        ij = jnp.stack([i, gather1d(other, i)])
        if n <= 32:  # one word: clear its lowest set bit
            words = words & (words - jnp.uint32(1))
        else:
            bit = jnp.uint32(1) << (i % 32).astype(jnp.uint32)
            words = scatter1d(words, (i // 32)[None], (gather1d(words, i // 32) & ~bit)[None])
        return words, scatter1d(y, ij, gather1d(y, ij[::-1]))

    words = _pack(_coins(seed, n, indpb))
    return lax.while_loop(lambda c: jnp.any(c[0] != 0), body, (words, x))[1]


def mut_inversion(seed, x: jax.Array, indpb=None) -> jax.Array:
    """Inversion: reverse a random segment ``[lo, hi)`` (DEAP's cut points; ``indpb`` unused)."""
    del indpb
    n = x.shape[-1]
    lo, hi = two_cuts(seed, 34, n)
    ar = jnp.arange(n, dtype=I32)
    src = jnp.where((ar >= lo) & (ar < hi), lo + hi - 1 - ar, ar)
    return gather1d(x, src)


def mut_scramble(seed, x: jax.Array, indpb=None) -> jax.Array:
    """Scramble: shuffle a random segment ``[lo, hi)`` (``indpb`` unused)."""
    del indpb
    n = x.shape[-1]
    lo, hi = two_cuts(seed, 35, n)
    ar = jnp.arange(n, dtype=I32)
    inside = (ar >= lo) & (ar < hi)
    # Sort key: position outside the segment, lo plus a random fraction inside it.
    key = jnp.where(inside, lo * 65536 + (bits(seed, 36, n) >> 16).astype(I32), ar * 65536)
    return gather1d(x, jnp.argsort(key).astype(I32))


def mut_reset(seed, x: jax.Array, indpb) -> jax.Array:
    """Random reset. ``indpb > 0``: each gene replaced by a uniform row with probability indpb
    (DEAP's ``mutUniformInt``); ``indpb <= 0``: exactly one gene reset."""
    n = x.shape[-1]
    return jnp.where(_coins(seed, n, indpb), randint(seed, 37, n, n).astype(x.dtype), x)


# ----------------------------------------------------------------------------- batches


def capacity(batch: int, cap32: int) -> int:
    """Rows per compacted pass for an expected fraction ``cap32 / 32`` of ``batch`` (+6 sigma)."""
    q = min(max(cap32, 0), 32) / 32
    return min(batch, max(1, math.ceil(batch * q + 6 * math.sqrt(batch * q * (1 - q)) + 8)))


def masked_apply(fn, mask: jax.Array, args: tuple, defaults, cap32: int, shared: tuple = ()):
    """``where(mask, fn(*shared, *row), defaults)`` row by row, computing ``fn`` only on the
    masked rows.

    The rows with ``mask`` set are gathered into passes of :func:`capacity` rows (``cap32``: the
    expected fraction of set rows in 32nds), ``fn`` runs on each pass (vmapped over its rows) and
    the results are scattered back; further passes run only while masked rows remain, so the
    result is exact for any mask. DEAP's rates (cxpb 0.5, mutpb 0.2) leave most rows unchanged:
    this skips their work. ``cap32 >= 32`` is the plain ``where``.

    Batching rule: under ``jax.vmap`` (a kernel written for one GA trial, vmapped over trials or
    over swept ``Params``) the batch axis is folded into the rows, so one compaction serves every
    trial (a per-trial compaction would size each pass for a small batch and loop as long as the
    slowest trial); a batched ``shared`` value is read by each row from its own batch entry.

    Args:
      fn: ``fn(*shared, *row) -> `` a pytree like one row of ``defaults``, written for one row.
      mask: ``[B]`` bool.
      args: arrays ``[B, ...]``, the rows.
      defaults: pytree of ``[B, ...]``: the rows left where ``mask`` is False.
      cap32: expected fraction of masked rows, in 32nds.
      shared: a tuple of pytrees every row reads whole (rates, an instance).
    """
    leaves, treedef = jax.tree.flatten(tuple(shared))
    apply = _masked(fn, treedef, cap32, (False,) * len(leaves))
    return apply(mask, tuple(args), defaults, tuple(leaves), ())


def _masked(fn, treedef, cap32: int, grouped: tuple[bool, ...]):
    """:func:`masked_apply` for ``fn``; leaf i of ``shared`` is read whole (``grouped[i]``
    False) or as ``leaf[group[row]]`` (True; its group index array is in ``groups``)."""

    @jax.custom_batching.custom_vmap
    def apply(mask, args, defaults, leaves, groups):
        def rows_fn(groups, *rows):  # fn over rows [k, ...]; groups: [k] per grouped leaf
            def one(gs, *row):
                it = iter(gs)
                vals = [
                    leaf[next(it)] if g else leaf for leaf, g in zip(leaves, grouped, strict=True)
                ]
                return fn(*jax.tree.unflatten(treedef, vals), *row)

            return jax.vmap(one)(groups, *rows)

        b = mask.shape[0]
        cap = capacity(b, cap32)
        if cap >= b:
            out = rows_fn(groups, *args)
            return jax.tree.map(
                lambda o, d: jnp.where(mask.reshape((b,) + (1,) * (d.ndim - 1)), o, d),
                out,
                defaults,
            )

        def one_pass(carry):
            todo, out = carry
            idx = jnp.nonzero(todo, size=cap, fill_value=b)[0]
            safe = jnp.minimum(idx, b - 1)
            res = rows_fn(tuple(g[safe] for g in groups), *(x[safe] for x in args))
            out = jax.tree.map(lambda d, r: d.at[idx].set(r, mode="drop"), out, res)
            return todo.at[idx].set(False, mode="drop"), out

        return lax.while_loop(lambda c: jnp.any(c[0]), one_pass, (mask, defaults))[1]

    @apply.def_vmap
    def _fold(axis_size, in_batched, mask, args, defaults, leaves, groups):
        m_b, a_b, d_b, l_b, g_b = in_batched
        b = mask.shape[1] if m_b else mask.shape[0]
        whole = lambda x, bat: x if bat else jnp.broadcast_to(x, (axis_size, *x.shape))
        fold = lambda x, bat: whole(x, bat).reshape((axis_size * b, *x.shape[1 + bat :]))
        mask = fold(mask, m_b)
        args = tuple(fold(x, xb) for x, xb in zip(args, a_b, strict=True))
        defaults = jax.tree.map(fold, defaults, d_b)
        new_leaves, new_groups, new_grouped = [], [], []
        git = iter(zip(groups, g_b, strict=True))
        for leaf, leaf_b, g in zip(leaves, l_b, grouped, strict=True):
            group, group_b = next(git) if g else (None, False)
            if not leaf_b:  # read whole, or through the row's group as before
                new_leaves.append(leaf)
                if g:
                    new_groups.append(fold(group, group_b))
            elif g:  # leaf [A, G, ...]: group (a, i) becomes a * G + i
                size = leaf.shape[1]
                offset = (jnp.arange(axis_size, dtype=I32) * size)[:, None]
                new_leaves.append(leaf.reshape((axis_size * size, *leaf.shape[2:])))
                new_groups.append((whole(group, group_b) + offset).reshape(-1))
            else:  # leaf [A, ...]: row r of the folded batch reads entry r // b
                new_leaves.append(leaf)
                new_groups.append(jnp.repeat(jnp.arange(axis_size, dtype=I32), b))
            new_grouped.append(g or leaf_b)
        out = _masked(fn, treedef, cap32, tuple(new_grouped))(
            mask, args, defaults, tuple(new_leaves), tuple(new_groups)
        )
        out = jax.tree.map(lambda o: o.reshape((axis_size, b, *o.shape[1:])), out)
        return out, jax.tree.map(lambda _: True, out)

    return apply


Fitness = Callable[[jax.Array], jax.Array]
"""``fitness(x [n] int32) -> []`` int or float, minimised (0: solved)."""
Selection = Callable[[jax.Array, jax.Array, jax.Array, int], jax.Array]
"""``select(seed [] uint32, fit [P], size [] int32, count: int) -> [count]`` int indices."""
Crossover = Callable[[jax.Array, jax.Array, jax.Array], tuple[jax.Array, jax.Array]]
"""``crossover(seed [] uint32, a [n], b [n]) -> (child1 [n], child2 [n])``."""
Mutation = Callable[[jax.Array, jax.Array, jax.Array], jax.Array]
"""``mutation(seed [] uint32, x [n], indpb [] float32) -> [n]``."""

SELECTIONS: dict[str, Callable[..., jax.Array]] = {
    "tournament": select_tournament,
    "distinct_tournament": select_distinct_tournament,
}
"""Built-in selections (``max_size``: the static tournament capacity, bound by the kernel)."""
DEFAULT_SELECTION = {"steady": "distinct_tournament", "generational": "tournament"}

CROSSOVERS: dict[str, dict[str, Crossover]] = {
    "permutation": {"cut": cx_cut, "pmx": cx_pmx, "ox1": cx_ox1, "cycle": cx_cycle},
    "combination": {"one_point": cx_one_point, "uniform": cx_uniform},
}
MUTATIONS: dict[str, dict[str, Mutation]] = {
    "permutation": {"swap": mut_swap, "inversion": mut_inversion, "scramble": mut_scramble},
    "combination": {"reset": mut_reset},
}
REPORT_FITNESS = "report-diagonals-only"
"""The GA report's score (:func:`report_diagonals_only`): 0 does not mean solved."""
FITNESS = {"pairs": fitness, "excess": excess, REPORT_FITNESS: report_diagonals_only}
DEFAULT_CROSSOVER = {"permutation": "cut", "combination": "one_point"}
DEFAULT_MUTATION = {"permutation": "swap", "combination": "reset"}
