"""How each of `compare`'s solvers runs its chains under one step budget.

A step is one candidate board a solver looks at: one min-conflicts repair move, one LS/TA/SA
neighbour move, one GA fitness evaluation (the initial population included). Each family's runner
meets the budget exactly and returns one `SolverRun` censored at it (`run_solver`), timed again
as often as asked (`run_repeats`).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from jaxqueens.core import rng
from jaxqueens.drivers import anneal as annealing
from jaxqueens.drivers import chains as driver
from jaxqueens.drivers import (
    chains_types,
    compare_setup,
    ga,
    ga_setup,
    minconflicts_runner,
    settings,
)
from jaxqueens.drivers import minconflicts as mcsolve
from jaxqueens.drivers import stats as solstats
from jaxqueens.drivers.compare_ert import SolverRun
from jaxqueens.drivers.loop import RunControl
from jaxqueens.errors import QueensError
from jaxqueens.solvers import ga_crossover, ga_mutation, minconflicts, variants

SOLVERS = compare_setup.COMPARE_SOLVERS


def _censor(steps: np.ndarray, solved: np.ndarray, seconds: np.ndarray, budget: int):
    """Cut chains at `budget` steps: solved past it counts unsolved, seconds in proportion."""
    steps = steps.astype(np.int64)
    over = steps > budget
    scale = np.where(over, budget / np.maximum(steps, 1), 1.0)
    return solved & ~over, np.minimum(steps, budget), seconds.astype(np.float64) * scale


def _solver_run(
    name, family, n, options, censored, sampled, rows, wall_s, compile_s, budget, **more
) -> SolverRun:
    """The `SolverRun` of chains censored at `budget` (`_censor`'s `(solved, steps, seconds)`),
    analysed from one sample per `sampled` chain (`rows`, in chain order)."""
    solved, spent, seconds = censored
    rows = rows.astype(np.int32)
    samples = solstats.Samples(
        n, name, options, sampled, spent, rows, "steps", wall_s, compile_s, "max_chains"
    )
    analysed = solstats.analyse(samples)
    return SolverRun(
        name, family, options, solved, spent, seconds, wall_s, compile_s, analysed, budget, **more
    )


def run_minconflicts(
    n, chains, steps, seed, control, *, init="permutation", tabu=0, max_steps=None
) -> tuple:
    """Min-conflicts (`minconflicts`'s runner) on exactly `chains` chains of `steps` steps: `(run,
    options)`, the chains' `ChainRun` and the effective settings. `tabu` 0: none; `max_steps` is the
    restart period (None: `solve`'s default; at most `steps`)."""
    mcsolve.check_n(n)
    max_steps = min(variants.default_max_steps(n) if max_steps is None else max_steps, steps)
    config = minconflicts.Config(n=n, init=init, tabu=tabu)
    params = minconflicts.default_params(
        config, max_steps=max_steps, max_restarts=-(-steps // max_steps) - 1
    )
    chunk = min(minconflicts_runner.default_chunk(n, chains), chains)
    t0 = time.perf_counter()
    runner = minconflicts_runner.compile_runner(
        rng.seed_key(seed), config, params, chunk, bounded=True, total=chains
    )
    compile_s = time.perf_counter() - t0
    run = driver.run_chains(
        runner,
        n,
        chains_types.Budget(max_chains=chains),
        chunk,
        what=f"min-conflicts ({init}, tabu {tabu})",
        compile_s=compile_s,
        control=control,
    )
    options = {
        "init": init,
        "tabu": tabu,
        "max_steps": max_steps,
        "max_restarts": int(params.max_restarts),
    }
    return run, options


def run_anneal(n, chains, steps, seed, control, *, method="ta", **given) -> tuple:
    """LS / TA / SA (`method`) through `anneal`, `steps` steps per chain, with the solver's own
    settings `given` (`compare_setup.COMPARE_KEYS`): `(run, options)`, the chains' `ChainRun` and
    the effective settings, the calibrated schedule included."""
    given.setdefault("preset", compare_setup.COMPARE_PRESET)
    res = annealing.anneal(n, method, chains, steps, seed=seed, control=control, **given)
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


def _chain_solver(name, family, n, chains, seed, control, spec, own) -> SolverRun:
    budget = own["steps"]
    kwargs = {k: v for k, v in spec.items() if k != "family"}
    if family == "minconflicts":
        if own.get("tabu") is not None:
            kwargs["tabu"] = own["tabu"]
        run, options = run_minconflicts(
            n, chains, budget, seed, control, max_steps=own.get("maxsteps"), **kwargs
        )
    else:
        given = {k: v for k, v in own.items() if k != "steps"}
        run, options = run_anneal(n, chains, budget, seed, control, **kwargs, **given)
    options["steps_budget"] = budget
    if run.stopped_by == "interrupted":
        raise KeyboardInterrupt
    censored = _censor(run.steps, run.solved, run.wall_share, budget)
    solved = censored[0]
    # an unsolved chain's best board is known where the solver keeps it (annealing, counted in
    # attacking pairs; min-conflicts here keeps only its last board) within the budget
    kept = family != "minconflicts" and run.best_unit == "attacking_pairs"
    return _solver_run(
        name,
        family,
        n,
        options,
        censored,
        solved,
        run.rows[solved],
        run.wall_s,
        run.compile_s,
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


def _ga_solver(name, n, chains, seed, control, spec, own) -> SolverRun:
    steps = own["steps"]
    chosen = compare_setup.compare_ga(name, own)  # the preset's, overridden by the solver's own
    scheme, pop = chosen["scheme"], chosen["pop"]
    per_generation = compare_setup.ga_per_generation(chosen)
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
        control=control,
        records="summary",  # per-trial totals: no [G+1, T] records (10,000 trials fit)
        until_solved=True,  # the lockstep trials end with the slowest trial's first solution
    )
    if res.interrupted:
        raise KeyboardInterrupt
    hit = res.first_solved >= 0  # the default fitness: a best of 0 is the first solution
    used = np.where(hit, res.evals_at_first, res.evals_total)  # evaluations up to it, or all
    seconds = (res.wall_s + res.init_s) * used / max(1, int(res.evals_total.sum()))
    censored = _censor(used, hit, seconds, steps)
    solved = censored[0]
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
    return _solver_run(
        name,
        "ga",
        n,
        options,
        censored,
        sample,
        rows,
        res.wall_s + res.init_s,
        res.compile_s,
        steps,
        best_pairs=_best_pairs(solved, fit.min(axis=1), used, steps),  # the last generation's
    )


def run_solver(
    name: str,
    n: int,
    chains: int,
    steps: int,
    seed: int = 0,
    control: RunControl | None = None,
    own: dict | None = None,
) -> SolverRun:
    """One solver of `SOLVERS` on `chains` chains (GA: trials) with `steps` steps each (the solver's
    own `steps` in `own`, from `compare_setup.compare_settings`, replaces it): its `SolverRun`,
    censored at its budget. Raises KeyboardInterrupt when the run was interrupted."""
    spec = SOLVERS[name]
    own = {"steps": steps, **(own or {})}
    if spec["family"] == "ga":
        return _ga_solver(name, n, chains, seed, control, spec, own)
    return _chain_solver(name, spec["family"], n, chains, seed, control, spec, own)


def run_repeats(
    name: str,
    n: int,
    chains: int,
    steps: int,
    seed: int = 0,
    control: RunControl | None = None,
    own: dict | None = None,
    repeats: int = 1,
) -> SolverRun:
    """`run_solver` `repeats` (>= 1) times: the same chains each time (the same seed), timed anew.
    Returns the first run with each chain's seconds the mean over the repeats and `repeat_ert_s`
    each repeat's ERT."""
    runs = [run_solver(name, n, chains, steps, seed, control, own) for _ in range(repeats)]
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


def check_ga(name: str, n: int, own: dict) -> None:
    """The GA's own checks of solver `name`'s settings `own` (what the JAX-free checks leave: the
    crossover and mutation names); a setting the GA refuses is a QueensError naming the solver."""
    chosen = compare_setup.compare_ga(name, own)
    encoding = SOLVERS[name]["encoding"]
    given = {k: own.get(k) for k in ("pop", "tournament", "cxpb", "mutpb", "indpb", "elite")}
    try:
        ga_setup.check_setup(
            settings.ga_settings(chosen["preset"], encoding, chosen["scheme"], **given),
            n=n,
            generations=1,
            trials=1,
            crossover=own.get("crossover") or ga_crossover.DEFAULT_CROSSOVER.get(encoding, ""),
            mutation=own.get("mutation") or ga_mutation.DEFAULT_MUTATION.get(encoding, ""),
        )
    except QueensError as err:
        raise QueensError(f"{name}: {err}") from None
