"""Host driver of the genetic algorithms: `evolve` runs jitted chunks of generations.

The kernel (`jaxqueens.solvers.ga`) is written for one trial; `jaxqueens.parallel.trials` runs
every trial at once. This module checks the settings (`check_setup`), deals blocks of trials to
the processes of a multi-process run, loops over chunks of generations on
`jaxqueens.drivers.loop.run_chunks`, and keeps the records (per generation `SUMMARY`, per trial,
every distinct verified solution, the final populations). A board that scores 0 under the GA
report's fitness or a user's fitness is checked, never trusted. The docs' ga page describes the
records and constrained boards.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import arguments, checker, rng
from jaxqueens.core import constraints as cons
from jaxqueens.core.board import as_size
from jaxqueens.drivers import chains as driver
from jaxqueens.drivers import settings
from jaxqueens.drivers.loop import Tick, run_chunks
from jaxqueens.errors import QueensError, SolutionCheckError
from jaxqueens.io import checkpoint as ckpt
from jaxqueens.io import ga as ga_io
from jaxqueens.io.interrupts import SafePoints
from jaxqueens.parallel import cache, gather, memory, sizing
from jaxqueens.parallel import devices as backend
from jaxqueens.parallel import trials as lockstep
from jaxqueens.parallel.devices import local_device_count
from jaxqueens.parallel.shard import batch_sharding, shard_batch
from jaxqueens.solvers import ga_crossover, ga_fitness, ga_genomes, ga_mutation
from jaxqueens.solvers.constrained import Mask
from jaxqueens.solvers.ga import (
    ENCODINGS,
    SCHEMES,
    Config,
    Params,
    Problem,
    State,
    default_params,
    operators,
)

RECORDS = ("all", "summary")
"""What a run keeps per generation: "all" (Best / Avg / Worst / evaluations of every trial,
`[G+1, T]` arrays in the result: small runs, the library's default) or "summary" (statistics
over the trials, `SUMMARY`, and per-trial totals: memory that does not grow with
generations x trials; a `sink` may still receive every trial's records chunk by chunk, to
stream them to disk)."""

SUMMARY = ga_io.SUMMARY_STATS  # defined once, where history.csv is written from it
"""Columns of `EvolveResult.summary` `[G+1, len(SUMMARY)]`: per generation, the minimum,
10th/50th/90th percentiles (linear interpolation), maximum and mean over trials of each trial's
best fitness; the mean over trials of the population's mean and of its worst; the evaluations
of all trials in that generation."""


@dataclasses.dataclass
class EvolveResult:
    """What `evolve` returns (NumPy arrays; generation 0 is the initial population).

    Per trial `[T]` and per generation (`summary`) records are always there; the full
    `[G+1, T]` records (`best`, `avg`, `worst`, `evaluations`) only with
    `records="all"` (otherwise reading them raises AttributeError saying so).

    Attributes:
      config: the kernel's `Config`.
      params: cxpb, mutpb, indpb, migrate_every as Python numbers
      seed: the random seed.
      generations: generations recorded (G; fewer than asked after a time budget)
      summary: [G+1, len(SUMMARY)] float64 statistics over trials per generation
      first_met: [T] int64 first generation whose best scored 0 (-1: never)
      evals_total: [T] int64 evaluations (DEAP's count, initial population included)
      evals_at_first: [T] int64 evaluations up to the first solved generation (-1)
      final_best: [T] int64 best fitness of the last generation
      solutions: [S, n] distinct verified solutions seen in any trial (sorted)
      population: [T, I, P, n] final genomes
      fitness: [T, I, P] final attacking pairs
      wall_s: generations run in this process, excluding compilation and initialisation
      compile_s: compilation seconds.
      init_s: seconds to build and place the initial populations.
      evals_here: evaluations of the generations run in this process (all trials)
      wall_total_s: generation time summed over every session of a resumed run
      sessions: processes that ran this run's generations (1 + resumes)
      interrupted: Ctrl-C: the records cover the generations finished so far
      score_met: report's fitness only: [M, n] distinct boards scoring 0
      solved_at: report's fitness only: [T] first generation with a checker-confirmed solution (-1:
        none)
      instance: the constrained instance (toroidal included), if any
      records: records="all": best, avg, worst, evaluations
    """

    config: Config
    params: dict  # cxpb, mutpb, indpb, migrate_every as Python numbers
    seed: int
    generations: int  # generations recorded (G; fewer than asked after a time budget)
    summary: np.ndarray  # [G+1, len(SUMMARY)] float64 statistics over trials per generation
    first_met: np.ndarray  # [T] int64 first generation whose best scored 0 (-1: never)
    evals_total: np.ndarray  # [T] int64 evaluations (DEAP's count, initial population included)
    evals_at_first: np.ndarray  # [T] int64 evaluations up to the first solved generation (-1)
    final_best: np.ndarray  # [T] int64 best fitness of the last generation
    solutions: np.ndarray  # [S, n] distinct verified solutions seen in any trial (sorted)
    population: np.ndarray  # [T, I, P, n] final genomes
    fitness: np.ndarray  # [T, I, P] final attacking pairs
    wall_s: float  # generations run in this process, excluding compilation and initialisation
    compile_s: float
    init_s: float
    evals_here: int = 0  # evaluations of the generations run in this process (all trials)
    wall_total_s: float = 0.0  # generation time summed over every session of a resumed run
    sessions: int = 1  # processes that ran this run's generations (1 + resumes)
    interrupted: bool = False  # Ctrl-C: the records cover the generations finished so far
    score_met: np.ndarray | None = None  # report's fitness only: [M, n] distinct boards scoring 0
    solved_at: np.ndarray | None = None  # report's fitness only: [T] first generation with a
    # checker-confirmed solution (-1: none)
    instance: cons.Constraints | None = None  # the constrained instance (toroidal included), if any
    records: dict[str, np.ndarray] | None = None  # records="all": best, avg, worst, evaluations

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
        gen0 = float(self.summary[0, SUMMARY.index("evaluations")]) if len(self.summary) else 0
        return (self.evaluations_total - gen0) / max(self.wall_total_s, 1e-12)


def check_setup(
    *,
    n,
    pop,
    generations,
    trials,
    encoding,
    scheme,
    crossover,
    mutation,
    tournament,
    cxpb,
    mutpb,
    indpb,
    elite,
    islands,
    migrate_every,
    migrants,
    fitness="pairs",
    chunk=None,
    toroidal=False,
    constrained=False,
):
    """Validate every setting; return (Config, params dict) or raise a one-line QueensError."""
    _check_choices(encoding, scheme, crossover, mutation, fitness)
    _check_integers(
        n=n,
        pop=pop,
        generations=generations,
        trials=trials,
        tournament=tournament,
        elite=elite,
        islands=islands,
        migrate_every=migrate_every,
        migrants=migrants,
        chunk=chunk,
    )
    _check_ranges(
        n,
        pop,
        generations,
        trials,
        scheme,
        tournament,
        cxpb,
        mutpb,
        indpb,
        elite,
        islands,
        migrate_every,
        migrants,
        fitness,
        chunk,
        toroidal,
        constrained,
    )
    cap32 = lambda q: min(32, math.ceil(32 * q))
    config = Config(
        n=n,
        pop=pop,
        encoding=encoding,
        scheme=scheme,
        crossover=crossover,
        mutation=mutation,
        tournament=tournament,
        elite=elite if scheme != "steady" else 0,
        islands=islands,
        migrants=migrants,
        fitness=fitness,
        cx_cap32=cap32(cxpb),
        mut_cap32=cap32(mutpb),
        eval_cap32=cap32(1 - (1 - cxpb) * (1 - mutpb)),
        toroidal=bool(toroidal),
        constrained=bool(constrained),
    )
    if callable(fitness):
        _check_integer_scores(config, n, fitness)
    params = {
        "cxpb": float(cxpb),
        "mutpb": float(mutpb),
        "indpb": float(indpb),
        "migrate_every": int(migrate_every),
    }
    return config, params


def _need(ok, msg: str) -> None:
    if not ok:
        raise QueensError(msg)


def _check_choices(encoding: str, scheme: str, crossover, mutation, fitness) -> None:
    """`check_setup`'s named choices: the encoding, fitness, scheme and operators exist."""
    _need(
        encoding in ENCODINGS,
        f"encoding {encoding!r} is unknown; use one of {', '.join(ENCODINGS)}",
    )
    _need(
        callable(fitness) or fitness in ga_fitness.FITNESS,
        f"fitness {fitness!r} is unknown; use one of {', '.join(ga_fitness.FITNESS)} "
        "or a function [n] int32 -> [] int",
    )
    _need(scheme in SCHEMES, f"scheme {scheme!r} is unknown; use one of {', '.join(SCHEMES)}")
    for what, name, table in (
        ("crossover", crossover, ga_crossover.CROSSOVERS),
        ("mutation", mutation, ga_mutation.MUTATIONS),
    ):
        _need(
            callable(name) or name in table[encoding],
            f"{what} {name!r} does not apply to the {encoding} encoding; "
            f"use one of {', '.join(table[encoding])} or a function (jaxqueens.solvers.ga)",
        )


