"""The search behind `jaxqueens.drivers.complete.solve_instances` (its method): the queue of work
items (sub-trees of the instances), the state a checkpoint holds, and the chunk loop that launches
items on the streams and records what each call found.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from jaxqueens.core import checker
from jaxqueens.core.constraints import Constraints, board_from_orientation, search_masks
from jaxqueens.drivers.loop import RunControl, Tick, guarded, run_chunks
from jaxqueens.errors import SolutionCheckError
from jaxqueens.io import checkpoint as ckpt
from jaxqueens.parallel import streams as parallel_streams
from jaxqueens.parallel.scheduler import Finished, Launch, Scheduler
from jaxqueens.solvers import complete as solver
from jaxqueens.solvers.complete import Config

DEPTH = 2  # chunks in flight per stream: the next is dispatched before the host reads one
ROOT = -1  # `av` of a queued instance root not launched yet (its masks are built at launch)
Kernels = dict[tuple[int, bool], tuple[Config, Callable]]  # per group (n, toroidal): its kernel


def rows_of(bits: np.ndarray) -> np.ndarray:
    """Row index (int16) of each of a uint64 array of single-bit masks."""
    return np.log2(bits.astype(np.float64)).astype(np.int16)


def deal(count: int, chunk: int, devices_: int) -> np.ndarray:
    """Rows `[count]` of a `chunk`-row batch for items 0..count-1: item j goes to device j mod D
    (`devices_`), each device taking a contiguous block of rows."""
    per = chunk // devices_
    j = np.arange(count)
    return (j % devices_) * per + j // devices_


class WorkItem(NamedTuple):
    """One sub-tree of an instance's search, queued or in flight (exact Python ints; masks are
    of the search orientation, bit r = row r)."""

    instance: int  #: index of its instance in `models`
    level: int  #: columns already placed: the sub-tree's root is column `level`
    cols: int  #: rows taken by the queens placed
    ld: int  #: rows attacked in column `level` along one diagonal direction
    rd: int  #: rows attacked in column `level` along the other
    av: int  #: rows still to try in column `level` (ROOT: an instance's root, read at launch)
    path: tuple[int, ...]  #: [level] rows of the queens placed, column by column


def root(instance: int) -> WorkItem:
    """Instance `instance`'s whole search tree as its root `WorkItem` (its first column's rows are
    read at launch)."""
    return WorkItem(instance, 0, 0, 0, 0, ROOT, ())


class SearchState:
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

    @classmethod
    def start(
        cls, models: Sequence[Constraints], mine: list[int], reasons: list, path, fingerprint: dict
    ) -> SearchState:
        """The search's state: restored from the checkpoint at `path` (None: a fresh run), or
        every instance of this process (`mine`) queued as its root, but those plainly UNSAT
        (`reasons[i]` not None: fixed queens attacking each other, a column or row without an
        allowed square), settled up front and never searched."""
        st = cls(len(models), max((m.n for m in models), default=1))
        if path is not None:
            st.restore(ckpt.load(path, fingerprint, cls.schema(len(models), st.n_max)), models)
            return st
        for i in mine:
            if reasons[i] is not None:
                st.status[i] = "UNSAT"
            else:
                st.queue.append(root(i))
        return st

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


class Batch(NamedTuple):
    """The work items of one kernel call (the scheduler's job)."""

    items: list[WorkItem]  #: [k] the items searched, in queue order
    stops: list[bool]  #: [k] each item stops at its first solution
    order: np.ndarray  #: [k] int: the batch row of each item (`deal`)
    config: Config  #: the kernel's config (its group's n, torus, cap)


@dataclasses.dataclass
class Search:
    """One process's search over its instances: the items it launches and the results it
    records in `SearchState` (the checkpoint), chunk by chunk (`one_chunk`)."""

    models: Sequence[Constraints]
    mode: str
    list_cap: int  #: solutions kept per instance
    max_nodes: int | None
    budget: int
    orient: bool
    st: SearchState
    mine: list[int]  #: this process's instances
    kernels: Kernels  #: `(config, call)` per group (n, toroidal)
    streams: list[parallel_streams.Stream]
    on_chunk: Callable[[int, int], None] | None
    #: i -> (orientation, uint32 [n] masks), built at the instance's first launch
    shapes: dict[int, tuple[int, np.ndarray]] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        self.calls: Scheduler[Batch] = Scheduler(  # DEPTH calls in flight per stream
            self.streams, depth=DEPTH, ordered=True, name="jaxqueens-complete"
        )

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

    def take(self, stream: int) -> Launch[Batch] | None:
        """The next call of `stream` (`Scheduler.fill`): up to a chunk of items of the first group
        still queued, taken off the queue, those that need no kernel (an instance with an empty
        column, an item at the last column) done here; None once the queue is empty."""
        st, models = self.st, self.models
        rows, shards = self.streams[stream].rows, self.streams[stream].shards
        group = lambda t: (models[t.instance].n, models[t.instance].toroidal)
        while st.queue:
            key = group(st.queue[0])
            # near the end, share the last items out over every chunk slot of every stream, so no
            # device idles while another searches one long chunk (the rest of a chunk is empty rows)
            limit = min(rows, max(shards, -(-len(st.queue) // (len(self.streams) * DEPTH))))
            take: list[WorkItem] = []
            keep: list[WorkItem] = []
            for t in st.queue:
                (take if len(take) < limit and group(t) == key else keep).append(t)
            st.queue = keep
            n, (cfg, kernel) = key[0], self.kernels[key]
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
                continue
            # deal the items round-robin over the devices (each takes a contiguous block of rows),
            # so padding and the queue's order never load one device more than another
            order = deal(len(kernel_items), rows, shards)
            padded = np.zeros((rows, cfg.width), np.uint32)
            stops = []
            for r, t in zip(order, kernel_items, strict=True):
                stop = self.mode == "decide" or (self.mode == "count" and not st.boards[t.instance])
                stops.append(stop)
                padded[r, : solver.HEAD] = (t.cols, t.ld, t.rd, t.av, t.level, self.budget, stop)
                padded[r, solver.HEAD :] = self.shape(t.instance)[1]
            return Launch(Batch(kernel_items, stops, order, cfg), kernel, padded)
        return None

    def collect(self, call: Finished[Batch]) -> None:
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
                self.record(i, np.concatenate([path, rows_of(words[1:] ^ words[:-1])]))
            self.close_finished(i)
            if d < 0 or st.status[i]:
                continue
            self._split(t, stacks[r].astype(np.uint64), d)

    def _split(self, t: WorkItem, stack: np.ndarray, d: int) -> None:
        """Queue the untried rows of an unfinished item's stack (uint64 `[n + 1, 5]`, levels
        0..d) as new items, each a sub-tree below the path that leads to it."""
        moves = rows_of(stack[1 : d + 1, 0] ^ stack[:d, 0]).tolist() if d else []
        for k in range(d + 1):
            if stack[k, 3]:
                cols, ld, rd, av = (int(v) for v in stack[k, :4])
                path = t.path + tuple(moves[:k])
                self.st.queue.append(WorkItem(t.instance, t.level + k, cols, ld, rd, av, path))

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

    def run(self, path: Path | None, fingerprint: dict, control: RunControl) -> bool:
        """Search chunk by chunk until every instance is settled or Ctrl-C (or SIGTERM) stops
        the run, checkpointing to `path` (None: no checkpoint) as `control` says and at the
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
                control=control,
                save=save,
            )
        if not stopped:  # (interrupted: the checkpoint is saved; this process's instances only)
            self.finish_open()
            if save is not None:
                save()
        return stopped
