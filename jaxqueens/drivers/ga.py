"""Host driver of the genetic algorithms: `evolve` runs jitted chunks of generations.

The kernel (`jaxqueens.solvers.ga`) is written for one trial; `jaxqueens.parallel.trials` runs
every trial at once. `evolve` checks its settings (`ga_setup`), lays the run out (`ga_size`:
chunks, processes, memory), runs it chunk by chunk (`ga_run`) and returns one `EvolveResult`.
A board that scores 0 under the GA report's fitness or a user's fitness is checked, never
trusted. The docs' ga page describes the records and constrained boards.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from types import SimpleNamespace

import numpy as np

from jaxqueens.core import constraints as cons
from jaxqueens.drivers import ga_run, ga_setup, ga_size, settings
from jaxqueens.drivers.loop import RunControl, run_chunks
from jaxqueens.io import checkpoint as ckpt
from jaxqueens.io import ga as ga_io
from jaxqueens.io.interrupts import SafePoints
from jaxqueens.solvers.ga import Config, Problem, default_params


@dataclasses.dataclass
class EvolveResult:
    """What `evolve` returns (NumPy arrays; generation 0 is the initial population).

    Per trial `[T]` and per generation (`summary`) records are always there; the full
    `[G+1, T]` records (`best`, `avg`, `worst`, `evaluations`) only with
    `records="all"` (otherwise reading them raises AttributeError saying so).
    """

    config: Config  #: the kernel's `Config`.
    params: dict  #: cxpb, mutpb, indpb, migrate_every as Python numbers
    seed: int  #: the random seed.
    generations: int  #: generations recorded (G; fewer than asked after a time budget)
    summary: np.ndarray  #: [G+1, 9] float64 statistics over trials: `io.ga.SUMMARY_STATS`
    first_met: np.ndarray  #: [T] int64 first generation whose best scored 0 (-1: never)
    evals_total: np.ndarray  #: [T] int64 evaluations (DEAP's count, initial population included)
    evals_at_first: np.ndarray  #: [T] int64 evaluations up to the first solved generation (-1)
    final_best: np.ndarray  #: [T] int64 best fitness of the last generation
    solutions: np.ndarray  #: [S, n] distinct verified solutions seen in any trial (sorted)
    population: np.ndarray  #: [T, I, P, n] final genomes
    fitness: np.ndarray  #: [T, I, P] final attacking pairs
    wall_s: float  #: generations run in this process, excluding compilation and initialisation
    compile_s: float  #: compilation seconds.
    init_s: float  #: seconds to build and place the initial populations.
    evals_here: int = 0  #: evaluations of the generations run in this process (all trials)
    wall_total_s: float = 0.0  #: generation time summed over every session of a resumed run
    sessions: int = 1  #: processes that ran this run's generations (1 + resumes)
    interrupted: bool = False  #: Ctrl-C: the records cover the generations finished so far
    score_met: np.ndarray | None = None  #: report's fitness only: [M, n] distinct boards scoring 0
    #: report's fitness only: [T] first generation with a checker-confirmed solution (-1: none)
    solved_at: np.ndarray | None = None
    #: the constrained instance (toroidal included), if any
    instance: cons.Constraints | None = None
    records: dict[str, np.ndarray] | None = None  #: records="all": best, avg, worst, evaluations

    def _record(self, name: str) -> np.ndarray:
        if self.records is None:
            raise AttributeError(
                f"{name}: this run kept no [G+1, T] records (records='summary'); use summary, "
                "first_solved, evals_total, evals_at_first or final_best, or run with records='all'"
            )
        return self.records[name]

    @property
    def best(self) -> np.ndarray:
        """[G+1, T] int32 lowest fitness per generation and trial (`records="all"` only)."""
        return self._record("best")

    @property
    def avg(self) -> np.ndarray:
        """[G+1, T] float32 mean fitness (`records="all"` only)."""
        return self._record("avg")

    @property
    def worst(self) -> np.ndarray:
        """[G+1, T] int32 highest fitness (`records="all"` only)."""
        return self._record("worst")

    @property
    def evaluations(self) -> np.ndarray:
        """[G+1, T] int64 evaluations per generation and trial (`records="all"` only)."""
        return self._record("evaluations")

    @property
    def status(self) -> str:
        """ "SAT" when a trial found a verified solution, else "unknown" (never UNSAT)."""
        return "SAT" if len(self.solutions) else "unknown"

    @property
    def first_score_met(self) -> np.ndarray:
        """[T] int: first generation whose best scores 0 under the run's fitness; -1 if never."""
        return self.first_met

    @property
    def first_solved(self) -> np.ndarray:
        """[T] int: first generation in which the trial held a verified solution; -1 if never.
        (With the honest fitnesses a score of 0 is a solution: the best's first 0.)"""
        return self.solved_at if self.solved_at is not None else self.first_met

    @property
    def success_rate(self) -> float:
        """Fraction of trials that found a solution."""
        return float(np.mean(self.first_solved >= 0))

    def success_curve(self) -> np.ndarray:
        """[G+1] fraction of trials solved by generation g."""
        fs = self.first_solved
        hits = np.bincount(fs[fs >= 0], minlength=self.generations + 1)[: self.generations + 1]
        return np.cumsum(hits) / len(fs)

    @property
    def evaluations_total(self) -> int:
        """Evaluations of every trial and generation (initial populations included)."""
        return int(self.evals_total.sum())

    @property
    def evals_per_s(self) -> float:
        """Evaluations per second of generation time, in this process only (the generations a
        resumed run did before are not counted; initial populations are not either)."""
        return float(self.evals_here) / max(self.wall_s, 1e-12)

    @property
    def evals_per_s_total(self) -> float:
        """Evaluations after generation 0 per second of generation time summed over sessions."""
        gen0 = float(self.summary[0, -1]) if len(self.summary) else 0  # (the evaluations)
        return (self.evaluations_total - gen0) / max(self.wall_total_s, 1e-12)


