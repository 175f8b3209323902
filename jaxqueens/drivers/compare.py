"""`jaxqueens.compare`: several solvers on the same n, step budget and seed, side by side.

Every solver runs the same chains, each with the same step budget (`compare_solvers`), and is
measured as in the stochastic local search literature (Hoos & Stuetzle, *Stochastic Local Search*,
2004, ch. 4): run-time distributions censored at the budget (`rtd`), ERT with its bootstrap CI and
the ranking by expected seconds per solution (`compare_ert`), with the distinct solutions found
and the sampling-bias test of `stats`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from jaxqueens.drivers import chains_types, compare_setup
from jaxqueens.drivers import compare_ert as ert
from jaxqueens.drivers import compare_solvers as runners
from jaxqueens.drivers import stats as solstats
from jaxqueens.drivers.compare_ert import SolverRun
from jaxqueens.drivers.compare_setup import COMPARE_SOLVERS
from jaxqueens.drivers.loop import RunControl
from jaxqueens.errors import QueensError
from jaxqueens.io import tables
from jaxqueens.parallel.devices import local_device_count

DEFAULT_STEPS = 10_000  # step budget per chain (anneal's default)
CONFIDENCE = ert.CONFIDENCE  # confidence of the recommendation's bootstrap CI
CURVE_POINTS = 400
"""Points kept per solver in an ECDF (evenly spaced ranks, the last included) and budgets in the
success-rate curve (log-spaced)."""


@dataclasses.dataclass
class CompareResult:
    """What `compare` returns, built once (`run`): `jaxqueens.io.compare` writes it, the CLI
    prints it and `jaxqueens.plots.compare` draws it."""

    n: int  #: board size.
    chains: int  #: chains (GA: trials) per solver.
    steps: int  #: the step budget per chain
    seed: int  #: the random seed, the same for every solver.
    runs: list[SolverRun]  #: one `SolverRun` per solver run.
    recommendation: dict  #: the fastest solver by ERT and how sure the ranking is (`recommend`).
    summary: dict  #: every solver's figures (what `summary.json` holds).
    curves: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]  #: solver -> `curves`
    missing: list[str] = dataclasses.field(default_factory=list)  #: not run: interrupted first


def compare(
    n: int = 8,
    chains: int = 1000,
    *,
    solvers="all",
    steps: int = DEFAULT_STEPS,
    seed: int = 0,
    control: RunControl | None = None,
    announce: Callable[[str], None] | None = None,
    settings_of: dict[str, dict[str, Any]] | None = None,
    repeats: int = 1,
) -> CompareResult:
    """Run each of `solvers` on the same `chains` chains of `n`, `steps` steps each.

    Every solver runs the same chains (chain i seeded from `fold_in` of the seed's key) with
    the same step budget unless `settings_of` gives it its own; how each family meets the budget
    is in `compare_solvers`. Solvers are ranked by expected seconds per solution (ERT), with a
    bootstrap CI of the ratio runner-up / fastest (`compare_ert.recommend`); the docs' compare
    section says what every figure means.

    Args:
      n: board size (>= 4).
      chains: chains (GA: trials) per solver.
      solvers: names of `compare_setup.COMPARE_SOLVERS`, a comma list, or "all".
      steps: the step budget per chain (a step: one candidate board a solver looks at).
      seed: random seed, the same for every solver.
      control: the progress line (None: `RunControl()`); a comparison keeps no checkpoint.
      announce: called with a line as each solver starts.
      settings_of: each solver's own settings, by name (`{"sa": {"rounds": 200, "steps":
        50_000}}`): the keys of `compare_setup.COMPARE_KEYS` for its family, its own `steps`
        included (GA: or `generations`); checked for every solver before the first runs.
      repeats: timed runs of each solver on the same chains: a difference is significant only
        when the bootstrap and the spread of their ERTs agree.

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
    setup = compare_setup.check_compare(n, chains, solvers, steps, seed, settings_of, repeats)
    return run(setup, control, announce)


def run(
    setup: compare_setup.CompareSetup,
    control: RunControl | None = None,
    announce: Callable[[str], None] | None = None,
) -> CompareResult:
    """`compare` of a run checked once (`compare_setup.check_compare`): the GA's own checks
    (crossover and mutation names) before any solver runs, then every solver in turn
    (`compare_solvers.run_repeats`) and the result built from them; `control` and `announce`
    as `compare`'s."""
    for name in setup.names:
        if COMPARE_SOLVERS[name]["family"] == "ga":
            runners.check_ga(name, setup.n, setup.own[name])
    if control is not None and control.checkpoint is not None:
        raise QueensError("compare keeps no checkpoint; give a RunControl without one")
    runs: list[SolverRun] = []
    missing: list[str] = []
    for i, name in enumerate(setup.names):
        if announce is not None:
            work = _workload(name, setup.chains, setup.own[name], setup.repeats)
            announce(f"[{i + 1}/{len(setup.names)}] {name}{work}")
        try:
            runs.append(runners.run_repeats(setup, name, control))
        except KeyboardInterrupt:
            if not runs:
                raise
            missing = setup.names[i:]
            break
    rec = ert.recommend(runs, setup.n, setup.steps, setup.seed)
    summary = tables.strict(_summary(setup, runs, missing, rec), reasons=False)
    curves_of = {r.name: curves(r) for r in runs}
    return CompareResult(
        setup.n, setup.chains, setup.steps, setup.seed, runs, rec, summary, curves_of, missing
    )


def _workload(name: str, chains: int, own: dict, repeats: int) -> str:
    """What solver `name` is about to run, for its announcement: the GA runs every generation
    of every trial (its ERT counts each trial only up to its first solution)."""
    times = f", {repeats} timed repeats" if repeats > 1 else ""
    if COMPARE_SOLVERS[name]["family"] != "ga":
        return f" ({chains:,} chains of up to {own['steps']:,} steps{times})"
    chosen = compare_setup.compare_ga(name, own)
    generations = (own["steps"] - chosen["pop"]) // compare_setup.ga_per_generation(chosen)
    return (
        f" ({chains:,} trials, each runs all {generations:,} generations, solved or not; "
        f"its ERT counts each trial up to its first solution{times})"
    )


DEFAULTS_NOTE = (
    "every solver runs at its measured-best defaults: min-conflicts' restart period from "
    "scripts/bench_restarts.py (benchmarks/results/restarts-cpu.json), the LS/TA/SA settings and "
    "the GA's from scripts/tune_defaults.py at this command's default budget of 10,000 steps, "
    "n = 16 and 64 (benchmarks/results/tune-anneal-cpu.json, tune-ga-cpu.json)"
)
SECONDS_NOTE = (
    "seconds: kernel time of the timed calls, no compilation (every kernel call size is "
    "compiled before timing), shared among a call's chains by steps; a chain's seconds run to its "
    "first solution or the budget. The GA's trials run in lockstep until the last of them has "
    "solved (or to the budget): its wall_s and solutions_per_s are as run, its seconds and ERT "
    "count each trial up to its first solution. "
    "ert_s_ci: bootstrap over chains (chain-to-chain variation); ert_s_spread: lowest and highest "
    "ERT over the timed repeats (timing noise between runs)"
)


def ecdf(values: np.ndarray, points: int = CURVE_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF of the [S] `values` at the distinct values of up to `points` evenly spaced
    ranks (the largest, F = 1, always kept): `(x [P], F(x) [P])`, F(x) the share of values <= x."""
    x = np.sort(np.asarray(values))
    if not x.size:
        return x, np.zeros(0)
    keep = np.unique(x[np.linspace(x.size - 1, 0, min(points, x.size)).round().astype(np.int64)])
    return keep, np.searchsorted(x, keep, side="right") / x.size  # ties: F counts every equal value


def rtd(
    values: np.ndarray, solved: np.ndarray, censor: float, points: int = CURVE_POINTS
) -> tuple[np.ndarray, np.ndarray]:
    """Unconditional run-time distribution (Hoos & Stuetzle) of [K] steps or seconds to solution
    (solved) or spent (unsolved), censored at the budget `censor`, where the curve ends flat at the
    success rate: `(t [P], fraction of ALL runs solved by t [P])`, starting at `(0, solved at 0)`,
    at most `points` ECDF points."""
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


def curves(run: SolverRun, budget: int | None = None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The run-time distributions of one solver, curve name -> `(x [P], y [P])`: the unconditional
    ones, censored at `budget` (None: the solver's own) (`rtd_steps`, `rtd_seconds`: fraction of all
    chains solved by t; the seconds censored at the longest chain's), the conditional ones over its
    solved chains (`steps_ecdf`, `seconds_ecdf`) and `success` (rate vs step budget over all chains,
    on a log grid)."""
    budget = run.steps_budget if budget is None else budget
    return {
        "rtd_steps": rtd(run.steps, run.solved, budget),
        "rtd_seconds": rtd(run.seconds, run.solved, float(run.seconds.max(initial=0.0))),
        "steps_ecdf": ecdf(run.steps[run.solved]),
        "seconds_ecdf": ecdf(run.seconds[run.solved]),
        "success": solstats.success_curve(
            run.steps, run.solved, run.solved.size, budget, CURVE_POINTS
        ),
    }


def solver_summary(run: SolverRun, budget: int, seed: int = 0) -> dict:
    """The per-solver figures of `summary.json` (and `summary.csv`); the solver's own step budget,
    when it has one, wins over the comparison's `budget`, and `seed` seeds the bootstrap. A figure
    that does not exist is None, with the reason in `ert_note`."""
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
        "steps_budget": int(run.budget if run.budget is not None else budget),
        "steps": chains_types.step_quantiles(run.steps[run.solved]),
        "seconds": {
            "mean": float(sec.mean()) if sec.size else None,
            "median": float(np.median(sec)) if sec.size else None,
            "p90": float(np.percentile(sec, 90)) if sec.size else None,
        },
        **ert.ert_ci(run, seed),
        "ert_s_repeats": list(run.repeat_ert_s) or None,  # (`tables.strict`: inf as None)
        "ert_s_spread": run.ert_spread,
        # as run (GA: every generation)
        "solutions_per_s": solved / run.wall_s if run.wall_s > 0 else None,
        "wall_s": run.wall_s,
        "compile_s": run.compile_s,
        "distinct_solutions": s["distinct_solutions"],
        "fundamental_classes": s["fundamental_classes"],
        "exact_solutions": s["exact_solutions"],
        "exact_classes": s["exact_classes"],
        "chi2_solutions": chi(s["chi2_solutions"]),
        "chi2_classes": chi(s["chi2_classes"]),
    }


def _summary(
    setup: compare_setup.CompareSetup, runs: list[SolverRun], missing: list[str], rec: dict
) -> dict:
    """`compare`'s summary (before `tables.strict`): the run's settings, notes, recommendation and
    each solver's figures."""
    budgets = {r.name: r.steps_budget for r in runs}
    return {
        "n": setup.n,
        "chains": setup.chains,
        "steps_budget": setup.steps,
        "seed": setup.seed,
        "repeats": setup.repeats,
        "solvers": [r.name for r in runs],
        **({"missing_solvers": missing, "stopped_by": "interrupted"} if missing else {}),
        "settings_given": setup.given,
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
        + (
            "; settings given per solver replace them (options in per_solver)"
            if any(setup.given.values())
            else ""
        ),
        "backend": jax.default_backend(),
        "devices": local_device_count(),
        "recommendation": rec,
        "per_solver": [solver_summary(r, setup.steps, setup.seed) for r in runs],
    }
