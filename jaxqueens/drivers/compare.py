"""`jaxqueens.compare`: several solvers on the same n, step budget and seed, side by side.

Every solver runs the same chains, each with the same step budget, and is measured as in the
stochastic local search literature (Hoos & Stuetzle, *Stochastic Local Search*, 2004, ch. 4):
run-time distributions of steps and seconds censored at the budget (`rtd`), the expected run
time with its bootstrap CI (`ert_ci`), the distinct solutions found and the sampling-bias test.
The budget is in steps and the ranking in expected seconds per solution (`recommend`); `compare`
says how each solver meets the budget and what the figures mean.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from jaxqueens.core import rng
from jaxqueens.drivers import anneal as annealing
from jaxqueens.drivers import chains as driver
from jaxqueens.drivers import ga, settings
from jaxqueens.drivers import minconflicts as mcsolve
from jaxqueens.drivers import stats as solstats
from jaxqueens.errors import QueensError
from jaxqueens.parallel.devices import local_device_count
from jaxqueens.solvers import ga_crossover, ga_mutation, minconflicts, variants

TABU = settings.COMPARE_TABU
"""Plateau tabu tenure of the `mc-tabu` solver."""

SOLVERS: dict[str, dict] = settings.COMPARE_SOLVERS
"""Every solver `compare` knows, by name: the family and its options (the families'
defaults for the rest); JAX-free in `settings`, with each solver's least
step budget (`least_steps`)."""

DEFAULT_STEPS = 10_000
"""Step budget per chain (anneal's default)."""
DEFAULTS_NOTE = (
    "every solver runs at its measured-best defaults: min-conflicts' restart period from "
    "scripts/bench_restarts.py (benchmarks/results/restarts-cpu.json), the LS/TA/SA settings and "
    "the GA's from scripts/tune_defaults.py at this command's default budget of 10,000 steps, "
    "n = 16 and 64 (benchmarks/results/tune-anneal-cpu.json, tune-ga-cpu.json)"
)
"""What `summary.json` and the command's output say about the settings compared."""
SECONDS_NOTE = (
    "seconds: kernel time of the timed calls, no compilation (every kernel call size is "
    "compiled before timing), shared among a call's chains by steps; a chain's seconds run to its "
    "first solution or the budget. The GA's trials run in lockstep until the last of them has "
    "solved (or to the budget): its wall_s and solutions_per_s are as run, its seconds and ERT "
    "count each trial up to its first solution. "
    "ert_s_ci: bootstrap over chains (chain-to-chain variation); ert_s_spread: lowest and highest "
    "ERT over the timed repeats (timing noise between runs)"
)
"""What `summary.json` says the seconds cover."""
BOOTSTRAP = 2000
"""Bootstrap resamples of the recommendation's CI."""
CONFIDENCE = settings.CONFIDENCE
CURVE_POINTS = 400
"""Points kept per solver in an ECDF (evenly spaced ranks, the last included) and budgets in the
success-rate curve (log-spaced)."""


parse_solvers = settings.parse_solvers


@dataclasses.dataclass
class SolverRun:
    """One solver's chains, censored at the step budget (host arrays).

    Attributes:
      name: the solver's name (`SOLVERS`).
      family: "minconflicts", "anneal" or "ga"
      options: its effective settings.
      solved: [K] bool: solved within the budget
      steps: [K] int64 steps to solution (solved) or spent (unsolved, <= budget)
      seconds: [K] float64 seconds to solution (solved) or spent
      wall_s: the solver's kernel time as run, compilation excluded
      compile_s: compilation seconds.
      stats: distinct, fundamental, chi-square (one sample per solved chain)
      budget: the solver's step budget per chain (None: the most steps spent)
      restarts: [K] int64 restarts (min-conflicts), None: never restarts
      best_pairs: [K] float64 best board's attacking pairs, NaN: unknown
      repeat_ert_s: [R] ERT of each timed repeat (`seconds`: their mean)
    """

    name: str
    family: str  # "minconflicts", "anneal" or "ga"
    options: dict
    solved: np.ndarray  # [K] bool: solved within the budget
    steps: np.ndarray  # [K] int64 steps to solution (solved) or spent (unsolved, <= budget)
    seconds: np.ndarray  # [K] float64 seconds to solution (solved) or spent
    wall_s: float  # the solver's kernel time as run, compilation excluded
    compile_s: float
    stats: solstats.StatsResult  # distinct, fundamental, chi-square (one sample per solved chain)
    budget: int | None = None  # the solver's step budget per chain (None: the most steps spent)
    restarts: np.ndarray | None = None  # [K] int64 restarts (min-conflicts), None: never restarts
    best_pairs: np.ndarray | None = None  # [K] float64 best board's attacking pairs, NaN: unknown
    repeat_ert_s: tuple[float, ...] = ()  # [R] ERT of each timed repeat (`seconds`: their mean)

    @property
    def steps_budget(self) -> int:
        """The step budget per chain the runs are censored at."""
        return int(self.budget if self.budget is not None else self.steps.max(initial=0))

    @property
    def ert_spread(self) -> tuple[float, float] | None:
        """(lowest, highest) ERT over the timed repeats; None with one repeat."""
        if len(self.repeat_ert_s) < 2:
            return None
        return min(self.repeat_ert_s), max(self.repeat_ert_s)

    def same_runs(self, other: SolverRun) -> bool:
        """Every chain ran the same: the same outcome, steps, restarts and best board's
        attacking pairs at the same budget (one method under two names; only seconds differ)."""
        same = lambda a, b: (
            (a is None) == (b is None)
            and (a is None or np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
        )
        return (
            self.steps_budget == other.steps_budget
            and self.solved.shape == other.solved.shape
            and all(
                same(getattr(self, f), getattr(other, f))
                for f in ("solved", "steps", "restarts", "best_pairs")
            )
        )

    @property
    def ert_s(self) -> float:
        """Expected seconds per solution: all chains' seconds over the chains solved (inf if
        none)."""
        solved = int(self.solved.sum())
        return float(self.seconds.sum()) / solved if solved else float("inf")

    @property
    def ert_steps(self) -> float:
        """Expected steps per solution (Hoos & Stuetzle's ERT in steps, machine-independent):
        all chains' steps over the chains solved (inf if none)."""
        solved = int(self.solved.sum())
        return float(self.steps.sum()) / solved if solved else float("inf")


@dataclasses.dataclass
class CompareResult:
    """What `compare` returns.

    Attributes:
      n: board size.
      chains: chains (GA: trials) per solver.
      steps: the step budget per chain
      seed: the random seed, the same for every solver.
      runs: one `SolverRun` per solver run.
      recommendation: the fastest solver by ERT and how sure the ranking is (`recommend`).
      summary: every solver's figures (what `summary.json` holds).
      curves: solver -> `curves`
      missing: not run: interrupted first
    """

    n: int
    chains: int
    steps: int  # the step budget per chain
    seed: int
    runs: list[SolverRun]
    recommendation: dict
    summary: dict
    curves: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]  # solver -> `curves`
    missing: list[str] = dataclasses.field(default_factory=list)  # not run: interrupted first


def _censor(steps: np.ndarray, solved: np.ndarray, seconds: np.ndarray, budget: int):
    """Cut chains at `budget` steps: solved past it counts unsolved, seconds in proportion."""
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
    """Min-conflicts (`minconflicts`'s runner) on exactly `chains` chains
    (`max_steps` None: `solve`'s default restart period)."""
    mcsolve.check_n(n)
    max_steps = min(variants.default_max_steps(n) if max_steps is None else max_steps, steps)
    config = minconflicts.Config(n=n, init=init, tabu=tabu)
    params = minconflicts.default_params(
        config, max_steps=max_steps, max_restarts=-(-steps // max_steps) - 1
    )
    chunk = min(mcsolve.default_chunk(n, chains), chains)
    t0 = time.perf_counter()
    runner = mcsolve.compile_runner(
        rng.seed_key(seed), config, params, chunk, bounded=True, total=chains
    )
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


def run_anneal(n, chains, steps, seed, quiet, *, method="ta", **given) -> tuple:
    """LS / TA / SA through `anneal` (`steps` per chain;
    `given`: the solver's own settings, `COMPARE_KEYS`)."""
    given.setdefault("preset", settings.COMPARE_PRESET)
    res = annealing.anneal(n, method, chains, steps, seed=seed, quiet=quiet, **given)
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
    if res.config.neighbour == "step":  # (the swap neighbour has no step or edge)
        options.update(step=s["step"], edge=s["edge"])
    if method == "sa":
        options["t0"] = s["t0"]
    options["schedule"] = s["schedule"]  # the calibrated thresholds/temperatures, per round
    return res.run, options


def _chain_solver(name, family, n, chains, seed, quiet, spec, own) -> SolverRun:
    budget = own["steps"]
    kwargs = {k: v for k, v in spec.items() if k != "family"}
    if family == "minconflicts":
        if own.get("tabu") is not None:
            kwargs["tabu"] = own["tabu"]
        run, options = run_minconflicts(
            n, chains, budget, seed, quiet, max_steps=own.get("maxsteps"), **kwargs
        )
    else:
        given = {k: v for k, v in own.items() if k != "steps"}
        run, options = run_anneal(n, chains, budget, seed, quiet, **kwargs, **given)
    options["steps_budget"] = budget
    if run.stopped_by == "interrupted":
        raise KeyboardInterrupt
    solved, spent, seconds = _censor(run.steps, run.solved, run.wall_share, budget)
    samples = _samples(name, n, options, solved, spent, run.rows[solved], run.wall_s, run.compile_s)
    # an unsolved chain's best board is known where the solver keeps it (annealing, counted in
    # attacking pairs; min-conflicts here keeps only its last board) within the budget
    kept = family != "minconflicts" and run.best_unit == "attacking_pairs"
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
        budget,
        restarts=run.restarts.astype(np.int64) if family == "minconflicts" else None,
        best_pairs=_best_pairs(solved, run.best if kept else None, run.steps, budget),
    )


def _best_pairs(solved: np.ndarray, best, spent: np.ndarray, budget: int) -> np.ndarray:
    """[K] runs.csv's best_attacking_pairs of censored runs: 0 where solved within the budget,
    `best` (attacking pairs, None: not counted) where the run ended within it, else NaN."""
    known = np.asarray(spent) <= budget
    if best is None:
        known = np.zeros_like(known)
        best = np.zeros(len(solved))
    return np.where(solved, 0.0, np.where(known, np.asarray(best, np.float64), np.nan))


GA_PASSED = ("crossover", "mutation", "indpb", "elite")
"""GA settings passed to `evolve` only when the solver gives them (its
defaults otherwise)."""


def _ga_solver(name, n, chains, seed, quiet, spec, own) -> SolverRun:
    steps = own["steps"]
    chosen = settings.compare_ga(name, own)  # the preset's, overridden by the solver's own
    scheme, pop = chosen["scheme"], chosen["pop"]
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
        preset=chosen["preset"],
        tournament=chosen["tournament"],
        cxpb=chosen["cxpb"],
        mutpb=chosen["mutpb"],
        **{k: own[k] for k in GA_PASSED if own.get(k) is not None},
        seed=seed,
        quiet=quiet,
        records="summary",  # per-trial totals: no [G+1, T] records (10,000 trials fit)
        until_solved=True,  # the lockstep trials end with the slowest trial's first solution
    )
    if res.interrupted:
        raise KeyboardInterrupt
    hit = res.first_solved >= 0  # the default fitness: a best of 0 is the first solution
    used = np.where(hit, res.evals_at_first, res.evals_total)  # evaluations up to it, or all
    seconds = (res.wall_s + res.init_s) * used / max(1, int(res.evals_total.sum()))
    solved, spent, seconds = _censor(used, hit, seconds, steps)
    fit = res.fitness.reshape(chains, -1)
    population = res.population.reshape(chains, -1, n)
    has = (fit == 0).any(axis=1)
    sample = solved & has  # one sample per solved trial: the first solution in its final population
    rows = population[np.arange(chains), np.argmax(fit == 0, axis=1)][sample]
    c = res.config
    options = {
        "encoding": spec["encoding"],
        "scheme": scheme,
        "preset": chosen["preset"],
        "pop": pop,
        "tournament": int(c.tournament),
        "cxpb": res.params["cxpb"],
        "mutpb": res.params["mutpb"],
        "indpb": res.params["indpb"],
        "elite": int(c.elite),
        "crossover": c.crossover,
        "mutation": c.mutation,
        "generations": generations,
        "steps_budget": steps,
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
        steps,
        best_pairs=_best_pairs(solved, fit.min(axis=1), used, steps),  # the last generation's
    )


