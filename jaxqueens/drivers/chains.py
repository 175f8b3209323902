"""Chunked driver for chain solvers: run, verify, gather, stop at a budget.

A solver supplies `run_chunk(offset, count)` (chain i seeded from `fold_in(key, i)`). The driver
calls it chunk after chunk through `jaxqueens.drivers.loop.run_chunks`, verifies every solved
board with the independent checker before counting it, and stops at the budget; chains past the
one that met a budget are dropped, so the output never depends on the chunk size. With several
processes, process p runs the p-th chunk of each round and every process receives every chunk.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from jaxqueens.core import checker
from jaxqueens.core import constraints as cons
from jaxqueens.drivers.chains_types import Budget, ChainRun, ChunkResult, row_keys
from jaxqueens.drivers.loop import RunControl, Tick, run_chunks
from jaxqueens.errors import InstanceUnsat, QueensError
from jaxqueens.io import checkpoint
from jaxqueens.parallel import gather, memory
from jaxqueens.solvers import constrained as rules

KEPT_CHAINS_MAX = 1_000_000
"""The most chains one run keeps when nothing bounds the chains it runs (no `max_chains`): every
chain run is kept, so without this cap a `--time` budget over chains that never solve keeps
millions within seconds. The run stops there (`stopped_by` "kept_chains")."""

KEPT_BYTES_PER_CHAIN = 512
"""Bytes a kept chain costs at its peak beyond its board (its figures in the chunk results, their
concatenated copy and its table row), rounded up."""


def kept_chains_cap(n: int, available: int | None = None) -> int:
    """The most chains a run without a bound on chains run keeps: `KEPT_CHAINS_MAX`, or fewer where
    a quarter of the `available` bytes of memory (None: measured) would not hold them."""
    available = memory.available_memory() if available is None else available
    if available is None:
        return KEPT_CHAINS_MAX
    per_chain = KEPT_BYTES_PER_CHAIN + 24 * max(n, 1)  # the board in the chunk, the copy, int32
    return max(1, min(KEPT_CHAINS_MAX, int(available / 4 / per_chain)))


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
    """A chain run's checkpoint schema (`_Run.tree`) for board width `n` (None: any): the
    finished chains (a ChunkResult's fields but `paused`), their wall shares, the next chain id and
    the kernel seconds spent."""
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


def _new_solutions(
    rows: np.ndarray, solved: np.ndarray, seen: set[bytes]
) -> tuple[set[bytes], np.ndarray]:
    """The solutions among `rows` [C, n] (where `solved` [C]) not in `seen` (by
    `tobytes`), and [C] the distinct solutions found up to and including each chain."""
    idx = np.flatnonzero(solved)
    first_new = np.zeros(len(solved), np.int64)
    fresh: set[bytes] = set()
    if idx.size:
        keys, first = np.unique(row_keys(rows[idx]), return_index=True)  # first occurrences
        new = np.fromiter((k.tobytes() not in seen for k in keys), bool, len(keys))
        first_new[idx[first[new]]] = 1
        fresh = {k.tobytes() for k in keys[new]}
    return fresh, len(seen) + np.cumsum(first_new)


@dataclasses.dataclass
class _Run:
    """One `run_chains` call: its fixed settings, then what it has recorded so far (finished
    chunks, in chain order); `step` runs, verifies and records one chunk, `collect` the result."""

    run_chunk: Callable[[int, int], Any]
    n: int
    budget: Budget
    chunk: int
    what: str
    model: cons.Constraints | None
    cap: int | None  #: kept chains at most (no max_chains budget)
    shown: str  #: the budget and limits on the progress line
    procs: int
    me: int
    parts: list[ChunkResult] = dataclasses.field(default_factory=list)
    shares: list[np.ndarray] = dataclasses.field(default_factory=list)
    seen: set[bytes] = dataclasses.field(default_factory=set)  #: distinct solutions
    solved: int = 0
    wall: float = 0.0
    offset: int = 0  #: next chain id
    stopped_by: str | None = None
    keep: int = 0  #: chains reported
    pending: float = 0.0  #: kernel seconds spent on a chunk whose paused chains continue
    elapsed: float = 0.0  #: seconds of the loop, its host work included: what --time bounds
    unfinished: np.ndarray | None = None  #: [count] paused chains of the last chunk (time was up)

    def resume(self, path: Path, fingerprint: dict) -> None:
        """Take up the chains recorded in the checkpoint of an interrupted run (a file of other
        settings than `fingerprint` is refused)."""
        tree = checkpoint.load(path, fingerprint, checkpoint_schema(self.n))
        done, share = ChunkResult(**tree["done"]), tree["wall_share"]
        self.offset, self.wall = int(tree["offset"]), float(tree["wall"])
        self.elapsed = self.wall
        self.parts, self.shares = [done], [share]
        self.solved = int(done.solved.sum())
        self.seen.update(r.tobytes() for r in done.rows[done.solved])

    def tree(self) -> dict:
        """The checkpoint (`checkpoint_schema`): the finished chunks in chain order (a ChunkResult's
        fields but `paused`) with their chains' wall shares, the next chain id and the kernel
        seconds spent."""
        done = {
            f: np.concatenate([getattr(p, f) for p in self.parts])
            for f in ChunkResult._fields
            if f != "paused" and getattr(self.parts[0], f) is not None
        }
        shares = np.concatenate(self.shares)
        return {"done": done, "wall_share": shares, "offset": self.offset, "wall": self.wall}

    def step(self) -> Tick:
        """Run the next chunk, verify it, record it; the progress line and whether to stop."""
        budget = self.budget
        count = (
            self.chunk
            if budget.max_chains is None or self.procs > 1
            else min(self.chunk, budget.max_chains - self.offset)
        )
        t0 = time.perf_counter()
        mine = self.run_chunk(self.offset + self.me * count, count)
        res = _gather(ChunkResult.of(mine))
        dt = self.pending + time.perf_counter() - t0  # over every call of this chunk
        count = len(res.solved)
        if res.paused is not None and res.paused.any():
            if budget.seconds is None or self.elapsed + time.perf_counter() - t0 < budget.seconds:
                self.pending = dt  # the next call continues the paused chains of this chunk
                self.elapsed += time.perf_counter() - t0
                return Tick(
                    self.solved,
                    f"{len(self.seen)} distinct, {int(res.paused.sum())} chains continue "
                    f"({self.offset + count:,} chains run; {self.shown})",
                )
            self.unfinished = res.paused  # the time is up: they stay unsolved
        self.pending = 0.0
        res = res._replace(paused=None)
        checker.require_solutions(res.rows[res.solved], what=self.what, n=self.n)
        if self.model is not None:  # the same instance, by the independent constrained checker
            checker.require_constrained(res.rows[res.solved], self.model, what=self.what)
        steps = res.steps.astype(np.float64)
        share = dt * steps / steps.sum() if steps.sum() > 0 else np.full(count, dt / count)
        # Cumulative solved and distinct counts inside this chunk, to cut exactly.
        solved_cum = self.solved + np.cumsum(res.solved)
        fresh, distinct_cum = _new_solutions(res.rows, res.solved, self.seen)
        offset, wall = self.offset + count, self.wall + dt
        # the time budget counts the chunk's host work too (the checks and the loop above), so
        # the run's overrun does not grow with --time
        elapsed = self.elapsed + time.perf_counter() - t0
        stopped_by, keep = self._stop(solved_cum, distinct_cum, offset, count, elapsed)
        # Record the whole chunk at once, so that the tally stays whole at a Ctrl-C.
        self.parts, self.shares = [*self.parts, res], [*self.shares, share]
        self.seen.update(fresh)
        self.solved, self.offset, self.wall = int(solved_cum[-1]), offset, wall
        self.elapsed, self.stopped_by, self.keep = elapsed, stopped_by, keep
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

    def collect(self, interrupted: bool, compile_s: float, solver: str, best_unit: str) -> ChainRun:
        """The kept chains of the finished (or interrupted) run."""
        assert self.stopped_by is not None
        parts, shares, keep, n = self.parts, self.shares, self.keep, self.n
        total = sum(len(p.solved) for p in parts)
        unfinished = np.zeros(total, bool)
        if self.unfinished is not None and not interrupted:
            unfinished[total - len(self.unfinished) :] = self.unfinished

        def cat(field: str, dtype=np.int64) -> np.ndarray:
            if not parts:
                return np.zeros((0, n) if field == "rows" else 0, dtype)
            return np.concatenate([getattr(p, field) for p in parts])[:keep].astype(dtype)

        optional = lambda field: (
            cat(field) if parts and getattr(parts[0], field) is not None else None
        )
        return ChainRun(
            n=n,
            chain_id=np.arange(keep, dtype=np.int64),
            rows=cat("rows", np.int32).reshape(-1, n),
            solved=cat("solved", bool),
            steps=cat("steps"),
            restarts=cat("restarts"),
            wall_share=(np.concatenate(shares)[:keep] if shares else np.zeros(0)),
            best=optional("best"),
            wall_s=self.wall,
            compile_s=compile_s,
            stopped_by=self.stopped_by,
            unfinished=unfinished[:keep],
            best_step=optional("best_step"),
            solver=solver,
            best_unit=best_unit,
        )


def run_chains(
    run_chunk: Callable[[int, int], Any],  # a ChunkResult, or a kernel's Result (ChunkResult.of)
    n: int,
    budget: Budget,
    chunk: int,
    what: str,
    compile_s: float = 0.0,
    control: RunControl | None = None,
    fingerprint: dict | None = None,
    limits: str = "",
    model: cons.Constraints | None = None,
    solver: str | None = None,
    best_unit: str = "attacking_pairs",
) -> ChainRun:
    """Run chunks of `chunk` chains until `budget` is met, verifying every solution; returns the
    kept chains (`ChainRun`).

    `run_chunk(offset, count)` runs chains offset..offset+count-1; `chunk` is fixed per call and
    process, so the kernel compiles once. `what` names the solver in messages (and in the result
    unless `solver` is given); `compile_s` is reported apart from run time. The checkpoint of
    `control` holds the finished chunks (written periodically and on Ctrl-C) and a resumed run
    continues from it when its `fingerprint` (the solver's settings, the command included; the
    instance, budget, n, chunk and process count are added here) matches. `limits` puts the
    per-chain work limits in words ("at most 11 attempts x 4,000 steps a chain") on the progress
    line, so that no run is unbounded unseen. With `model` (a constrained instance, toroidal
    included) every solution must also solve it; `best_unit` is what the chunk results' `best`
    counts (`ChainRun.best_unit`)."""
    budget.check(n)
    procs, me = gather.process_count(), gather.process_index()
    cap = kept_chains_cap(n) if budget.max_chains is None else None  # memory bounded up front
    shown = "; ".join(x for x in (budget.describe(), limits) if x)
    fingerprint = {
        **(fingerprint or {}),
        **({} if model is None else {"instance": model.to_dict()}),
        **budget.fingerprint(),
        "n": n,
        "chunk": chunk,
        "processes": procs,
    }
    control = RunControl() if control is None else control
    path = None if control.checkpoint is None else Path(control.checkpoint)
    t = _Run(run_chunk, n, budget, chunk, what, model, cap, shown, procs, me)
    if control.resume and path is not None:
        t.resume(path, fingerprint)

    def save() -> None:
        if t.parts and path is not None:
            checkpoint.save(path, t.tree(), fingerprint)

    interrupted = run_chunks(
        t.step,
        total=budget.chains,
        unit="chains solved",
        control=control,
        save=save if path is not None and me == 0 else None,
    )
    if interrupted:
        t.stopped_by, t.keep = "interrupted", t.offset
    assert t.stopped_by is not None  # the loop ends when a budget is met or on an interrupt
    solver = what if solver is None else solver
    return t.collect(interrupted, compile_s=compile_s, solver=solver, best_unit=best_unit)


def instance_setup(
    n: int | None, instance: cons.Constraints | None, toroidal: bool
) -> tuple[cons.Constraints | None, rules.Mask | None]:
    """The model and mask of a constrained run: the instance with `toroidal` applied (a plain
    toroidal board when only `toroidal` is set; None for the classic board) and, when it fixes
    queens or forbids squares, the kernels' `Mask` of its allowed squares (None otherwise). `n` is
    None or the instance's size.

    Raises `InstanceUnsat` when the instance is plainly unsatisfiable (`unsat_reason`: fixed queens
    attacking each other, a column or row without an allowed square); local search reports UNSAT for
    such a proof only, and runs no chain."""
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
