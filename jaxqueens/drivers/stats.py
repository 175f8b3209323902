"""Solution-count statistics of a solver: `collect` samples, `analyse`, `stats`.

Runs independent chains of a solver (min-conflicts, LS/TA/SA, or GA trials) until a budget,
takes one verified solution per solved chain, and measures how the method samples the solution
set: distinct solutions and fundamental classes found against OEIS A000170 / A002562, the
coverage curve against the coupon-collector expectation `Q (1 - (1 - 1/Q)^m)`, Pearson's
chi-square test of uniformity over all Q solutions and over classes
(`jaxqueens.core.statistics`), and the steps-to-solution distribution.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import checker, symmetry, symmetry_jax
from jaxqueens.core.board import as_size
from jaxqueens.core.oeis import A000170, A002562
from jaxqueens.core.statistics import uniformity_test
from jaxqueens.drivers import anneal as annealing
from jaxqueens.drivers import chains as driver
from jaxqueens.drivers import count, ga, settings, stats_setup
from jaxqueens.drivers import minconflicts as mcsolve
from jaxqueens.drivers.loop import Tick, run_chunks
from jaxqueens.errors import QueensError
from jaxqueens.io import checkpoint as ckpt
from jaxqueens.parallel import cache
from jaxqueens.parallel import chains as chain_batch
from jaxqueens.parallel.devices import local_device_count
from jaxqueens.solvers import anneal as sls
from jaxqueens.solvers.variants import solver_name

ENUMERATE_MAX_N = 14  # all solutions listed (frequencies include the unsampled ones)


# ----------------------------------------------------------------------------- sampling


@dataclasses.dataclass
class Samples:
    """What a solver run gives the statistics: one sample per solved chain (host arrays).

    Attributes:
      n: board size.
      solver: "minconflicts", "anneal" or "ga".
      options: the solver's options as run.
      solved: [C] bool per chain run
      steps: [C] int64 steps (GA: generations) to solution, or spent if unsolved
      rows: [S, n] int32 verified solutions of the solved chains, in chain order
      step_unit: "steps" or "generations"
      wall_s: kernel seconds, compilation excluded.
      compile_s: compilation seconds.
      stopped_by: the budget that ended the run (or "interrupted").
      run: chain solvers: the run itself (runs.csv is its table)
      work: GA: [C, 3] int64 per trial: evaluations spent, evaluations to the end of its first
        solved generation (-1: unsolved), generations run (-1: unknown)
      seconds: GA: [C] float64 each trial's share of its round's time
    """

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
    run: driver.ChainRun | None = None  # chain solvers: the run itself (runs.csv is its table)
    work: np.ndarray | None = None  # GA: [C, 3] int64 per trial: evaluations spent, evaluations
    # to the end of its first solved generation (-1: unsolved), generations run (-1: unknown)
    seconds: np.ndarray | None = None  # GA: [C] float64 each trial's share of its round's time

    @property
    def chains(self) -> int:
        return int(self.solved.size)

    @property
    def name(self) -> str:
        """The solver's one name in every output (`solver_name` of its family and options)."""
        picked = ("init", "tabu", "move", "method", "encoding")
        return solver_name(self.solver, **{k: self.options[k] for k in picked if k in self.options})

    @property
    def sample_chain(self) -> np.ndarray:
        """[S] chain index of every sample."""
        return np.flatnonzero(self.solved)


def _budget_check(n: int, chains, solutions, seconds):
    if solutions is not None and n in A000170 and solutions > A000170[n]:
        raise QueensError(
            f"--solutions {solutions}: n = {n} has only {A000170[n]:,} solutions; "
            f"ask for at most that many"
        )
    return driver.Budget(chains=chains, solutions=solutions, seconds=seconds)


def _from_run(run, solver: str, options: dict) -> Samples:
    return Samples(
        run.n,
        solver,
        options,
        run.solved.copy(),
        run.steps.copy(),
        run.solutions.astype(np.int32),
        "steps",
        run.wall_s,
        run.compile_s,
        run.stopped_by,
        run=run,
    )


