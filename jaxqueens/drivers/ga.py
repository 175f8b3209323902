"""Host driver of the genetic algorithms: :func:`evolve` runs jitted chunks of generations.

The kernel (:mod:`jaxqueens.solvers.ga`) is written for one trial; :mod:`jaxqueens.parallel.trials`
runs every trial at once (vmapped in lockstep, split over the local devices). This module checks
the settings (:func:`check_setup`), deals blocks of trials to the processes of a multi-process run,
loops over chunks of generations on :func:`jaxqueens.drivers.loop.run_chunks` (progress line,
checkpoints, Ctrl-C at chunk boundaries), and keeps the records: Best / Avg / Worst per
generation and trial, the first solved generation, every distinct verified solution seen
(steady-state children, each generation's best, the final populations) and the final populations.

Under the GA report's fitness (``fitness="report-diagonals-only"``: diagonal pairs only, rows
ignored) a board that scores 0 need not be a solution. Such boards are kept apart
(``EvolveResult.score_met``); only those the independent checker confirms are ``solutions``, and a
trial counts as solved from the first generation in which one of its boards was confirmed
(``EvolveResult.first_solved``; ``first_score_met`` is when its best first scored 0).

Constrained boards: ``instance`` (a :class:`~jaxqueens.core.constraints.Constraints`:
fixed queens, blocked squares, excluded rows, columns and diagonals) and ``toroidal`` switch the
kernel's static ``toroidal`` / ``constrained`` paths (:mod:`jaxqueens.solvers.ga`), the instance's
allowed squares going in as a dynamic mask (:func:`jaxqueens.drivers.chains.instance_setup`).
Every solution is checked by the independent constrained checker
(:func:`~jaxqueens.core.checker.require_constrained`) against the same instance, the final
populations are checked to hold every fixed queen on its square, and a run that solves no trial
reports the instance ``unknown`` (a GA never proves UNSAT; a plainly unsatisfiable instance is
refused before any trial with :class:`~jaxqueens.errors.InstanceUnsat` and its reason).
"""

from __future__ import annotations

import dataclasses
import math
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import arguments, checker
from jaxqueens.core import constraints as cons
from jaxqueens.core.board import as_size
from jaxqueens.drivers import chains as driver
from jaxqueens.drivers import settings
from jaxqueens.drivers.loop import Tick, run_chunks
from jaxqueens.errors import QueensError, SolutionCheckError
from jaxqueens.io import checkpoint as ckpt
from jaxqueens.parallel import devices as backend
from jaxqueens.parallel import gather, sizing
from jaxqueens.parallel import trials as lockstep
from jaxqueens.parallel.devices import local_device_count
from jaxqueens.parallel.shard import shard_batch
from jaxqueens.solvers import ga_crossover, ga_fitness, ga_mutation
from jaxqueens.solvers.constrained import Mask
from jaxqueens.solvers.ga import ENCODINGS, SCHEMES, Config, Problem, State, default_params


