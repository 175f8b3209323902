"""Exact solving of many constrained instances at once: decide, count or enumerate.

Method: every instance (`jaxqueens.core.constraints.Constraints`, e.g. a CSPLib prob079
excluded-diagonals instance or an n-Queens Completion instance, Gent, Jefferson & Nightingale, JAIR
2017) starts as one work item, the root of its bitmask search tree (`jaxqueens.solvers.complete`),
searched in its most constrained orientation. Chunks of items run as kernel calls of a bounded
number of tree edges each; an unfinished item's DFS stack comes back as new items (its untried
sub-trees) at the end of the queue, so a hard instance never idles the batch. Every solution
reported passes `jaxqueens.core.checker.check_constrained`. docs/reference/complete.md describes
the streams, the modes, the checkpoints and the multi-process split.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from jaxqueens.core import arguments, checker
from jaxqueens.core.constraints import (
    Constraints,
    board_from_orientation,
    search_masks,
    unsat_reason,
)
from jaxqueens.drivers import settings
from jaxqueens.drivers.loop import Tick, guarded, run_chunks
from jaxqueens.errors import QueensError, SolutionCheckError
from jaxqueens.io import checkpoint as ckpt
from jaxqueens.parallel import complete as batched
from jaxqueens.parallel import devices, gather, memory, sizing
from jaxqueens.parallel import streams as parallel_streams
from jaxqueens.parallel.scheduler import Finished, Launch, Scheduler
from jaxqueens.solvers import complete as solver
from jaxqueens.solvers.complete import Config

MODES = ("decide", "count", "enumerate")
MAX_N = solver.MAX_N
BUDGET = 1 << 20  # tree edges per item and kernel call (CPU; splits hard instances)
CHUNK = 64  # items per kernel call (CPU: split over the host devices)
DEPTH = 2  # chunks in flight per stream: the next is dispatched before the host reads one
ENUMERATE_CAP = 1000  # solutions listed per instance by default
LISTED_COPIES = 3
"""Copies of a call's listed-solutions array `[items, cap, n + 1]` uint32 alive at once (the
kernel's carry, its output and the host's copy; one call read while the next runs)."""
ROOT = -1  # `av` of a queued instance root not launched yet (its masks are built at launch)


class InstanceResult(NamedTuple):
    """One instance's outcome (exact Python ints)."""

    n: int
    status: str  # "SAT", "UNSAT", "unknown" (node limit reached) or "open" (run interrupted)
    solutions: int | None  # all solutions (count / enumerate modes; not "unknown" or "open")
    nodes: int  # tree edges searched (queens tried)
    seconds: float  # share of the chunks' wall time, by steps
    boards: np.ndarray  # [k, n] uint8 verified solutions (decide: the first; enumerate: up to cap)
    reason: str | None = None  # UNSAT without a search: why (core.constraints.unsat_reason)


class CompleteResult(NamedTuple):
    instances: list[InstanceResult]
    seconds: float  # wall time of the search, compilation excluded
    compile_seconds: float
    chunks: int  # kernel calls
    items: int  # sub-trees searched (instance roots and split-off frontiers)
    resumed: bool
    stopped_by: str = "finished"  # or "interrupted" (Ctrl-C, SIGTERM): a partial result

    @property
    def settled(self) -> int:
        """Instances decided (every one, unless the run was interrupted)."""
        return sum(r.status != "open" for r in self.instances)


def _kernel(batch, shards: int, config: Config, sizes: sizing.Sizes):
    """`search_chunk` as a stream calls it (`jaxqueens.parallel.streams`)."""
    return batched.search_chunk(batch, config, shards, sizes)


# --- host side ------------------------------------------------------------------------------------


def _rows_of(bits: np.ndarray) -> np.ndarray:
    """Row index of single-bit masks (uint64 array)."""
    return np.log2(bits.astype(np.float64)).astype(np.int16)