def preset_settings(name: str, encoding: str = "permutation", scheme: str = "steady") -> dict:
    """What preset `name` (`settings.GA_PRESET_SETTINGS`) gives a run of `encoding` ("permutation"
    or "combination") and `scheme` ("steady" or "generational"): population, tournament, rates and
    (generational) elite, encoding and scheme included, as `evolve` keywords."""
    settings.ga_settings(name, encoding, scheme)  # (a name unknown is refused)
    return {
        "encoding": encoding,
        "scheme": scheme,
        **settings.GA_PRESET_SETTINGS[name][encoding][scheme],
    }


def evolve(
    n: int | None = None,
    pop: int | None = None,
    generations: int = 1000,
    trials: int = 1,
    *,
    encoding: str = "permutation",
    scheme: str = "steady",
    crossover: str | None = None,
    mutation: str | None = None,
    tournament: int | None = None,
    cxpb: float | None = None,
    mutpb: float | None = None,
    indpb: float | None = None,
    elite: int | None = None,
    islands: int = 1,
    migrate_every: int | None = None,
    migrants: int | None = None,
    fitness: str | Callable = "pairs",
    seed: int = 0,
    chunk: int | None = None,
    control: RunControl | None = None,
    instance: cons.Constraints | None = None,
    toroidal: bool = False,
    preset: str = "default",
    seconds: float | None = None,
    records: str = "all",
    sink=None,
    plan: Callable[[dict], None] | None = None,
    until_solved: bool = False,
) -> EvolveResult:
    """Evolve `trials` independent runs (each of `islands` populations of `pop`) at once. An
    option the scheme, mutation or island count does not use is refused by name
    (`settings.ga_unused`).

    Args:
      n: board size (>= 4; default 8); with `instance`, None or the instance's size.
      pop: population per island; so are `tournament` (its size), `cxpb` and `mutpb` (rates of
        crossover and mutation) and `elite` (parents kept, generational): None, the `preset`'s.
      generations: generations per trial.
      trials: independent runs (trial t seeded from `fold_in(key(seed), t)`).
      encoding: one of `ENCODINGS`, and `scheme` one of `SCHEMES` (the docs' ga page).
      crossover: a name (`ga_crossover.CROSSOVERS`) or a function (`jaxqueens.solvers.ga`), and
        `mutation` likewise (`ga_mutation.MUTATIONS`); None: the encoding's.
      indpb: per-gene rate of swap/reset mutation (DEAP's); 0 (default): one gene.
      islands: populations per trial on a migration ring, `migrate_every` the generations
        between migrations (0: never), `migrants` the individuals sent per migration.
      fitness: "pairs", "excess", "report-diagonals-only" or a function `[n] int32 -> []`
        integer, minimised; a 0 of the last two is checked, never trusted (`score_met`).
      seed: random seed.
      chunk: generations per jitted call (default: `ga_size.default_chunk`).
      control: progress and checkpoints (None: `RunControl()`): the checkpoint is written
        after whole chunks, periodically and on Ctrl-C.
      instance: a constrained instance; `toroidal`: queens attack modulo n.
      preset: "default" or "classic" (`settings.GA_PRESET_SETTINGS`).
      seconds: stop after the chunk that passes this much run time (compilation excluded).
      records: one of `ga_setup.RECORDS`.
      sink: receives every trial's records chunk by chunk (`io.ga.HistoryStream`).
      plan: called with the run's memory estimate before the first generation (`ga_size.plan`).
      until_solved: stop after the chunk in which the last trial (of every process) solved.

    Returns:
      `EvolveResult`; every solution in it has passed the independent checker.

    Raises:
      QueensError: an argument out of range or an option the scheme does not use, naming it;
        `InstanceUnsat` for a plainly unsatisfiable instance.
    """
    a = SimpleNamespace(**locals())
    run, save, head = _begin(a)
    interrupted = run.done < generations and run_chunks(
        run.step, total=generations, unit="generations", control=control, save=save
    )
    return _finish(run, save, interrupted, head, f"GA ({encoding}, {scheme})")