def sample_minconflicts(
    n,
    chains,
    solutions,
    seconds,
    seed,
    quiet,
    max_steps=None,
    init="permutation",
    tabu=0,
    batch=None,
    max_restarts=1_000_000,
    checkpoint=None,
    resume=False,
    checkpoint_every=settings.CHECKPOINT_EVERY,
) -> Samples:
    """Min-conflicts chains through `jaxqueens.solve` (`chains`: solved chains;
    `max_steps` None: its default restart period)."""
    res = mcsolve.solve(
        n,
        chains,
        solutions=solutions,
        seconds=seconds,
        max_steps=max_steps,
        init=init,
        tabu=tabu,
        seed=seed,
        batch=batch,
        max_restarts=max_restarts,
        quiet=quiet,
        checkpoint=checkpoint,
        resume=resume,
        checkpoint_every=checkpoint_every,
        command="stats",
    )
    return _from_run(
        res.run,
        "minconflicts",
        {
            "max_steps": res.summary.get("max_steps", max_steps),
            "init": init,
            "tabu": tabu,
            "max_restarts": max_restarts,
        },
    )


def sample_anneal(
    n,
    chains,
    solutions,
    seconds,
    seed,
    quiet,
    batch=None,
    checkpoint=None,
    resume=False,
    checkpoint_every=settings.CHECKPOINT_EVERY,
    **options,
) -> Samples:
    """LS / TA / SA chains (`anneal`'s schedule and kernel; `chains`:
    run). `options`: method, steps, preset, rounds, neighbour, step, objective, q, init_prob,
    alpha, t_end, walk (defaults: `STATS_ANNEAL` and the
    preset's, `anneal_settings`); one the method does not use
    is refused."""
    got = stats_setup.check_stats_anneal(n, options, chains, seed, batch)
    method, steps, rounds, walk = got["method"], got["steps"], got["rounds"], got["walk"]
    neighbour, step, objective = got["neighbour"], got["step"], got["objective"]
    q, init_prob, alpha, preset = got["q"], got["init_prob"], got["alpha"], got["preset"]
    config = annealing.make_config(n, method, steps, rounds, neighbour, step, objective)
    budget = driver.Budget(max_chains=chains, solutions=solutions, seconds=seconds)
    cal_key, key = chain_batch.seed_keys(seed, 2)
    schedule, _ = annealing.calibrate(cal_key, config, walk, q, init_prob, alpha)
    chunk = batch or annealing.chunk_for(chains, config, local_device_count())
    t0 = time.perf_counter()
    runner = chain_batch.compile_runner(
        chain_batch.Chains(sls, config),
        key,
        chunk,
        annealing.schedule_params(schedule),
        total=chains,
    )
    compile_s = time.perf_counter() - t0
    fingerprint = {
        "command": "stats",
        "solver": f"stats-annealing-{method}",
        "seed": seed,
        "schedule": [float(x) for x in schedule],
        "config": {k: v for k, v in dataclasses.asdict(config).items() if k != "scatter_counts"},
        "steps": "spent",  # `steps` holds the steps spent (a checkpoint without it: the best's)
    }
    run = driver.run_chains(
        annealing.spent_steps(runner, config),
        n,
        budget,
        chunk,
        what=f"annealing ({method})",
        compile_s=compile_s,
        quiet=quiet,
        checkpoint=checkpoint,
        fingerprint=fingerprint,
        resume=resume,
        checkpoint_every=checkpoint_every,
        solver=method,
        best_unit=annealing.best_unit(config),
    )
    return _from_run(
        run,
        "anneal",
        {
            "method": method,
            "steps": config.total_steps,
            "rounds": rounds,
            "neighbour": neighbour,
            "step": step,
            "objective": objective,
            "q": q,
            "init_prob": init_prob,
            "alpha": alpha,
            "preset": preset,
        },
    )