def _deal(count: int, chunk: int, devices_: int) -> np.ndarray:
    """Rows of a `chunk`-row batch for items 0..count-1: item j goes to device j mod D."""
    per = chunk // devices_
    j = np.arange(count)
    return (j % devices_) * per + j // devices_


class WorkItem(NamedTuple):
    """One sub-tree of an instance's search, queued or in flight (exact Python ints; masks are
    of the search orientation, bit r = row r)."""

    instance: int  # index of its instance in `models`
    level: int  # columns already placed: the sub-tree's root is column `level`
    cols: int  # rows taken by the queens placed
    ld: int  # rows attacked in column `level` along one diagonal direction
    rd: int  # rows attacked in column `level` along the other
    av: int  # rows still to try in column `level` (ROOT: an instance's root, read at launch)
    path: tuple[int, ...]  # [level] rows of the queens placed, column by column


def _root(instance: int) -> WorkItem:
    """An instance's whole search tree (its first column's rows are read at launch)."""
    return WorkItem(instance, 0, 0, 0, 0, ROOT, ())


class _State:
    """Everything a checkpoint holds: per-instance tallies and the queue of items."""

    def __init__(self, count: int, n_max: int):
        self.solutions = [0] * count
        self.nodes = [0] * count
        self.seconds = [0.0] * count
        self.status = [""] * count  # "" while open
        self.boards: list[list[np.ndarray]] = [[] for _ in range(count)]
        self.queue: list[WorkItem] = []
        self.n_max = n_max
        self.chunks = 0
        self.items = 0

    def tree(self, flight: Sequence[Sequence[WorkItem]] = ()) -> dict:
        """The checkpoint (`schema`): the items of the calls still in flight (`flight`,
        oldest first) go back to the front of the queue (their results are not recorded yet, so
        a resumed run searches them again)."""
        q = [t for items in flight for t in items] + self.queue
        paths = np.zeros((len(q), self.n_max), np.int16)
        for k, t in enumerate(q):
            paths[k, : len(t.path)] = t.path
        column = lambda f: np.array([getattr(t, f) for t in q], np.int64)
        flat = [np.pad(x, (0, self.n_max - len(x))) for b in self.boards for x in b]
        return {
            "instances": {
                "solutions": np.array([str(v) for v in self.solutions]),
                "nodes": np.array([str(v) for v in self.nodes]),
                "seconds": np.array(self.seconds, np.float64),
                "status": np.array(self.status, dtype="U8"),
            },
            "queue": {**{f: column(f) for f in WorkItem._fields[:-1]}, "path": paths},
            "boards": {
                "owner": np.array([i for i, b in enumerate(self.boards) for _ in b], np.int64),
                "rows": np.array(flat, np.int16).reshape(len(flat), self.n_max),
            },
            "counters": np.array([self.chunks, self.items], np.int64),
        }

    @staticmethod
    def schema(count: int, n_max: int) -> dict:
        """What `tree` holds for `count` instances of at most `n_max` columns."""
        per = lambda dtype: ckpt.Spec(dtype, (count,))
        items = lambda: ckpt.Spec(np.int64, ("items",))
        return {
            "instances": {  # solutions and nodes: exact ints in decimal
                "solutions": per(np.str_),
                "nodes": per(np.str_),
                "seconds": per(np.float64),
                "status": per(np.str_),
            },
            "queue": {
                **{f: items() for f in WorkItem._fields[:-1]},
                "path": ckpt.Spec(np.int16, ("items", n_max)),
            },
            "boards": {
                "owner": ckpt.Spec(np.int64, ("boards",)),
                "rows": ckpt.Spec(np.int16, ("boards", n_max)),
            },
            "counters": ckpt.Spec(np.int64, (2,)),
        }

    def restore(self, tree: dict, models: Sequence[Constraints]) -> None:
        per, queue, boards = tree["instances"], tree["queue"], tree["boards"]
        self.solutions = [int(v) for v in per["solutions"]]
        self.nodes = [int(v) for v in per["nodes"]]
        self.seconds = [float(v) for v in per["seconds"]]
        self.status = [str(v) for v in per["status"]]
        self.boards = [[] for _ in models]
        for i, b in zip(boards["owner"], boards["rows"], strict=True):
            self.boards[int(i)].append(b[: models[int(i)].n].astype(np.int16))
        heads = np.stack([queue[f] for f in WorkItem._fields[:-1]], axis=1).tolist()
        self.queue = [
            WorkItem(i, level, cols, ld, rd, av, tuple(int(v) for v in p[:level]))
            for (i, level, cols, ld, rd, av), p in zip(heads, queue["path"], strict=True)
        ]
        self.chunks, self.items = (int(v) for v in tree["counters"])


