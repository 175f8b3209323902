"""Solution-count statistics of a solver: ``jaxqueens.stats`` and ``jaxqueens stats``.

Runs independent chains of a solver (min-conflicts, annealing LS/TA/SA, or GA trials) until a
budget, takes one verified solution per solved chain (a *sample*), and measures how the method
samples the solution set:

- distinct solutions and fundamental classes found (deduplicated on device by sorting, canonical
  forms from :mod:`jaxqueens.core.symmetry_jax`), against OEIS A000170 / A002562 (n <= 27);
- the coverage curve, distinct solutions vs chains run, with the coupon-collector expectation
  ``Q (1 - (1 - 1/Q)^m)`` after m samples if every solution were equally likely;
- each solution's sampling frequency and Pearson's chi-square test of uniformity over *all* Q
  solutions (unsampled ones count 0: they add ``(Q - D) S / Q`` to the statistic, so no list of
  them is needed), and the same test over classes, whose expected shares are size / Q;
- the steps-to-solution distribution and the success rate vs step budget.

The chi-square p-value is the regularised upper incomplete gamma function, computed here
(:func:`chi2_sf`: series / Lentz continued fraction, Numerical Recipes 6.2); the test is only
meaningful when the expected count per cell is at least ~5, which the summary states.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
import time
from pathlib import Path

import numpy as np

from jaxqueens.parallel import gather
from jaxqueens.core.oeis import A000170, A002562
from jaxqueens.errors import QueensError

SOLVERS = ("minconflicts", "anneal", "ga")
ENUMERATE_MAX_N = 14  # all solutions listed (frequencies include the unsampled ones)
MIN_EXPECTED = 5.0  # chi-square rule of thumb
CURVE_POINTS = 2000  # coverage rows kept in coverage.csv (log-spaced, plus the last)


# ----------------------------------------------------------------------------- chi-square


def gamma_q(a: float, x: float, eps: float = 1e-15, max_iter: int = 1_000_000) -> float:
    """Regularised upper incomplete gamma Q(a, x) = Gamma(a, x) / Gamma(a), a > 0, x >= 0."""
    if a <= 0 or x < 0 or math.isnan(x):
        raise ValueError(f"gamma_q needs a > 0 and x >= 0, got a={a}, x={x}")
    if x == 0:
        return 1.0
    log_front = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1:  # series for P(a, x)
        term = total = 1.0 / a
        ap = a
        for _ in range(max_iter):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * eps:
                break
        return max(0.0, 1.0 - total * math.exp(log_front))
    # continued fraction for Q(a, x) (modified Lentz)
    tiny = 1e-300
    b = x + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for i in range(1, max_iter):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < eps:
            break
    return min(1.0, math.exp(log_front) * h)


def chi2_sf(stat: float, dof: int) -> float:
    """Survival function of the chi-square distribution: P(X >= stat) for ``dof`` degrees of freedom."""
    if dof < 1:
        return float("nan")
    return gamma_q(dof / 2, max(stat, 0.0) / 2)


def uniformity_test(observed: np.ndarray, expected: np.ndarray, unseen_expected: float = 0.0,
                    cells: int | None = None) -> dict:
    """Pearson's chi-square against given expected counts.

    Args:
      observed: ``[D]`` counts of the cells seen; expected: ``[D]`` their expected counts.
      unseen_expected: the summed expected count of the cells never observed (each adds its
        expected count to the statistic).
      cells: number of cells in all (default D).
    """
    observed = np.asarray(observed, np.float64)
    expected = np.asarray(expected, np.float64)
    cells = len(observed) if cells is None else int(cells)
    stat = float(np.sum((observed - expected) ** 2 / expected) + unseen_expected)
    dof = cells - 1
    per_cell = float((expected.sum() + unseen_expected) / cells) if cells else 0.0
    return {"statistic": stat, "dof": dof, "p_value": chi2_sf(stat, dof) if dof >= 1 else None,
            "cells": cells, "expected_per_cell_mean": per_cell,
            "expected_min": float(min(expected.min(initial=np.inf),
                                      unseen_expected / max(1, cells - len(observed))
                                      if cells > len(observed) else np.inf)),
            "valid": bool(per_cell >= MIN_EXPECTED)}


# ----------------------------------------------------------------------------- sampling


@dataclasses.dataclass
class Samples:
    """What a solver run gives the statistics: one sample per solved chain (host arrays)."""

    n: int
    solver: str
    options: dict
    solved: np.ndarray  # [C] bool per chain run
    steps: np.ndarray  # [C] int64 steps (GA: generations) to solution, or spent if unsolved
    rows: np.ndarray  # [S, n] int32 verified solutions of the solved chains, in chain order
    step_unit: str  # "steps" or "generations"
    wall_s: float
    compile_s: float
    stopped_by: str

    @property
    def chains(self) -> int:
        return int(self.solved.size)

    @property
    def sample_chain(self) -> np.ndarray:
        """[S] chain index of every sample."""
        return np.flatnonzero(self.solved)


def _budget_check(n: int, chains, solutions, seconds):
    from jaxqueens.drivers import chains as driver

    if solutions is not None and n in A000170 and solutions > A000170[n]:
        raise QueensError(f"--solutions {solutions}: n = {n} has only {A000170[n]:,} solutions; "
                          f"ask for at most that many")
    return driver.Budget(chains=chains, solutions=solutions, seconds=seconds)


def _from_run(run, solver: str, options: dict) -> Samples:
    return Samples(run.n, solver, options, run.solved.copy(), run.steps.copy(),
                   run.solutions.astype(np.int32), "steps", run.wall_s, run.compile_s, run.stopped_by)


def sample_minconflicts(n, chains, solutions, seconds, seed, quiet, max_steps=4000,
                        init="permutation", tabu=0, batch=None, max_restarts=1_000_000,
                        checkpoint=None, resume=False, checkpoint_every=30.0) -> Samples:
    """Min-conflicts chains through :func:`jaxqueens.solve` (``chains``: solved chains)."""
    from jaxqueens.drivers import minconflicts as mcsolve

    res = mcsolve.solve(n, chains, solutions=solutions, seconds=seconds, max_steps=max_steps,
                        init=init, tabu=tabu, seed=seed, batch=batch, max_restarts=max_restarts,
                        quiet=quiet, checkpoint=checkpoint, resume=resume,
                        checkpoint_every=checkpoint_every)
    return _from_run(res.run, "minconflicts", {"max_steps": max_steps, "init": init, "tabu": tabu,
                                               "max_restarts": max_restarts})


def sample_anneal(n, chains, solutions, seconds, seed, quiet, method="ta", steps=10_000, rounds=10,
                  neighbour="step", step=3, objective="attacks", q=0.5, init_prob=0.4, alpha=0.9,
                  walk=2000, batch=None, checkpoint=None, resume=False,
                  checkpoint_every=30.0) -> Samples:
    """LS / TA / SA chains (:mod:`jaxqueens.drivers.anneal`'s schedule and kernel; ``chains``: run)."""
    import jax
    import jax.numpy as jnp

    from jaxqueens.drivers import anneal as annealing, chains as driver

    from jaxqueens.parallel import chains as chain_batch

    from jaxqueens.solvers import anneal as sls

    config = annealing.make_config(n, method, steps, rounds, neighbour, step, objective)
    budget = driver.Budget(max_chains=chains, solutions=solutions, seconds=seconds)
    cal_key, key = jax.random.split(jax.random.key(seed))
    schedule, _ = annealing.calibrate(cal_key, config, walk, q, init_prob, alpha)
    devices = jax.local_device_count()
    cap = max(devices, (1 << 22) // config.total_steps)
    chunk = batch or (min(-(-chains // devices) * devices, cap) if chains else -(-cap // devices) * devices)
    t0 = time.perf_counter()
    runner = chain_batch.compile_runner(sls.Kernel(config), key, chunk, jnp.asarray(schedule))
    compile_s = time.perf_counter() - t0
    fingerprint = {"solver": f"stats-annealing-{method}", "seed": seed, "schedule": [float(x) for x in schedule],
                   "config": dataclasses.asdict(config)}
    run = driver.run_chains(runner, n, budget, chunk, what=f"annealing ({method})",
                            compile_s=compile_s, quiet=quiet, checkpoint=checkpoint,
                            fingerprint=fingerprint, resume=resume, checkpoint_every=checkpoint_every)
    return _from_run(run, "anneal", {"method": method, "steps": config.total_steps, "rounds": rounds,
                                     "neighbour": neighbour, "step": step, "objective": objective,
                                     "q": q, "init_prob": init_prob, "alpha": alpha})


def sample_ga(n, chains, solutions, seconds, seed, quiet, batch=None, checkpoint=None, resume=False,
              checkpoint_every=30.0, **ga_options) -> Samples:
    """GA trials (:func:`jaxqueens.solvers.ga.evolve`), ``batch`` trials per round; one sample per trial.

    A trial's sample is the first solution (island-major, then population order) in its final
    population, its steps the first generation whose best was a solution. Round r is seeded from
    ``SeedSequence([seed, r])``: the samples depend on the round size.
    """
    from jaxqueens.core import checker
    from jaxqueens.solvers import ga
    from jaxqueens.io.progress import Progress

    rounds_of = batch or min(chains or 1024, 1024)
    solved, steps, rows = [], [], []
    seen: set[bytes] = set()
    wall = compile_s = 0.0
    stopped_by, r = None, 0
    fingerprint = {"solver": "stats-ga", "n": n, "seed": seed, "round": rounds_of,
                   "options": {k: v for k, v in sorted(ga_options.items()) if v is not None}}
    if resume and checkpoint is not None:
        solved, steps, rows, r, wall = _load_rounds(checkpoint, fingerprint)
        seen.update(x.tobytes() for part in rows for x in part)
    last_save = time.perf_counter()
    bar = Progress(chains, "trials", quiet=quiet)
    while stopped_by is None:
        run = rounds_of if chains is None else min(rounds_of, chains - sum(map(len, solved)))
        sub_seed = int(np.random.SeedSequence([seed, r]).generate_state(1)[0] & 0x7FFFFFFF)
        try:
            res = ga.evolve(n, trials=run, seed=sub_seed, quiet=True, **ga_options)
        except KeyboardInterrupt:
            res = None
        if res is None or res.interrupted:  # keep whole rounds only
            stopped_by = "interrupted"
            if checkpoint is not None:
                _save_rounds(checkpoint, solved, steps, rows, r, wall, fingerprint)
            break
        wall, compile_s = wall + res.wall_s + res.init_s, compile_s + res.compile_s
        fit = res.fitness.reshape(run, -1)
        pop = res.population.reshape(run, -1, n)
        has = (fit == 0).any(axis=1)
        first = np.argmax(fit == 0, axis=1)
        sols = pop[np.arange(run), first][has].astype(np.int32)
        checker.require_solutions(sols, what="GA samples", n=n)
        gens = res.first_solved.astype(np.int64)
        solved.append(has)
        steps.append(np.where(has, gens, res.best.shape[0] - 1))
        rows.append(sols)
        seen.update(s.tobytes() for s in sols)
        r += 1
        done = sum(map(len, solved))
        bar.update(done, f"{len(seen)} distinct")
        if chains is not None and done >= chains:
            stopped_by = "chains"
        elif solutions is not None and len(seen) >= solutions:
            stopped_by = "solutions"
        elif seconds is not None and wall >= seconds:
            stopped_by = "time"
        elif checkpoint is not None and time.perf_counter() - last_save >= checkpoint_every:
            _save_rounds(checkpoint, solved, steps, rows, r, wall, fingerprint)
            last_save = time.perf_counter()
    bar.close()
    if not solved:
        return Samples(n, "ga", {}, np.zeros(0, bool), np.zeros(0, np.int64), np.zeros((0, n), np.int32),
                       "generations", wall, compile_s, stopped_by)
    return Samples(n, "ga", {k: v for k, v in ga_options.items() if v is not None}, np.concatenate(solved),
                   np.concatenate(steps), np.concatenate(rows), "generations", wall, compile_s, stopped_by)


def _save_rounds(path, solved, steps, rows, r, wall, fingerprint) -> None:
    """GA samples of the finished rounds, atomically."""
    from jaxqueens.io import checkpoint

    checkpoint.save(path, fingerprint,
                    solved=np.concatenate(solved) if solved else np.zeros(0, bool),
                    steps=np.concatenate(steps) if steps else np.zeros(0, np.int64),
                    rows=np.concatenate(rows) if rows else np.zeros((0, 1), np.int32),
                    sizes=np.array([len(x) for x in solved], np.int64),
                    row_sizes=np.array([len(x) for x in rows], np.int64), rounds=r, wall=wall)


def _load_rounds(path, fingerprint):
    from jaxqueens.io import checkpoint

    z = checkpoint.load(path, fingerprint)
    cut = lambda a, sizes: np.split(a, np.cumsum(sizes)[:-1]) if len(sizes) else []  # noqa: E731
    return (cut(z["solved"], z["sizes"]), cut(z["steps"], z["sizes"]),
            cut(z["rows"], z["row_sizes"]), int(z["rounds"]), float(z["wall"]))


def collect(n: int, solver: str = "minconflicts", *, chains: int | None = None,
            solutions: int | None = None, seconds: float | None = None, seed: int = 0,
            quiet: bool = True, **options) -> Samples:
    """Run ``solver`` until the first budget met; one verified sample per solved chain.

    Args:
      n: board size.
      solver: "minconflicts", "anneal" or "ga".
      chains: chains (GA: trials) to run; for min-conflicts, chains *solved* (every chain
        solves unless it exhausts ``max_restarts``).
      solutions: stop at this many distinct solutions; seconds: stop after this kernel time.
      seed: random seed.
      options: the solver's own options (those of ``solve``, ``anneal`` or ``ga.evolve``), and
        ``checkpoint``, ``resume``, ``checkpoint_every`` (as for :func:`jaxqueens.solve`).
    """
    if solver not in SOLVERS:
        raise QueensError(f"solver {solver!r} is unknown; use one of {', '.join(SOLVERS)}")
    if chains is None and solutions is None and seconds is None:
        chains = 10_000
    _budget_check(n, chains, solutions, seconds)
    fn = {"minconflicts": sample_minconflicts, "anneal": sample_anneal, "ga": sample_ga}[solver]
    try:
        return fn(n, chains, solutions, seconds, seed, quiet, **options)
    except TypeError as err:  # an option of another solver
        raise QueensError(f"{solver}: {err}; pass only that solver's options") from None


# ----------------------------------------------------------------------------- analysis


@dataclasses.dataclass
class StatsResult:
    """Statistics of a :class:`Samples` (host arrays; exact totals where OEIS has them)."""

    samples: Samples
    distinct: np.ndarray  # [D, n] distinct solutions sampled (sorted)
    counts: np.ndarray  # [D] times each was sampled
    classes: np.ndarray  # [F, n] canonical representatives of the classes sampled (sorted)
    class_counts: np.ndarray  # [F] samples per class
    class_sizes: np.ndarray  # [F] solutions per class (1, 2, 4 or 8)
    distinct_sizes: np.ndarray  # [D] class size of each distinct solution
    coverage: dict  # chains, solved, distinct, fundamental, expected (coupon collector) [C]
    chi2: dict | None  # uniformity over all solutions
    chi2_classes: dict | None  # uniformity over classes (expected share size / Q)
    all_solutions: np.ndarray | None  # [Q, n] every solution (n <= 14), for the frequency table
    all_counts: np.ndarray | None  # [Q] times each was sampled (0 for the unsampled)
    summary: dict


def _coverage(samples: Samples, first: np.ndarray, first_class: np.ndarray, total: int | None,
              class_sizes_all: np.ndarray | None) -> dict:
    c = samples.chains
    chain = samples.sample_chain
    new = np.bincount(chain[first], minlength=c)
    new_f = np.bincount(chain[first_class], minlength=c)
    solved_cum = np.cumsum(samples.solved)
    out = {"chains": np.arange(1, c + 1), "solved": solved_cum, "distinct": np.cumsum(new),
           "fundamental": np.cumsum(new_f), "expected": None, "expected_fundamental": None}
    if total:
        m = solved_cum.astype(np.float64)
        out["expected"] = -total * np.expm1(m * math.log1p(-1.0 / total))
        if class_sizes_all is not None:
            sizes, mult = np.unique(class_sizes_all, return_counts=True)
            out["expected_fundamental"] = sum(k * (1 - np.power(1 - s / total, m))
                                              for s, k in zip(sizes, mult))
    return out


def analyse(samples: Samples) -> StatsResult:
    """Distinct and fundamental solutions, coverage, frequencies, chi-square, step statistics."""
    import jax.numpy as jnp

    from jaxqueens.core import symmetry_jax

    n, rows = samples.n, samples.rows
    s = len(rows)
    total, total_classes = A000170.get(n), A002562.get(n)
    if s:
        boards = jnp.asarray(rows)
        d = symmetry_jax.dedup(boards)
        canon = symmetry_jax.canonical(boards)
        dc = symmetry_jax.dedup(canon)
        k, kf = int(d.num_unique), int(dc.num_unique)
        distinct, counts = np.asarray(d.unique[:k]), np.asarray(d.counts[:k])
        first = np.asarray(d.first)
        classes, class_counts = np.asarray(dc.unique[:kf]), np.asarray(dc.counts[:kf])
        first_class = np.asarray(dc.first)
        class_sizes = np.asarray(symmetry_jax.class_sizes(dc.unique[:kf]))
        distinct_sizes = np.asarray(symmetry_jax.class_sizes(d.unique[:k]))
    else:
        distinct = classes = np.zeros((0, n), np.int32)
        counts = class_counts = class_sizes = distinct_sizes = np.zeros(0, np.int64)
        first = first_class = np.zeros(0, bool)
    all_solutions = all_counts = all_sizes = None
    if n <= ENUMERATE_MAX_N and total:
        from jaxqueens.drivers import count
        from jaxqueens.core import symmetry

        all_solutions = count.enumerate_solutions(n).astype(np.int32)
        all_counts = np.zeros(len(all_solutions), np.int64)
        if s:
            idx = _row_index(all_solutions, distinct)
            all_counts[idx] = counts
        all_sizes = 8 // symmetry.stabilizer_sizes(symmetry.fundamental(all_solutions))
    coverage = _coverage(samples, first, first_class, total, all_sizes)
    chi2 = chi2_classes = None
    if total and s and total > 1:
        e = s / total
        chi2 = uniformity_test(counts, np.full(len(counts), e), (total - len(counts)) * e, total)
        seen_share = class_sizes.sum() / total
        chi2_classes = uniformity_test(class_counts, s * class_sizes / total, s * (1 - seen_share),
                                       total_classes)
    summary = _summary(samples, distinct, classes, chi2, chi2_classes, coverage)
    return StatsResult(samples, distinct, counts, classes, class_counts, class_sizes, distinct_sizes,
                       coverage, chi2, chi2_classes, all_solutions, all_counts, summary)


def _row_index(table: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Index in sorted ``table`` [Q, n] of each of ``rows`` [D, n] (all present)."""
    key = lambda a: np.ascontiguousarray(a.astype(np.int32)).view(  # noqa: E731
        np.dtype((np.void, 4 * a.shape[1]))).ravel()
    t, r = key(table), key(rows)
    order = np.argsort(t)
    pos = order[np.searchsorted(t[order], r)]
    if not np.array_equal(table[pos], rows):
        raise RuntimeError("a sampled solution is missing from the enumeration (a bug)")
    return pos


def step_quantiles(steps: np.ndarray) -> dict:
    if not steps.size:
        return {k: None for k in ("mean", "median", "p90", "p99", "max")}
    return {"mean": float(steps.mean()), "median": float(np.median(steps)),
            "p90": float(np.percentile(steps, 90)), "p99": float(np.percentile(steps, 99)),
            "max": int(steps.max())}


def success_curve(samples: Samples, points: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Success rate vs step budget over all chains run: ``(budgets [K], rate [K])``."""
    solved_steps = np.sort(samples.steps[samples.solved])
    if not solved_steps.size:
        return np.zeros(0), np.zeros(0)
    top = max(1, int(solved_steps.max()))
    budgets = np.unique(np.concatenate([[0], np.round(np.logspace(0, math.log10(top), points)), [top]]))
    rate = np.searchsorted(solved_steps, budgets, side="right") / max(1, samples.chains)
    return budgets.astype(np.int64), rate


def _summary(samples: Samples, distinct, classes, chi2, chi2_classes, coverage) -> dict:
    import jax

    n = samples.n
    total, total_classes = A000170.get(n), A002562.get(n)
    s = int(samples.solved.sum())
    solved_steps = samples.steps[samples.solved]
    return {
        "n": n, "solver": samples.solver, "options": samples.options, "chains": samples.chains,
        "solved": s, "success_rate": s / samples.chains if samples.chains else None,
        "distinct_solutions": int(len(distinct)), "fundamental_classes": int(len(classes)),
        "exact_solutions": total, "exact_classes": total_classes,
        "solutions_coverage": len(distinct) / total if total else None,
        "classes_coverage": len(classes) / total_classes if total_classes else None,
        "expected_distinct_if_uniform": (float(coverage["expected"][-1])
                                         if coverage["expected"] is not None and len(coverage["expected"])
                                         else None),
        "chi2_solutions": chi2, "chi2_classes": chi2_classes,
        "step_unit": samples.step_unit, "steps": step_quantiles(solved_steps),
        "wall_s": samples.wall_s, "compile_s": samples.compile_s,
        "solutions_per_s": s / samples.wall_s if samples.wall_s > 0 else None,
        "stopped_by": samples.stopped_by, "backend": jax.default_backend(),
        "devices": jax.local_device_count(),
    }


def stats(n: int, solver: str = "minconflicts", **kwargs) -> StatsResult:
    """:func:`collect` then :func:`analyse`: the statistics of ``solver`` on n."""
    return analyse(collect(n, solver, **kwargs))


# ----------------------------------------------------------------------------- outputs


def _csv(path: Path, header: list[str], rows) -> Path:
    from jaxqueens.io.atomic import write_text

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    write_text(path, buf.getvalue())
    return path


def _thin(c: int) -> np.ndarray:
    """Indices 0..c-1 to keep in the coverage table: log-spaced, at most CURVE_POINTS, the last."""
    if c <= CURVE_POINTS:
        return np.arange(c)
    return np.unique(np.concatenate([np.round(np.logspace(0, math.log10(c), CURVE_POINTS)) - 1,
                                     [c - 1]]).astype(np.int64))


def _board_text(rows: np.ndarray) -> list[str]:
    return [" ".join(map(str, r)) for r in rows.tolist()]


def write_outputs(res: StatsResult, out_dir: str | Path, plots: bool = True) -> list[Path]:
    """Write ``summary.json``, the CSV tables and (``plots``) the PNG figures into ``out_dir``."""
    from jaxqueens.io import boards as boardio
    from jaxqueens.io.atomic import write_text

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sam, cov = res.samples, res.coverage
    files = [out / "summary.json"]
    write_text(files[0], json.dumps(res.summary, indent=2) + "\n")
    if len(res.distinct):
        boardio.write_boards_npy(out / "distinct.npy", res.distinct)
        files.append(out / "distinct.npy")
    if res.all_solutions is not None:
        from jaxqueens.core import symmetry

        canon = symmetry.canonical(res.all_solutions)
        sizes = 8 // symmetry.stabilizer_sizes(res.all_solutions)
        table = zip(_board_text(res.all_solutions), res.all_counts, _board_text(canon), sizes)
    else:
        from jaxqueens.core import symmetry

        canon = symmetry.canonical(res.distinct) if len(res.distinct) else res.distinct
        table = zip(_board_text(res.distinct), res.counts, _board_text(canon), res.distinct_sizes)
    files.append(_csv(out / "frequencies.csv", ["solution", "count", "canonical", "class_size"],
                      ([a, int(b), c, int(d)] for a, b, c, d in table)))
    files.append(_csv(out / "classes.csv", ["canonical", "class_size", "count"],
                      ([t, int(z), int(k)] for t, z, k in zip(_board_text(res.classes), res.class_sizes,
                                                               res.class_counts))))
    keep = _thin(sam.chains)
    exp = cov["expected"]
    expf = cov["expected_fundamental"]
    files.append(_csv(out / "coverage.csv",
                      ["chains", "solved", "distinct", "fundamental", "expected_distinct_uniform",
                       "expected_fundamental_uniform"],
                      ([int(cov["chains"][i]), int(cov["solved"][i]), int(cov["distinct"][i]),
                        int(cov["fundamental"][i]), "" if exp is None else f"{exp[i]:.4f}",
                        "" if expf is None else f"{expf[i]:.4f}"] for i in keep)))
    files.append(_csv(out / "steps.csv", ["chain", "solved", sam.step_unit],
                      ([i, int(a), int(b)] for i, (a, b) in enumerate(zip(sam.solved, sam.steps)))))
    budgets, rate = success_curve(sam)
    files.append(_csv(out / "success.csv", [f"{sam.step_unit}_budget", "success_rate"],
                      ([int(b), f"{r:.6f}"] for b, r in zip(budgets, rate))))
    if plots:
        from jaxqueens.plots import stats as stats_plots

        files += stats_plots.write_plots(res, out)
    return files


# ----------------------------------------------------------------------------- command line


def add_command(sub) -> None:
    """Register ``jaxqueens stats``."""
    from jaxqueens.solvers import minconflicts, anneal as sls

    p = sub.add_parser(
        "stats", help="solution-count statistics of a solver: coverage, sampling bias, steps",
        description="Run chains of a solver until a budget and report the distinct solutions and "
                    "fundamental classes found (against OEIS for n <= 27), the coverage curve with "
                    "the coupon-collector expectation, every solution's sampling frequency with a "
                    "chi-square test of uniformity, and the steps-to-solution distribution.")
    p.add_argument("n_pos", nargs="?", type=int, metavar="N", help="board size (same as -n)")
    p.add_argument("-n", type=int, default=None, help="board size (default 8)")
    p.add_argument("--solver", choices=SOLVERS, default="minconflicts",
                   help="minconflicts (default), anneal (--method ls|ta|sa) or ga")
    p.add_argument("--chains", type=int, default=None,
                   help="chains to run (GA: trials; min-conflicts: chains solved); default 10000")
    p.add_argument("--solutions", type=int, default=None, help="stop at this many distinct solutions")
    p.add_argument("--time", type=float, default=None, metavar="SECONDS", help="stop after this time")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--batch", type=int, default=None,
                   help="chains per kernel call (GA: trials per round); default automatic")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write summary.json, CSV tables and PNG figures here")
    p.add_argument("--no-plots", action="store_true", help="with --out: tables only, no figures")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    g = p.add_argument_group("min-conflicts (as 'jaxqueens solve')")
    g.add_argument("--maxsteps", type=int, default=4000, help="steps before a restart (default 4000)")
    g.add_argument("--init", choices=minconflicts.INITS, default="permutation")
    g.add_argument("--tabu", type=int, default=0, help="plateau tabu tenure (default 0 = off)")
    g = p.add_argument_group("annealing (as 'jaxqueens anneal')")
    g.add_argument("--method", choices=sls.METHODS, default="ta", help="ls, ta or sa (default ta)")
    g.add_argument("--steps", type=int, default=10_000, help="step budget per chain (default 10000)")
    g.add_argument("--rounds", type=int, default=10)
    g.add_argument("--neighbour", choices=sls.NEIGHBOURS, default="step")
    g.add_argument("--step", type=int, default=3)
    g.add_argument("--objective", choices=sls.OBJECTIVES, default="attacks")
    g.add_argument("--q", type=float, default=0.5)
    g.add_argument("--init-prob", type=float, default=0.4)
    g.add_argument("--alpha", type=float, default=0.9)
    g = p.add_argument_group("genetic algorithm (as 'jaxqueens evolve'; defaults as there)")
    g.add_argument("--pop", type=int, default=None)
    g.add_argument("--generations", type=int, default=None)
    g.add_argument("--encoding", choices=("permutation", "combination"), default=None)
    g.add_argument("--scheme", choices=("steady", "generational"), default=None)
    g.add_argument("--crossover", default=None)
    g.add_argument("--mutation", default=None)
    g.add_argument("--tournament", type=int, default=None)
    g.add_argument("--cxpb", type=float, default=None)
    g.add_argument("--mutpb", type=float, default=None)
    g.add_argument("--indpb", type=float, default=None)
    g.add_argument("--elite", type=int, default=None)
    g.add_argument("--islands", type=int, default=None)
    g.add_argument("--migrate-every", dest="migrate_every", type=int, default=None)
    g.add_argument("--migrants", type=int, default=None)
    from jaxqueens.drivers import minconflicts as _mcsolve

    _mcsolve.add_checkpoint_args(p)
    p.set_defaults(func=cmd_stats)


GA_KEYS = ("pop", "generations", "encoding", "scheme", "crossover", "mutation", "tournament", "cxpb",
           "mutpb", "indpb", "elite", "islands", "migrate_every", "migrants")


def _options(args) -> dict:
    if args.solver == "minconflicts":
        return {"max_steps": args.maxsteps, "init": args.init, "tabu": args.tabu, "batch": args.batch}
    if args.solver == "anneal":
        return {k: getattr(args, k) for k in ("method", "steps", "rounds", "neighbour", "step",
                                              "objective", "q", "init_prob", "alpha", "batch")}
    return {"batch": args.batch, **{k: getattr(args, k) for k in GA_KEYS if getattr(args, k) is not None}}


def _p(test: dict | None) -> str:
    if test is None:
        return "n/a (exact total unknown)"
    p = test["p_value"]
    if p is None:
        return f"n/a ({test['cells']} cell)"
    text = f"chi2 = {test['statistic']:.1f}, dof = {test['dof']:,}, " + (
        f"p = {p:.3g}" if p > 0 else "p < 1e-300")
    if not test["valid"]:
        text += f" (only {test['expected_per_cell_mean']:.2g} expected per cell: not meaningful)"
    return text


def cmd_stats(args) -> int:
    """The ``stats`` command: run, print the statistics, write tables and figures."""
    if args.n is not None and args.n_pos is not None and args.n != args.n_pos:
        raise QueensError(f"two board sizes given (-n {args.n} and {args.n_pos}); give one")
    n = args.n if args.n is not None else (args.n_pos if args.n_pos is not None else 8)
    from jaxqueens.parallel import devices as backend
    from jaxqueens.drivers import minconflicts as mcsolve

    checkpoint, resume = mcsolve.checkpoint_target(args)
    samples = collect(n, args.solver, chains=args.chains, solutions=args.solutions, seconds=args.time,
                      seed=args.seed, quiet=True if args.quiet else None, checkpoint=checkpoint,
                      resume=resume, checkpoint_every=args.checkpoint_every, **_options(args))
    if samples.stopped_by == "interrupted":
        return mcsolve.report_interrupt_message(f"{len(samples.solved):,} finished chains", args.out)
    res = analyse(samples)
    s = res.summary
    name = args.solver + (f" ({args.method})" if args.solver == "anneal" else "")
    ex = lambda v: f" of {v:,}" if v else ""  # noqa: E731
    print(f"{name}, n = {n}: {s['solved']:,} of {s['chains']:,} chains solved; "
          f"{s['distinct_solutions']:,}{ex(s['exact_solutions'])} distinct solutions, "
          f"{s['fundamental_classes']:,}{ex(s['exact_classes'])} fundamental classes; all verified")
    if s["expected_distinct_if_uniform"] is not None:
        print(f"if every solution were equally likely: {s['expected_distinct_if_uniform']:,.1f} distinct "
              f"expected after {s['solved']:,} samples")
    print(f"uniformity over solutions: {_p(s['chi2_solutions'])}")
    print(f"uniformity over classes:   {_p(s['chi2_classes'])}")
    st = s["steps"]
    if st["median"] is not None:
        print(f"{s['step_unit']} to solution: mean {st['mean']:.1f}, median {st['median']:g}, "
              f"p90 {st['p90']:g}, p99 {st['p99']:g}, max {st['max']}")
    if args.out and gather.is_writer():
        files = write_outputs(res, args.out, plots=not args.no_plots)
        if checkpoint is not None:
            checkpoint.unlink(missing_ok=True)
        print(f"wrote {', '.join(f.name for f in files)} to {args.out}")
    return 0 if s["solved"] else 1
