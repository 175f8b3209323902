"""How `stats` samples a solver: one verified solution per solved chain, as `Samples`.

Min-conflicts runs through `jaxqueens.solve`, LS/TA/SA through `anneal`'s schedule and kernel,
the GA through `jaxqueens.evolve` in rounds of trials (checkpointed round by round). Each sampler
runs the `StatsSettings` that `stats_setup.check_stats` checked (`SAMPLERS`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from jaxqueens.core import checker
from jaxqueens.drivers import anneal as annealing
from jaxqueens.drivers import anneal_setup, chains_types, ga
from jaxqueens.drivers import minconflicts as mcsolve
from jaxqueens.drivers.loop import RunControl, Tick, run_chunks
from jaxqueens.drivers.stats_setup import StatsSettings
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


def sample_minconflicts(s: StatsSettings, control: RunControl | None) -> Samples:
    """Min-conflicts chains through `jaxqueens.solve` (`s.chains`: chains solved); `max_steps`
    None is `solve`'s restart period."""
    options: dict[str, Any] = {"max_steps": None, "init": "permutation", "tabu": 0}
    options.update(max_restarts=1_000_000, **s.options)
    budget = {k: getattr(s, k) for k in ("solutions", "seconds", "seed", "batch")}
    res = mcsolve.solve(s.n, s.chains, **budget, **options, control=control, command="stats")
    options["max_steps"] = res.summary.get("max_steps", options["max_steps"])
    return _from_run(res.run, "minconflicts", options)


def sample_anneal(s: StatsSettings, control: RunControl | None) -> Samples:
    """LS / TA / SA chains (`s.chains`: chains run) through `anneal`'s schedule and kernel, with
    the settings `check_stats_anneal` resolved."""
    assert s.anneal is not None  # (`check_stats` resolves them for "anneal")
    ls, numbers = s.anneal
    method, got = ls.method, ls.values()  # (LS, TA: SA's settings are the preset's, unused)
    shape = (ls.rounds, ls.neighbour, ls.step, ls.objective)
    config = anneal_setup.make_config(s.n, method, numbers["steps"], *shape)
    budget = chains_types.Budget(max_chains=s.chains, solutions=s.solutions, seconds=s.seconds)
    cal_key, key = chain_batch.seed_keys(s.seed, 2)
    q, init_prob, alpha = got["q"], got["init_prob"], got["alpha"]
    schedule, _ = anneal_setup.calibrate(cal_key, config, numbers["walk"], q, init_prob, alpha)
    chunk = s.batch or anneal_setup.chunk_for(s.chains, config, local_device_count())
    fingerprint = {
        "command": "stats",
        "solver": f"stats-annealing-{method}",
        "seed": s.seed,
        "schedule": [float(x) for x in schedule],
        "config": {k: v for k, v in dataclasses.asdict(config).items() if k != "scatter_counts"},
        "steps": "spent",  # `steps` holds the steps spent (a checkpoint without it: the best's)
    }
    params = anneal_setup.schedule_params(schedule)
    run = annealing.run_schedule(config, key, params, None, chunk, budget, control, fingerprint)
    kept = ("rounds", "neighbour", "step", "objective", "q", "init_prob", "alpha")
    options = {"method": method, "steps": config.total_steps, **{k: got[k] for k in kept}}
    options["preset"] = ls.preset
    return _from_run(run, "anneal", options)


def sample_ga(s: StatsSettings, control: RunControl | None) -> Samples:
    """GA trials (`jaxqueens.evolve` with the options of `s`), `s.batch` trials per round (None: up
    to 1024); one sample per solved trial.

    A trial's sample is the first solution (island-major, then population order) in its final
    population, its steps the first generation whose best was a solution. Round r is seeded from
    `SeedSequence([seed, r])`: the samples depend on the round size. Rounds run through
    `run_chunks`; Ctrl-C (or an interrupted round) keeps whole rounds. With `seconds`, a round stops
    at the chunk of generations that passes the time left (its unsolved trials count as unsolved
    after the generations run)."""
    rounds = _GARounds(s, s.batch or min(s.chains or 1024, 1024))
    fingerprint = {"solver": "stats-ga", "n": s.n, "seed": s.seed, "round": rounds.size}
    fingerprint["options"] = dict(sorted(s.options.items()))
    control = RunControl() if control is None else control
    path = control.checkpoint
    if control.resume and path is not None:
        rounds.load(path, fingerprint)
    save = None if path is None else lambda: rounds.save(path, fingerprint)
    if run_chunks(rounds.one_round, total=s.chains, unit="trials", control=control, save=save):
        rounds.stopped_by = "interrupted"
    assert rounds.stopped_by is not None  # the loop ends when a budget is met or on an interrupt
    kept = {k: getattr(rounds, k) for k in ("wall_s", "compile_s", "stopped_by")}
    joined = rounds.joined(s.n)
    return Samples(s.n, "ga", dict(s.options), step_unit="generations", **kept, **joined)