def sample_ga(
    n,
    chains,
    solutions,
    seconds,
    seed,
    quiet,
    batch=None,
    checkpoint=None,
    resume=False,
    checkpoint_every=settings.CHECKPOINT_EVERY,
    **ga_options,
) -> Samples:
    """GA trials (`jaxqueens.evolve`), `batch` trials per round; one sample per trial.

    A trial's sample is the first solution (island-major, then population order) in its final
    population, its steps the first generation whose best was a solution. Round r is seeded from
    `SeedSequence([seed, r])`: the samples depend on the round size. Rounds run through
    `run_chunks`; Ctrl-C (or an interrupted round) keeps whole rounds.
    With `seconds`, a round stops at the chunk of generations that passes the time left (its
    unsolved trials count as unsolved after the generations run): a round of 1024 trials ran
    to its end, 10-20 s past `--time 1` at n = 16 on a loaded machine.
    """
    rounds_of = batch or min(chains or 1024, 1024)
    fingerprint = {
        "solver": "stats-ga",
        "n": n,
        "seed": seed,
        "round": rounds_of,
        "options": {k: v for k, v in sorted(ga_options.items()) if v is not None},
    }
    t = _GARounds(n, chains, solutions, seconds, seed, rounds_of, ga_options)
    if resume and checkpoint is not None:
        t.solved, t.steps, t.rows, t.r, t.wall, t.work, t.secs = _load_rounds(
            checkpoint, fingerprint
        )
        t.seen.update(x.tobytes() for part in t.rows for x in part)
    save = None
    if checkpoint is not None:
        save = lambda: _save_rounds(
            checkpoint, t.solved, t.steps, t.rows, t.r, t.wall, fingerprint, t.work, t.secs
        )
    if run_chunks(
        t.one_round, total=chains, unit="trials", quiet=quiet, save=save, every=checkpoint_every
    ):
        t.stopped_by = "interrupted"
    assert t.stopped_by is not None  # the loop ends when a budget is met or on an interrupt
    return t.samples()


@dataclasses.dataclass
class _GARounds:
    """`sample_ga`'s rounds: their settings and the samples recorded so far."""

    n: int
    chains: int | None
    solutions: int | None
    seconds: float | None
    seed: int
    rounds_of: int  # trials per round
    ga_options: dict
    solved: list = dataclasses.field(default_factory=list)  # [T] bool per round
    steps: list = dataclasses.field(default_factory=list)  # [T] generations per round
    rows: list = dataclasses.field(default_factory=list)  # [S, n] solutions per round
    work: list = dataclasses.field(default_factory=list)  # [T, 3] per round: evaluations
    # spent, to solution, generations
    secs: list = dataclasses.field(default_factory=list)  # [T] per round: each trial's share
    # of the round's seconds
    seen: set[bytes] = dataclasses.field(default_factory=set)
    wall: float = 0.0
    compile_s: float = 0.0
    stopped_by: str | None = None
    r: int = 0  # next round

    def one_round(self) -> Tick:
        """Evolve round r and record its samples (a KeyboardInterrupt leaves the record whole)."""
        n, chains, seconds = self.n, self.chains, self.seconds
        run = (
            self.rounds_of
            if chains is None
            else min(self.rounds_of, chains - sum(map(len, self.solved)))
        )
        sub_seed = int(
            np.random.SeedSequence([self.seed, self.r]).generate_state(1)[0] & 0x7FFFFFFF
        )
        left = None if seconds is None else max(seconds - self.wall, 1e-9)  # a round ends by then
        res = ga.evolve(n, trials=run, seed=sub_seed, quiet=True, seconds=left, **self.ga_options)
        if res.interrupted:  # keep whole rounds only
            raise KeyboardInterrupt
        self.wall = self.wall + res.wall_s + res.init_s
        self.compile_s = self.compile_s + res.compile_s
        fit = res.fitness.reshape(run, -1)
        pop = res.population.reshape(run, -1, n)
        has = (fit == 0).any(axis=1)
        first = np.argmax(fit == 0, axis=1)
        sols = pop[np.arange(run), first][has].astype(np.int32)
        checker.require_solutions(sols, what="GA samples", n=n)
        gens = res.first_solved.astype(np.int64)
        self.solved.append(has)
        self.steps.append(np.where(has, gens, res.generations))
        spent = np.asarray(res.evals_total, np.int64)  # DEAP's count, per trial
        to_solution = np.where(has, np.asarray(res.evals_at_first, np.int64), -1)
        self.work.append(np.stack([spent, to_solution, np.full(run, res.generations)], axis=1))
        self.secs.append((res.wall_s + res.init_s) * spent / max(1, int(spent.sum())))
        self.rows.append(sols)
        self.seen.update(s.tobytes() for s in sols)
        self.r += 1
        done = sum(map(len, self.solved))
        if chains is not None and done >= chains:
            self.stopped_by = "chains"
        elif self.solutions is not None and len(self.seen) >= self.solutions:
            self.stopped_by = "solutions"
        elif seconds is not None and self.wall >= seconds:
            self.stopped_by = "time"
        return Tick(done, f"{len(self.seen)} distinct", finished=self.stopped_by is not None)

    def samples(self) -> Samples:
        """The samples of the rounds run (none: empty arrays)."""
        n, stopped_by = self.n, self.stopped_by
        assert stopped_by is not None
        if not self.solved:
            return Samples(
                n,
                "ga",
                {},
                np.zeros(0, bool),
                np.zeros(0, np.int64),
                np.zeros((0, n), np.int32),
                "generations",
                self.wall,
                self.compile_s,
                stopped_by,
            )
        return Samples(
            n,
            "ga",
            {k: v for k, v in self.ga_options.items() if v is not None},
            np.concatenate(self.solved),
            np.concatenate(self.steps),
            np.concatenate(self.rows),
            "generations",
            self.wall,
            self.compile_s,
            stopped_by,
            work=np.concatenate(self.work),
            seconds=np.concatenate(self.secs),
        )


