"""How `stats` samples a solver: one verified solution per solved chain, as `Samples`.

Min-conflicts runs through `jaxqueens.solve`, LS/TA/SA through `anneal`'s schedule and kernel,
the GA through `jaxqueens.evolve` in rounds of trials (checkpointed round by round).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxqueens.core import checker
from jaxqueens.drivers import anneal as annealing
from jaxqueens.drivers import anneal_setup, chains_types, ga, stats_setup
from jaxqueens.drivers import minconflicts as mcsolve
from jaxqueens.drivers.loop import RunControl, Tick, run_chunks
from jaxqueens.io import checkpoint as ckpt
from jaxqueens.parallel import chains as chain_batch
from jaxqueens.parallel.devices import local_device_count
from jaxqueens.solvers.variants import solver_name


@dataclasses.dataclass
class Samples:
    """What a solver run gives the statistics: one sample per solved chain (host arrays)."""

    n: int  #: board size
    solver: str  #: "minconflicts", "anneal" or "ga"
    options: dict  #: the solver's options as run
    solved: np.ndarray  #: [C] bool per chain run
    steps: np.ndarray  #: [C] int64 steps (GA: generations) to solution, or spent if unsolved
    rows: np.ndarray  #: [S, n] int32 verified solutions of the solved chains, in chain order
    step_unit: str  #: "steps" or "generations"
    wall_s: float  #: kernel seconds, compilation excluded
    compile_s: float  #: compilation seconds
    stopped_by: str  #: the budget that ended the run (or "interrupted")
    run: chains_types.ChainRun | None = None  #: chain solvers: the run (runs.csv is its table)
    #: GA: [C, 3] int64 per trial: evaluations spent, evaluations to the end of its first solved
    #: generation (-1: unsolved), generations run (-1: unknown)
    work: np.ndarray | None = None
    seconds: np.ndarray | None = None  #: GA: [C] float64 each trial's share of its round's time

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


def _from_run(run, solver: str, options: dict) -> Samples:
    arrays = (run.solved.copy(), run.steps.copy(), run.solutions.astype(np.int32))
    return Samples(
        run.n, solver, options, *arrays, "steps", run.wall_s, run.compile_s, run.stopped_by, run=run
    )


def sample_minconflicts(
    n,
    chains,
    solutions,
    seconds,
    seed,
    control,
    max_steps=None,
    init="permutation",
    tabu=0,
    batch=None,
    max_restarts=1_000_000,
) -> Samples:
    """Min-conflicts chains through `jaxqueens.solve` (`chains`: chains solved), one sample per
    solved chain. A budget of None is no such budget; `max_steps` is the restart period (None:
    `solve`'s default), `batch` the chains per kernel call (None: sized to the machine)."""
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
        control=control,
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
    control,
    batch=None,
    **options,
) -> Samples:
    """LS / TA / SA chains through `anneal`'s schedule and kernel (`chains`: chains run), one sample
    per solved chain. A budget of None is no such budget; `batch` the chains per kernel call (None:
    sized to the machine). `options` are method, steps, preset, rounds, neighbour, step, objective,
    q, init_prob, alpha, t_end, walk (defaults: `stats_setup.STATS_ANNEAL` and the preset's); one
    the method does not use is refused."""
    s, c = stats_setup.check_stats_anneal(n, options, chains, seed, batch)
    method, got = s.method, s.values()  # (LS, TA: SA's settings are the preset's, unused)
    shape = (s.rounds, s.neighbour, s.step, s.objective)
    config = anneal_setup.make_config(n, method, c["steps"], *shape)
    budget = chains_types.Budget(max_chains=chains, solutions=solutions, seconds=seconds)
    cal_key, key = chain_batch.seed_keys(seed, 2)
    q, init_prob, alpha = got["q"], got["init_prob"], got["alpha"]
    schedule, _ = anneal_setup.calibrate(cal_key, config, c["walk"], q, init_prob, alpha)
    chunk = batch or anneal_setup.chunk_for(chains, config, local_device_count())
    fingerprint = {
        "command": "stats",
        "solver": f"stats-annealing-{method}",
        "seed": seed,
        "schedule": [float(x) for x in schedule],
        "config": {k: v for k, v in dataclasses.asdict(config).items() if k != "scatter_counts"},
        "steps": "spent",  # `steps` holds the steps spent (a checkpoint without it: the best's)
    }
    params = anneal_setup.schedule_params(schedule)
    run = annealing.run_schedule(config, key, params, None, chunk, budget, control, fingerprint)
    kept = ("rounds", "neighbour", "step", "objective", "q", "init_prob", "alpha")
    options = {"method": method, "steps": config.total_steps, **{k: got[k] for k in kept}}
    options["preset"] = s.preset
    return _from_run(run, "anneal", options)


def sample_ga(
    n,
    chains,
    solutions,
    seconds,
    seed,
    control,
    batch=None,
    **ga_options,
) -> Samples:
    """GA trials (`jaxqueens.evolve` with `ga_options`), `batch` trials per round (None: up to
    1024); one sample per solved trial. A budget of None is no such budget.

    A trial's sample is the first solution (island-major, then population order) in its final
    population, its steps the first generation whose best was a solution. Round r is seeded from
    `SeedSequence([seed, r])`: the samples depend on the round size. Rounds run through
    `run_chunks`; Ctrl-C (or an interrupted round) keeps whole rounds. With `seconds`, a round stops
    at the chunk of generations that passes the time left (its unsolved trials count as unsolved
    after the generations run)."""
    rounds_of = batch or min(chains or 1024, 1024)
    fingerprint = {
        "solver": "stats-ga",
        "n": n,
        "seed": seed,
        "round": rounds_of,
        "options": {k: v for k, v in sorted(ga_options.items()) if v is not None},
    }
    t = _GARounds(n, chains, solutions, seconds, seed, rounds_of, ga_options)
    control = RunControl() if control is None else control
    checkpoint = control.checkpoint
    if control.resume and checkpoint is not None:
        t.solved, t.steps, t.rows, t.r, t.wall, t.work, t.secs = _load_rounds(
            checkpoint, fingerprint
        )
        t.seen.update(x.tobytes() for part in t.rows for x in part)
    save = None
    if checkpoint is not None:
        save = lambda: _save_rounds(
            checkpoint, t.solved, t.steps, t.rows, t.r, t.wall, fingerprint, t.work, t.secs
        )
    if run_chunks(t.one_round, total=chains, unit="trials", control=control, save=save):
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
    rounds_of: int  #: trials per round
    ga_options: dict
    solved: list = dataclasses.field(default_factory=list)  #: [T] bool per round
    steps: list = dataclasses.field(default_factory=list)  #: [T] generations per round
    rows: list = dataclasses.field(default_factory=list)  #: [S, n] solutions per round
    #: [T, 3] per round: evaluations spent, to solution, generations
    work: list = dataclasses.field(default_factory=list)
    #: [T] per round: each trial's share of the round's seconds
    secs: list = dataclasses.field(default_factory=list)
    seen: set[bytes] = dataclasses.field(default_factory=set)
    wall: float = 0.0
    compile_s: float = 0.0
    stopped_by: str | None = None
    r: int = 0  #: next round

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
        res = ga.evolve(n, trials=run, seed=sub_seed, seconds=left, **self.ga_options)
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
            empty = (np.zeros(0, bool), np.zeros(0, np.int64), np.zeros((0, n), np.int32))
            return Samples(
                n, "ga", {}, *empty, "generations", self.wall, self.compile_s, stopped_by
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