def _check_integers(**values) -> None:
    """`check_setup`'s whole-number settings are integers (None: not given)."""
    for name, v in values.items():
        _need(
            v is None or (isinstance(v, (int, np.integer)) and not isinstance(v, bool)),
            f"{name} must be an integer, got {v!r}",
        )


def _check_ranges(
    n,
    pop,
    generations,
    trials,
    scheme,
    tournament,
    cxpb,
    mutpb,
    indpb,
    elite,
    islands,
    migrate_every,
    migrants,
    fitness,
    chunk,
    toroidal,
    constrained,
) -> None:
    """`check_setup`'s numbers in their ranges, and the fitness allowed on the board."""
    _need(n >= 4, f"n = {n} has no solution to evolve towards; use n >= 4")
    _need(n <= 32767, f"n = {n} is above the GA's limit of 32767 (int16 genes); use a smaller n")
    _need(pop >= 2, f"pop = {pop} is too small; a population needs at least 2 individuals")
    _need(
        tournament >= (2 if scheme == "steady" else 1),
        f"tournament = {tournament} is too small; use at least {2 if scheme == 'steady' else 1}",
    )
    _need(
        pop >= tournament,
        f"pop = {pop} is smaller than the tournament size {tournament}; "
        "raise --pop or lower --tournament",
    )
    for name, v in (("cxpb", cxpb), ("mutpb", mutpb), ("indpb", indpb)):
        _need(isinstance(v, (int, float)) and 0.0 <= v <= 1.0, f"{name} = {v!r} must lie in [0, 1]")
    _need(
        generations >= 0 and trials >= 1 and islands >= 1 and migrate_every >= 0,
        "generations and migrate_every must be >= 0, trials and islands >= 1",
    )
    _need(0 <= elite < pop, f"elite = {elite} must lie in 0..pop-1 ({pop - 1})")
    _need(1 <= migrants < pop, f"migrants = {migrants} must lie in 1..pop-1 ({pop - 1})")
    _need(chunk is None or chunk >= 1, f"chunk = {chunk} must be at least 1")
    _need(
        not ((toroidal or constrained) and ga_io.checks_zero(fitness)),
        f"fitness {_fitness_name(fitness)} applies to the plain board only; use pairs or excess "
        "with --toroidal or --instance",
    )
    _need(
        not constrained or (n + 1) * ga_fitness.forbidden_weight(n) < 2**31,
        f"n = {n} is too large for a constrained GA (its int32 penalties would overflow); "
        "use n <= 1000",
    )