def _save_rounds(path, solved, steps, rows, r, wall, fingerprint, work=(), secs=()) -> None:
    """GA samples of the finished rounds, atomically."""
    tree = {
        "work": np.concatenate(work) if len(work) else np.zeros((0, 3), np.int64),
        "seconds": np.concatenate(secs) if len(secs) else np.zeros(0),
        "solved": np.concatenate(solved) if solved else np.zeros(0, bool),
        "steps": np.concatenate(steps) if steps else np.zeros(0, np.int64),
        "rows": np.concatenate(rows) if rows else np.zeros((0, 1), np.int32),
        "sizes": np.array([len(x) for x in solved], np.int64),
        "row_sizes": np.array([len(x) for x in rows], np.int64),
        "rounds": r,
        "wall": wall,
    }
    ckpt.save(path, tree, fingerprint)


_ROUNDS = {
    "solved": ckpt.Spec(np.bool_, ("trials",)),  # [T] each trial solved?
    "steps": ckpt.Spec(np.integer, ("trials",)),  # [T] its first solved generation
    "work": ckpt.Spec(np.integer, ("trials", 3), optional=True),  # [T, 3] Samples.work
    "seconds": ckpt.Spec(np.floating, ("trials",), optional=True),  # [T] Samples.seconds
    "rows": ckpt.Spec(np.integer, ("solutions", None)),  # [S, n] samples ([0, 1] if none)
    "sizes": ckpt.Spec(np.integer, ("rounds",)),  # [R] trials per round
    "row_sizes": ckpt.Spec(np.integer, ("rounds",)),  # [R] solutions per round
    "rounds": ckpt.Spec(np.integer),
    "wall": ckpt.Spec(np.floating),
}
"""The checkpoint of `sample_ga`'s finished rounds."""


def _load_rounds(path, fingerprint):
    z = ckpt.load(path, fingerprint, _ROUNDS)
    sizes, row_sizes = z["sizes"], z["row_sizes"]
    cut = lambda a, sizes: np.split(a, np.cumsum(sizes)[:-1]) if len(sizes) else []
    trials = len(z["solved"])
    # a checkpoint without the work records (an older one): unknown, empty cells in runs.csv
    work = z["work"] if z["work"] is not None else np.full((trials, 3), -1, np.int64)
    secs = z["seconds"] if z["seconds"] is not None else np.full(trials, np.nan)
    return (
        cut(z["solved"], sizes),
        cut(z["steps"], sizes),
        cut(z["rows"], row_sizes),
        int(z["rounds"]),
        float(z["wall"]),
        cut(work, sizes),
        cut(secs, sizes),
    )


