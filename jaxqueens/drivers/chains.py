"""Chunked driver for chain solvers: run, verify, gather, stop at a budget.

A solver supplies `run_chunk(offset, count)`: chains `offset .. offset+count-1` (chain i seeded
from `fold_in(key, i)`), returning host arrays. The driver calls it chunk after chunk through
`jaxqueens.drivers.loop.run_chunks`, verifies every solved board with the independent checker
before counting it (against the instance's model on constrained boards: `instance_setup`), and
stops at the budget. Chains past the one that met a chain or solution budget are dropped, so the
output never depends on the chunk size; chains still paused when the time is up are reported
unsolved and counted as `unfinished`.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from jaxqueens.core import arguments, checker
from jaxqueens.core import constraints as cons
from jaxqueens.core.oeis import A000170
from jaxqueens.drivers import settings
from jaxqueens.drivers.loop import Tick, run_chunks
from jaxqueens.errors import InstanceUnsat, QueensError
from jaxqueens.io import checkpoint
from jaxqueens.parallel import gather, memory
from jaxqueens.solvers import constrained as rules


class ChunkResult(NamedTuple):
    """What `run_chunk` returns for `count` chains (host arrays), read and built by field
    name only (`of`), never by position: a kernel's `Result` has the first fields."""

    rows: np.ndarray  # [count, n] final boards
    solved: np.ndarray  # [count] bool
    steps: np.ndarray  # [count] steps spent (over all attempts), solved or not
    restarts: np.ndarray  # [count]
    best: np.ndarray | None = None  # [count] best objective, for solvers that have one
    best_step: np.ndarray | None = None  # [count] step of the best board (annealing), or None
    paused: np.ndarray | None = None  # [count] bool: stopped at the call's work bound, unfinished;
    # run_chunk(offset, count) called again continues them (the runner keeps their state)

    @classmethod
    def of(cls, out, **replace) -> ChunkResult:
        """`out` (a ChunkResult, or a kernel's Result: the same field names) as host arrays,
        field by field by name (a field `out` lacks is None), then `replace`'s fields."""
        fields: dict[str, Any] = {f: getattr(out, f, None) for f in cls._fields}
        fields.update(replace)
        host: dict[str, Any] = {f: None if v is None else np.asarray(v) for f, v in fields.items()}
        return cls(**host)

    def where(self, keep: np.ndarray, other: ChunkResult) -> ChunkResult:
        """Per chain: this result's fields where `keep` [count], else `other`'s (a field
        either lacks is None)."""

        def pick(a, b):
            if a is None or b is None:
                return None
            return np.where(keep.reshape((-1,) + (1,) * (a.ndim - 1)), a, b)

        picked: dict[str, Any] = {
            f: pick(getattr(self, f), getattr(other, f)) for f in ChunkResult._fields
        }
        return ChunkResult(**picked)


KEPT_CHAINS_MAX = 1_000_000
"""The most chains one run keeps when nothing bounds the chains it runs (no `max_chains`): every
chain run is kept (its board and figures, for the summary, `runs.csv` and `solutions.npy`),
so without this cap a `--time` budget over chains that never solve (`--maxsteps 1
--max-restarts 0`) keeps millions within seconds. The run stops there,
`stopped_by` = `"kept_chains"`; `kept_chains_cap` lowers it further to fit the memory
available."""

KEPT_BYTES_PER_CHAIN = 512
"""Bytes a kept chain costs at its peak beyond its board (its figures in the chunk results, their
concatenated copy and its table row), rounded up."""


def kept_chains_cap(n: int, available: int | None = None) -> int:
    """The most chains a run without a bound on chains run keeps (`KEPT_CHAINS_MAX`, or
    fewer where a quarter of the available memory would not hold them)."""
    available = memory.available_memory() if available is None else available
    if available is None:
        return KEPT_CHAINS_MAX
    per_chain = KEPT_BYTES_PER_CHAIN + 24 * max(n, 1)  # the board in the chunk, the copy, int32
    return max(1, min(KEPT_CHAINS_MAX, int(available / 4 / per_chain)))