def run_solver(
    name: str,
    n: int,
    chains: int,
    steps: int,
    seed: int = 0,
    quiet: bool | None = True,
    own: dict | None = None,
) -> SolverRun:
    """One solver of `SOLVERS` on `chains` chains with `steps` steps each (`own`:
    its settings, `compare_settings`; its `steps`, when
    given, replaces `steps`)."""
    spec = SOLVERS[name]
    own = {"steps": steps, **(own or {})}
    if spec["family"] == "ga":
        return _ga_solver(name, n, chains, seed, quiet, spec, own)
    return _chain_solver(name, spec["family"], n, chains, seed, quiet, spec, own)


def run_repeats(
    name: str,
    n: int,
    chains: int,
    steps: int,
    seed: int = 0,
    quiet: bool | None = True,
    own: dict | None = None,
    repeats: int = 1,
) -> SolverRun:
    """`run_solver` `repeats` times: the same chains each time (the same seed), timed
    anew. Returns the first run with each chain's seconds the mean over the repeats and
    `repeat_ert_s` each repeat's ERT.

    Args:
      name: a solver of `SOLVERS`.
      n: board size.
      chains: chains (GA: trials).
      steps: the step budget per chain.
      seed: random seed.
      quiet: no progress line.
      own: the solver's own settings (`run_solver`).
      repeats: timed runs (>= 1).

    Returns:
      The solver's `SolverRun`.
    """
    runs = [run_solver(name, n, chains, steps, seed, quiet, own) for _ in range(repeats)]
    first = runs[0]
    if not all(first.same_runs(r) for r in runs[1:]):
        raise QueensError(
            f"{name}: its repeats with seed {seed} ran different chains (a kernel that is not "
            "deterministic on this backend); compare with --repeats 1"
        )
    return dataclasses.replace(
        first,
        seconds=np.mean([r.seconds for r in runs], axis=0),
        wall_s=float(np.mean([r.wall_s for r in runs])),
        repeat_ert_s=tuple(r.ert_s for r in runs),
    )


