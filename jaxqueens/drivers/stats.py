"""Solution-count statistics of a solver: `collect` samples, `analyse`, `stats`.

Runs independent chains of a solver (min-conflicts, LS/TA/SA, or GA trials) until a budget,
takes one verified solution per solved chain (`stats_samples`), and measures how the method
samples the solution set: distinct solutions and fundamental classes found against OEIS A000170 /
A002562, the coverage curve against the coupon-collector expectation `Q (1 - (1 - 1/Q)^m)`,
Pearson's chi-square test of uniformity over all Q solutions and over classes
(`jaxqueens.core.statistics`), and the steps-to-solution distribution.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import numpy as np

from jaxqueens.core import symmetry, symmetry_jax
from jaxqueens.core.board import as_size
from jaxqueens.core.oeis import A000170, A002562
from jaxqueens.core.statistics import uniformity_test
from jaxqueens.drivers import chains_types, count, stats_setup
from jaxqueens.drivers import stats_samples as sampling
from jaxqueens.drivers.loop import RunControl
from jaxqueens.drivers.stats_samples import Samples
from jaxqueens.parallel import cache
from jaxqueens.parallel.devices import local_device_count

ENUMERATE_MAX_N = 14  # all solutions listed (frequencies include the unsampled ones)


def collect(settings: stats_setup.StatsSettings, control: RunControl | None = None) -> Samples:
    """Run the solver of `settings` (`stats_setup.check_stats`) until its first budget is met: one
    verified sample per solved chain. `control` as for `jaxqueens.solve`."""
    return sampling.SAMPLERS[settings.solver](settings, control)


# ----------------------------------------------------------------------------- analysis


@dataclasses.dataclass
class StatsResult:
    """Statistics of a `Samples` (host arrays; exact totals where OEIS has them)."""

    samples: Samples  #: the `Samples` analysed.
    distinct: np.ndarray  #: [D, n] distinct solutions sampled (sorted)
    counts: np.ndarray  #: [D] times each was sampled
    classes: np.ndarray  #: [F, n] canonical representatives of the classes sampled (sorted)
    class_counts: np.ndarray  #: [F] samples per class
    class_sizes: np.ndarray  #: [F] solutions per class (1, 2, 4 or 8)
    distinct_sizes: np.ndarray  #: [D] class size of each distinct solution
    coverage: dict  #: chains, solved, distinct, fundamental, expected (coupon collector) [C]
    chi2: dict | None  #: uniformity over all solutions
    chi2_classes: dict | None  #: uniformity over classes (expected share size / Q)
    all_solutions: np.ndarray | None  #: [Q, n] every solution (n <= 14), for the frequency table
    all_counts: np.ndarray | None  #: [Q] times each was sampled (0 for the unsampled)
    summary: dict  #: the figures of `summary.json`.
    success: tuple[np.ndarray, np.ndarray]  #: `success_curve`: budgets [K] int64, rate [K]


def _coverage(samples: Samples, first, first_class, total: int | None, class_sizes_all) -> dict:
    """`StatsResult.coverage`: [C] curves over the chains run, of the samples' first occurrences
    (`first`, `first_class`: [S] bool) and, where the total Q is known, the coupon-collector
    expectations (of classes too where `class_sizes_all` [F] gives every class's size)."""
    chain = samples.sample_chain
    new = [np.bincount(chain[f], minlength=samples.chains) for f in (first, first_class)]
    m = np.cumsum(samples.solved)
    expected = expected_classes = None
    if total == 1:  # n = 1: the one solution is found by the first sample
        expected = np.minimum(m, 1.0)
    elif total:
        expected = -total * np.expm1(m * math.log1p(-1.0 / total))
    if total and class_sizes_all is not None:
        sizes, mult = np.unique(class_sizes_all, return_counts=True)
        ks = zip(sizes, mult, strict=True)
        expected_classes = sum(k * (1 - np.power(1 - s / total, m)) for s, k in ks)
    return {
        "chains": np.arange(1, samples.chains + 1),
        "solved": m,
        "distinct": np.cumsum(new[0]),
        "fundamental": np.cumsum(new[1]),
        "expected": expected,
        "expected_fundamental": expected_classes,
    }


ANALYSIS_MIN_BATCH = 64  # the smallest batch of the on-device analysis (`analysis_batch`)

PAD_ROW = np.iinfo(np.int32).max  # a padding row's value in the dedup kernel: after every board


def analysis_batch(samples: int) -> int:
    """The batch the on-device analysis of `samples` boards compiles for: the smallest of
    `ANALYSIS_MIN_BATCH` and `m * 2**k` (m = 5..8) that holds them. Runs with other numbers of
    samples in one bucket share the executables (`compare` analyses each solver's solved chains: one
    or two buckets for all its solvers, not one compile per solver) for at most 25% of padding
    rows."""
    if samples <= ANALYSIS_MIN_BATCH:
        return ANALYSIS_MIN_BATCH
    step = 1 << ((samples - 1).bit_length() - 3)  # samples is in (4 * step, 8 * step]
    return -(-samples // step) * step


def _padded(rows: np.ndarray, batch: int, fill: int = PAD_ROW) -> np.ndarray:
    """`rows` [S, n] followed by `batch - S` rows of `fill`: int32 [batch, n]."""
    out = np.full((batch, rows.shape[1]), fill, np.int32)
    out[: len(rows)] = rows
    return out


def _found(samples: Samples) -> tuple[np.ndarray, ...]:
    """The distinct solutions and classes of `samples`, on the device: `(distinct, counts,
    classes, class_counts, class_sizes, distinct_sizes, first, first_class)` as `StatsResult`
    names them; `first` [S] and `first_class` [S] mark each sample's first occurrence."""
    n, rows = samples.n, samples.rows
    s = len(rows)
    if not s:
        empty, boards = np.zeros(0, np.int64), np.zeros((0, n), np.int32)
        return boards, empty, boards, empty, empty, empty, np.zeros(0, bool), np.zeros(0, bool)
    # The kernels' executables load (cache.call: a repeated analysis traces nothing); their inputs
    # are host arrays padded to a bucket of sizes (analysis_batch: a run with another number of
    # samples in the bucket, or compare's next solver, loads the same executables), so both dedups
    # share one executable; results are sliced on the host (an eager slice compiles a program of
    # its own). Padding rows sort after every board: one last group.
    boards = np.asarray(rows, np.int32)
    batch = analysis_batch(s)
    pads = int(batch > s)  # the padding rows' group
    canon = np.asarray(
        cache.call("stats-canonical", symmetry_jax.canonical, (_padded(boards, batch, 0),))
    )[:s]
    d = jax.device_get(cache.call("stats-dedup", symmetry_jax.dedup, (_padded(boards, batch),)))
    dc = jax.device_get(cache.call("stats-dedup", symmetry_jax.dedup, (_padded(canon, batch),)))
    k, kf = int(d.num_unique) - pads, int(dc.num_unique) - pads
    # one call for both (each new bucket compiles anew: two calls cost a second compile)
    both = np.concatenate([dc.unique[:kf], d.unique[:k]])
    stabilizers = cache.call(
        "stats-stabilizer",
        symmetry_jax.stabilizer_sizes,
        (_padded(both, analysis_batch(len(both)), 0),),
    )
    sizes = 8 // np.asarray(stabilizers)[: len(both)]
    classes = (dc.unique[:kf], dc.counts[:kf], sizes[:kf])
    return d.unique[:k], d.counts[:k], *classes, sizes[kf:], d.first[:s], dc.first[:s]


def analyse(samples: Samples) -> StatsResult:
    """Distinct and fundamental solutions, coverage, frequencies, chi-square and step statistics of
    `samples` (one verified solution per solved chain), as a `StatsResult`."""
    n, s = samples.n, len(samples.rows)
    total, total_classes = A000170.get(n), A002562.get(n)
    distinct, counts, classes, class_counts, class_sizes, distinct_sizes, first, first_class = (
        _found(samples)
    )
    every = every_counts = every_class_size = None  # every solution (n <= 14)
    if n <= ENUMERATE_MAX_N and total:
        every = count.enumerate_solutions(n).astype(np.int32)
        every_counts = np.zeros(len(every), np.int64)
        if s:
            every_counts[_row_index(every, distinct)] = counts
        every_class_size = 8 // symmetry.stabilizer_sizes(symmetry.fundamental(every))
    coverage = _coverage(samples, first, first_class, total, every_class_size)
    chi2 = chi2_classes = None
    if total and s and total > 1:
        e = s / total
        chi2 = uniformity_test(counts, np.full(len(counts), e), (total - len(counts)) * e, total)
        seen_share = class_sizes.sum() / total
        chi2_classes = uniformity_test(
            class_counts, s * class_sizes / total, s * (1 - seen_share), total_classes
        )
    solved, expected = int(samples.solved.sum()), coverage["expected"]
    expected_last = float(expected[-1]) if expected is not None and len(expected) else None
    summary = {
        "n": n,
        "solver": samples.name,
        "family": samples.solver,
        "options": samples.options,
        "chains": samples.chains,
        "solved": solved,
        "success_rate": solved / samples.chains if samples.chains else None,
        "distinct_solutions": len(distinct),
        "fundamental_classes": len(classes),
        "exact_solutions": total,
        "exact_classes": total_classes,
        "solutions_coverage": len(distinct) / total if total else None,
        "classes_coverage": len(classes) / total_classes if total_classes else None,
        "expected_distinct_if_uniform": expected_last,
        "chi2_solutions": chi2,
        "chi2_classes": chi2_classes,
        "step_unit": samples.step_unit,
        "steps": chains_types.step_quantiles(samples.steps[samples.solved]),
        "wall_s": samples.wall_s,
        "compile_s": samples.compile_s,
        "solutions_per_s": solved / samples.wall_s if samples.wall_s > 0 else None,
        "stopped_by": samples.stopped_by,
        "backend": jax.default_backend(),
        "devices": local_device_count(),
    }
    found = (distinct, counts, classes, class_counts, class_sizes, distinct_sizes)
    success = success_curve(samples.steps, samples.solved, samples.chains)
    return StatsResult(
        samples, *found, coverage, chi2, chi2_classes, every, every_counts, summary, success
    )


def _row_index(table: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Index in sorted `table` [Q, n] of each of `rows` [D, n] (all present)."""
    key = lambda a: chains_types.row_keys(a.astype(np.int32))
    t, r = key(table), key(rows)
    order = np.argsort(t)
    pos = order[np.searchsorted(t[order], r)]
    if not np.array_equal(table[pos], rows):
        raise RuntimeError("a sampled solution is missing from the enumeration (a bug)")
    return pos


def success_curve(
    steps: np.ndarray, solved: np.ndarray, chains: int, top: int | None = None, points: int = 200
) -> tuple[np.ndarray, np.ndarray]:
    """Share of all `chains` solved within each step budget, `(budgets [K] int64, rate [K])`, from
    [S] `steps` to solution (or spent) and [S] `solved`: the unconditional RTD in steps on a grid
    of `points` budgets log-spaced from 1 to `top`, 0 and `top` included (None: the most steps a
    solved chain took; nothing solved then: empty arrays)."""
    solved_steps = np.sort(steps[solved])
    if top is None:
        if not solved_steps.size:
            return np.zeros(0), np.zeros(0)
        top = max(1, int(solved_steps.max()))
    grid = np.unique(
        np.concatenate([[0], np.round(np.logspace(0, np.log10(max(top, 1)), points)), [top]])
    ).astype(np.int64)
    return grid, np.searchsorted(solved_steps, grid, side="right") / max(1, chains)


def stats(
    n: int, solver: str = "minconflicts", *, control: RunControl | None = None, **kwargs
) -> StatsResult:
    """The statistics of `solver` on n: its samples (`collect`), analysed (`analyse`).

    Args:
      n: board size.
      solver: "minconflicts", "anneal" or "ga".
      control: progress, checkpoints and resume, as for `jaxqueens.solve` (None: the defaults).
      **kwargs: the budgets `chains` (chains, GA: trials, to run; min-conflicts: chains solved),
        `solutions` (distinct) and `seconds` (kernel time), the first met ending the run (none
        given: 10,000 chains); `seed`; `batch` (chains per kernel call, GA: trials per round;
        None: automatic); and the solver's own options (those of `solve`, `anneal` or `evolve`;
        None: its default), as `stats_setup.check_stats` takes them.

    Returns:
      The `StatsResult`; every sample has passed the independent checker.

    Raises:
      QueensError: an argument out of range, or an option the solver does not use.
    """
    return analyse(collect(stats_setup.check_stats(as_size(n), solver, **kwargs), control))
