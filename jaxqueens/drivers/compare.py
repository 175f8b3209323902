"""``jaxqueens.compare``: several solvers on the same n, step budget and seed, side by side.

Every solver runs the same ``chains`` independent chains (chain i seeded from ``fold_in`` of the
seed's key, as everywhere), each with the same **step budget** per chain, and is measured as in
the stochastic local search literature (Hoos & Stuetzle, *Stochastic Local Search*, 2004, ch. 4):
the run-time distributions of steps and of seconds to solution (empirical CDFs), the success rate
against the step budget, solutions per second, the distinct solutions and fundamental classes
found, and the sampling-bias chi-square test of :mod:`jaxqueens.drivers.stats`.

**The budget is in steps, and the ranking in seconds.** A step is one candidate board a solver
looks at: one min-conflicts repair move, one LS/TA/SA neighbour move, one GA fitness evaluation
(DEAP's count, the initial population included). A step budget is the same for every solver and
reproducible (it does not depend on the machine or its load); since a step costs very different
time in each solver, the recommendation compares **expected seconds per solution** (ERT:
seconds spent by all chains, solved or not, over the chains solved), with a percentile bootstrap
CI of the ratio runner-up / fastest over the chains (:func:`recommend`).

How each solver meets the budget exactly:

- min-conflicts restarts every ``max_steps`` steps (``solve``'s default, the measured restart
  period :func:`~jaxqueens.solvers.variants.default_max_steps`, or the budget if smaller: then
  one attempt) with up to ``ceil(budget / max_steps) - 1`` restarts; a chain that solved
  past the budget is counted unsolved (censored at the budget: up to the budget its moves are
  the same as a run that stops there), and its seconds are cut in proportion;
- LS/TA/SA get the budget as their ``steps`` (split over ``rounds``);
- GA: a trial evolves ``(budget - pop) // 2`` steady-state generations (two children evaluated
  per generation), ``(budget - pop) // pop`` generational ones; a trial solved past the budget
  (in evaluations) is censored the same way. GA trials of one call run in lockstep over all
  generations; a trial's seconds are its share of the call's time by evaluations (the time an
  early-stopping GA would take), which favours the GA if anything.

Seconds per chain are the chunk's kernel time shared by steps (``ChainRun.wall_share``),
compilation excluded; solutions per second are the chains solved over the solver's kernel time
as run (the GA's includes every generation of every trial). The bootstrap CI covers the
chain-to-chain variation of the run times, not the timing noise of a busy machine: a solver
whose whole run takes a few milliseconds is timed by few kernel calls. Outputs are written by
:mod:`jaxqueens.io.compare`, figures drawn by :mod:`jaxqueens.plots.compare`; the command line
is :mod:`jaxqueens.cli.compare`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from jaxqueens.drivers import anneal as annealing
from jaxqueens.drivers import chains as driver
from jaxqueens.drivers import ga, settings
from jaxqueens.drivers import minconflicts as mcsolve
from jaxqueens.drivers import stats as solstats
from jaxqueens.errors import QueensError
from jaxqueens.parallel.devices import local_device_count
from jaxqueens.solvers import minconflicts, variants

TABU = settings.COMPARE_TABU
"""Plateau tabu tenure of the ``mc-tabu`` solver."""

SOLVERS: dict[str, dict] = settings.COMPARE_SOLVERS
"""Every solver :func:`compare` knows, by name: the family and its options (the families'
defaults for the rest); JAX-free in :mod:`jaxqueens.drivers.settings`, with each solver's least
step budget (:func:`jaxqueens.drivers.settings.least_steps`)."""

DEFAULT_STEPS = 10_000
"""Step budget per chain (anneal's default)."""
DEFAULTS_NOTE = (
    "every solver runs at its measured-best defaults: min-conflicts' restart period from "
    "scripts/bench_restarts.py (benchmarks/results/restarts-cpu.json), the LS/TA/SA settings and "
    "the GA's from scripts/tune_defaults.py at this command's default budget of 10,000 steps, "
    "n = 16 and 64 (benchmarks/results/tune-anneal-cpu.json, tune-ga-cpu.json)"
)
"""What ``summary.json`` and the command's output say about the settings compared."""
BOOTSTRAP = 2000
"""Bootstrap resamples of the recommendation's CI."""
CONFIDENCE = 0.95
CURVE_POINTS = 400
"""Points kept per solver in an ECDF (evenly spaced ranks, the last included) and budgets in the
success-rate curve (log-spaced)."""


parse_solvers = settings.parse_solvers


@dataclasses.dataclass
class SolverRun:
    """One solver's chains, censored at the step budget (host arrays)."""

    name: str
    family: str  # "minconflicts", "anneal" or "ga"
    options: dict
    solved: np.ndarray  # [K] bool: solved within the budget
    steps: np.ndarray  # [K] int64 steps to solution (solved) or spent (unsolved, <= budget)
    seconds: np.ndarray  # [K] float64 seconds to solution (solved) or spent
    wall_s: float  # the solver's kernel time as run, compilation excluded
    compile_s: float
    stats: solstats.StatsResult  # distinct, fundamental, chi-square (one sample per solved chain)

    @property
    def ert_s(self) -> float:
        """Expected seconds per solution: all chains' seconds over the chains solved (inf if
        none)."""
        solved = int(self.solved.sum())
        return float(self.seconds.sum()) / solved if solved else float("inf")


@dataclasses.dataclass
class CompareResult:
    """What :func:`compare` returns."""

    n: int
    chains: int
    steps: int  # the step budget per chain
    seed: int
    runs: list[SolverRun]
    recommendation: dict
    summary: dict
    curves: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]  # solver -> :func:`curves`