@dataclasses.dataclass(frozen=True)
class Budget:
    """When to stop: the first of these that is met (at least one must be set)."""

    chains: int | None = None  # this many chains solved
    solutions: int | None = None  # this many distinct solutions found
    seconds: float | None = None  # this much wall time spent
    max_chains: int | None = None  # never run more chains than this

    def __post_init__(self):
        if all(v is None for v in (self.chains, self.solutions, self.seconds, self.max_chains)):
            raise QueensError("no budget: give --chains, --solutions or --time")
        for name in ("chains", "solutions", "max_chains"):  # integers (2.5 is not), >= 1
            value = arguments.integer(  # no upper bound: counted on the host, as Python ints
                getattr(self, name), name, 1, None, optional=True
            )
            object.__setattr__(self, name, value)
        object.__setattr__(
            self, "seconds", arguments.seconds(self.seconds, "seconds", optional=True)
        )

    def check(self, n: int) -> None:
        """Refuse, before any work, a budget that cannot be met on an n x n board: more distinct
        solutions than exist (OEIS A000170, n <= 27; beyond the table nothing is checked)."""
        exist = A000170.get(n)
        if self.solutions is not None and exist is not None and self.solutions > exist:
            raise QueensError(
                f"--solutions {self.solutions}: n = {n} has only {exist:,} distinct "
                f"solutions; ask for at most {exist:,} (or give --chains or --time)"
            )

    def describe(self) -> str:
        """The budget in words, for the progress line ("budget: 1,000 chains or 60 s")."""
        parts = [
            f"{self.chains:,} chains solved" if self.chains else "",
            f"{self.solutions:,} distinct" if self.solutions else "",
            f"{self.seconds:g} s" if self.seconds else "",
            f"{self.max_chains:,} chains run" if self.max_chains else "",
        ]
        return "budget: " + " or ".join(p for p in parts if p)

    def fingerprint(self) -> dict:
        """The budget as checkpoint settings: a run resumes only with the budget it began with."""
        return {
            "chains": self.chains,
            "solutions": self.solutions,
            "time": self.seconds,
            "max_chains": self.max_chains,
        }


@dataclasses.dataclass
class ChainRun:
    """Everything a run gathered, chain by chain: the one result of the chain solvers from the
    chunk results to the files (host arrays, built once by `run_chains`); `summary.json`
    (`summarize`), `runs.csv` (`run_table`) and the command's
    printed lines are read from it."""

    n: int
    chain_id: np.ndarray  # [C] int64
    rows: np.ndarray  # [C, n] final boards (solutions where solved)
    solved: np.ndarray  # [C] bool
    steps: np.ndarray  # [C] int64 steps spent, solved or not (runs.csv's steps_spent)
    restarts: np.ndarray  # [C] int64
    wall_share: np.ndarray  # [C] float64 seconds: each chunk's kernel time split by steps spent
    best: np.ndarray | None  # [C] best objective (local search), or None
    wall_s: float  # kernel time, compilation excluded
    compile_s: float
    stopped_by: str  # "chains", "solutions", "time", "max_chains", "kept_chains" or "interrupted"
    unfinished: np.ndarray | None = (
        None  # [C] bool: paused when the time was up (reported unsolved)
    )
    best_step: np.ndarray | None = None  # [C] int64 step of the best board (annealing), or None
    solver: str = ""  # the solver's name ("min-conflicts", "annealing-sa")
    best_unit: str = "attacking_pairs"  # what `best` counts: "attacking_pairs", "nmof_attacks"

    @property
    def chains(self) -> int:
        """Chains run (and kept)."""
        return int(self.chain_id.size)

    @property
    def solved_count(self) -> int:
        return int(self.solved.sum())

    @property
    def unfinished_count(self) -> int:
        """Chains still running when the time was up (counted unsolved)."""
        return int(self.unfinished.sum()) if self.unfinished is not None else 0

    @property
    def solutions(self) -> np.ndarray:
        """[S, n] verified boards of the solved chains, in chain order."""
        return self.rows[self.solved]

    @functools.cached_property
    def distinct_solutions(self) -> np.ndarray:
        """[D, n] distinct solutions, sorted (computed once)."""
        sols = self.solutions
        if not len(sols):
            return sols
        _, first = np.unique(_row_keys(sols), return_index=True)  # bytewise: fast
        return np.unique(sols[first], axis=0)  # the few distinct rows, in numeric order

    def distinct(self) -> np.ndarray:
        """[D, n] distinct solutions, sorted."""
        return self.distinct_solutions

    @property
    def solutions_per_s(self) -> float | None:
        """Solved chains per kernel second (None before any kernel time)."""
        return self.solved_count / self.wall_s if self.wall_s > 0 else None

    def step_quantiles(self) -> dict:
        """Mean, median, p90, p99 and max of the solved chains' steps (None when none solved)."""
        solved_steps = self.steps[self.solved]
        if not solved_steps.size:
            return dict.fromkeys(("mean", "median", "p90", "p99", "max"))
        q = lambda p: float(np.percentile(solved_steps, p))
        return {
            "mean": float(solved_steps.mean()),
            "median": q(50),
            "p90": q(90),
            "p99": q(99),
            "max": int(solved_steps.max()),
        }


