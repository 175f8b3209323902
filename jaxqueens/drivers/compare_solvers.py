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
    settings,
)
from jaxqueens.drivers import minconflicts as mcsolve
from jaxqueens.drivers import stats as solstats
from jaxqueens.drivers.compare_ert import SolverRun
from jaxqueens.drivers.compare_setup import COMPARE_SOLVERS
from jaxqueens.drivers.loop import RunControl
from jaxqueens.errors import QueensError
from jaxqueens.solvers import ga_crossover, ga_mutation, minconflicts, variants


def _censor(steps: np.ndarray, solved: np.ndarray, seconds: np.ndarray, budget: int):
    """Cut chains at `budget` steps: solved past it counts unsolved, seconds in proportion."""
    steps = steps.astype(np.int64)
    over = steps > budget
    scale = np.where(over, budget / np.maximum(steps, 1), 1.0)
    return solved & ~over, np.minimum(steps, budget), seconds.astype(np.float64) * scale


def _censored(
    name, n, options, budget, steps, solved, seconds, rows, has, wall_s, compile_s, best, **more
) -> SolverRun:
    """The `SolverRun` of [K] chains censored at `budget` (`_censor`; `options` records it as
    `steps_budget`), analysed from one sample per solved chain whose board in `rows` [K, n] is
    a solution (`has`: [K] bool, or True). `best` is each chain's best board in attacking pairs
    (None: not counted), which runs.csv gives where the chain ended within the budget (0 where
    solved, else NaN); `more` holds `restarts`."""
    options["steps_budget"] = budget
    ok, spent, seconds = _censor(steps, solved, seconds, budget)
    sample = ok & has
    rows = rows[sample].astype(np.int32)
    samples = solstats.Samples(
        n, name, options, sample, spent, rows, "steps", wall_s, compile_s, "max_chains"
    )
    known = np.asarray(steps) <= budget
    if best is None:
        known, best = np.zeros_like(known), np.zeros(len(ok))
    pairs = np.where(ok, 0.0, np.where(known, np.asarray(best, np.float64), np.nan))
    family, analysed = COMPARE_SOLVERS[name]["family"], solstats.analyse(samples)
    run = (name, family, options, ok, spent, seconds, wall_s, compile_s, analysed, budget)
    return SolverRun(*run, best_pairs=pairs, **more)


def _chain_run(name, n, options, budget, run, best=None, **more) -> SolverRun:
    """`_censored` of a `ChainRun` (min-conflicts, LS/TA/SA); KeyboardInterrupt when it was
    interrupted."""
    if run.stopped_by == "interrupted":
        raise KeyboardInterrupt
    board = (run.rows, True, run.wall_s, run.compile_s, best)
    return _censored(
        name, n, options, budget, run.steps, run.solved, run.wall_share, *board, **more
    )


def _minconflicts(name, n, chains, seed, control, own) -> SolverRun:
    """Min-conflicts (`minconflicts`'s runner) restarted every `maxsteps` steps (None:
    `solve`'s default; at most the budget); it keeps only its last board, so no best board."""
    mcsolve.check_n(n)
    spec, budget = COMPARE_SOLVERS[name], own["steps"]
    init, tabu = spec["init"], spec["tabu"] if own.get("tabu") is None else own["tabu"]
    max_steps = own.get("maxsteps")
    max_steps = min(variants.default_max_steps(n) if max_steps is None else max_steps, budget)
    config = minconflicts.Config(n=n, init=init, tabu=tabu)
    params = minconflicts.default_params(
        config, max_steps=max_steps, max_restarts=-(-budget // max_steps) - 1
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
    return _chain_run(name, n, options, budget, run, restarts=run.restarts.astype(np.int64))


def _anneal(name, n, chains, seed, control, own) -> SolverRun:
    """LS / TA / SA through `anneal` with the solver's own settings; its options hold the
    calibrated schedule too. The best board counts where `anneal` counts attacking pairs."""
    method, budget = COMPARE_SOLVERS[name]["method"], own["steps"]
    given = {k: v for k, v in own.items() if k != "steps"}
    given.setdefault("preset", compare_setup.COMPARE_PRESET)
    res = annealing.anneal(n, method, chains, budget, seed=seed, control=control, **given)
    s, run = res.summary, res.run
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
    best = run.best if run.best_unit == "attacking_pairs" else None
    return _chain_run(name, n, options, budget, run, best)


GA_PASSED = ("crossover", "mutation", "indpb", "elite")  # passed to `evolve` only when given


def _ga(name, n, chains, seed, control, own) -> SolverRun:
    """The GA through `evolve`, its trials in lockstep until the slowest trial's first
    solution: a trial's steps and seconds count up to its first solution, its sample is the
    first solution in its final population, its best board the last generation's."""
    steps, encoding = own["steps"], COMPARE_SOLVERS[name]["encoding"]
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
        encoding=encoding,
        scheme=scheme,
        preset=chosen["preset"],
        tournament=chosen["tournament"],
        cxpb=chosen["cxpb"],
        mutpb=chosen["mutpb"],
        **{k: own[k] for k in GA_PASSED if own.get(k) is not None},
        seed=seed,
        control=control,
        records="summary",  # per-trial totals: no [G+1, T] records (10,000 trials fit)
        until_solved=True,
    )
    if res.interrupted:
        raise KeyboardInterrupt
    hit = res.first_solved >= 0  # the default fitness: a best of 0 is the first solution
    used = np.where(hit, res.evals_at_first, res.evals_total)  # evaluations up to it, or all
    wall_s = res.wall_s + res.init_s
    seconds = wall_s * used / max(1, int(res.evals_total.sum()))
    fit = res.fitness.reshape(chains, -1)
    rows = res.population.reshape(chains, -1, n)[np.arange(chains), np.argmax(fit == 0, axis=1)]
    c = res.config
    options = {
        "encoding": encoding,
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
    }
    board = (rows, (fit == 0).any(axis=1), wall_s, res.compile_s, fit.min(axis=1))
    return _censored(name, n, options, steps, used, hit, seconds, *board)


def run_solver(
    name: str,
    n: int,
    chains: int,
    steps: int,
    seed: int = 0,
    control: RunControl | None = None,
    own: dict | None = None,
) -> SolverRun:
    """One solver of `COMPARE_SOLVERS` on `chains` chains (GA: trials) with `steps` steps each
    (the solver's own `steps` in `own`, from `compare_setup.compare_settings`, replaces it): its
    `SolverRun`, censored at its budget. Raises KeyboardInterrupt when the run was interrupted."""
    runner = {"minconflicts": _minconflicts, "anneal": _anneal, "ga": _ga}
    own = {"steps": steps, **(own or {})}
    return runner[COMPARE_SOLVERS[name]["family"]](name, n, chains, seed, control, own)


def run_repeats(
    setup: compare_setup.CompareSetup, name: str, control: RunControl | None = None
) -> SolverRun:
    """`run_solver` of solver `name` with its settings in `setup`, `setup.repeats` times: the same
    chains each time (the same seed), timed anew. Returns the first run with each chain's seconds
    the mean over the repeats and `repeat_ert_s` each repeat's ERT."""
    args = (name, setup.n, setup.chains, setup.steps, setup.seed, control, setup.own[name])
    runs = [run_solver(*args) for _ in range(setup.repeats)]
    first = runs[0]
    if not all(first.same_runs(r) for r in runs[1:]):
        raise QueensError(
            f"{name}: its repeats with seed {setup.seed} ran different chains (a kernel that is "
            "not deterministic on this backend); compare with --repeats 1"
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
    encoding = COMPARE_SOLVERS[name]["encoding"]
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