def _check_integer_scores(config: Config, n: int, fitness) -> None:
    """A fitness function's scores are integers: the records (best per generation and trial)
    are kept as integers."""
    score = jax.eval_shape(operators(config).fitness, jax.ShapeDtypeStruct((n,), jnp.int32))
    _need(
        jnp.issubdtype(score.dtype, jnp.integer),
        f"fitness {_fitness_name(fitness)} returns {score.dtype}; evolve records fitness as "
        "integers: return an integer score (round or scale it)",
    )


def _fitness_name(fitness) -> str:
    return repr(fitness) if isinstance(fitness, str) else ga_io.operator_name(fitness)


CLASSIC = settings.GA_CLASSIC
"""The classic settings (`--preset classic`): `GA_CLASSIC`."""
DEFAULTS = settings.GA_DEFAULTS
"""Tuned defaults (`--preset default`): `GA_DEFAULTS`."""
PRESETS = settings.GA_PRESET_SETTINGS
"""Named settings (`--preset`): `default` (tuned, `DEFAULTS`) and `classic`
(`CLASSIC`); one table, `GA_PRESET_SETTINGS`, which the
command line reads before JAX is imported."""

preset_settings = settings.ga_preset
"""Population, tournament, rates and elite of a preset for an encoding and scheme
(`ga_preset`)."""