def _cut(solved_cum: np.ndarray, target: int) -> int | None:
    """Chains needed to reach `target` on a cumulative count, or None if not reached."""
    hit = np.flatnonzero(solved_cum >= target)
    return int(hit[0]) + 1 if hit.size else None


def _gather(res: ChunkResult) -> ChunkResult:
    """Across processes: every process's chunk, in process order, on every process."""
    if gather.process_count() == 1:
        return res
    fields: dict[str, Any] = {
        f: None if a is None else gather.concat(a, axis=0)
        for f, a in zip(ChunkResult._fields, res, strict=True)
    }
    return ChunkResult(**fields)


def checkpoint_schema(n: int | None = None) -> dict:
    """A chain run's checkpoint (`save_checkpoint`): the finished chains (a ChunkResult's
    fields but `paused`), their wall shares, the next chain id and the kernel seconds spent;
    `n`: the board width (None: any)."""
    chains = lambda dtype, optional=False: checkpoint.Spec(dtype, ("chains",), optional)
    return {
        "done": {
            "rows": checkpoint.Spec(np.integer, ("chains", n)),
            "solved": chains(np.bool_),
            "steps": chains(np.integer),
            "restarts": chains(np.integer),
            "best": chains(np.number, optional=True),
            "best_step": chains(np.integer, optional=True),
        },
        "wall_share": chains(np.floating),
        "offset": checkpoint.Spec(np.integer),
        "wall": checkpoint.Spec(np.floating),
    }


def save_checkpoint(
    path: Path,
    parts: list[ChunkResult],
    shares: list[np.ndarray],
    offset: int,
    wall: float,
    fingerprint: dict,
) -> None:
    """Finished chunks, atomically (a crash mid-write leaves the previous checkpoint whole)."""
    done: dict[str, Any] = {
        f: np.concatenate([getattr(p, f) for p in parts])
        for f in ChunkResult._fields
        if f != "paused" and getattr(parts[0], f) is not None
    }
    tree = {"done": done, "wall_share": np.concatenate(shares), "offset": offset, "wall": wall}
    checkpoint.save(path, tree, fingerprint)


def load_checkpoint(
    path: Path, fingerprint: dict, n: int | None = None
) -> tuple[ChunkResult, np.ndarray, int, float]:
    """(finished chains, their wall shares, next chain id, wall seconds) of a checkpoint of
    `n`-wide boards (None: any width)."""
    tree = checkpoint.load(path, fingerprint, checkpoint_schema(n))
    return ChunkResult(**tree["done"]), tree["wall_share"], int(tree["offset"]), float(tree["wall"])


def _row_keys(rows: np.ndarray) -> np.ndarray:
    """[R] one opaque value per row of `rows` [R, n]: equal exactly where the rows are, each
    holding the row's bytes (`row.tobytes()`)."""
    rows = np.ascontiguousarray(rows)
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()


def _new_solutions(
    rows: np.ndarray, solved: np.ndarray, seen: set[bytes]
) -> tuple[set[bytes], np.ndarray]:
    """The solutions among `rows` [C, n] (where `solved` [C]) not in `seen` (by
    `tobytes`), and [C] the distinct solutions found up to and including each chain."""
    idx = np.flatnonzero(solved)
    first_new = np.zeros(len(solved), np.int64)
    fresh: set[bytes] = set()
    if idx.size:
        keys, first = np.unique(_row_keys(rows[idx]), return_index=True)  # first occurrences
        new = np.fromiter((k.tobytes() not in seen for k in keys), bool, len(keys))
        first_new[idx[first[new]]] = 1
        fresh = {k.tobytes() for k in keys[new]}
    return fresh, len(seen) + np.cumsum(first_new)


