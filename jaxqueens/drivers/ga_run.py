"""The GA driver's chunk loop: populations and records, one chunk of generations at a time.

`Run` keeps what `jaxqueens.drivers.ga.evolve` records (per-generation statistics, per-trial
totals, optionally every `[G+1, T]` record, the distinct solutions), saves and resumes it as a
checkpoint, and collects it at the end, every solution verified by the independent checker.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import checker
from jaxqueens.core import constraints as cons
from jaxqueens.drivers.ga_size import place
from jaxqueens.drivers.loop import Tick
from jaxqueens.errors import QueensError, SolutionCheckError
from jaxqueens.io import checkpoint as ckpt
from jaxqueens.io import ga as ga_io
from jaxqueens.parallel import gather
from jaxqueens.solvers.ga import Metrics, Params, Problem, State

TOTALS = ("first_met", "evals_total", "evals_at_first", "final_best")
"""Per-trial totals `[T]` int64 kept as the generations go by, so that no record `[G+1, T]` is
needed: first generation whose best scored 0 (-1: none), evaluations, evaluations up to the
first solved generation (-1: none), the last best."""
RECORDS = ("best", "avg", "worst", "nevals")
"""Records per generation and trial (`[G+1, T]`), as `Metrics` names them."""


def summarise(best, avg, worst, nevals) -> np.ndarray:
    """`io.ga.SUMMARY_STATS` of `k` generations, `[k, 9]` float64, from `[k, T]` arrays: each
    trial's best fitness, each population's mean and worst fitness, each trial's evaluations."""
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