def _censor(steps: np.ndarray, solved: np.ndarray, seconds: np.ndarray, budget: int):
    """Cut chains at ``budget`` steps: solved past it counts unsolved, seconds in proportion."""
    steps = steps.astype(np.int64)
    over = steps > budget
    scale = np.where(over, budget / np.maximum(steps, 1), 1.0)
    return solved & ~over, np.minimum(steps, budget), seconds.astype(np.float64) * scale


def _samples(
    name: str, n: int, options: dict, solved, steps, rows, wall_s, compile_s
) -> solstats.Samples:
    return solstats.Samples(
        n,
        name,
        options,
        solved,
        steps,
        rows.astype(np.int32),
        "steps",
        wall_s,
        compile_s,
        "max_chains",
    )


def run_minconflicts(
    n, chains, steps, seed, quiet, *, init="permutation", tabu=0, max_steps=None
) -> tuple:
    """Min-conflicts (:mod:`jaxqueens.drivers.minconflicts`'s runner) on exactly ``chains`` chains
    (``max_steps`` None: ``solve``'s default restart period)."""
    mcsolve.check_n(n)
    max_steps = min(variants.default_max_steps(n) if max_steps is None else max_steps, steps)
    config = minconflicts.Config(n=n, init=init, tabu=tabu)
    params = minconflicts.default_params(
        config, max_steps=max_steps, max_restarts=-(-steps // max_steps) - 1
    )
    chunk = min(mcsolve.default_chunk(n, chains), chains)  # no short last chunk to compile anew
    t0 = time.perf_counter()
    runner = mcsolve.compile_runner(jax.random.key(seed), config, params, chunk, bounded=True)
    compile_s = time.perf_counter() - t0
    run = driver.run_chains(
        runner,
        n,
        driver.Budget(max_chains=chains),
        chunk,
        what=f"min-conflicts ({init}, tabu {tabu})",
        compile_s=compile_s,
        quiet=quiet,
    )
    options = {
        "init": init,
        "tabu": tabu,
        "max_steps": max_steps,
        "max_restarts": int(params.max_restarts),
    }
    return run, options


def run_anneal(n, chains, steps, seed, quiet, *, method="ta") -> tuple:
    """LS / TA / SA through :func:`jaxqueens.drivers.anneal.anneal` (``steps`` per chain)."""
    res = annealing.anneal(
        n, method, chains, steps, preset=settings.COMPARE_PRESET, seed=seed, quiet=quiet
    )
    s = res.summary
    options = {
        "method": method,
        "preset": s["preset"],
        "steps": res.config.total_steps,
        "rounds": res.config.rounds,
        "neighbour": res.config.neighbour,
        "objective": res.config.objective,
        **{k: s[k] for k in ("q", "init_prob", "alpha", "t_end") if s.get(k) is not None},
    }
    return res.run, options


def _chain_solver(name, family, n, chains, steps, seed, quiet, spec) -> SolverRun:
    fn = run_minconflicts if family == "minconflicts" else run_anneal
    kwargs = {k: v for k, v in spec.items() if k != "family"}
    run, options = fn(n, chains, steps, seed, quiet, **kwargs)
    if run.stopped_by == "interrupted":
        raise KeyboardInterrupt
    solved, spent, seconds = _censor(run.steps, run.solved, run.wall_share, steps)
    samples = _samples(name, n, options, solved, spent, run.rows[solved], run.wall_s, run.compile_s)
    return SolverRun(
        name,
        family,
        options,
        solved,
        spent,
        seconds,
        run.wall_s,
        run.compile_s,
        solstats.analyse(samples),
    )


def _ga_solver(name, n, chains, steps, seed, quiet, spec) -> SolverRun:
    scheme = spec.get("scheme", "steady")
    chosen = settings.compare_ga(name)  # the measured defaults (settings.COMPARE_PRESET)
    pop = chosen["pop"]
    per_generation = 2 if scheme == "steady" else pop
    generations = (steps - pop) // per_generation
    if generations < 1:
        raise QueensError(
            f"--steps {steps} leaves the GA no generation (its initial population alone "
            f"takes {pop} evaluations); give --steps {pop + per_generation} or more"
        )
    res = ga.evolve(
        n,
        pop,
        generations,
        chains,
        encoding=spec["encoding"],
        scheme=scheme,
        preset=settings.COMPARE_PRESET,  # its tournament, rates and elite: those of ``chosen``
        seed=seed,
        quiet=quiet,
    )
    if res.interrupted:
        raise KeyboardInterrupt
    cum = np.cumsum(res.evaluations, axis=0)  # [G+1, T] evaluations up to each generation
    first = res.first_solved
    hit = first >= 0
    used = np.where(hit, cum[np.maximum(first, 0), np.arange(chains)], cum[-1])
    seconds = (res.wall_s + res.init_s) * used / max(1, int(cum[-1].sum()))
    solved, spent, seconds = _censor(used, hit, seconds, steps)
    fit = res.fitness.reshape(chains, -1)
    population = res.population.reshape(chains, -1, n)
    has = (fit == 0).any(axis=1)
    sample = solved & has  # one sample per solved trial: the first solution in its final population
    rows = population[np.arange(chains), np.argmax(fit == 0, axis=1)][sample]
    options = {
        "encoding": spec["encoding"],
        "scheme": scheme,
        "preset": settings.COMPARE_PRESET,
        "pop": pop,
        "tournament": chosen["tournament"],
        "cxpb": chosen["cxpb"],
        "mutpb": chosen["mutpb"],
        "generations": generations,
    }
    samples = _samples(
        name, n, options, sample, spent, rows, res.wall_s + res.init_s, res.compile_s
    )
    return SolverRun(
        name,
        "ga",
        options,
        solved,
        spent,
        seconds,
        res.wall_s + res.init_s,
        res.compile_s,
        solstats.analyse(samples),
    )


def run_solver(
    name: str, n: int, chains: int, steps: int, seed: int = 0, quiet: bool | None = True
) -> SolverRun:
    """One solver of :data:`SOLVERS` on ``chains`` chains with ``steps`` steps each."""
    spec = SOLVERS[name]
    if spec["family"] == "ga":
        return _ga_solver(name, n, chains, steps, seed, quiet, spec)
    return _chain_solver(name, spec["family"], n, chains, steps, seed, quiet, spec)


def ert_ratio_ci(
    a: SolverRun,
    b: SolverRun,
    seed: int,
    resamples: int = BOOTSTRAP,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile bootstrap CI of ``ERT(b) / ERT(a)``, chains resampled within each solver."""
    rng = np.random.default_rng([seed, 0xC0])

    def boot(run: SolverRun) -> np.ndarray:
        k = run.solved.size
        idx = rng.integers(0, k, size=(resamples, k))
        solved = run.solved[idx].sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(
                solved > 0, run.seconds[idx].sum(axis=1) / np.maximum(solved, 1), np.inf
            )

    ea, eb = boot(a), boot(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(np.isinf(ea) & np.isinf(eb), np.nan, eb / ea)
    ratio = np.sort(np.where(np.isnan(ratio), 1.0, ratio))
    tail = (1 - confidence) / 2
    pick = lambda q: float(ratio[min(len(ratio) - 1, int(q * len(ratio)))])
    return pick(tail), pick(1 - tail)


def recommend(runs: list[SolverRun], n: int, steps: int, seed: int) -> dict:
    """The fastest solver by expected seconds per solution (ERT), its margin over the runner-up
    (ERT ratio) and a percentile bootstrap CI of that ratio; a line saying so."""
    ranked = sorted(runs, key=lambda r: r.ert_s)
    best = ranked[0]
    doc: dict[str, Any] = {
        "metric": "expected seconds per solution (ERT: seconds of all chains / chains solved)",
        "ci_method": f"percentile bootstrap over chains, {BOOTSTRAP} resamples, "
        f"{CONFIDENCE:.0%}, of ERT(runner-up) / ERT(fastest)",
        "ranking": [
            {"solver": r.name, "ert_s": r.ert_s if np.isfinite(r.ert_s) else None} for r in ranked
        ],
        "solver": best.name if np.isfinite(best.ert_s) else None,
        "runner_up": None,
        "margin": None,
        "ci": None,
        "significant": None,
    }
    if not np.isfinite(best.ert_s):
        doc["line"] = f"no solver solved a chain of n = {n} within {steps:,} steps; raise --steps"
        return doc
    if len(ranked) == 1:
        doc["line"] = (
            f"only {best.name} was run: {best.ert_s * 1e3:.3g} ms per solution at n = {n}, "
            f"{steps:,} steps per chain"
        )
        return doc
    second = ranked[1]
    margin = second.ert_s / best.ert_s if np.isfinite(second.ert_s) else float("inf")
    lo, hi = ert_ratio_ci(best, second, seed)
    significant = lo > 1.0
    doc.update(
        runner_up=second.name,
        margin=margin if np.isfinite(margin) else None,
        ci=[lo, hi if np.isfinite(hi) else None],
        significant=significant,
    )
    times = lambda x: "inf" if not np.isfinite(x) else f"{x:.2f}"
    doc["line"] = (
        f"recommended for n = {n}, {steps:,} steps per chain: {best.name}, "
        f"{best.ert_s * 1e3:.3g} ms per solution, {times(margin)}x faster than "
        f"{second.name} ({CONFIDENCE:.0%} bootstrap CI of the ratio {times(lo)}-{times(hi)}"
        f"{'' if significant else '; not a clear difference'})"
    )
    return doc


def ecdf(values: np.ndarray, points: int = CURVE_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF of ``values`` [S]: ``(x [P], F(x) = share of values <= x [P])`` at the
    distinct values of up to ``points`` evenly spaced ranks (the largest, F = 1, always kept)."""
    x = np.sort(np.asarray(values))
    if not x.size:
        return x, np.zeros(0)
    keep = np.unique(x[np.linspace(x.size - 1, 0, min(points, x.size)).round().astype(np.int64)])
    return keep, np.searchsorted(x, keep, side="right") / x.size  # ties: F counts every equal value


def success_curve(
    run: SolverRun, budget: int, points: int = CURVE_POINTS
) -> tuple[np.ndarray, np.ndarray]:
    """Share of all chains solved within each step budget: ``(budgets [P], rate [P])``, the
    budgets log-spaced from 1 to ``budget`` (0 included); the same grid for every solver."""
    grid = np.unique(
        np.concatenate([[0], np.round(np.logspace(0, np.log10(max(budget, 1)), points)), [budget]])
    ).astype(np.int64)
    solved_steps = np.sort(run.steps[run.solved])
    return grid, np.searchsorted(solved_steps, grid, side="right") / max(1, run.solved.size)


def curves(run: SolverRun, budget: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The run-time distributions of one solver: ``steps_ecdf`` and ``seconds_ecdf`` over its
    solved chains, ``success`` (rate vs step budget over all chains)."""
    return {
        "steps_ecdf": ecdf(run.steps[run.solved]),
        "seconds_ecdf": ecdf(run.seconds[run.solved]),
        "success": success_curve(run, budget),
    }


def solver_summary(run: SolverRun, budget: int) -> dict:
    """The per-solver figures of ``summary.json`` (and ``summary.csv``)."""
    s = run.stats.summary
    k, solved = run.solved.size, int(run.solved.sum())
    sec = run.seconds[run.solved]
    keys = ("statistic", "dof", "p_value", "valid")
    chi = lambda t: None if t is None else {key: t[key] for key in keys}
    return {
        "solver": run.name,
        "family": run.family,
        "options": run.options,
        "chains": int(k),
        "solved": solved,
        "success_rate": solved / k if k else None,
        "step_budget": budget,
        "steps": solstats.step_quantiles(run.steps[run.solved]),
        "seconds": {
            "mean": float(sec.mean()) if sec.size else None,
            "median": float(np.median(sec)) if sec.size else None,
            "p90": float(np.percentile(sec, 90)) if sec.size else None,
        },
        "ert_s": run.ert_s if np.isfinite(run.ert_s) else None,
        "solutions_per_s": solved / run.wall_s
        if run.wall_s > 0
        else None,  # as run (GA: every generation)
        "wall_s": run.wall_s,
        "compile_s": run.compile_s,
        "distinct_solutions": s["distinct_solutions"],
        "fundamental_classes": s["fundamental_classes"],
        "exact_solutions": s["exact_solutions"],
        "exact_classes": s["exact_classes"],
        "chi2_solutions": chi(s["chi2_solutions"]),
        "chi2_classes": chi(s["chi2_classes"]),
    }


def compare(
    n: int = 8,
    chains: int = 1000,
    *,
    solvers="all",
    steps: int = DEFAULT_STEPS,
    seed: int = 0,
    quiet: bool | None = True,
    announce: Callable[[str], None] | None = None,
) -> CompareResult:
    """Run each of ``solvers`` on the same ``chains`` chains of ``n``, ``steps`` steps each.

    Args:
      n: board size (>= 4).
      chains: chains (GA: trials) per solver.
      solvers: names of :data:`SOLVERS`, a comma list, or "all".
      steps: the step budget per chain (see the module doc for what a step is per solver).
      seed: random seed, the same for every solver.
      quiet: no progress line (None: a progress line on a terminal only).
      announce: called with a line as each solver starts.

    Returns:
      CompareResult; every solution counted has passed the independent checker.
    """
    # every solver's setting checked before the first runs (a budget too small for the GA is
    # refused up front, not after the min-conflicts solvers have run)
    n, chains, names, steps, seed = settings.check_compare(n, chains, solvers, steps, seed)
    runs = []
    for i, name in enumerate(names):
        if announce is not None:
            announce(f"[{i + 1}/{len(names)}] {name}")
        runs.append(run_solver(name, n, chains, steps, seed, quiet))
    rec = recommend(runs, n, steps, seed)
    summary = {
        "n": n,
        "chains": chains,
        "step_budget": steps,
        "seed": seed,
        "solvers": names,
        "budget_note": "steps per chain: min-conflicts moves, LS/TA/SA neighbour moves, GA "
        "fitness evaluations; solvers ranked by seconds per solution",
        "defaults_note": DEFAULTS_NOTE,
        "backend": jax.default_backend(),
        "devices": local_device_count(),
        "recommendation": rec,
        "per_solver": [solver_summary(r, steps) for r in runs],
    }
    return CompareResult(
        n, chains, steps, seed, runs, rec, summary, {r.name: curves(r, steps) for r in runs}
    )