@dataclasses.dataclass
class _Tally:
    """What a run has recorded so far (finished chunks, in chain order)."""

    parts: list[ChunkResult] = dataclasses.field(default_factory=list)
    shares: list[np.ndarray] = dataclasses.field(default_factory=list)
    seen: set[bytes] = dataclasses.field(default_factory=set)  # distinct solutions
    solved: int = 0
    wall: float = 0.0
    offset: int = 0  # next chain id
    stopped_by: str | None = None
    keep: int = 0  # chains reported
    pending: float = 0.0  # kernel seconds spent on a chunk whose paused chains continue
    elapsed: float = 0.0  # seconds of the loop, its host work included: what --time bounds
    unfinished: np.ndarray | None = None  # [count] paused chains of the last chunk (time was up)


def run_chains(
    run_chunk: Callable[[int, int], Any],  # a ChunkResult, or a kernel's Result (ChunkResult.of)
    n: int,
    budget: Budget,
    chunk: int,
    what: str,
    compile_s: float = 0.0,
    quiet: bool | None = None,
    checkpoint: Path | None = None,
    fingerprint: dict | None = None,
    resume: bool = False,
    checkpoint_every: float = settings.CHECKPOINT_EVERY,
    limits: str = "",
    model: cons.Constraints | None = None,
    solver: str | None = None,
    best_unit: str = "attacking_pairs",
) -> ChainRun:
    """Run chunks of `chunk` chains until `budget` is met; verify every solution.

    Args:
      run_chunk: `(offset, count) -> ChunkResult` for chains offset..offset+count-1.
      n: board size.
      budget: when to stop.
      chunk: chains per call and process (fixed, so the kernel compiles once).
      what: solver name for messages.
      compile_s: compilation seconds, reported apart from run time.
      quiet: suppress the progress line (default: quiet unless stderr is a terminal).
      checkpoint: file for checkpoints of finished chunks (written every `checkpoint_every`
        seconds and on Ctrl-C); with `resume`, the run continues from it.
      fingerprint: the solver's settings, the command included, that a checkpoint must match to
        be resumed; the budget, n, chunk and process count are added here.
      limits: the per-chain work limits in words ("at most 11 attempts x 4,000 steps a chain"),
        shown on the progress line beside the budget, so that no run is unbounded unseen.
      model: a constrained instance (toroidal included) every solution must also solve.
      solver: the solver's name in the result (`ChainRun.solver`; default `what`).
      best_unit: what the chunk results' `best` counts (`ChainRun.best_unit`).

    With several processes (`jax.distributed`), process p runs the p-th chunk of each round
    and all processes receive every chunk, so chain ids, stops and results are those of a
    single-process run.
    """
    budget.check(n)
    procs, me = gather.process_count(), gather.process_index()
    cap = kept_chains_cap(n) if budget.max_chains is None else None  # memory bounded up front
    shown = "; ".join(x for x in (budget.describe(), limits) if x)
    fingerprint = {
        **(fingerprint or {}),
        **budget.fingerprint(),
        "n": n,
        "chunk": chunk,
        "processes": procs,
    }
    t = _Tally()
    if resume and checkpoint is not None:
        _resume(t, checkpoint, fingerprint, n)
    step = _ChunkStep(run_chunk, n, budget, chunk, what, model, procs, me, cap, shown)

    def save() -> None:
        if t.parts and checkpoint is not None:
            save_checkpoint(checkpoint, t.parts, t.shares, t.offset, t.wall, fingerprint)

    interrupted = run_chunks(
        functools.partial(step, t),
        total=budget.chains,
        unit="chains solved",
        quiet=quiet,
        save=save if checkpoint is not None and me == 0 else None,
        every=checkpoint_every,
    )
    if interrupted:
        t.stopped_by, t.keep = "interrupted", t.offset
    assert t.stopped_by is not None  # the loop ends when a budget is met or on an interrupt
    return _collect(
        t,
        n,
        interrupted,
        compile_s=compile_s,
        solver=what if solver is None else solver,
        best_unit=best_unit,
    )