SAMPLERS = {"minconflicts": sample_minconflicts, "anneal": sample_anneal, "ga": sample_ga}
"""The sampler of each solver family (`stats_setup.STATS_SOLVERS`)."""


@dataclasses.dataclass
class _GARounds:
    """`sample_ga`'s rounds: their settings and the records of the rounds run, one array per
    round in each list (the fields of `Samples` they make, and of the checkpoint)."""

    s: StatsSettings
    size: int  #: trials per round
    work: list = dataclasses.field(default_factory=list)  #: [T, 3]: `Samples.work`
    seconds: list = dataclasses.field(default_factory=list)  #: [T]: `Samples.seconds`
    solved: list = dataclasses.field(default_factory=list)  #: [T] bool
    steps: list = dataclasses.field(default_factory=list)  #: [T] `Samples.steps`
    rows: list = dataclasses.field(default_factory=list)  #: [S, n] solutions
    seen: set[bytes] = dataclasses.field(default_factory=set)
    wall_s: float = 0.0
    compile_s: float = 0.0
    stopped_by: str | None = None
    r: int = 0  #: next round

    def one_round(self) -> Tick:
        """Evolve round r and record its samples (a KeyboardInterrupt leaves the record whole)."""
        s, n = self.s, self.s.n
        run = self.size if s.chains is None else min(self.size, s.chains - self.done)
        sub_seed = int(np.random.SeedSequence([s.seed, self.r]).generate_state(1)[0] & 0x7FFFFFFF)
        left = None if s.seconds is None else max(s.seconds - self.wall_s, 1e-9)  # ends by then
        res = ga.evolve(n, trials=run, seed=sub_seed, seconds=left, **s.options)
        if res.interrupted:  # keep whole rounds only
            raise KeyboardInterrupt
        self.wall_s = self.wall_s + res.wall_s + res.init_s
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
        self.seconds.append((res.wall_s + res.init_s) * spent / max(1, int(spent.sum())))
        self.rows.append(sols)
        self.seen.update(x.tobytes() for x in sols)
        self.r += 1
        if s.chains is not None and self.done >= s.chains:
            self.stopped_by = "chains"
        elif s.solutions is not None and len(self.seen) >= s.solutions:
            self.stopped_by = "solutions"
        elif s.seconds is not None and self.wall_s >= s.seconds:
            self.stopped_by = "time"
        return Tick(self.done, f"{len(self.seen)} distinct", finished=self.stopped_by is not None)

    @property
    def done(self) -> int:
        """The trials run."""
        return sum(map(len, self.solved))

    def joined(self, width: int) -> dict[str, Any]:
        """The records of every round run, joined (no round: empty, `rows` [0, width])."""
        empty = (np.zeros((0, 3), np.int64), np.zeros(0), np.zeros(0, bool), np.zeros(0, np.int64))
        out = dict(zip(("work", "seconds", "solved", "steps"), empty, strict=True))
        out["rows"] = np.zeros((0, width), np.int32)
        return {k: np.concatenate(getattr(self, k)) if self.solved else v for k, v in out.items()}

    def save(self, path, fingerprint: dict) -> None:
        """The samples of the finished rounds, atomically (`_ROUNDS`)."""
        tree = self.joined(1)  # (`rows`: [0, 1] before the first round)
        tree["sizes"] = np.array([len(x) for x in self.solved], np.int64)
        tree["row_sizes"] = np.array([len(x) for x in self.rows], np.int64)
        ckpt.save(path, {**tree, "rounds": self.r, "wall": self.wall_s}, fingerprint)

    def load(self, path, fingerprint: dict) -> None:
        """The rounds of the checkpoint at `path`, written with `fingerprint`, as if run."""
        z = ckpt.load(path, fingerprint, _ROUNDS)
        trials = len(z["solved"])
        # a checkpoint without the work records (an older one): unknown, empty cells in runs.csv
        if z["work"] is None:
            z["work"] = np.full((trials, 3), -1, np.int64)
        if z["seconds"] is None:
            z["seconds"] = np.full(trials, np.nan)
        for key in ("work", "seconds", "solved", "steps", "rows"):
            sizes = z["row_sizes" if key == "rows" else "sizes"]
            setattr(self, key, np.split(z[key], np.cumsum(sizes)[:-1]) if len(sizes) else [])
        self.r, self.wall_s = int(z["rounds"]), float(z["wall"])
        self.seen.update(x.tobytes() for x in z["rows"])


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