def collect(
    n: int,
    solver: str = "minconflicts",
    *,
    chains: int | None = None,
    solutions: int | None = None,
    seconds: float | None = None,
    seed: int = 0,
    quiet: bool = True,
    **options,
) -> Samples:
    """Run `solver` until the first budget met; one verified sample per solved chain.

    Args:
      n: board size.
      solver: "minconflicts", "anneal" or "ga".
      chains: chains (GA: trials) to run; for min-conflicts, chains *solved* (every chain
        solves unless it exhausts `max_restarts`).
      solutions: stop at this many distinct solutions; seconds: stop after this kernel time.
      seed: random seed.
      quiet: no progress line.
      options: the solver's own options (those of `solve`, `anneal` or `ga.evolve`), and
        `checkpoint`, `resume`, `checkpoint_every` (as for `jaxqueens.solve`).

    Returns:
      The `Samples`.
    """
    n = as_size(n)
    if solver not in stats_setup.STATS_SOLVERS:
        raise QueensError(
            f"solver {solver!r} is unknown; use one of {', '.join(stats_setup.STATS_SOLVERS)}"
        )
    options = {k: v for k, v in options.items() if v is not None}  # None: the solver's default
    stats_setup.check_stats_options(
        solver, {k: v for k, v in options.items() if k not in COMMON_OPTIONS}
    )
    chains, solutions, seconds, seed = stats_setup.check_stats_budget(
        chains, solutions, seconds, seed
    )
    if chains is None and solutions is None and seconds is None:
        chains = 10_000
    _budget_check(n, chains, solutions, seconds)
    samplers: dict[str, Callable[..., Samples]] = {
        "minconflicts": sample_minconflicts,
        "anneal": sample_anneal,
        "ga": sample_ga,
    }
    return samplers[solver](n, chains, solutions, seconds, seed, quiet, **options)


COMMON_OPTIONS = ("batch", "checkpoint", "resume", "checkpoint_every")
"""Options of `collect` that every solver takes."""


# ----------------------------------------------------------------------------- analysis


@dataclasses.dataclass
class StatsResult:
    """Statistics of a `Samples` (host arrays; exact totals where OEIS has them).

    Attributes:
      samples: the `Samples` analysed.
      distinct: [D, n] distinct solutions sampled (sorted)
      counts: [D] times each was sampled
      classes: [F, n] canonical representatives of the classes sampled (sorted)
      class_counts: [F] samples per class
      class_sizes: [F] solutions per class (1, 2, 4 or 8)
      distinct_sizes: [D] class size of each distinct solution
      coverage: chains, solved, distinct, fundamental, expected (coupon collector) [C]
      chi2: uniformity over all solutions
      chi2_classes: uniformity over classes (expected share size / Q)
      all_solutions: [Q, n] every solution (n <= 14), for the frequency table
      all_counts: [Q] times each was sampled (0 for the unsampled)
      summary: the figures of `summary.json`.
      success: success_curve(samples): budgets [K] int64, rate [K]
    """

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
    success: tuple[np.ndarray, np.ndarray]  # success_curve(samples): budgets [K] int64, rate [K]


def _coverage(
    samples: Samples,
    first: np.ndarray,
    first_class: np.ndarray,
    total: int | None,
    class_sizes_all: np.ndarray | None,
) -> dict:
    c = samples.chains
    chain = samples.sample_chain
    new = np.bincount(chain[first], minlength=c)
    new_f = np.bincount(chain[first_class], minlength=c)
    solved_cum = np.cumsum(samples.solved)
    out = {
        "chains": np.arange(1, c + 1),
        "solved": solved_cum,
        "distinct": np.cumsum(new),
        "fundamental": np.cumsum(new_f),
        "expected": None,
        "expected_fundamental": None,
    }
    if total:
        m = solved_cum.astype(np.float64)
        if total == 1:  # n = 1: the one solution is found by the first sample
            out["expected"] = np.minimum(m, 1.0)
        else:
            out["expected"] = -total * np.expm1(m * math.log1p(-1.0 / total))
        if class_sizes_all is not None:
            sizes, mult = np.unique(class_sizes_all, return_counts=True)
            out["expected_fundamental"] = sum(
                k * (1 - np.power(1 - s / total, m)) for s, k in zip(sizes, mult, strict=True)
            )
    return out