def _resume(t: _Tally, checkpoint: Path, fingerprint: dict, n: int) -> None:
    """Fill a new tally from the checkpoint of an interrupted run."""
    done, share, t.offset, t.wall = load_checkpoint(checkpoint, fingerprint, n)
    t.elapsed = t.wall
    t.parts, t.shares = [done], [share]
    t.solved = int(done.solved.sum())
    t.seen.update(r.tobytes() for r in done.rows[done.solved])


@dataclasses.dataclass(frozen=True)
class _ChunkStep:
    """One chunk of `run_chains`: run it, verify it, record it in the tally, say if to stop."""

    run_chunk: Callable[[int, int], Any]
    n: int
    budget: Budget
    chunk: int
    what: str
    model: cons.Constraints | None
    procs: int
    me: int
    cap: int | None  # kept chains at most (no max_chains budget)
    shown: str  # the budget and limits on the progress line

    def __call__(self, t: _Tally) -> Tick:
        budget = self.budget
        count = (
            self.chunk
            if budget.max_chains is None or self.procs > 1
            else min(self.chunk, budget.max_chains - t.offset)
        )
        t0 = time.perf_counter()
        mine = self.run_chunk(t.offset + self.me * count, count)
        res = _gather(ChunkResult.of(mine))
        dt = t.pending + time.perf_counter() - t0  # over every call of this chunk
        count = len(res.solved)
        if res.paused is not None and res.paused.any():
            if budget.seconds is None or t.elapsed + time.perf_counter() - t0 < budget.seconds:
                t.pending = dt  # the next call continues the paused chains of this chunk
                t.elapsed += time.perf_counter() - t0
                return Tick(
                    t.solved,
                    f"{len(t.seen)} distinct, {int(res.paused.sum())} chains continue "
                    f"({t.offset + count:,} chains run; {self.shown})",
                )
            t.unfinished = res.paused  # the time is up: they stay unsolved
        t.pending = 0.0
        res = res._replace(paused=None)
        checker.require_solutions(res.rows[res.solved], what=self.what, n=self.n)
        if self.model is not None:  # the same instance, by the independent constrained checker
            checker.require_constrained(res.rows[res.solved], self.model, what=self.what)
        steps = res.steps.astype(np.float64)
        share = dt * steps / steps.sum() if steps.sum() > 0 else np.full(count, dt / count)
        # Cumulative solved and distinct counts inside this chunk, to cut exactly.
        solved_cum = t.solved + np.cumsum(res.solved)
        fresh, distinct_cum = _new_solutions(res.rows, res.solved, t.seen)
        offset, wall = t.offset + count, t.wall + dt
        # the time budget counts the chunk's host work too (the checks and the loop above: 1 s
        # of 8 at n = 16 over 368 k chains), so the run's overrun does not grow with --time
        elapsed = t.elapsed + time.perf_counter() - t0
        stopped_by, keep = self._stop(solved_cum, distinct_cum, offset, count, elapsed)
        # Record the whole chunk at once, so that the tally stays whole at a Ctrl-C.
        t.parts, t.shares = [*t.parts, res], [*t.shares, share]
        t.seen.update(fresh)
        t.solved, t.offset, t.wall, t.elapsed = int(solved_cum[-1]), offset, wall, elapsed
        t.stopped_by, t.keep = stopped_by, keep
        # The line shows the chains kept: never more solved than the budget (the chunk's last
        # chains, past the cut, are dropped).
        last = count - 1 if stopped_by is None else keep - (offset - count) - 1
        return Tick(
            int(solved_cum[last]),
            f"{int(distinct_cum[last])} distinct, {offset:,} chains run; {self.shown}",
            finished=stopped_by is not None,
        )

    def _stop(
        self,
        solved_cum: np.ndarray,
        distinct_cum: np.ndarray,
        offset: int,
        count: int,
        elapsed: float,
    ) -> tuple[str | None, int]:
        """The budget a chunk meets (None: none) and the chains the run keeps then."""
        budget = self.budget
        cuts = {
            "chains": budget.chains and _cut(solved_cum, budget.chains),
            "solutions": budget.solutions and _cut(distinct_cum, budget.solutions),
        }
        met = {k: v for k, v in cuts.items() if v}
        if met:
            stopped_by = min(met, key=met.__getitem__)
            return stopped_by, offset - count + met[stopped_by]
        if budget.seconds is not None and elapsed >= budget.seconds:
            return "time", offset
        if budget.max_chains is not None and offset >= budget.max_chains:
            return "max_chains", budget.max_chains
        if self.cap is not None and offset >= self.cap:
            return "kept_chains", self.cap
        return None, 0