def _batches(boards: np.ndarray, n: int) -> list[np.ndarray]:
    """`boards` `[S, n]` in slices of about 2^20 cells: the checker's int64 temporaries
    (about 45 bytes a cell) stay near 50 MiB however many distinct solutions a run found."""
    rows = max(1, (1 << 20) // max(n, 1))
    return [boards[i : i + rows] for i in range(0, len(boards), rows)]


def verified(
    sols: np.ndarray, genes: np.ndarray, report: bool, model: cons.Constraints | None, what: str
) -> tuple[np.ndarray, np.ndarray | None]:
    """Every solution among `sols` (`[S, n]` distinct candidates) checked by the independent checker
    (and an instance's fixed queens, with `model`): `(the solutions the checker confirms, every
    board of the final populations genes [T, I, P, n] scoring 0 (None unless report))`.

    `report`: the fitness is the report's or a user's (a 0 is not always a solution); `what` names
    the solver in an error. Raises SolutionCheckError for a solution the checker refuses, or a
    genome that moved a fixed queen."""
    n = genes.shape[-1]
    score_met = None
    if report:  # the report's 0 ignores rows: only the checker's verdict makes a solution
        score_met = sols
        real = [checker.are_solutions(b.astype(np.int64)) for b in _batches(sols, n)]
        sols = sols[np.concatenate(real)] if len(sols) else sols
    for x, y in model.fixed if model is not None else ():
        if len(genes) and not (genes[..., x] == y).all():
            raise SolutionCheckError(f"{what}: a genome moved the fixed queen of column {x}")
    for part in _batches(sols, n):  # in batches: the checker's temporaries stay bounded
        if model is not None:
            checker.require_constrained(part.astype(np.int64), model, what=what)
        else:
            checker.require_solutions(part, what=what, n=n)
    return sols, score_met


@dataclasses.dataclass
class Run:
    """`evolve`'s chunk loop: the populations and everything recorded so far, one chunk of
    generations at a time (`step`), as a checkpoint (`tree`) and from one (`resume`)."""

    compiled: Any  #: (states, params, problem, stop) -> (states, metrics): a chunk of generations
    dyn: Params
    stop: np.int32  #: [] the generations of the run, as the chunk takes them
    problem: Problem | None
    chunk: int  #: generations per call
    generations: int
    seconds: float | None  #: the time budget
    until_solved: bool  #: stop after the chunk in which the last trial solved
    procs: int
    total_trials: int  #: trials in all processes
    sink: Any  #: receives every trial's records (`evolve`'s), or None
    states: State  #: this process's trials' [T, ...]
    keep_all: bool  #: keep every [G+1, T] record
    report: bool  #: the fitness is the report's or a user's (`solved_at` is kept)
    hist: list | None = None  #: [k, T] records per chunk (keep_all)
    found: list = dataclasses.field(default_factory=list)  #: [S, n] solutions per chunk
    solved_at: np.ndarray | None = None  #: [T] int64 (report only)
    totals: dict = dataclasses.field(default_factory=dict)  #: `TOTALS` of this process's trials
    summary: list = dataclasses.field(default_factory=list)  #: [k, stats] per chunk
    done: int = 0  #: generations run
    wall_before: float = 0.0  #: seconds of the earlier sessions
    sessions: int = 1
    started: float = 0.0  #: perf_counter at the loop's start
    evals_before: int = 0  #: evaluations before this session's generations
    compile_s: float = 0.0  #: seconds compiling the programs
    init_s: float = 0.0  #: seconds building and placing the initial populations

    def everyone(self, x, axis: int = 1) -> np.ndarray:
        """This process's trials along `axis` (`[k, T]`) -> every process's, in trial order."""
        x = np.asarray(x)
        if self.procs == 1:
            return x
        return np.take(gather.concat(x, axis), np.arange(self.total_trials), axis=axis)

    def _tally(self, gen0: int, best, nevals) -> None:
        """`totals` of generations `gen0 .. gen0 + k - 1` (`best`, `nevals` `[k, T]`;
        `solved_at`, the report's fitness, already marked for them)."""
        t, best, nevals = self.totals, np.asarray(best), np.asarray(nevals, np.int64)
        hit = best == 0
        new = (t["first_met"] < 0) & hit.any(axis=0)
        t["first_met"][new] = gen0 + hit.argmax(axis=0)[new]
        cum = t["evals_total"][None] + np.cumsum(nevals, axis=0)
        t["evals_total"] = cum[-1].copy()
        t["final_best"] = best[-1].astype(np.int64)
        first = t["first_met"] if self.solved_at is None else self.solved_at
        inside = (t["evals_at_first"] < 0) & (first >= gen0) & (first < gen0 + len(best))
        cols = np.nonzero(inside)[0]
        t["evals_at_first"][cols] = cum[first[cols] - gen0, cols]

    def _record(self, gen0: int, m: Metrics, keep: int) -> list[np.ndarray]:
        """Record `keep` generations `gen0 ..` of the metrics `m` (`[k, T, ...]`); return
        the records of every trial."""
        rec = [np.asarray(getattr(m, k))[:keep] for k in RECORDS]
        if self.hist is not None:
            self.hist.append(rec)
        _collect(self.found, m.sols[:keep], m.sols_ok[:keep])
        if self.solved_at is not None:
            _mark_solved(self.solved_at, m.sols[:keep], m.sols_ok[:keep], gen0)
        self._tally(gen0, rec[0], rec[3])
        every = [self.everyone(x) for x in rec]
        self.summary.append(summarise(*every))
        if self.sink is not None and gen0:
            self.sink.records(gen0, *every)
        return every

    def open(self, m0: Metrics, checkpoint, fingerprint: dict, resume: bool) -> None:
        """Record generation 0 (`m0`, `[T, ...]`), then resume from `checkpoint` or start the
        sink."""
        trials = len(self.states.gen)
        self.hist = [] if self.keep_all else None
        self.solved_at = np.full(trials, -1, np.int64) if self.report else None
        starts = (-1, 0, -1, 0)  # (none yet)
        self.totals = {k: np.full(trials, v, np.int64) for k, v in zip(TOTALS, starts, strict=True)}
        every = self._record(0, jax.tree.map(lambda x: np.asarray(x)[None], m0), 1)
        if resume and checkpoint is not None:
            self.resume(ckpt.load(checkpoint, fingerprint, self._schema()), checkpoint)
        elif self.sink is not None:
            self.sink.start()
            self.sink.records(0, *every)
        self.evals_before = int(self.totals["evals_total"].sum())

    def step(self) -> Tick:
        """One chunk of generations, recorded."""
        self.states, m = self.compiled(self.states, self.dyn, self.problem, self.stop)
        keep = min(self.chunk, self.generations - self.done)
        self._record(self.done + 1, m, keep)
        done = self.done = self.done + keep
        late = self.seconds is not None and time.perf_counter() - self.started >= self.seconds
        if self.until_solved:
            first = self.totals["first_met"] if self.solved_at is None else self.solved_at
            unsolved = np.array([int((first < 0).sum())], np.int64)
            late |= int((gather.concat(unsolved) if self.procs > 1 else unsolved).sum()) == 0
        finished = done >= self.generations or late
        return Tick(done, f"best {int(self.summary[-1][-1, 0])}", finished=finished)

    def _schema(self) -> dict:
        """What a checkpoint of this run must hold (the fresh states and generation 0's
        records are the templates)."""
        trials, n = self.states.genes.shape[0], self.states.genes.shape[-1]
        schema = {
            "states": ckpt.like(self.states),
            "sols": ckpt.Spec(np.integer, (None, n)),
            "done": ckpt.Spec(np.integer),
            "trials": {k: ckpt.Spec(np.int64, (trials,)) for k in TOTALS},
            "summary": ckpt.Spec(np.float64, (None, len(ga_io.SUMMARY_STATS))),
            "history_bytes": ckpt.Spec(np.integer),
            "wall_s": ckpt.Spec(np.floating),
            "sessions": ckpt.Spec(np.integer),
        }
        if self.hist is not None:
            schema["records"] = {
                k: ckpt.Spec(np.dtype(h.dtype), ("records", h.shape[1]))
                for k, h in zip(RECORDS, self.hist[0], strict=True)
            }
        if self.solved_at is not None:  # the report's fitness: each trial's first solved gen
            schema["solved_at"] = ckpt.Spec(np.int64, self.solved_at.shape)
        return schema

    def tree(self) -> dict:
        """The checkpoint's tree (the records are joined into one array each on the way)."""
        summary, hist, states = self.summary, self.hist, self.states
        if len(summary) > 1:  # one array: the checkpoint copies it anyway
            summary[:] = [np.concatenate(summary)]
        n = states.genes.shape[-1]
        tree = {
            "states": jax.tree.map(np.asarray, states),
            "sols": np.concatenate(self.found) if self.found else np.zeros((0, n), np.int32),
            "done": self.done,
            "trials": dict(self.totals),
            "summary": summary[0],
            "history_bytes": self.sink.sync() if self.sink is not None else 0,
            "wall_s": self.wall_before + time.perf_counter() - self.started,
            "sessions": self.sessions,
            "solved_at": self.solved_at,
        }
        if hist is not None:
            hist[:] = [[np.concatenate([h[i] for h in hist]) for i in range(len(RECORDS))]]
            tree["records"] = dict(zip(RECORDS, hist[0], strict=True))
        return tree

    def resume(self, z: dict, checkpoint) -> None:
        """Continue from a loaded checkpoint `z` (read from the file `checkpoint`)."""
        self.states = place(State(**{k: jnp.asarray(v) for k, v in z["states"].items()}))
        if self.keep_all:
            self.hist = [[z["records"][k] for k in RECORDS]]
        self.found = [z["sols"]] if len(z["sols"]) else []
        done = self.done = int(z["done"])
        self.totals = {k: np.asarray(z["trials"][k], np.int64) for k in TOTALS}
        self.summary = [z["summary"]]
        self.wall_before, self.sessions = float(z["wall_s"]), int(z["sessions"]) + 1
        self.solved_at = z.get("solved_at") if self.report else None
        if len(self.summary[0]) != done + 1:
            raise QueensError(
                f"{checkpoint}: not a readable checkpoint (its statistics cover "
                f"{len(self.summary[0]) - 1} generations, its population {done}); start without "
                "--resume"
            )
        if self.sink is not None:
            self.sink.resume(int(z["history_bytes"]))

    def collect(self, model: cons.Constraints | None, what: str) -> dict:
        """The run's records, populations, timings and verified solutions, of every trial in
        every process: `EvolveResult`'s fields but the settings and the interruption."""
        states, found, totals, solved_at = self.states, self.found, self.totals, self.solved_at
        genes, fit = np.asarray(states.genes), np.asarray(states.fit)
        wall_s = time.perf_counter() - self.started
        evals_here = int(totals["evals_total"].sum()) - self.evals_before
        if self.procs > 1:
            evals_here = int(gather.concat(np.array([evals_here], np.int64)).sum())
        _collect(found, genes, fit == 0)
        if solved_at is not None:  # final populations: generational runs report only
            before = solved_at.copy()  # each island's best
            _mark_solved(solved_at, genes[None], (fit == 0)[None], self.done)
            late = (before < 0) & (solved_at >= 0)
            totals["evals_at_first"][late] = totals["evals_total"][late]
        n = genes.shape[-1]
        sols = np.unique(np.concatenate(found), axis=0) if found else np.zeros((0, n), genes.dtype)
        kept = None
        if self.hist is not None:
            names = ("best", "avg", "worst", "evaluations")
            kept = {k: np.concatenate([h[i] for h in self.hist]) for i, k in enumerate(names)}
            kept["evaluations"] = kept["evaluations"].astype(np.int64)
        per_trial = dict(totals)
        if self.procs > 1:  # every process gets every trial, in trial order, and all solutions
            kept = None if kept is None else {k: self.everyone(v) for k, v in kept.items()}
            merged = gather.ragged(sols)
            sols = np.unique(merged, axis=0) if len(merged) else sols
            genes, fit = self.everyone(genes, 0), self.everyone(fit, 0)
            per_trial = {k: self.everyone(v, 0) for k, v in per_trial.items()}
            if solved_at is not None:  # (a checkpoint saved later holds them too)
                solved_at = self.solved_at = self.everyone(solved_at, 0)
        sols, score_met = verified(sols, genes, self.report, model, what)
        return dict(
            generations=self.done,
            summary=np.concatenate(self.summary),
            **per_trial,
            solutions=sols,
            population=genes,
            fitness=fit,
            wall_s=wall_s,
            compile_s=self.compile_s,
            init_s=self.init_s,
            evals_here=evals_here,
            wall_total_s=self.wall_before + wall_s,
            sessions=self.sessions,
            score_met=score_met,
            solved_at=solved_at,
            records=kept,
        )