ANALYSIS_MIN_BATCH = 64
"""The smallest batch of the on-device analysis (`analysis_batch`)."""

PAD_ROW = np.iinfo(np.int32).max
"""The value of a padding row given to the dedup kernel: it sorts after every board."""


def analysis_batch(samples: int) -> int:
    """The batch the on-device analysis of `samples` boards compiles for: the smallest of
    `ANALYSIS_MIN_BATCH` and `m * 2**k` (m = 5..8) that holds them. Runs with other numbers
    of samples in one bucket share the executables (`compare` analyses each solver's solved
    chains: one or two buckets for all its solvers, not one compile per solver) for at most 25%
    of padding rows."""
    if samples <= ANALYSIS_MIN_BATCH:
        return ANALYSIS_MIN_BATCH
    step = 1 << ((samples - 1).bit_length() - 3)  # samples is in (4 * step, 8 * step]
    return -(-samples // step) * step


def _padded(rows: np.ndarray, batch: int, fill: int = PAD_ROW) -> np.ndarray:
    """`rows` [S, n] followed by `batch - S` rows of `fill`: int32 [batch, n]."""
    out = np.full((batch, rows.shape[1]), fill, np.int32)
    out[: len(rows)] = rows
    return out


def analyse(samples: Samples) -> StatsResult:
    """Distinct and fundamental solutions, coverage, frequencies, chi-square, step statistics."""
    n, rows = samples.n, samples.rows
    s = len(rows)
    total, total_classes = A000170.get(n), A002562.get(n)
    if s:
        # The kernels' executables load (cache.call: a repeated analysis traces nothing); their
        # inputs are host arrays padded to a bucket of sizes (analysis_batch: a run with another
        # number of samples in the bucket, or compare's next solver, loads the same executables),
        # so both dedups share one executable; results are sliced on the host (an eager slice
        # compiles a program of its own). Padding rows sort after every board: one last group.
        boards = np.asarray(rows, np.int32)
        batch = analysis_batch(s)
        pads = int(batch > s)  # the padding rows' group
        canon = np.asarray(
            cache.call("stats-canonical", symmetry_jax.canonical, (_padded(boards, batch, 0),))
        )[:s]
        d = jax.device_get(cache.call("stats-dedup", symmetry_jax.dedup, (_padded(boards, batch),)))
        dc = jax.device_get(cache.call("stats-dedup", symmetry_jax.dedup, (_padded(canon, batch),)))
        k, kf = int(d.num_unique) - pads, int(dc.num_unique) - pads
        distinct, counts = d.unique[:k], d.counts[:k]
        first = d.first[:s]
        classes, class_counts = dc.unique[:kf], dc.counts[:kf]
        first_class = dc.first[:s]
        # one call for both (each new bucket compiles anew: two calls cost a second compile)
        both = np.concatenate([classes, distinct])
        stabilizers = cache.call(
            "stats-stabilizer",
            symmetry_jax.stabilizer_sizes,
            (_padded(both, analysis_batch(len(both)), 0),),
        )
        sizes = 8 // np.asarray(stabilizers)[: len(both)]
        class_sizes, distinct_sizes = sizes[:kf], sizes[kf:]
    else:
        distinct = classes = np.zeros((0, n), np.int32)
        counts = class_counts = class_sizes = distinct_sizes = np.zeros(0, np.int64)
        first = first_class = np.zeros(0, bool)
    all_solutions = all_counts = all_sizes = None
    if n <= ENUMERATE_MAX_N and total:
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
        chi2_classes = uniformity_test(
            class_counts, s * class_sizes / total, s * (1 - seen_share), total_classes
        )
    summary = _summary(samples, distinct, classes, chi2, chi2_classes, coverage)
    return StatsResult(
        samples,
        distinct,
        counts,
        classes,
        class_counts,
        class_sizes,
        distinct_sizes,
        coverage,
        chi2,
        chi2_classes,
        all_solutions,
        all_counts,
        summary,
        success_curve(samples),
    )


def analysis_builders(n: int, samples: int, place=None) -> dict:
    """`name -> (batch -> jax.stages.Lowered)` for the on-device analysis of `samples`
    solutions of size n (deduplication, canonical forms, stabilizer sizes: the executables
    `analyse` runs); the batch is the user's samples in their bucket
    (`analysis_batch`); `make gpu-check` compiles these for described GPUs."""
    place = place or (lambda tree: tree)
    boards = place(jax.ShapeDtypeStruct((analysis_batch(samples), n), jnp.int32))
    return {
        "dedup": lambda _: symmetry_jax.dedup.trace(boards).lower(),
        "canonical": lambda _: symmetry_jax.canonical.trace(boards).lower(),
        "stabilizer_sizes": lambda _: symmetry_jax.stabilizer_sizes.trace(boards).lower(),
    }


def _row_index(table: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Index in sorted `table` [Q, n] of each of `rows` [D, n] (all present)."""
    key = lambda a: (
        np.ascontiguousarray(a.astype(np.int32)).view(np.dtype((np.void, 4 * a.shape[1]))).ravel()
    )
    t, r = key(table), key(rows)
    order = np.argsort(t)
    pos = order[np.searchsorted(t[order], r)]
    if not np.array_equal(table[pos], rows):
        raise RuntimeError("a sampled solution is missing from the enumeration (a bug)")
    return pos


def step_quantiles(steps: np.ndarray) -> dict:
    """Mean, median, 90th and 99th percentile and maximum of `steps` [S] (None when empty)."""
    if not steps.size:
        return dict.fromkeys(("mean", "median", "p90", "p99", "max"))
    return {
        "mean": float(steps.mean()),
        "median": float(np.median(steps)),
        "p90": float(np.percentile(steps, 90)),
        "p99": float(np.percentile(steps, 99)),
        "max": int(steps.max()),
    }


def success_curve(samples: Samples, points: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """Success rate vs step budget over all chains run: `(budgets [K], rate [K])`."""
    solved_steps = np.sort(samples.steps[samples.solved])
    if not solved_steps.size:
        return np.zeros(0), np.zeros(0)
    top = max(1, int(solved_steps.max()))
    budgets = np.unique(
        np.concatenate([[0], np.round(np.logspace(0, math.log10(top), points)), [top]])
    )
    rate = np.searchsorted(solved_steps, budgets, side="right") / max(1, samples.chains)
    return budgets.astype(np.int64), rate


def _summary(samples: Samples, distinct, classes, chi2, chi2_classes, coverage) -> dict:
    n = samples.n
    total, total_classes = A000170.get(n), A002562.get(n)
    s = int(samples.solved.sum())
    solved_steps = samples.steps[samples.solved]
    return {
        "n": n,
        "solver": samples.name,
        "family": samples.solver,
        "options": samples.options,
        "chains": samples.chains,
        "solved": s,
        "success_rate": s / samples.chains if samples.chains else None,
        "distinct_solutions": len(distinct),
        "fundamental_classes": len(classes),
        "exact_solutions": total,
        "exact_classes": total_classes,
        "solutions_coverage": len(distinct) / total if total else None,
        "classes_coverage": len(classes) / total_classes if total_classes else None,
        "expected_distinct_if_uniform": (
            float(coverage["expected"][-1])
            if coverage["expected"] is not None and len(coverage["expected"])
            else None
        ),
        "chi2_solutions": chi2,
        "chi2_classes": chi2_classes,
        "step_unit": samples.step_unit,
        "steps": step_quantiles(solved_steps),
        "wall_s": samples.wall_s,
        "compile_s": samples.compile_s,
        "solutions_per_s": s / samples.wall_s if samples.wall_s > 0 else None,
        "stopped_by": samples.stopped_by,
        "backend": jax.default_backend(),
        "devices": local_device_count(),
    }


def stats(n: int, solver: str = "minconflicts", **kwargs) -> StatsResult:
    """`collect` then `analyse`: the statistics of `solver` on n.

    Args:
      n: board size.
      solver: "minconflicts", "anneal" or "ga".
      **kwargs: the budgets, seed and options of `collect`.

    Returns:
      The `StatsResult`; every sample has passed the independent checker.

    Raises:
      QueensError: an argument out of range, or an option the solver does not use.
    """
    return analyse(collect(n, solver, **kwargs))