def default_chunk(config: Config, trials: int, generations: int) -> int:
    """Generations per jitted chunk: all of them for small runs, ~2^26 genes of work per chunk."""
    work = trials * config.islands * config.pop * config.n
    return max(1, min(generations, max(10, (1 << 26) // max(work, 1))))


run_generations = jax.jit(lockstep.run_chunk, static_argnums=(0, 5, 6), donate_argnums=(1,))
"""Jitted `run_chunk` `(config, states, params, problem, stop,
length, devices)`: a chunk of generations of every trial, split over `devices` local devices."""


def chunk_builder(
    config: Config, trials: int, devices: int = 1, mask: Mask | None = None, place=None
):
    """`generations -> jax.stages.Lowered`: `run_generations` for `trials` trials and
    that many generations per call (its per-generation records grow with it), on abstract
    arguments (`place` may put them on a described device): the builder
    `choose` sizes on an accelerator and `make gpu-check`
    compiles; the population itself (trials x islands x pop) is the user's."""
    place = place or (lambda tree: tree)
    problem = _problem(mask)
    params = jax.eval_shape(lambda: default_params(config))
    states = jax.eval_shape(
        lambda k, p: lockstep.init(config, k, trials, jnp.int32(0), p, problem)[0],
        jax.random.key(0),
        params,
    )
    args = place((states, params, problem, jax.ShapeDtypeStruct((), jnp.int32)))

    def build(generations: int):
        st, dyn, pr, stop = args
        return run_generations.trace(config, st, dyn, pr, stop, generations, devices).lower()

    return build


def _problem(mask: Mask | None) -> Problem | None:
    """The kernel's `Problem` of an instance's mask (None: the plain or toroidal board)."""
    return None if mask is None else Problem(mask)


def accelerator_chunk(
    config: Config, trials: int, want: int, devices: int, mask: Mask | None = None, target=None
) -> int:
    """Generations per call on an accelerator: `want` (`default_chunk`), or as many as
    the device's memory holds beside the population (`choose`).
    A population that does not fit even one generation is refused in one line."""
    target = target or sizing.device_target()
    choice = sizing.choose(
        chunk_builder(config, trials, devices, mask),
        target,
        want,
        key=("ga", config, trials, want, devices, mask is None),
    )
    if not choice.fits:
        raise QueensError(
            f"{trials} trials x {config.islands} islands x pop {config.pop} (n = {config.n}) need "
            f"{choice.bytes:,} bytes of device memory, over {target.name}'s "
            f"{target.budget_bytes:,}: use fewer --trials or a smaller --pop"
        )
    return choice.batch


def _place(tree):
    """Shard the leading (trial) axis over host devices when it divides evenly."""
    return jax.tree.map(shard_batch, tree)


def _collect(found: list, sols, ok) -> None:
    """Add the candidates `sols[ok]` to `found` (distinct rows); the list is merged into one
    sorted array of distinct rows whenever it doubles, so it stays about as large as the
    distinct solutions seen, not as the candidates of every generation."""
    sols, ok = np.asarray(sols), np.asarray(ok)
    if ok.any():
        found.append(np.unique(sols[ok].reshape(-1, sols.shape[-1]), axis=0))
    if len(found) > 1 and sum(map(len, found[1:])) > max(len(found[0]), 4096):
        found[:] = [np.unique(np.concatenate(found), axis=0)]


def _mark_solved(solved_at: np.ndarray, sols, ok, gen0: int) -> None:
    """Report's fitness: record in `solved_at` [T] the first generation in which a trial's
    candidate that scored 0 is a solution by the independent checker. `sols` [G, T, ...,
    n] and `ok` [G, T, ...] are the candidates of generations `gen0 ..`."""
    sols, ok = np.asarray(sols), np.asarray(ok)
    if not ok.any():
        return
    where = np.nonzero(ok)
    real = checker.are_solutions(sols[ok].astype(np.int64))
    gens, trials = where[0][real] + gen0, where[1][real]
    for t in np.unique(trials):
        if solved_at[t] < 0:
            solved_at[t] = int(gens[trials == t].min())


def summarise(best, avg, worst, nevals) -> np.ndarray:
    """`[k, len(SUMMARY)]` float64: `SUMMARY` of `k` generations' records `[k, T]`."""
    b = np.asarray(best, np.float64)
    p10, p50, p90 = np.percentile(b, (10, 50, 90), axis=1)
    return np.column_stack(
        [
            b.min(axis=1),
            p10,
            p50,
            p90,
            b.max(axis=1),
            b.mean(axis=1),
            np.asarray(avg, np.float64).mean(axis=1),
            np.asarray(worst, np.float64).mean(axis=1),
            np.asarray(nevals, np.int64).sum(axis=1).astype(np.float64),
        ]
    )


class _Trials:
    """Per-trial totals `[T]` (this process's trials) kept as the generations go by, so that
    no record `[G+1, T]` is needed: first generation whose best scored 0, evaluations, the
    evaluations up to the first solved generation, the last best."""

    FIELDS = ("first_met", "evals_total", "evals_at_first", "final_best")

    def __init__(self, trials: int):
        self.first_met = np.full(trials, -1, np.int64)
        self.evals_total = np.zeros(trials, np.int64)
        self.evals_at_first = np.full(trials, -1, np.int64)
        self.final_best = np.zeros(trials, np.int64)

    def add(self, gen0: int, best, nevals, solved_at: np.ndarray | None) -> None:
        """Generations `gen0 .. gen0 + k - 1` (`best`, `nevals` `[k, T]`); `solved_at`:
        the report's fitness, already marked for them."""
        best, nevals = np.asarray(best), np.asarray(nevals, np.int64)
        hit = best == 0
        new = (self.first_met < 0) & hit.any(axis=0)
        self.first_met[new] = gen0 + hit.argmax(axis=0)[new]
        cum = self.evals_total[None] + np.cumsum(nevals, axis=0)
        self.evals_total = cum[-1].copy()
        self.final_best = best[-1].astype(np.int64)
        first = self.first_met if solved_at is None else solved_at
        inside = (self.evals_at_first < 0) & (first >= gen0) & (first < gen0 + len(best))
        cols = np.nonzero(inside)[0]
        self.evals_at_first[cols] = cum[first[cols] - gen0, cols]

    def tree(self) -> dict:
        return {k: getattr(self, k) for k in self.FIELDS}

    def load(self, tree: dict) -> None:
        for k in self.FIELDS:
            setattr(self, k, np.asarray(tree[k], np.int64))


def memory_estimate(
    config: Config,
    trials: int,
    generations: int,
    chunk: int,
    records: str = "summary",
    streamed: bool = False,
) -> dict[str, int]:
    """Bytes of host memory a run will hold at its peak, by part (`trials`: this process's).

    The parts: the runtime (Python, JAX, XLA and the compiled program), the population
    (its device buffers, the generation's temporaries and the checkpoint's host copy), one
    chunk's records and candidate solutions (on the device and on the host), the per-generation
    statistics and per-trial totals, and with `records="all"` the `[G+1, T]` records
    (kept, joined at the end and in the checkpoint); a streamed history adds one chunk's text.
    Distinct solutions are not counted (as many as the run finds)."""
    gene = np.dtype(ga_genomes.gene_dtype(config.n)).itemsize
    per_trial = config.islands * (config.pop * (config.n * gene + 4) + 4) + config.n * gene + 12
    per_gen = 16 + config.islands * config.sols_per_gen * (config.n * gene + 1)
    parts = {
        "runtime": RUNTIME_BYTES,
        "population": POPULATION_COPIES * trials * per_trial,
        "chunk": 3 * chunk * trials * per_gen,
        "statistics": 3 * (generations + 1) * (len(SUMMARY) + 1) * 8 + 5 * 8 * trials,
    }
    if streamed:
        parts["history text"] = 2 * chunk * trials * HISTORY_ROW_BYTES
    if records == "all":
        parts["records"] = 4 * (generations + 1) * trials * 20
    return parts


RUNTIME_BYTES = 600 << 20
"""Python, JAX, XLA's CPU runtime and a compiled chunk, resident before any population (rounded
up)."""
POPULATION_COPIES = 6
"""Copies of the population the process holds at its peak (device state, the donated next
state, the generation's temporaries, the host copy a checkpoint writes)."""
HISTORY_ROW_BYTES = 48
"""Bytes of one per-trial history row (`io.ga`'s CSV), rounded up."""


def check_memory(parts: dict[str, int], *, what: str, fix: str) -> None:
    """Refuse a run whose `memory_estimate` does not fit in the memory available now."""
    memory.check_memory(sum(parts.values()), what, fix)


def _gather_trials(kept: dict | None, genes, fit, sols, trials: int):
    """Across processes: records `{name: [G+1, T]}` (None: not kept) and populations [T, ...]
    of all trials, in order, and the union of the distinct solutions."""

    def cat(x, axis):  # every process's trials joined along the trial axis, cut to T
        return np.take(gather.concat(x, axis), np.arange(trials), axis=axis)

    if kept is not None:
        kept = {k: cat(v, 1) for k, v in kept.items()}
    merged = gather.ragged(sols)
    sols = np.unique(merged, axis=0) if len(merged) else sols
    return kept, cat(genes, 0), cat(fit, 0), sols


_RECORDS = ("best", "avg", "worst", "nevals")  # per generation and trial: [G + 1, T]


def _save_checkpoint(path, tree: dict, fingerprint: dict) -> None:
    """Population, totals, statistics (and records) after whole chunks, written atomically."""
    ckpt.save(path, tree, fingerprint)


def _schema(states: State, trials: int, hist, solved_at) -> dict:
    """What a checkpoint of this run must hold (the fresh `states` and generation-0 `hist`
    are the templates)."""
    n = states.genes.shape[-1]
    schema = {
        "states": ckpt.like(states),
        "sols": ckpt.Spec(np.integer, (None, n)),
        "done": ckpt.Spec(np.integer),
        "trials": {k: ckpt.Spec(np.int64, (trials,)) for k in _Trials.FIELDS},
        "summary": ckpt.Spec(np.float64, (None, len(SUMMARY))),
        "history_bytes": ckpt.Spec(np.integer),
        "wall_s": ckpt.Spec(np.floating),
        "sessions": ckpt.Spec(np.integer),
    }
    if hist is not None:
        schema["records"] = {
            k: ckpt.Spec(np.dtype(h.dtype), ("records", h.shape[1]))
            for k, h in zip(_RECORDS, hist[0], strict=True)
        }
    if solved_at is not None:  # the report's fitness: each trial's first solved generation
        schema["solved_at"] = ckpt.Spec(np.int64, solved_at.shape)
    return schema


@dataclasses.dataclass
class _Run:
    """`evolve`'s chunk loop: the populations and everything recorded so far, one chunk of
    generations at a time (`step`), as a checkpoint (`tree`) and from one (`resume`)."""

    compiled: Any  # (states, params, problem, stop) -> (states, metrics): a chunk of generations
    dyn: Params
    problem: Problem | None
    stop: np.ndarray  # [] int32 the generations of the run
    chunk: int
    generations: int
    seconds: float | None
    until_solved: bool
    procs: int
    total_trials: int
    sink: Any
    states: State
    hist: list | None = None  # [k, T] records per chunk (records "all")
    found: list = dataclasses.field(default_factory=list)  # [S, n] solutions per chunk
    solved_at: np.ndarray | None = None  # [T] int64 (the report fitness only)
    totals: Any = None  # _Trials
    summary: list = dataclasses.field(default_factory=list)  # [k, stats] per chunk
    done: int = 0  # generations run
    wall_before: float = 0.0  # seconds of the earlier sessions
    sessions: int = 1
    started: float = 0.0  # perf_counter at the loop's start

    def everyone(self, x):  # [k, T] of this process's trials -> [k, total_trials] of all, in order
        x = np.asarray(x)
        if self.procs == 1:
            return x
        return np.take(gather.concat(x, 1), np.arange(self.total_trials), axis=1)

    def step(self) -> Tick:
        """One chunk of generations, recorded."""
        self.states, m = self.compiled(self.states, self.dyn, self.problem, self.stop)
        done, solved_at = self.done, self.solved_at
        keep = min(self.chunk, self.generations - done)
        rec = [np.asarray(x)[:keep] for x in (m.best, m.avg, m.worst, m.nevals)]
        if self.hist is not None:
            self.hist.append(rec)
        _collect(self.found, m.sols[:keep], m.sols_ok[:keep])
        if solved_at is not None:  # (report)
            _mark_solved(solved_at, m.sols[:keep], m.sols_ok[:keep], done + 1)
        self.totals.add(done + 1, rec[0], rec[3], solved_at)
        every = [self.everyone(x) for x in rec]
        self.summary.append(summarise(*every))
        if self.sink is not None:
            self.sink.records(done + 1, *every)
        done = self.done = done + keep
        late = self.seconds is not None and time.perf_counter() - self.started >= self.seconds
        if self.until_solved:
            first = self.totals.first_met if solved_at is None else solved_at
            unsolved = np.array([int((first < 0).sum())], np.int64)
            late |= int((gather.concat(unsolved) if self.procs > 1 else unsolved).sum()) == 0
        finished = done >= self.generations or late
        return Tick(done, f"best {int(self.summary[-1][-1, 0])}", finished=finished)

    def tree(self) -> dict:
        """The checkpoint's tree (the records are joined into one array each on the way)."""
        summary, hist, states = self.summary, self.hist, self.states
        if len(summary) > 1:  # one array: the checkpoint copies it anyway
            summary[:] = [np.concatenate(summary)]
        tree = {
            "states": jax.tree.map(np.asarray, states),
            "sols": np.concatenate(self.found)
            if self.found
            else np.zeros((0, states.genes.shape[-1]), np.int32),
            "done": self.done,
            "trials": self.totals.tree(),
            "summary": summary[0],
            "history_bytes": self.sink.sync() if self.sink is not None else 0,
            "wall_s": self.wall_before + time.perf_counter() - self.started,
            "sessions": self.sessions,
            "solved_at": self.solved_at,
        }
        if hist is not None:
            hist[:] = [[np.concatenate([h[i] for h in hist]) for i in range(4)]]
            tree["records"] = dict(zip(_RECORDS, hist[0], strict=True))
        return tree

    def resume(self, z: dict, checkpoint, keep_all: bool, report: bool) -> None:
        """Continue from a loaded checkpoint `z`."""
        self.states = _place(State(**{k: jnp.asarray(v) for k, v in z["states"].items()}))
        if keep_all:
            self.hist = [[z["records"][k] for k in _RECORDS]]
        self.found = [z["sols"]] if len(z["sols"]) else []
        done = self.done = int(z["done"])
        self.totals.load(z["trials"])
        self.summary = [z["summary"]]
        self.wall_before, self.sessions = float(z["wall_s"]), int(z["sessions"]) + 1
        self.solved_at = z.get("solved_at") if report else None
        if len(self.summary[0]) != done + 1:
            raise QueensError(
                f"{checkpoint}: not a readable checkpoint (its statistics cover "
                f"{len(self.summary[0]) - 1} generations, its population {done}); start without "
                "--resume"
            )
        if self.sink is not None:
            self.sink.resume(int(z["history_bytes"]))


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
    quiet: bool | None = True,
    checkpoint=None,
    resume: bool = False,
    checkpoint_every: float = settings.CHECKPOINT_EVERY,
    instance: cons.Constraints | None = None,
    toroidal: bool = False,
    preset: str = "default",
    seconds: float | None = None,
    records: str = "all",
    sink=None,
    plan: Callable[[dict], None] | None = None,
    until_solved: bool = False,
) -> EvolveResult:
    """Evolve `trials` independent runs (each of `islands` populations of `pop`) at once.

    An option the scheme, mutation or island count does not use is refused by name
    (`GA`): `elite` with "steady", `indpb` with
    "inversion" or "scramble", `migrate_every` with one island.

    Args:
      n: board size (>= 4; default 8); with `instance`, None or the instance's size.
      pop: individuals per island (default: the preset's).
      generations: generations per trial.
      trials: independent runs (trial t seeded from `fold_in(key(seed), t)`).
      encoding: "permutation" or "combination".
      scheme: "steady" (two children per generation replace the two worst) or "generational"
        (DEAP's eaSimple, plus `elite` best parents kept).
      crossover: permutation: "cut" (default), "pmx", "ox1", "cycle"; combination: "one_point"
        (default), "uniform"; or a function `c(seed, a [n], b [n]) -> (child1, child2)`
        ([`ga`][jaxqueens.solvers.ga], "Bring your own operator").
      mutation: permutation: "swap" (default), "inversion", "scramble"; combination: "reset";
        or a function `m(seed, x [n], indpb) -> [n]`.
      tournament: tournament size (default: the preset's).
      cxpb: crossover probability (default: the preset's).
      mutpb: mutation probability per child (default: the preset's).
      indpb: per-gene rate of swap/reset mutation (DEAP's indpb); 0 (default) mutates exactly
        one gene.
      elite: generational only: best parents copied over the worst offspring (default: the
        preset's, 1).
      preset: where `pop`, `tournament`, `cxpb`, `mutpb` and `elite` come from when not
        given: "default" (tuned at `compare`'s budget, `DEFAULTS`: permutation steady
        state population 10, tournament 4, cxpb 0.2, mutpb 1) or "classic" (the classic
        course GA, `CLASSIC`: population 100, tournament 5, cxpb 1, mutpb 1; generational
        tournament 3, cxpb 0.5, mutpb 0.2).
      islands: populations per trial, on a migration ring.
      migrate_every: generations between migrations (default 0: never; 2+ islands only).
      migrants: individuals sent along the ring per migration (default 1; with migrations only).
      fitness: what the GA minimises and the records report: "pairs" (attacking pairs, default)
        or "excess" (sum over lines of queens beyond the first: DEAP's N-Queens fitness), both 0
        exactly for solutions; or "report-diagonals-only" (the GA report's score: diagonal
        pairs, rows ignored), whose 0 is not always a solution: boards that score 0 are
        returned in `score_met` and only those the checker confirms in `solutions`; or a
        function `f(x [n] int32) -> []` integer score, minimised ([`ga`][jaxqueens.solvers.ga]),
        whose boards scoring 0 are checked as the report's are (plain boards only).
      seed: random seed.
      chunk: generations per jitted call (default: `default_chunk`).
      quiet: no progress line (None: a progress line on a terminal only).
      checkpoint: file for checkpoints (population, records and solutions after whole chunks of
        generations, every `checkpoint_every` seconds and on Ctrl-C, written atomically);
        `resume` continues from it with the same results as an uninterrupted run. An
        interrupted run returns what it finished with `interrupted` set.
      instance: a constrained instance (fixed queens never move, forbidden squares are never
        part of a solution; in the permutation encoding its fixed queens need distinct rows).
      toroidal: queens attack along diagonals modulo n (also when `instance` says so).
      seconds: stop after the chunk of generations that passes this much run time (compilation
        excluded): the records then end there (`stats --time`: a round never runs past its
        budget by more than one chunk).
      records: "all" (default: the `[G+1, T]` records in the result) or "summary" (per
        generation statistics over trials and per-trial totals only: memory and checkpoints
        that do not grow with generations x trials), `RECORDS`.
      sink: receives every trial's records as the chunks finish, to stream them to disk
        (process 0 only; `jaxqueens.io.ga.HistoryStream`): `start()` or `resume(bytes)`
        first, then `records(first_generation, best, avg, worst, evaluations)` with
        `[k, T]` arrays, and `sync() -> bytes` before each checkpoint, which records its
        length so that a resumed run continues the file where the checkpoint stands.
      until_solved: stop after the chunk of generations in which the last trial (over every
        process) solved, instead of running every generation: the records then end there
        (`compare`: the lockstep trials run no longer than the slowest trial needs).
      plan: called before the first generation with `{"memory": parts, "available": bytes or
        None, "per_solution": bytes}` (`memory_estimate`; the distinct solutions a run
        finds, about `per_solution` bytes each, cannot be known before) once the run is known
        to fit (a run that does not is refused with a one-line QueensError before it starts).

    Returns:
      EvolveResult; every solution in it has passed the independent checker.

    Raises:
      QueensError: an argument out of range or an option the scheme does not use, naming it;
        `InstanceUnsat` for a plainly unsatisfiable instance.
    """
    if n is None and instance is None:
        n = 8
    seed = arguments.seed(seed, "seed")
    seconds = arguments.seconds(seconds, "seconds", optional=True)
    islands = arguments.integer(islands, "islands", 1)
    migrate_every = arguments.integer(migrate_every, "migrate_every", 0, optional=True)
    chosen = preset_settings(preset, encoding, scheme)
    pop = chosen["pop"] if pop is None else pop
    for name, value in (("pop", pop), ("generations", generations), ("trials", trials)):
        arguments.integer(value, name, 0)
    opts = settings.resolve(
        settings.GA,
        {
            "scheme": scheme,
            "mutation": None if callable(mutation) else mutation,  # a function takes indpb too
            "islands": islands,
            "migrate_every": migrate_every,
            "preset": preset,
            "encoding": encoding,
        },
        {"elite": elite, "indpb": indpb, "migrate_every": migrate_every, "migrants": migrants},
        "evolve",
    )
    elite, indpb = opts["elite"], opts["indpb"]
    migrate_every, migrants = opts["migrate_every"], opts["migrants"]
    model, mask = driver.instance_setup(None if n is None else as_size(n), instance, toroidal)
    n = model.n if model is not None else n
    assert n is not None  # given, 8, or the instance's
    if mask is not None and model is not None and encoding == "permutation":
        rows = [y for _, y in model.fixed]
        if len(set(rows)) < len(rows):
            raise QueensError(
                "two fixed queens share a row, which no permutation can hold; "
                "use --encoding combination (the instance has no solution anyway)"
            )
    config, params = check_setup(
        n=n,
        pop=pop,
        generations=generations,
        trials=trials,
        encoding=encoding,
        scheme=scheme,
        crossover=crossover or ga_crossover.DEFAULT_CROSSOVER.get(encoding, ""),
        mutation=mutation or ga_mutation.DEFAULT_MUTATION.get(encoding, ""),
        tournament=tournament if tournament is not None else chosen["tournament"],
        cxpb=cxpb if cxpb is not None else chosen["cxpb"],
        mutpb=mutpb if mutpb is not None else chosen["mutpb"],
        indpb=indpb,
        elite=elite,
        islands=islands,
        migrate_every=migrate_every,
        migrants=migrants,
        fitness=fitness,
        chunk=chunk,
        toroidal=model is not None and model.toroidal,
        constrained=mask is not None,
    )
    if records not in RECORDS:
        raise QueensError(f"records {records!r} is unknown; use one of {', '.join(RECORDS)}")
    chunk, procs, me, total_trials, trials = _plan_run(
        config, n, trials, generations, chunk, records, sink, mask, plan
    )
    dyn, problem, stop, states, m0, compiled, compile_s, init_s = _start(
        config, params, generations, chunk, seed, me, trials, mask
    )

    keep_all = records == "all"
    rec0 = [np.asarray(x)[None] for x in (m0.best, m0.avg, m0.worst, m0.nevals)]
    run = _Run(
        compiled,
        dyn,
        problem,
        stop,
        chunk,
        generations,
        seconds,
        until_solved,
        procs,
        total_trials,
        sink,
        states,
        hist=[rec0] if keep_all else None,
    )
    _collect(run.found, m0.sols, m0.sols_ok)
    fingerprint = _fingerprint(
        config, params, seed, total_trials, generations, chunk, procs, records, sink, model
    )
    if checkpoint is not None:  # one file per process: each holds its own trials
        checkpoint = ckpt.process_path(checkpoint)
    report = ga_io.checks_zero(config.fitness)
    run.solved_at = np.full(trials, -1, np.int64) if report else None
    if run.solved_at is not None:  # (report)
        _mark_solved(run.solved_at, np.asarray(m0.sols)[None], np.asarray(m0.sols_ok)[None], 0)
    run.totals = _Trials(trials)
    run.totals.add(0, rec0[0], rec0[3], run.solved_at)
    gathered0 = [run.everyone(x) for x in rec0]
    run.summary = [summarise(*gathered0)]
    if resume and checkpoint is not None:
        schema = _schema(states, trials, run.hist, run.solved_at)
        run.resume(ckpt.load(checkpoint, fingerprint, schema), checkpoint, keep_all, report)
    elif sink is not None:
        sink.start()
        sink.records(0, *gathered0)
    evals_before = int(run.totals.evals_total.sum())

    def save() -> None:
        _save_checkpoint(checkpoint, run.tree(), fingerprint)

    t0 = run.started = time.perf_counter()
    interrupted = run.done < generations and run_chunks(
        run.step,
        total=generations,
        unit="generations",
        quiet=quiet,
        save=save if checkpoint is not None else None,
        every=checkpoint_every,
    )
    # From here to the result the work is whole: a stop asked meanwhile (Ctrl-C, SIGTERM) is
    # kept for after it (saved, reported as interrupted), never half-way through the records.
    with SafePoints() as safe:
        states, done, found, hist, totals = run.states, run.done, run.found, run.hist, run.totals
        solved_at = run.solved_at
        genes, fit = np.asarray(states.genes), np.asarray(states.fit)
        wall_s = time.perf_counter() - t0
        evals_here = int(totals.evals_total.sum()) - evals_before
        if procs > 1:
            evals_here = int(gather.concat(np.array([evals_here], np.int64)).sum())

        _collect(found, genes, fit == 0)
        if solved_at is not None:  # (report) final populations: generational runs report only
            before = solved_at.copy()  # each island's best
            _mark_solved(solved_at, genes[None], (fit == 0)[None], done)
            late = (before < 0) & (solved_at >= 0)
            totals.evals_at_first[late] = totals.evals_total[late]
        sols = np.unique(np.concatenate(found), axis=0) if found else np.zeros((0, n), genes.dtype)
        kept = None
        if hist is not None:
            names = ("best", "avg", "worst", "evaluations")
            kept = {k: np.concatenate([h[i] for h in hist]) for i, k in enumerate(names)}
            kept["evaluations"] = kept["evaluations"].astype(np.int64)
        per_trial = totals.tree()
        if procs > 1:  # every process gets every trial, in trial order, and all solutions
            kept, genes, fit, sols = _gather_trials(kept, genes, fit, sols, total_trials)
            per_trial = {
                k: np.take(gather.concat(v, 0), np.arange(total_trials))
                for k, v in per_trial.items()
            }
            if report:  # (a checkpoint saved below holds them too, as it did)
                solved_at = run.solved_at = np.take(
                    gather.concat(solved_at, 0), np.arange(total_trials)
                )
        sols, score_met = _verified(sols, genes, n, report, model, f"GA ({encoding}, {scheme})")
        if safe.requested and not interrupted:
            if checkpoint is not None:
                save()
            interrupted = True
    return EvolveResult(
        config=config,
        params=params,
        seed=seed,
        generations=done,
        summary=np.concatenate(run.summary),
        **per_trial,
        solutions=sols,
        population=genes,
        fitness=fit,
        wall_s=wall_s,
        compile_s=compile_s,
        init_s=init_s,
        evals_here=evals_here,
        wall_total_s=run.wall_before + wall_s,
        sessions=run.sessions,
        interrupted=interrupted,
        score_met=score_met,
        solved_at=solved_at,
        instance=model,
        records=kept,
    )


def _plan_run(
    config: Config,
    n: int,
    trials: int,
    generations: int,
    chunk: int | None,
    records: str,
    sink,
    mask: Mask | None,
    plan: Callable[[dict], None] | None,
) -> tuple[int, int, int, int, int]:
    """`evolve`'s layout: (generations per call, processes, this process, trials in all, this
    process's trials), the run's memory checked (and told to `plan`) before anything starts."""
    chunk = chunk or default_chunk(config, trials, generations)
    if backend.is_accelerator():  # generations per call from the device (the records grow)
        devs = local_device_count()
        devs = devs if devs > 1 and -(-trials // gather.process_count()) % devs == 0 else 1
        chunk = accelerator_chunk(config, -(-trials // gather.process_count()), chunk, devs, mask)
    procs, me = gather.process_count(), gather.process_index()
    total_trials, trials = trials, -(-trials // procs)  # process p runs trials p*L .. p*L+L-1
    parts = memory_estimate(
        config,
        trials if records == "all" else total_trials,  # summaries see every trial's chunk
        generations,
        chunk,
        records,
        streamed=sink is not None,
    )
    check_memory(
        parts,
        what=f"{total_trials} trials x {generations} generations ({config.islands} x pop "
        f"{config.pop}, n = {n}{', every record kept' if records == 'all' else ''})",
        fix="use fewer --trials"
        + (" or per-generation summaries (--history summary)" if records == "all" else "")
        + (" or --history summary" if sink is not None else "")
        + ", or run the trials in several runs with different --seed",
    )
    if plan is not None:
        per_solution = 8 * n  # kept, merged, written as int32 (distinct solutions: not known)
        plan(
            {"memory": parts, "available": memory.available_memory(), "per_solution": per_solution}
        )
    return chunk, procs, me, total_trials, trials


def _start(
    config: Config,
    params: dict,
    generations: int,
    chunk: int,
    seed: int,
    me: int,
    trials: int,
    mask: Mask | None,
):
    """`evolve`'s first populations and its compiled generations: (dynamic params, problem,
    stop, states, generation 0's records, the chunk executable, compile seconds, init
    seconds)."""
    dyn = default_params(
        config,
        **params,
        tournament=config.tournament,
        elite=config.elite,
        migrants=config.migrants,
        generations=generations,
    )
    problem = _problem(mask)
    # The executables load from the cache folder (a repeated run traces nothing) and are kept
    # in the process (a repeated call reuses them): parallel.cache.
    t0 = time.perf_counter()
    key, first = rng.seed_key(seed), np.int32(me * trials)
    placed = batch_sharding(trials)  # the states come out where _place puts them: no reshard
    start = cache.loaded(
        "ga-init",
        (config, trials, placed),
        (key, first, dyn, problem),
        lambda: (
            lockstep.init
            if placed is None
            else jax.jit(lockstep.init, static_argnums=(0, 2), out_shardings=placed)
        ).lower(config, key, trials, first, dyn, problem),
    )
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    states, m0 = start(key, first, dyn, problem)
    states = jax.block_until_ready(_place(states))
    init_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    stop = np.int32(generations)
    devices = local_device_count()
    devices = devices if devices > 1 and trials % devices == 0 else 1
    compiled = cache.loaded(
        "ga-generations",
        (config, chunk, devices),
        (states, dyn, problem, stop),
        lambda: run_generations.lower(config, states, dyn, problem, stop, chunk, devices),
    )
    compile_s += time.perf_counter() - t0
    return dyn, problem, stop, states, m0, compiled, compile_s, init_s


def _fingerprint(
    config: Config,
    params: dict,
    seed: int,
    total_trials: int,
    generations: int,
    chunk: int,
    procs: int,
    records: str,
    sink,
    model: cons.Constraints | None,
) -> dict:
    """The settings a checkpoint of `evolve` must match to be resumed."""
    fingerprint = {
        "config": repr(config),
        "params": params,
        "seed": seed,
        "trials": total_trials,
        "generations": generations,
        "chunk": chunk,
        "processes": procs,
        "records": records,
        "streamed": sink is not None,
    }
    if model is not None:
        fingerprint["instance"] = model.to_dict()
    return fingerprint


def _verified(
    sols: np.ndarray,
    genes: np.ndarray,
    n: int,
    report: bool,
    model: cons.Constraints | None,
    what: str,
) -> tuple[np.ndarray, np.ndarray | None]:
    """(the solutions the checker confirms, every board whose report score is 0 (None unless
    the fitness is the report's)); every solution is checked, and an instance's fixed queens."""
    score_met = None
    if report:  # the report's 0 ignores rows: only the checker's verdict makes a solution
        score_met = sols
        real = [checker.are_solutions(b.astype(np.int64)) for b in _batches(sols, n)]
        sols = sols[np.concatenate(real)] if len(sols) else sols
    if model is not None:
        _require_fixed(genes, model, what)
    for part in _batches(sols, n):  # in batches: the checker's temporaries stay bounded
        if model is not None:
            checker.require_constrained(part.astype(np.int64), model, what=what)
        else:
            checker.require_solutions(part, what=what, n=n)
    return sols, score_met


def _batches(boards: np.ndarray, n: int) -> list[np.ndarray]:
    """`boards` `[S, n]` in slices of about 2^20 cells: the checker's int64 temporaries
    (about 45 bytes a cell) stay near 50 MiB however many distinct solutions a run found."""
    rows = max(1, (1 << 20) // max(n, 1))
    return [boards[i : i + rows] for i in range(0, len(boards), rows)]


def _require_fixed(genes: np.ndarray, model: cons.Constraints, what: str) -> None:
    """Raise unless every genome `[..., n]` holds every fixed queen of `model` on its square."""
    for x, y in model.fixed:
        if len(genes) and not (genes[..., x] == y).all():
            raise SolutionCheckError(f"{what}: a genome moved the fixed queen of column {x}")