def _fingerprint(models, mode, cap, budget, chunk, max_nodes, orient) -> dict:
    digest = hashlib.sha256(json.dumps([m.to_dict() for m in models], sort_keys=True).encode())
    return {
        "command": "complete",
        "mode": mode,
        "cap": cap,
        "budget": budget,
        "chunk": chunk,
        "max_nodes": max_nodes,
        "orient": orient,
        "instances": len(models),
        "models": digest.hexdigest()[:16],
        "processes": gather.process_count(),
    }


def _check(
    models: Sequence[Constraints], mode: str, cap: int, max_nodes, budget, chunk
) -> tuple[int | None, int | None, int | None]:
    """Refuse a bad mode, cap or instance; returns `max_nodes`, `budget` and `chunk` checked."""
    if mode not in MODES:
        raise QueensError(f"mode {mode!r}: use one of {', '.join(MODES)}")
    arguments.integer(cap, "cap (the enumeration cap)", 1)
    for i, m in enumerate(models):
        if not isinstance(m, Constraints):
            raise QueensError(f"instance {i} is a {type(m).__name__}, not a Constraints model")
        if m.n > MAX_N:
            raise QueensError(
                f"instance {i}: n = {m.n} is too large; exact search supports n <= {MAX_N}"
            )
    return (
        arguments.integer(max_nodes, "max_nodes", 1, None, optional=True),
        arguments.integer(budget, "budget (tree edges per item and call)", 1, optional=True),
        arguments.integer(chunk, "chunk (items per call)", 1, optional=True),
    )


def listed_bytes(cap: int, n: int, chunk: int) -> int:
    """Bytes the listed solutions of `--enumerate` hold at once.

    Args:
      cap: boards listed per item.
      n: board size.
      chunk: items a call.

    Returns:
      `LISTED_COPIES` copies of `chunk` items with room for `cap` boards of `n + 1` uint32 words.
    """
    return LISTED_COPIES * chunk * cap * (n + 1) * 4


def check_listed_memory(cap: int, n: int, chunk: int, available: int | None = None) -> None:
    """Refuse, before anything is allocated, a `cap` whose listed solutions cannot fit in memory
    (one line with the largest cap that fits).

    Args:
      cap: boards listed per instance.
      n: the largest board size.
      chunk: items a call.
      available: bytes of memory available (default: the machine's, when known).

    Raises:
      QueensError: when `listed_bytes` passes the memory available.
    """
    available = memory.available_memory() if available is None else available
    if available is None:
        return
    most = int(memory.HEADROOM * available) // listed_bytes(1, n, chunk)
    if cap > most:
        raise QueensError(
            f"cap={cap:,} (mode enumerate, n = {n}, {chunk} instances a call) needs about "
            f"{memory.format_bytes(listed_bytes(cap, n, chunk))} of memory for the listed "
            f"solutions but {memory.format_bytes(available)} is available; give cap="
            f"{max(most, 1):,} or less"
        )