def _boot_indices(rng: np.random.Generator, k: int, resamples: int) -> np.ndarray:
    return rng.integers(0, k, size=(resamples, k))


def _boot_ert(values: np.ndarray, solved: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """ERT of each bootstrap resample `idx` [B, K]: the sum of `values` over the chains
    solved (inf where a resample solved none)."""
    hits = solved[idx].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(hits > 0, values[idx].sum(axis=1) / np.maximum(hits, 1), np.inf)


def _percentiles(values: np.ndarray, confidence: float) -> tuple[float, float]:
    ordered = np.sort(values)
    tail = (1 - confidence) / 2
    pick = lambda q: float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])
    return pick(tail), pick(1 - tail)


def ert_ratio_ci(
    a: SolverRun,
    b: SolverRun,
    seed: int,
    resamples: int = BOOTSTRAP,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile bootstrap CI of `ERT(b) / ERT(a)`, chains resampled within each solver (the
    upper end inf when `b` solved nothing in some resamples)."""
    rng = np.random.default_rng([seed, 0xC0])
    ea = _boot_ert(a.seconds, a.solved, _boot_indices(rng, a.solved.size, resamples))
    eb = _boot_ert(b.seconds, b.solved, _boot_indices(rng, b.solved.size, resamples))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(np.isinf(ea) & np.isinf(eb), np.nan, eb / ea)
    return _percentiles(np.where(np.isnan(ratio), 1.0, ratio), confidence)


def ert_ci(
    run: SolverRun,
    seed: int,
    resamples: int = BOOTSTRAP,
    confidence: float = CONFIDENCE,
) -> dict[str, Any]:
    """ERT in seconds and in steps with percentile bootstrap CIs over the chains (strict JSON:
    a bound that does not exist is None, with the reason in `note`)."""
    solved, k = int(run.solved.sum()), run.solved.size
    doc: dict[str, Any] = {
        "ert_s": None,
        "ert_s_ci": None,
        "ert_steps": None,
        "ert_steps_ci": None,
        "note": None,
    }
    if not solved:
        doc["note"] = not_solved(run)
        return doc
    rng = np.random.default_rng([seed, 0xE7, k])
    idx = _boot_indices(rng, k, resamples)
    for key, values, ert in (
        ("ert_s", run.seconds, run.ert_s),
        ("ert_steps", run.steps.astype(np.float64), run.ert_steps),
    ):
        lo, hi = _percentiles(_boot_ert(values, run.solved, idx), confidence)
        doc[key] = ert
        doc[f"{key}_ci"] = [lo, hi if np.isfinite(hi) else None]
        if not np.isfinite(hi):
            doc["note"] = (
                f"no upper bound: more than {(1 - confidence) / 2:.1%} of the resamples of "
                f"{solved} solved in {k} chains solved none"
            )
    return doc


def not_solved(run: SolverRun) -> str:
    """The words for a solver that solved no chain: "not solved (0 of K chains within B steps)"."""
    return f"not solved (0 of {run.solved.size:,} chains within {run.steps_budget:,} steps)"


def _ratio_words(x: float) -> str:
    return f"{x:.2f}" if np.isfinite(x) else "unbounded"


def recommend(runs: list[SolverRun], n: int, steps: int, seed: int) -> dict:
    """The fastest solver by expected seconds per solution (ERT), its margin over the runner-up
    (ERT ratio) and a percentile bootstrap CI of that ratio; a line saying so, in words without
    infinities (a solver that solved nothing is "not solved", an unbounded end of the CI is
    "unbounded").

    A solver whose chains ran exactly as a faster one's (`SolverRun.same_runs`: one method
    under two names) is not ranked apart from it (`same_runs`). With several timed repeats
    the difference is significant only when the bootstrap CI excludes 1 and the two solvers'
    ERTs over the repeats do not overlap; with one repeat, by the bootstrap alone (it covers the
    chain-to-chain variation, not the timing noise between runs). The document is strict JSON:
    no inf or NaN, None with a reason instead.

    Args:
      runs: the solvers' runs.
      n: board size.
      steps: the step budget per chain.
      seed: the comparison's seed (the bootstrap's too).

    Returns:
      The recommendation document (`summary.json`'s `recommendation`), its `line` included.
    """
    ranked = sorted(runs, key=lambda r: (r.ert_s, r.name))
    solving: list[SolverRun] = []
    same_runs: dict[str, str] = {}  # solver -> the faster solver whose chains it ran exactly
    for r in (r for r in ranked if np.isfinite(r.ert_s)):
        twin = next((s for s in solving if r.same_runs(s)), None)
        if twin is None:
            solving.append(r)
        else:
            same_runs[r.name] = twin.name
    unsolved = [r for r in ranked if not np.isfinite(r.ert_s)]
    repeats = min((len(r.repeat_ert_s) for r in runs), default=1) or 1
    doc: dict[str, Any] = {
        "metric": "expected seconds per solution (ERT: seconds of all chains / chains solved)",
        "ci_method": f"percentile bootstrap over chains, {BOOTSTRAP} resamples, "
        f"{CONFIDENCE:.0%}, of ERT(runner-up) / ERT(fastest)",
        "ranking": [
            {
                "solver": r.name,
                "ert_s": r.ert_s if np.isfinite(r.ert_s) else None,
                "solved": int(r.solved.sum()),
                "note": None if np.isfinite(r.ert_s) else not_solved(r),
            }
            for r in ranked
        ],
        "not_solved": [r.name for r in unsolved],
        "same_runs": same_runs,
        "repeats": repeats,
        "solver": solving[0].name if solving else None,
        "runner_up": None,
        "margin": None,
        "ci": None,
        "repeat_spread": None,
        "significant": None,
        "significant_by": None,
        "note": None,
    }
    unsolved_words = (
        f"; not solved: {', '.join(r.name for r in unsolved)} (no chain within its budget)"
        if unsolved
        else ""
    )
    if same_runs:
        unsolved_words = (
            "; "
            + "; ".join(
                f"{a} ran the same chains as {b} (every chain's steps and outcome equal: one "
                "method under two names, not ranked apart on timing noise)"
                for a, b in same_runs.items()
            )
            + unsolved_words
        )
    if not solving:
        doc["note"] = "no solver solved a chain: no ERT, no ranking"
        doc["line"] = (
            f"no solver solved a chain of n = {n} within its budget ({steps:,} steps per chain "
            "unless a solver's own steps say otherwise); raise --steps or the solvers' steps"
        )
        return doc
    best = solving[0]
    own = [
        f"{r.name} {r.steps_budget:,}" for r in runs if r.budget is not None and r.budget != steps
    ]
    budget = f"{steps:,} steps per chain" + (f" (own budgets: {', '.join(own)})" if own else "")
    if len(solving) == 1:
        if same_runs and not unsolved:
            doc["note"] = "the solvers ran identical chains: no ranking"
            doc["line"] = (
                f"not ranked for n = {n}, {budget}: {best.ert_s * 1e3:.3g} ms per solution"
                f"{unsolved_words}"
            )
            return doc
        doc["note"] = (
            "no runner-up solved a chain: no ratio" if unsolved else "only one solver was run"
        )
        doc["line"] = (
            f"recommended for n = {n}, {budget}: {best.name}, {best.ert_s * 1e3:.3g} ms per "
            f"solution, the only {'method' if same_runs else 'solver'} that solved a chain"
            f"{unsolved_words}"
            if unsolved
            else f"only {best.name} was run: {best.ert_s * 1e3:.3g} ms per solution at n = {n}, "
            f"{budget}"
        )
        return doc
    second = solving[1]
    margin = second.ert_s / best.ert_s
    lo, hi = ert_ratio_ci(best, second, seed)
    spread = (best.ert_spread, second.ert_spread)
    by_repeats = None  # one repeat: the timing noise between runs is not measured
    if spread[0] is not None and spread[1] is not None:
        by_repeats = spread[0][1] < spread[1][0]  # the best's slowest repeat beats all the other's
    significant = lo > 1.0 and by_repeats is not False
    doc.update(
        runner_up=second.name,
        margin=margin,
        ci=[lo, hi if np.isfinite(hi) else None],
        repeat_spread={
            r.name: None if s is None else list(s)
            for r, s in zip((best, second), spread, strict=True)
        },
        significant=significant,
        significant_by={"bootstrap": lo > 1.0, "repeats": by_repeats},
    )
    if not np.isfinite(hi):
        doc["note"] = f"the CI has no upper bound: {second.name} solved no chain in some resamples"
    if by_repeats is None:
        basis = "; one timed repeat: timing noise not measured, --repeats 2 or more"
    else:
        basis = f"; the ERTs of {repeats} repeats {'do not overlap' if by_repeats else 'overlap'}"
    doc["line"] = (
        f"recommended for n = {n}, {budget}: {best.name}, "
        f"{best.ert_s * 1e3:.3g} ms per solution, {margin:.2f}x faster than "
        f"{second.name} ({CONFIDENCE:.0%} bootstrap CI of the ratio {_ratio_words(lo)} to "
        f"{_ratio_words(hi)}{basis}{'' if significant else '; not a clear difference'})"
        f"{unsolved_words}"
    )
    return doc


def ecdf(values: np.ndarray, points: int = CURVE_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF of `values` [S]: `(x [P], F(x) = share of values <= x [P])` at the
    distinct values of up to `points` evenly spaced ranks (the largest, F = 1, always kept)."""
    x = np.sort(np.asarray(values))
    if not x.size:
        return x, np.zeros(0)
    keep = np.unique(x[np.linspace(x.size - 1, 0, min(points, x.size)).round().astype(np.int64)])
    return keep, np.searchsorted(x, keep, side="right") / x.size  # ties: F counts every equal value


def rtd(
    values: np.ndarray, solved: np.ndarray, censor: float, points: int = CURVE_POINTS
) -> tuple[np.ndarray, np.ndarray]:
    """Unconditional run-time distribution (Hoos & Stuetzle): `(t [P], fraction of ALL runs
    solved by t [P])`, from `values` [K] (steps or seconds to solution, or spent) and
    `solved` [K], censored at `censor` (the budget: the curve ends there, flat at the
    success rate; no run is known to solve later). Starts at `(0, fraction solved at 0)`."""
    values, solved = np.asarray(values), np.asarray(solved, bool)
    k = max(1, solved.size)
    x, f = ecdf(values[solved], points)
    f = f * (solved.sum() / k)
    if not x.size or x[0] > 0:  # the curve starts at t = 0
        x, f = np.concatenate([np.zeros(1, x.dtype), x]), np.concatenate([[0.0], f])
    if x[-1] < censor:
        x = np.append(x, censor)
        f = np.append(f, f[-1] if f.size else 0.0)
    return x, f


def success_curve(
    run: SolverRun, budget: int, points: int = CURVE_POINTS
) -> tuple[np.ndarray, np.ndarray]:
    """Share of all chains solved within each step budget: `(budgets [P], rate [P])`, the
    budgets log-spaced from 1 to `budget` (0 included); the same grid for every solver with
    the same budget (the unconditional RTD in steps, sampled on a grid)."""
    grid = np.unique(
        np.concatenate([[0], np.round(np.logspace(0, np.log10(max(budget, 1)), points)), [budget]])
    ).astype(np.int64)
    solved_steps = np.sort(run.steps[run.solved])
    return grid, np.searchsorted(solved_steps, grid, side="right") / max(1, run.solved.size)


def curves(run: SolverRun, budget: int | None = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The run-time distributions of one solver: the unconditional ones, censored at the
    budget (`rtd_steps`, `rtd_seconds`: fraction of all chains solved by t; the seconds
    censored at the longest chain's), the conditional ones over its solved chains
    (`steps_ecdf`, `seconds_ecdf`) and `success` (rate vs step budget over all chains, on
    a log grid). `budget`: the solver's step budget (default its own)."""
    budget = run.steps_budget if budget is None else budget
    return {
        "rtd_steps": rtd(run.steps, run.solved, budget),
        "rtd_seconds": rtd(run.seconds, run.solved, float(run.seconds.max(initial=0.0))),
        "steps_ecdf": ecdf(run.steps[run.solved]),
        "seconds_ecdf": ecdf(run.seconds[run.solved]),
        "success": success_curve(run, budget),
    }


def _finite(x) -> float | None:
    return float(x) if x is not None and np.isfinite(x) else None


def solver_summary(run: SolverRun, budget: int, seed: int = 0) -> dict:
    """The per-solver figures of `summary.json` (and `summary.csv`): strict JSON (a figure
    that does not exist is None, with the reason in `note`)."""
    s = run.stats.summary
    k, solved = run.solved.size, int(run.solved.sum())
    sec = run.seconds[run.solved]
    keys = ("statistic", "dof", "p_value", "valid")
    chi = lambda t: None if t is None else {key: t[key] for key in keys}
    ert = ert_ci(run, seed)
    return {
        "solver": run.name,
        "family": run.family,
        "options": run.options,
        "chains": int(k),
        "solved": solved,
        "success_rate": solved / k if k else None,
        "steps_budget": int(run.budget if run.budget is not None else budget),
        "steps": solstats.step_quantiles(run.steps[run.solved]),
        "seconds": {
            "mean": float(sec.mean()) if sec.size else None,
            "median": float(np.median(sec)) if sec.size else None,
            "p90": float(np.percentile(sec, 90)) if sec.size else None,
        },
        "ert_s": ert["ert_s"],
        "ert_s_ci": ert["ert_s_ci"],
        "ert_steps": ert["ert_steps"],
        "ert_steps_ci": ert["ert_steps_ci"],
        "ert_note": ert["note"],
        "ert_s_repeats": [_finite(x) for x in run.repeat_ert_s] or None,
        "ert_s_spread": None if run.ert_spread is None else [_finite(x) for x in run.ert_spread],
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


def strict(doc: Any) -> Any:
    """`doc` with every value strict JSON holds: NumPy scalars as Python numbers, a non-finite
    float as None (the figures that may be non-finite carry their reason beside them)."""
    if isinstance(doc, dict):
        return {str(k): strict(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [strict(v) for v in doc]
    if isinstance(doc, (bool, np.bool_)):
        return bool(doc)
    if isinstance(doc, (int, np.integer)):
        return int(doc)
    if isinstance(doc, (float, np.floating)):
        return _finite(doc)
    return doc


def compare(
    n: int = 8,
    chains: int = 1000,
    *,
    solvers="all",
    steps: int = DEFAULT_STEPS,
    seed: int = 0,
    quiet: bool | None = True,
    announce: Callable[[str], None] | None = None,
    settings_of: dict[str, dict[str, Any]] | None = None,
    repeats: int = 1,
) -> CompareResult:
    """Run each of `solvers` on the same `chains` chains of `n`, `steps` steps each.

    Every solver runs the same chains (chain i seeded from `fold_in` of the seed's key), each
    with the same step budget unless `settings_of` gives a solver its own. A step is one
    candidate board a solver looks at: one min-conflicts repair move, one LS/TA/SA neighbour
    move, one GA fitness evaluation (DEAP's count, the initial population included). A step
    budget is the same for every solver and reproducible; since a step costs very different
    time in each solver, the recommendation compares expected seconds per solution (ERT: seconds
    spent by all chains, solved or not, over the chains solved), with a percentile bootstrap CI
    of the ratio runner-up / fastest over the chains (`recommend`). A solver that solved nothing
    is "not solved" in every figure, line and table.

    How each solver meets the budget exactly: min-conflicts restarts every `max_steps` steps
    (its default restart period, or the budget if smaller) with up to
    `ceil(budget / max_steps) - 1` restarts, and a chain solved past the budget is counted
    unsolved, its seconds cut in proportion; LS/TA/SA get the budget as their `steps`; a GA
    trial evolves `(budget - pop) // 2` steady-state or `(budget - pop) // pop` generational
    generations, censored the same way, and its seconds are its share of the call's time by
    evaluations.

    Seconds per chain are the chunk's kernel time shared by steps, compilation excluded. The
    bootstrap CI covers the chain-to-chain variation of the run times, not the timing noise of a
    busy machine: `repeats` times each solver's same chains again, and a difference is called
    significant only when the bootstrap and the repeats agree. Two solvers whose chains ran
    identically are not ranked apart.

    Args:
      n: board size (>= 4).
      chains: chains (GA: trials) per solver.
      solvers: names of `SOLVERS`, a comma list, or "all".
      steps: the step budget per chain (what a step is per solver: above).
      seed: random seed, the same for every solver.
      quiet: no progress line (None: a progress line on a terminal only).
      announce: called with a line as each solver starts.
      settings_of: each solver's own settings, by name (`{"sa": {"rounds": 200, "steps":
        50_000}, "ga-permutation": {"pop": 20, "generations": 20_000}}`): the keys of
        `COMPARE_KEYS` for its family, its own `steps`
        included (GA: or `generations`); checked for every solver before the first runs.
      repeats: timed runs of each solver (the same chains; `run_repeats`): the spread of
        their ERTs is reported beside the bootstrap CI, and a difference is significant only
        when both say so (`recommend`).

    Returns:
      CompareResult; every solution counted has passed the independent checker. Ctrl-C (or
      SIGTERM) during a solver stops the comparison there: the solvers finished before it are
      returned, the rest named in `missing` (KeyboardInterrupt when none had finished).

    Raises:
      QueensError: an unknown solver, an argument out of range, or a setting a solver does not
        use, naming it.
    """
    # every solver's setting checked before the first runs (a budget too small for the GA is
    # refused up front, not after the min-conflicts solvers have run)
    n, chains, names, steps, seed, repeats = settings.check_compare(
        n, chains, solvers, steps, seed, settings_of, repeats
    )
    own = settings.compare_settings(n, names, steps, settings_of)
    for name in names:  # the GA's own checks (crossover and mutation names), before any run
        if SOLVERS[name]["family"] == "ga":
            _check_ga(name, n, own[name])
    runs, missing = _run_all(names, n, chains, steps, seed, quiet, own, repeats, announce)
    rec = recommend(runs, n, steps, seed)
    summary = _summary(n, chains, steps, seed, repeats, runs, missing, settings_of, own, rec)
    return CompareResult(
        n,
        chains,
        steps,
        seed,
        runs,
        rec,
        strict(summary),
        {r.name: curves(r) for r in runs},
        missing,
    )


def _run_all(
    names: list[str],
    n: int,
    chains: int,
    steps: int,
    seed: int,
    quiet: bool | None,
    own: dict[str, dict[str, Any]],
    repeats: int,
    announce: Callable[[str], None] | None,
) -> tuple[list[SolverRun], list[str]]:
    """Run every solver in turn: (the runs finished, the solvers a Ctrl-C left out)."""
    runs: list[SolverRun] = []
    missing: list[str] = []
    for i, name in enumerate(names):
        if announce is not None:
            announce(f"[{i + 1}/{len(names)}] {name}{_workload(name, chains, own[name], repeats)}")
        try:
            runs.append(run_repeats(name, n, chains, steps, seed, quiet, own[name], repeats))
        except KeyboardInterrupt:
            if not runs:
                raise
            missing = names[i:]
            break
    return runs, missing


def _summary(
    n: int,
    chains: int,
    steps: int,
    seed: int,
    repeats: int,
    runs: list[SolverRun],
    missing: list[str],
    settings_of: dict[str, dict[str, Any]] | None,
    own: dict[str, dict[str, Any]],
    rec: dict,
) -> dict:
    """`compare`'s summary (before `strict`): the run's settings, notes, recommendation and
    each solver's figures."""
    budgets = {r.name: r.steps_budget for r in runs}
    summary = {
        "n": n,
        "chains": chains,
        "steps_budget": steps,
        "seed": seed,
        "repeats": repeats,
        "solvers": [r.name for r in runs],
        **({"missing_solvers": missing, "stopped_by": "interrupted"} if missing else {}),
        "settings_given": {name: dict(v) for name, v in (settings_of or {}).items()},
        "steps_budgets": budgets,
        "budget_note": "steps per chain: min-conflicts moves, LS/TA/SA neighbour moves, GA "
        "fitness evaluations; solvers ranked by seconds per solution"
        + (
            "; the solvers' own budgets differ (steps_budgets)"
            if len(set(budgets.values())) > 1
            else ""
        ),
        "seconds_note": SECONDS_NOTE,
        "rtd_note": "rtd_steps / rtd_seconds: fraction of ALL chains solved by t, censored at the "
        "budget (Hoos & Stuetzle); steps_ecdf / seconds_ecdf: conditional on success (fraction "
        "of the solved chains)",
        "defaults_note": DEFAULTS_NOTE
        + ("; settings given per solver replace them (options in per_solver)" if own else ""),
        "backend": jax.default_backend(),
        "devices": local_device_count(),
        "recommendation": rec,
        "per_solver": [solver_summary(r, steps, seed) for r in runs],
    }
    return summary


def _workload(name: str, chains: int, own: dict, repeats: int) -> str:
    """What solver `name` is about to run, for its announcement: the GA runs every generation
    of every trial (its ERT counts each trial only up to its first solution)."""
    times = f", {repeats} timed repeats" if repeats > 1 else ""
    if SOLVERS[name]["family"] != "ga":
        return f" ({chains:,} chains of up to {own['steps']:,} steps{times})"
    chosen = settings.compare_ga(name, own)
    per = 2 if chosen["scheme"] == "steady" else chosen["pop"]
    generations = (own["steps"] - chosen["pop"]) // per
    return (
        f" ({chains:,} trials, each runs all {generations:,} generations, solved or not; "
        f"its ERT counts each trial up to its first solution{times})"
    )


def _check_ga(name: str, n: int, own: dict) -> None:
    """The GA's own checks of solver `name`'s settings (what the JAX-free checks leave: the
    crossover and mutation names), with the solver named."""
    chosen = settings.compare_ga(name, own)
    encoding = SOLVERS[name]["encoding"]
    try:
        ga.check_setup(
            n=n,
            pop=chosen["pop"],
            generations=1,
            trials=1,
            encoding=encoding,
            scheme=chosen["scheme"],
            crossover=own.get("crossover") or ga_crossover.DEFAULT_CROSSOVER.get(encoding, ""),
            mutation=own.get("mutation") or ga_mutation.DEFAULT_MUTATION.get(encoding, ""),
            tournament=chosen["tournament"],
            cxpb=chosen["cxpb"],
            mutpb=chosen["mutpb"],
            indpb=own.get("indpb") or 0.0,
            elite=own.get("elite") or 0,
            islands=1,
            migrate_every=0,
            migrants=1,
        )
    except QueensError as err:
        raise QueensError(f"{name}: {err}") from None