@dataclasses.dataclass
class EvolveResult:
    """What :func:`evolve` returns (NumPy arrays; generation 0 is the initial population)."""

    config: Config
    params: dict  # cxpb, mutpb, indpb, migrate_every as Python numbers
    seed: int
    best: np.ndarray  # [G+1, T] int32 lowest attacking pairs per generation and trial
    avg: np.ndarray  # [G+1, T] float32 mean
    worst: np.ndarray  # [G+1, T] int32 highest
    evaluations: np.ndarray  # [G+1, T] int64 evaluations per generation (DEAP's count)
    solutions: np.ndarray  # [S, n] distinct verified solutions seen in any trial (sorted)
    population: np.ndarray  # [T, I, P, n] final genomes
    fitness: np.ndarray  # [T, I, P] final attacking pairs
    wall_s: float  # generations, excluding compilation and initialisation
    compile_s: float
    init_s: float
    interrupted: bool = False  # Ctrl-C: the records cover the generations finished so far
    score_met: np.ndarray | None = None  # report's fitness only: [M, n] distinct boards scoring 0
    solved_at: np.ndarray | None = None  # report's fitness only: [T] first generation with a
    # checker-confirmed solution (-1: none)
    instance: cons.Constraints | None = None  # the constrained instance (toroidal included), if any

    @property
    def status(self) -> str:
        """ "SAT" when a trial found a verified solution, else "unknown" (never UNSAT)."""
        return "SAT" if len(self.solutions) else "unknown"

    @property
    def first_score_met(self) -> np.ndarray:
        """[T] int: first generation whose best scores 0 under the run's fitness; -1 if never."""
        hit = self.best == 0
        return np.where(hit.any(axis=0), hit.argmax(axis=0), -1)

    @property
    def first_solved(self) -> np.ndarray:
        """[T] int: first generation in which the trial held a verified solution; -1 if never.
        (With the honest fitnesses a score of 0 is a solution: the best's first 0.)"""
        return self.solved_at if self.solved_at is not None else self.first_score_met

    @property
    def success_rate(self) -> float:
        """Fraction of trials that found a solution."""
        return float(np.mean(self.first_solved >= 0))

    def success_curve(self) -> np.ndarray:
        """[G+1] fraction of trials solved by generation g."""
        fs = self.first_solved
        g = np.arange(self.best.shape[0])[:, None]
        return np.mean((fs[None, :] >= 0) & (fs[None, :] <= g), axis=1)

    @property
    def evals_per_s(self) -> float:
        """Evaluations (DEAP's count, the initial population included) per second of generation
        time."""
        return float(self.evaluations.sum()) / max(self.wall_s, 1e-12)


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

    def need(ok, msg):
        if not ok:
            raise QueensError(msg)

    need(
        encoding in ENCODINGS,
        f"encoding {encoding!r} is unknown; use one of {', '.join(ENCODINGS)}",
    )
    need(
        fitness in ga_fitness.FITNESS,
        f"fitness {fitness!r} is unknown; use one of {', '.join(ga_fitness.FITNESS)}",
    )
    need(scheme in SCHEMES, f"scheme {scheme!r} is unknown; use one of {', '.join(SCHEMES)}")
    for what, name, table in (
        ("crossover", crossover, ga_crossover.CROSSOVERS),
        ("mutation", mutation, ga_mutation.MUTATIONS),
    ):
        need(
            name in table[encoding],
            f"{what} {name!r} does not apply to the {encoding} encoding; "
            f"use one of {', '.join(table[encoding])}",
        )
    for name, v in (
        ("n", n),
        ("pop", pop),
        ("generations", generations),
        ("trials", trials),
        ("tournament", tournament),
        ("elite", elite),
        ("islands", islands),
        ("migrate_every", migrate_every),
        ("migrants", migrants),
        ("chunk", chunk),
    ):
        need(
            v is None or (isinstance(v, (int, np.integer)) and not isinstance(v, bool)),
            f"{name} must be an integer, got {v!r}",
        )
    need(n >= 4, f"n = {n} has no solution to evolve towards; use n >= 4")
    need(n <= 32767, f"n = {n} is above the GA's limit of 32767 (int16 genes); use a smaller n")
    need(pop >= 2, f"pop = {pop} is too small; a population needs at least 2 individuals")
    need(
        tournament >= (2 if scheme == "steady" else 1),
        f"tournament = {tournament} is too small; use at least {2 if scheme == 'steady' else 1}",
    )
    need(
        pop >= tournament,
        f"pop = {pop} is smaller than the tournament size {tournament}; "
        "raise --pop or lower --tournament",
    )
    for name, v in (("cxpb", cxpb), ("mutpb", mutpb), ("indpb", indpb)):
        need(isinstance(v, (int, float)) and 0.0 <= v <= 1.0, f"{name} = {v!r} must lie in [0, 1]")
    need(
        generations >= 0 and trials >= 1 and islands >= 1 and migrate_every >= 0,
        "generations and migrate_every must be >= 0, trials and islands >= 1",
    )
    need(0 <= elite < pop, f"elite = {elite} must lie in 0..pop-1 ({pop - 1})")
    need(1 <= migrants < pop, f"migrants = {migrants} must lie in 1..pop-1 ({pop - 1})")
    need(chunk is None or chunk >= 1, f"chunk = {chunk} must be at least 1")
    need(
        not ((toroidal or constrained) and fitness == ga_fitness.REPORT_FITNESS),
        "--fitness report-diagonals-only applies to the plain board only; use pairs or excess "
        "with --toroidal or --instance",
    )
    need(
        not constrained or (n + 1) * ga_fitness.forbidden_weight(n) < 2**31,
        f"n = {n} is too large for a constrained GA (its int32 penalties would overflow); "
        "use n <= 1000",
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
    params = {
        "cxpb": float(cxpb),
        "mutpb": float(mutpb),
        "indpb": float(indpb),
        "migrate_every": int(migrate_every),
    }
    return config, params


CLASSIC = settings.GA_CLASSIC
"""The classic settings (``--preset classic``): :data:`jaxqueens.drivers.settings.GA_CLASSIC`."""
DEFAULTS = settings.GA_DEFAULTS
"""Measured defaults (``--preset default``): :data:`jaxqueens.drivers.settings.GA_DEFAULTS`."""
PRESETS = settings.GA_PRESET_SETTINGS
"""Named settings (``--preset``): ``default`` (measured, :data:`DEFAULTS`) and ``classic``
(:data:`CLASSIC`); one table, :data:`jaxqueens.drivers.settings.GA_PRESET_SETTINGS`, which the
command line reads before JAX is imported."""

preset_settings = settings.ga_preset
"""Population, tournament, rates and elite of a preset for an encoding and scheme
(:func:`jaxqueens.drivers.settings.ga_preset`)."""


def default_chunk(config: Config, trials: int, generations: int) -> int:
    """Generations per jitted chunk: all of them for small runs, ~2^26 genes of work per chunk."""
    work = trials * config.islands * config.pop * config.n
    return max(1, min(generations, max(10, (1 << 26) // max(work, 1))))


run_generations = jax.jit(lockstep.run_chunk, static_argnums=(0, 5, 6), donate_argnums=(1,))
"""Jitted :func:`jaxqueens.parallel.trials.run_chunk` ``(config, states, params, problem, stop,
length, devices)``: a chunk of generations of every trial, split over ``devices`` local devices."""


def chunk_builder(
    config: Config, trials: int, devices: int = 1, mask: Mask | None = None, place=None
):
    """``generations -> jax.stages.Lowered``: :func:`run_generations` for ``trials`` trials and
    that many generations per call (its per-generation records grow with it), on abstract
    arguments (``place`` may put them on a described device): the builder
    :func:`jaxqueens.parallel.sizing.choose` sizes on an accelerator and ``make gpu-check``
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
    """The kernel's ``Problem`` of an instance's mask (None: the plain or toroidal board)."""
    return None if mask is None else Problem(mask)


def accelerator_chunk(
    config: Config, trials: int, want: int, devices: int, mask: Mask | None = None, target=None
) -> int:
    """Generations per call on an accelerator: ``want`` (:func:`default_chunk`), or as many as
    the device's memory holds beside the population (:func:`jaxqueens.parallel.sizing.choose`).
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


def _collect(found: list, sols, ok):
    sols, ok = np.asarray(sols), np.asarray(ok)
    if ok.any():
        found.append(np.unique(sols[ok].reshape(-1, sols.shape[-1]), axis=0))


def _mark_solved(solved_at: np.ndarray, sols, ok, gen0: int) -> None:
    """Report's fitness: record in ``solved_at`` [T] the first generation in which a trial's
    candidate that scored 0 is a solution by the independent checker. ``sols`` [G, T, ...,
    n] and ``ok`` [G, T, ...] are the candidates of generations ``gen0 ..``."""
    sols, ok = np.asarray(sols), np.asarray(ok)
    if not ok.any():
        return
    where = np.nonzero(ok)
    real = checker.are_solutions(sols[ok].astype(np.int64))
    gens, trials = where[0][real] + gen0, where[1][real]
    for t in np.unique(trials):
        if solved_at[t] < 0:
            solved_at[t] = int(gens[trials == t].min())


def _gather_trials(best, avg, worst, nevals, genes, fit, sols, trials: int):
    """Across processes: records [G+1, T] and populations [T, ...] of all trials, in order,
    and the union of the distinct solutions."""

    def cat(x, axis):  # every process's trials joined along the trial axis, cut to T
        return np.take(gather.concat(x, axis), np.arange(trials), axis=axis)

    out = [cat(x, 1) for x in (best, avg, worst, nevals)] + [cat(genes, 0), cat(fit, 0)]
    merged = gather.ragged(sols)
    return (*out, np.unique(merged, axis=0) if len(merged) else sols)


def _save_checkpoint(
    path,
    states: State,
    hist,
    found,
    done: int,
    fingerprint: dict,
    solved_at: np.ndarray | None = None,
) -> None:
    """Population, records and solutions after ``done`` generations, written atomically."""
    cols = [np.concatenate([h[i] for h in hist]) for i in range(4)]
    sols = np.concatenate(found) if found else np.zeros((0, states.genes.shape[-1]), np.int32)
    tree = {
        "states": jax.tree.map(np.asarray, states),
        "records": dict(zip(_RECORDS, cols, strict=True)),
        "sols": sols,
        "done": done,
        "solved_at": solved_at,
    }
    ckpt.save(path, tree, fingerprint)


_RECORDS = ("best", "avg", "worst", "nevals")  # per generation and trial: [G + 1, T]


def _load_checkpoint(path, fingerprint: dict, states: State, hist, solved_at):
    """(states, hist, found, generations done, solved_at or None) from a checkpoint made with
    the same settings; the fresh ``states``, generation-0 records ``hist`` and ``solved_at`` are
    the template its arrays must fit."""
    n = states.genes.shape[-1]
    records = {
        k: ckpt.Spec(np.dtype(h.dtype), ("records", h.shape[1]))
        for k, h in zip(_RECORDS, hist[0], strict=True)
    }
    schema = {
        "states": ckpt.like(states),
        "records": records,
        "sols": ckpt.Spec(np.integer, (None, n)),
        "done": ckpt.Spec(np.integer),
    }
    if solved_at is not None:  # the report's fitness: each trial's first solved generation
        schema["solved_at"] = ckpt.Spec(np.int64, solved_at.shape)
    z = ckpt.load(path, fingerprint, schema)
    states = _place(State(**{k: jnp.asarray(v) for k, v in z["states"].items()}))
    hist = [[z["records"][k] for k in _RECORDS]]
    found = [z["sols"]] if len(z["sols"]) else []
    return states, hist, found, int(z["done"]), z.get("solved_at")


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
    fitness: str = "pairs",
    seed: int = 0,
    chunk: int | None = None,
    quiet: bool | None = True,
    checkpoint=None,
    resume: bool = False,
    checkpoint_every: float = 30.0,
    instance: cons.Constraints | None = None,
    toroidal: bool = False,
    preset: str = "default",
    seconds: float | None = None,
) -> EvolveResult:
    """Evolve ``trials`` independent runs (each of ``islands`` populations of ``pop``) at once.

    An option the scheme, mutation or island count does not use is refused by name
    (:data:`jaxqueens.drivers.settings.GA`): ``elite`` with "steady", ``indpb`` with
    "inversion" or "scramble", ``migrate_every`` with one island.

    Args:
      n: board size (>= 4; default 8); with ``instance``, None or the instance's size.
      pop: individuals per island (default: the preset's).
      generations: generations per trial.
      trials: independent runs (trial t seeded from ``fold_in(key(seed), t)``).
      encoding: "permutation" or "combination".
      scheme: "steady" (two children per generation replace the two worst) or "generational"
        (DEAP's eaSimple, plus ``elite`` best parents kept).
      crossover: permutation: "cut" (default), "pmx", "ox1", "cycle"; combination: "one_point"
        (default), "uniform".
      mutation: permutation: "swap" (default), "inversion", "scramble"; combination: "reset".
      tournament: tournament size (default: the preset's).
      cxpb: crossover probability (default: the preset's).
      mutpb: mutation probability per child (default: the preset's).
      indpb: per-gene rate of swap/reset mutation (DEAP's indpb); 0 (default) mutates exactly
        one gene.
      elite: generational only: best parents copied over the worst offspring (default: the
        preset's, 1).
      preset: where ``pop``, ``tournament``, ``cxpb``, ``mutpb`` and ``elite`` come from when not
        given: "default" (measured at ``compare``'s budget, :data:`DEFAULTS`: permutation steady
        state population 10, tournament 4, cxpb 0.2, mutpb 1) or "classic" (the classic
        course GA, :data:`CLASSIC`: population 100, tournament 5, cxpb 1, mutpb 1; generational
        tournament 3, cxpb 0.5, mutpb 0.2).
      islands: populations per trial, on a migration ring.
      migrate_every: generations between migrations (default 0: never; 2+ islands only).
      migrants: individuals sent along the ring per migration (default 1; with migrations only).
      fitness: what the GA minimises and the records report: "pairs" (attacking pairs, default)
        or "excess" (sum over lines of queens beyond the first: DEAP's N-Queens fitness), both 0
        exactly for solutions; or "report-diagonals-only" (the GA report's score: diagonal
        pairs, rows ignored), whose 0 is not always a solution: boards that score 0 are
        returned in ``score_met`` and only those the checker confirms in ``solutions``.
      seed: random seed.
      chunk: generations per jitted call (default: :func:`default_chunk`).
      quiet: no progress line (None: a progress line on a terminal only).
      checkpoint: file for checkpoints (population, records and solutions after whole chunks of
        generations, every ``checkpoint_every`` seconds and on Ctrl-C, written atomically);
        ``resume`` continues from it with the same results as an uninterrupted run. An
        interrupted run returns what it finished with ``interrupted`` set.
      instance: a constrained instance (fixed queens never move, forbidden squares are never
        part of a solution; in the permutation encoding its fixed queens need distinct rows).
      toroidal: queens attack along diagonals modulo n (also when ``instance`` says so).
      seconds: stop after the chunk of generations that passes this much run time (compilation
        excluded): the records then end there (``stats --time``: a round never runs past its
        budget by more than one chunk).

    Returns:
      EvolveResult; every solution in it has passed the independent checker.
    """
    if n is None and instance is None:
        n = 8
    seed = arguments.seed(seed, "--seed")
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
            "mutation": mutation,
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
    chunk = chunk or default_chunk(config, trials, generations)
    if backend.is_accelerator():  # generations per call from the device (the records grow)
        devs = local_device_count()
        devs = devs if devs > 1 and -(-trials // gather.process_count()) % devs == 0 else 1
        chunk = accelerator_chunk(config, -(-trials // gather.process_count()), chunk, devs, mask)
    dyn = default_params(
        config,
        **params,
        tournament=config.tournament,
        elite=config.elite,
        migrants=config.migrants,
        generations=generations,
    )
    problem = _problem(mask)
    t0 = time.perf_counter()
    procs, me = gather.process_count(), gather.process_index()
    total_trials, trials = trials, -(-trials // procs)  # process p runs trials p*L .. p*L+L-1
    states, m0 = lockstep.init(
        config, jax.random.key(seed), trials, jnp.int32(me * trials), dyn, problem
    )
    states = jax.block_until_ready(_place(states))
    init_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    stop = jnp.int32(generations)
    devices = local_device_count()
    devices = devices if devices > 1 and trials % devices == 0 else 1
    compiled = run_generations.lower(config, states, dyn, problem, stop, chunk, devices).compile()
    compile_s = time.perf_counter() - t0

    hist = [[np.asarray(x)[None] for x in (m0.best, m0.avg, m0.worst, m0.nevals)]]
    found: list[np.ndarray] = []
    _collect(found, m0.sols, m0.sols_ok)
    fingerprint = {
        "config": repr(config),
        "params": params,
        "seed": seed,
        "trials": total_trials,
        "generations": generations,
        "chunk": chunk,
        "processes": procs,
    }
    if model is not None:
        fingerprint["instance"] = model.to_dict()
    if checkpoint is not None:  # one file per process: each holds its own trials
        checkpoint = ckpt.process_path(checkpoint)
    done = 0
    report = config.fitness == ga_fitness.REPORT_FITNESS
    solved_at = np.full(trials, -1, np.int64) if report else None
    if solved_at is not None:  # (report)
        _mark_solved(solved_at, np.asarray(m0.sols)[None], np.asarray(m0.sols_ok)[None], 0)
    if resume and checkpoint is not None:
        states, hist, found, done, saved = _load_checkpoint(
            checkpoint, fingerprint, states, hist, solved_at
        )
        solved_at = saved if report else None

    def recorded() -> int:  # generations whose records are in hist
        return sum(len(h[0]) for h in hist) - 1

    def one_chunk() -> Tick:
        nonlocal states, done
        states, m = compiled(states, dyn, problem, stop)
        keep = min(chunk, generations - done)
        hist.append([np.asarray(x)[:keep] for x in (m.best, m.avg, m.worst, m.nevals)])
        _collect(found, m.sols[:keep], m.sols_ok[:keep])
        if solved_at is not None:  # (report)
            _mark_solved(solved_at, m.sols[:keep], m.sols_ok[:keep], done + 1)
        done += keep
        late = seconds is not None and time.perf_counter() - started >= seconds
        return Tick(
            done, f"best {int(hist[-1][0][-1].min())}", finished=done >= generations or late
        )

    def save() -> None:
        _save_checkpoint(checkpoint, states, hist, found, recorded(), fingerprint, solved_at)

    t0 = started = time.perf_counter()
    interrupted = done < generations and run_chunks(
        one_chunk,
        total=generations,
        unit="generations",
        quiet=quiet,
        save=save if checkpoint is not None else None,
        every=checkpoint_every,
    )
    genes, fit = np.asarray(states.genes), np.asarray(states.fit)
    wall_s = time.perf_counter() - t0

    _collect(found, genes, fit == 0)
    if solved_at is not None:  # (report) final populations: generational runs report only
        _mark_solved(solved_at, genes[None], (fit == 0)[None], recorded())  # each island's best
    sols = np.unique(np.concatenate(found), axis=0) if found else np.zeros((0, n), genes.dtype)
    best, avg, worst, nevals = (np.concatenate([h[i] for h in hist]) for i in range(4))
    if procs > 1:  # every process gets every trial, in trial order, and all solutions
        best, avg, worst, nevals, genes, fit, sols = _gather_trials(
            best, avg, worst, nevals, genes, fit, sols, total_trials
        )
        if report:
            solved_at = np.take(gather.concat(solved_at, 0), np.arange(total_trials))
    score_met = None
    if report:  # the report's 0 ignores rows: only the checker's verdict makes a solution
        score_met = sols
        sols = sols[checker.are_solutions(sols.astype(np.int64))] if len(sols) else sols
    what = f"GA ({encoding}, {scheme})"
    if model is not None:
        _require_fixed(genes, model, what)
        if len(sols):
            checker.require_constrained(sols.astype(np.int64), model, what=what)
    elif len(sols):
        checker.require_solutions(sols, what=what, n=n)
    return EvolveResult(
        config,
        params,
        seed,
        best,
        avg,
        worst,
        nevals.astype(np.int64),
        sols,
        genes,
        fit,
        wall_s,
        compile_s,
        init_s,
        interrupted,
        score_met,
        solved_at,
        model,
    )


def _require_fixed(genes: np.ndarray, model: cons.Constraints, what: str) -> None:
    """Raise unless every genome ``[..., n]`` holds every fixed queen of ``model`` on its square."""
    for x, y in model.fixed:
        if len(genes) and not (genes[..., x] == y).all():
            raise SolutionCheckError(f"{what}: a genome moved the fixed queen of column {x}")