def _call_sizes(
    models: Sequence[Constraints], mode: str, cap: int, budget, chunk
) -> tuple[sizing.Sizes, int, int]:
    """The backend's sizes (on an accelerator, lanes fitted to the largest board), the budget
    and the chunk (a multiple of the devices) of every call; enumeration's memory checked."""
    sizes = sizing.sizes()
    num_dev = devices.local_device_count()
    if sizes.accelerator and not sizes.count_lanes and models:
        # lanes from the compiled kernel of the largest board against the device
        big = max(models, key=lambda m: (m.n, m.toroidal))
        cfg = Config(big.n, big.toroidal, cap if mode == "enumerate" else 0, mode == "decide")
        choice = batched.accelerator_lanes(cfg, num_dev)
        if not choice.fits:
            raise QueensError(
                f"n = {big.n} needs {choice.bytes:,} bytes of device memory for even one lane: "
                "the device is too small (or lower the enumeration cap)"
            )
        sizes = dataclasses.replace(sizes, count_lanes=choice.batch)
    budget = int(budget or (BUDGET * 16 if sizes.accelerator else BUDGET))
    chunk = int(
        chunk
        or (sizes.count_lanes * batched.ITEMS_PER_LANE * num_dev if sizes.accelerator else CHUNK)
    )
    chunk = max(num_dev, -(-chunk // num_dev) * num_dev)
    if mode == "enumerate":
        check_listed_memory(cap, max((m.n for m in models), default=1), chunk)
    return sizes, budget, chunk


def _start(
    models: Sequence[Constraints], mine: list[int], reasons: list, path, fingerprint: dict
) -> _State:
    """The search's state: restored from the checkpoint at `path` (None: a fresh run), or every
    instance of this process queued as its root, but those plainly UNSAT (fixed queens
    attacking each other, a column or row without an allowed square), settled up front and
    never searched."""
    st = _State(len(models), max((m.n for m in models), default=1))
    if path is not None:
        st.restore(ckpt.load(path, fingerprint, _State.schema(len(models), st.n_max)), models)
        return st
    for i in mine:
        if reasons[i] is not None:
            st.status[i] = "UNSAT"
        else:
            st.queue.append(_root(i))
    return st


def _kernels(
    models: Sequence[Constraints], mine: list[int], mode: str, list_cap: int, sizes: sizing.Sizes
) -> tuple[dict[tuple[int, bool], Config], dict[tuple[int, bool], Callable]]:
    """The kernel config and call of every group (n, toroidal) of this process's instances."""
    groups = sorted({(models[i].n, models[i].toroidal) for i in mine})
    cap = list_cap if mode == "enumerate" else 0
    configs = {g: Config(g[0], g[1], cap=cap, decide=mode == "decide") for g in groups}
    kernels: dict[tuple[int, bool], Callable] = {
        key: functools.partial(_kernel, config=cfg, sizes=sizes) for key, cfg in configs.items()
    }
    return configs, kernels


def solve_instances(
    models: Sequence[Constraints],
    mode: str = "decide",
    *,
    cap: int = ENUMERATE_CAP,
    max_nodes: int | None = None,
    quiet: bool | None = True,
    checkpoint: str | Path | None = None,
    resume: bool | None = None,
    checkpoint_every: float = settings.CHECKPOINT_EVERY,
    budget: int | None = None,
    chunk: int | None = None,
    orient: bool = True,
    on_chunk: Callable[[int, int], None] | None = None,
) -> CompleteResult:
    """Decide, count or enumerate every instance exactly, in batches.

    Args:
      models: the instances (any mix of board sizes, 1..32, and of the toroidal flag).
      mode: "decide" (first solution or UNSAT), "count" (all solutions, one listed) or
        "enumerate" (all counted, up to `cap` listed per instance).
      cap: solutions listed per instance in enumerate mode.
      max_nodes: give an instance up after about this many tree edges: status "unknown".
      quiet: no progress line (None: one on a terminal only).
      checkpoint: checkpoint file, as `jaxqueens.drivers.count.count_solutions`.
      resume: continue from `checkpoint` (default: if the file exists).
      checkpoint_every: seconds between checkpoints.
      budget: tree edges per item and call (default by backend).
      chunk: items per call (default by backend).
      orient: search each instance in the orientation (one of the square's 8 symmetries) with
        the most constrained first columns (`jaxqueens.core.constraints.best_orientation`);
        solutions are mapped back. False: as given.
      on_chunk: called as `on_chunk(chunks_done, instances_done)` after each chunk (tests
        raise `KeyboardInterrupt` here, as Ctrl-C would).

    Returns:
      `CompleteResult`, instances in the order given. After Ctrl-C or SIGTERM (at the end of a
      chunk), once the checkpoint is saved, the partial result with `stopped_by="interrupted"`:
      the instances not settled yet (`settled` counts the others) have status "open"; in a
      multi-process run, this process's instances only.
    """
    max_nodes, budget, chunk = _check(models, mode, cap, max_nodes, budget, chunk)
    list_cap = {"decide": 1, "count": 1, "enumerate": cap}[mode]
    sizes, budget, chunk = _call_sizes(models, mode, list_cap, budget, chunk)
    fingerprint = _fingerprint(models, mode, cap, budget, chunk, max_nodes, orient)
    path = ckpt.process_path(checkpoint) if checkpoint is not None else None
    if resume is None:
        resume = path is not None and path.exists()
    procs, me = gather.process_count(), gather.process_index()
    mine = list(range(me, len(models), procs))
    reasons = [unsat_reason(m) for m in models]
    st = _start(models, mine, reasons, path if resume else None, fingerprint)
    configs, kernels = _kernels(models, mine, mode, list_cap, sizes)
    streams = parallel_streams.plan(chunk, sizes.accelerator)  # one per host device on a CPU
    compile_s = _compile(configs, kernels, streams)
    run = _Search(
        models=models,
        mode=mode,
        list_cap=list_cap,
        max_nodes=max_nodes,
        budget=budget,
        orient=orient,
        st=st,
        mine=mine,
        configs=configs,
        kernels=kernels,
        streams=streams,
        on_chunk=on_chunk,
    )
    t1 = time.perf_counter()
    stopped = run.run(path, fingerprint, quiet, checkpoint_every)
    seconds = time.perf_counter() - t1
    if not stopped and procs > 1:
        st = _gather(st, models, mine)
    out = _results(st, models, mode, reasons)
    stop = "interrupted" if stopped else "finished"
    return CompleteResult(out, seconds, compile_s, st.chunks, st.items, bool(resume), stop)


def _compile(configs: dict, kernels: dict, streams) -> float:
    """Compile every group's kernel for every stream (one call on an empty batch); seconds."""
    c0 = time.perf_counter()
    for (n, tor), cfg in configs.items():
        for s in streams:
            if n >= 2:
                parallel_streams.call(s, kernels[n, tor], np.zeros((s.rows, cfg.width), np.uint32))
    return time.perf_counter() - c0


class _Batch(NamedTuple):
    """The work items of one kernel call (the scheduler's job)."""

    items: list[WorkItem]  # [k] the items searched, in queue order
    stops: list[bool]  # [k] each item stops at its first solution
    order: np.ndarray  # [k] int: the batch row of each item (`_deal`)
    config: Config  # the kernel's config (its group's n, torus, cap)


class _Search:
    """One process's search over its instances: the items it launches and the results it
    records in `_State` (the checkpoint), chunk by chunk (`one_chunk`)."""

    def __init__(
        self,
        *,
        models: Sequence[Constraints],
        mode: str,
        list_cap: int,
        max_nodes: int | None,
        budget: int,
        orient: bool,
        st: _State,
        mine: list[int],
        configs: dict[tuple[int, bool], Config],
        kernels: Mapping[tuple[int, bool], Callable],
        streams: list[parallel_streams.Stream],
        on_chunk: Callable[[int, int], None] | None,
    ):
        self.models, self.mode, self.list_cap, self.max_nodes = models, mode, list_cap, max_nodes
        self.budget, self.orient, self.st, self.mine = budget, orient, st, mine
        self.configs, self.kernels = configs, kernels  # per group (n, toroidal)
        self.streams, self.on_chunk = streams, on_chunk
        self.calls: Scheduler[_Batch] = Scheduler(  # DEPTH calls in flight per stream
            streams, depth=DEPTH, ordered=True, name="jaxqueens-complete"
        )
        self.shapes: dict[int, tuple[int, np.ndarray]] = {}  # i -> (orientation, uint32 [n])

    def shape(self, i: int) -> tuple[int, np.ndarray]:
        """The search orientation and column masks of instance i, built at its first launch (so
        the host builds them while earlier chunks run, not all before the first)."""
        if i not in self.shapes:
            t, mk = search_masks(self.models[i], self.orient)
            self.shapes[i] = (t, mk.astype(np.uint32))
        return self.shapes[i]

    def record(self, i: int, rows: np.ndarray) -> None:
        """Keep a solution of instance i (search orientation), checked, up to the list cap."""
        st = self.st
        if len(st.boards[i]) < self.list_cap:
            board = board_from_orientation(rows, self.shape(i)[0]).astype(np.int16)
            report = checker.check_constrained(board, self.models[i])
            if not report.ok:
                raise SolutionCheckError(
                    f"instance {i}: the search reported a board that does "
                    f"not solve it: {report.problems[0]} (a bug)"
                )
            st.boards[i].append(board)

    def host_root(self, t: WorkItem) -> None:
        """An item at the last column (or n = 1): its free rows are the solutions."""
        i, st = t.instance, self.st
        bits = [b for b in range(self.models[i].n) if t.av >> b & 1]
        st.nodes[i] += len(bits)
        st.solutions[i] += len(bits)
        for b in bits:
            self.record(i, np.array((*t.path, b)))

    def close_finished(self, i: int) -> None:
        st = self.st
        if st.status[i]:
            return
        if self.mode == "decide" and st.solutions[i]:
            st.status[i] = "SAT"
        elif self.max_nodes is not None and st.nodes[i] >= self.max_nodes:
            st.status[i] = "unknown"

    def finish_open(self) -> None:
        """Settle the open instances with no item queued or in flight."""
        st = self.st
        flight = {t.instance for items in self.in_flight() for t in items}
        pending = {t.instance for t in st.queue} | flight
        for i in self.mine:
            if not st.status[i] and i not in pending:
                st.status[i] = "SAT" if st.solutions[i] else "UNSAT"

    def in_flight(self) -> list[list[WorkItem]]:
        """The items of the calls in flight, oldest first."""
        return [batch.items for batch in self.calls.jobs()]

    def done_count(self) -> int:
        return sum(1 for i in self.mine if self.st.status[i])

    def _take(self, stream: int) -> tuple[tuple[int, bool], list[WorkItem]]:
        """(group, items): up to a chunk of the first queued group's items, off the queue."""
        st, models = self.st, self.models
        rows, shards = self.streams[stream].rows, self.streams[stream].shards
        group = lambda t: (models[t.instance].n, models[t.instance].toroidal)
        key = group(st.queue[0])
        # near the end, share the last items out over every chunk slot of every stream, so no
        # device idles while another searches one long chunk (the rest of a chunk is empty rows)
        limit = min(rows, max(shards, -(-len(st.queue) // (len(self.streams) * DEPTH))))
        take: list[WorkItem] = []
        keep: list[WorkItem] = []
        for t in st.queue:
            (take if len(take) < limit and group(t) == key else keep).append(t)
        st.queue = keep
        return key, take

    def take(self, stream: int) -> Launch[_Batch] | None:
        """The next call of `stream` (`Scheduler.fill`): items off the queue until some
        need the kernel; None once the queue is empty."""
        while self.st.queue:
            launch = self.launch(stream)
            if launch is not None:
                return launch
        return None

    def launch(self, stream: int) -> Launch[_Batch] | None:
        """Take up to a chunk of items of the first group still queued: the call that searches
        them on `stream`, or None if only host work was left (done here)."""
        st = self.st
        key, take = self._take(stream)
        n, cfg = key[0], self.configs[key]
        kernel_items = []
        for t in take:
            if st.status[t.instance]:
                continue
            if t.av == ROOT:  # an instance's root: its first column's rows, or UNSAT at once
                masks = self.shape(t.instance)[1]
                if not masks.all():  # an empty column
                    st.status[t.instance] = "UNSAT"
                    continue
                t = t._replace(av=int(masks[0]))
            if t.level >= n - 1:
                self.host_root(t)
                self.close_finished(t.instance)
            else:
                kernel_items.append(t)
        if not kernel_items:
            return None
        # deal the items round-robin over the devices (each takes a contiguous block of rows), so
        # padding and the queue's order never load one device more than another
        rows, shards = self.streams[stream].rows, self.streams[stream].shards
        order = _deal(len(kernel_items), rows, shards)
        padded = np.zeros((rows, cfg.width), np.uint32)
        stops = []
        for r, t in zip(order, kernel_items, strict=True):
            stop = self.mode == "decide" or (self.mode == "count" and not st.boards[t.instance])
            stops.append(stop)
            padded[r, : solver.HEAD] = (t.cols, t.ld, t.rd, t.av, t.level, self.budget, stop)
            padded[r, solver.HEAD :] = self.shape(t.instance)[1]
        return Launch(_Batch(kernel_items, stops, order, cfg), self.kernels[key], padded)

    def collect(self, call: Finished[_Batch]) -> None:
        """Record a call's results: counts, solutions, the unfinished frontier."""
        st, job = self.st, call.job
        head, stacks, sols = (x[job.order] for x in call.outputs)
        wall = call.end - call.start  # this chunk's own time on its device
        n, cap = job.config.n, job.config.cap
        steps_all = max(1, int(head[:, 1].astype(np.int64).sum()))
        st.chunks += 1
        st.items += len(job.items)
        heads = head.astype(np.int64).tolist()
        for r, t in enumerate(job.items):
            i = t.instance
            d, steps, lo, hi = heads[r]
            d = -1 if d == 0xFFFFFFFF else d
            found = lo + (hi << 32)
            st.nodes[i] += steps
            st.seconds[i] += wall * steps / steps_all
            st.solutions[i] += found
            if st.status[i]:
                continue
            listed = min(found, cap) if cap else int(job.stops[r] and found > 0)
            for j in range(listed):
                words = sols[r, j, : n - t.level + 1].astype(np.uint64)
                path = np.array(t.path, np.int16)
                self.record(i, np.concatenate([path, _rows_of(words[1:] ^ words[:-1])]))
            self.close_finished(i)
            if d < 0 or st.status[i]:
                continue
            self._split(t, stacks[r].astype(np.uint64), d)

    def _split(self, t: WorkItem, stack: np.ndarray, d: int) -> None:
        """Queue the untried rows of an unfinished item's stack (uint64 `[n + 1, 5]`, levels
        0..d) as new items, each a sub-tree below the path that leads to it."""
        moves = _rows_of(stack[1 : d + 1, 0] ^ stack[:d, 0]).tolist() if d else []
        for k in range(d + 1):
            if stack[k, 3]:
                self.st.queue.append(
                    WorkItem(
                        t.instance,
                        t.level + k,
                        int(stack[k, 0]),
                        int(stack[k, 1]),
                        int(stack[k, 2]),
                        int(stack[k, 3]),
                        t.path + tuple(moves[:k]),
                    )
                )

    def one_chunk(self) -> Tick:
        """Keep every stream busy, then read the oldest chunk (`run_chunks`' step)."""
        st = self.st
        self.calls.fill(self.take)  # every stream busy before waiting on the oldest call
        if len(self.calls):
            self.collect(self.calls.next())
        st.queue = [t for t in st.queue if not st.status[t.instance]]
        self.finish_open()
        if self.on_chunk:
            self.on_chunk(st.chunks, self.done_count())
        return Tick(
            self.done_count(),
            f"{len(st.queue)} sub-trees queued",
            finished=not st.queue and not len(self.calls),
        )

    def run(self, path: Path | None, fingerprint: dict, quiet: bool | None, every: float) -> bool:
        """Search chunk by chunk until every instance is settled or Ctrl-C (or SIGTERM) stops
        the run, checkpointing to `path` (None: no checkpoint) every `every` seconds and at the
        end; returns whether the run was stopped (its checkpoint then saved)."""
        st = self.st
        self.finish_open()
        save = None
        if path is not None:
            save = guarded(lambda: ckpt.save(path, st.tree(self.in_flight()), fingerprint))
        with self.calls:  # on Ctrl-C or an error, a chunk already running ends within its budget
            stopped = bool(st.queue) and run_chunks(
                self.one_chunk,
                total=len(self.mine),
                unit="instances",
                quiet=quiet,
                save=save,
                every=every,
            )
        if not stopped:  # (interrupted: the checkpoint is saved; this process's instances only)
            self.finish_open()
            if save is not None:
                save()
        return stopped


def _results(st: _State, models, mode: str, reasons: list) -> list[InstanceResult]:
    """Each instance's outcome, in the order given."""
    out = []
    for i, m in enumerate(models):
        boards = np.array(st.boards[i], np.uint8).reshape(len(st.boards[i]), m.n)
        status = st.status[i] or "open"  # open: the run was interrupted before it was settled
        counted = mode != "decide" and status not in ("unknown", "open")
        out.append(
            InstanceResult(
                m.n,
                status,
                st.solutions[i] if counted else None,
                st.nodes[i],
                st.seconds[i],
                boards,
                reasons[i] if st.status[i] == "UNSAT" else None,
            )
        )
    return out


_STATUS = ("", "SAT", "UNSAT", "unknown")


def _gather(st: _State, models, mine) -> _State:
    """Merge every process's instances (process p holds instances p, p + P, ...)."""
    count = len(models)
    words = gather.int_words(
        [(st.solutions[i], st.nodes[i]) if i in mine else (0, 0) for i in range(count)]
    ).reshape(count, 2, gather.INT_WORDS)
    status = np.array([_STATUS.index(s) for s in st.status], np.int32)
    secs = np.array(st.seconds, np.float64)
    all_words, all_status, all_secs = (
        gather.allgather(words),
        gather.allgather(status),
        gather.allgather(secs),
    )
    owner = np.array([i for i in mine for _ in st.boards[i]], np.int32)
    flat = np.array(
        [np.pad(b, (0, st.n_max - len(b))) for i in mine for b in st.boards[i]], np.int16
    ).reshape(len(owner), st.n_max)
    owners, boards = gather.ragged(owner), gather.ragged(flat)
    merged = _State(count, st.n_max)
    procs = all_words.shape[0]
    ints = gather.word_ints(all_words)  # [P][count][2] exact ints
    for i in range(count):
        p = i % procs
        merged.solutions[i], merged.nodes[i] = ints[p][i]
        merged.status[i] = _STATUS[int(all_status[p, i])]
        merged.seconds[i] = float(all_secs[p, i])
    for i, b in zip(owners, boards, strict=True):
        merged.boards[int(i)].append(b[: models[int(i)].n])
    merged.chunks, merged.items = st.chunks, st.items
    return merged


def toroidal_count(n: int, **kwargs) -> int:
    """Solutions of the n-queens problem on a torus (OEIS A051906), exactly.

    Args:
      n: board size.
      **kwargs: as for `solve_instances` (checkpoint, resume, quiet, ...).

    Returns:
      The count.

    Raises:
      KeyboardInterrupt: after Ctrl-C or SIGTERM (the count has no partial value; a checkpoint
        given keeps the finished work).
    """
    res = solve_instances([Constraints(n, toroidal=True)], mode="count", **kwargs)
    if res.stopped_by == "interrupted":
        raise KeyboardInterrupt(f"{res.settled} of 1 instances")
    solutions = res.instances[0].solutions
    assert solutions is not None  # the count mode counts every instance
    return solutions