def _collect(
    t: _Tally,
    n: int,
    interrupted: bool,
    compile_s: float,
    solver: str,
    best_unit: str,
) -> ChainRun:
    """The kept chains of a finished (or interrupted) run, from its tally."""
    assert t.stopped_by is not None
    parts, shares, keep = t.parts, t.shares, t.keep
    total = sum(len(p.solved) for p in parts)
    unfinished = np.zeros(total, bool)
    if t.unfinished is not None and not interrupted:
        unfinished[total - len(t.unfinished) :] = t.unfinished
    cat = lambda field: (
        np.concatenate([getattr(p, field) for p in parts])[:keep]
        if parts
        else np.zeros((0, n) if field == "rows" else 0)
    )
    return ChainRun(
        n=n,
        chain_id=np.arange(keep, dtype=np.int64),
        rows=cat("rows").reshape(-1, n).astype(np.int32),
        solved=cat("solved").astype(bool),
        steps=cat("steps").astype(np.int64),
        restarts=cat("restarts").astype(np.int64),
        wall_share=(np.concatenate(shares)[:keep] if shares else np.zeros(0)),
        best=cat("best").astype(np.int64) if parts and parts[0].best is not None else None,
        wall_s=t.wall,
        compile_s=compile_s,
        stopped_by=t.stopped_by,
        unfinished=unfinished[:keep],
        best_step=(
            cat("best_step").astype(np.int64) if parts and parts[0].best_step is not None else None
        ),
        solver=solver,
        best_unit=best_unit,
    )


def summarize(run: ChainRun, **extra) -> dict:
    """The figures of `summary.json`: success rate, step quantiles, throughput."""
    chains = run.chains
    return {
        "n": run.n,
        "chains": chains,
        "solved": run.solved_count,
        "success_rate": float(run.solved.mean()) if chains else None,
        "steps": run.step_quantiles(),
        "restarts_mean": float(run.restarts.mean()) if chains else None,
        "distinct_solutions": len(run.distinct_solutions),
        "wall_s": run.wall_s,
        "compile_s": run.compile_s,
        "solutions_per_s": run.solutions_per_s,
        "stopped_by": run.stopped_by,
        "unfinished": run.unfinished_count,
        **extra,
    }


def instance_setup(
    n: int | None, instance: cons.Constraints | None, toroidal: bool
) -> tuple[cons.Constraints | None, rules.Mask | None]:
    """(model, mask) of a constrained run: the instance with `toroidal` applied (a plain
    toroidal board of size `n` when only `toroidal` is set; None for the classic board) and,
    when it fixes queens or forbids squares, the kernels'
    `Mask` of its allowed squares (None otherwise).
    `n` must be None or the instance's size.

    Raises:
      InstanceUnsat: the instance is plainly unsatisfiable
        (`unsat_reason`: fixed queens attacking each other, a
        column or row without an allowed square); local search reports UNSAT for such a proof
        only, and runs no chain.
    """
    if instance is None:
        if not toroidal:
            return None, None
        assert n is not None  # the classic board always comes with its size
        return cons.Constraints(n, toroidal=True), None
    if not isinstance(instance, cons.Constraints):
        raise QueensError(
            f"instance must be a jaxqueens Constraints, got {type(instance).__name__}"
        )
    if n is not None and n != instance.n:
        raise QueensError(
            f"n = {n} but the instance has n = {instance.n}; drop n or give the same size"
        )
    model = instance.with_toroidal(True) if toroidal else instance
    if model.plain:
        return model, None
    allowed = cons.allowed_squares(model)
    reason = cons.unsat_reason(model, allowed)
    if reason is not None:  # a proof: no search can find what does not exist
        raise InstanceUnsat(reason)
    return model, rules.mask_of(allowed, cons.fixed_rows(model))