def _begin(a: SimpleNamespace) -> tuple[ga_run.Run, Callable[[], None] | None, dict]:
    """`evolve`'s arguments (by name in `a`) checked and its run laid out, compiled, at
    generation 0 (or resumed from its checkpoint): `(ga_run.Run, the checkpoint's save or None,
    the result's config, params, seed and instance)`."""
    config, params, model, mask, seed, seconds = ga_setup.arguments(a)
    control = RunControl() if a.control is None else a.control
    sink, generations = a.sink, a.generations
    chunk = a.chunk or ga_size.default_chunk(config, a.trials, generations)
    chunk, procs, me, total_trials, trials = ga_size.plan(
        config, a.trials, generations, chunk, a.records, sink is not None, mask, a.plan
    )
    caps = {"tournament": config.tournament, "elite": config.elite, "migrants": config.migrants}
    dyn = default_params(config, **params, **caps, generations=generations)
    problem = None if mask is None else Problem(mask)
    states, m0, compiled, compile_s, init_s = ga_size.start(
        config, dyn, chunk, seed, me * trials, trials, problem
    )
    fp = {  # what a checkpoint of the run must match to be resumed
        "config": repr(config),
        "params": params,
        "seed": seed,
        "trials": total_trials,
        "generations": generations,
        "chunk": chunk,
        "processes": procs,
        "records": a.records,
        "streamed": sink is not None,
        **({} if model is None else {"instance": model.to_dict()}),
    }
    checkpoint = None if control.checkpoint is None else ckpt.process_path(control.checkpoint)
    loop = (chunk, generations, seconds, a.until_solved, procs, total_trials, sink, states)
    report = ga_io.checks_zero(config.fitness)
    run = ga_run.Run(
        compiled, dyn, np.int32(generations), problem, *loop, a.records == "all", report
    )
    run.compile_s, run.init_s = compile_s, init_s
    run.open(m0, checkpoint, fp, bool(control.resume))
    save = None if checkpoint is None else lambda: ckpt.save(checkpoint, run.tree(), fp)
    run.started = time.perf_counter()
    return run, save, {"config": config, "params": params, "seed": seed, "instance": model}


def _finish(
    run: ga_run.Run, save: Callable[[], None] | None, interrupted: bool, head: dict, what: str
) -> EvolveResult:
    """The run's result, `head` its settings. From here to the result the work is whole: a stop
    asked meanwhile (Ctrl-C, SIGTERM) is kept for after it (saved, reported as interrupted),
    never half-way through the records."""
    with SafePoints() as safe:
        found = run.collect(head["instance"], what)
        if safe.requested and not interrupted:
            if save is not None:
                save()
            interrupted = True
    return EvolveResult(**head, interrupted=interrupted, **found)
