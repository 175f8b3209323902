"""An exact count's tasks and chunks (`make_plan`, `count_chunks`): the canonical constellations
of n (`jaxqueens.core.constellations`), split into tasks by placing their first columns on the
host and shuffled, are dealt in chunks to `jaxqueens.parallel.count.count_items`, whose calls take
a bounded number of tree edges; the searches a call stops resume in the chunk's next call.
"""

from __future__ import annotations

import dataclasses
import time
from typing import NamedTuple

import numpy as np

from jaxqueens.core import constellations
from jaxqueens.errors import QueensError
from jaxqueens.parallel import cache, devices, sizing
from jaxqueens.parallel import count as batched
from jaxqueens.parallel import streams as parallel_streams
from jaxqueens.parallel.scheduler import Launch, Scheduler
from jaxqueens.solvers import count as solver

SHUFFLE_SEED = 20161  # the fixed order in which tasks are dealt (part of every checkpoint's plan)
CALLS_PER_STREAM = 32  # from n = 15 on: progress, checkpoints, and at most ~1/32 idle at the end
CPU_CALL_EDGES = 1 << 27  # edges per CPU call: about a second (6-10 ns an edge), whatever n
ACCELERATOR_CALL_STEPS = 1 << 16  # lockstep iterations per accelerator call


class Plan(NamedTuple):
    """An exact count's tasks and how its calls run (`make_plan`)."""

    config: solver.Config
    depth: int  #: columns placed on the host
    tasks: np.ndarray  #: [P, 4] uint32 (cols, ld, rd, av) at column depth, in dealing order
    owner: np.ndarray  #: [P] int64 constellation of each task
    weights: np.ndarray  #: [P] int64 class size of each task's constellation
    tables: np.ndarray  #: [K, config.levels * TABLE_WORDS] uint32 level tables per constellation
    base: int  #: weighted completions of one-level tasks (counted on the host, in no chunk)
    constellations: int
    chunk: int  #: tasks per kernel call on one stream (a multiple of the devices it spans)
    streams: list  #: where calls run (jaxqueens.parallel.streams): one per host device on a CPU
    sizes: sizing.Sizes
    budget: int  #: edges per device and call (CPU) or lockstep iterations (accelerator)

    @property
    def devices(self) -> int:
        """Devices one kernel call spans."""
        return self.streams[0].shards

    @property
    def bounds(self) -> list[tuple[int, int]]:
        """`(lo, hi)` task range of every chunk."""
        stop = len(self.tasks)
        return [(lo, min(lo + self.chunk, stop)) for lo in range(0, stop, self.chunk)]

    def items(self, tasks: np.ndarray) -> np.ndarray:
        """Fresh search items uint32 `[len(tasks), width]` for task indices `tasks`: level 0 is
        the task's prefix (`back` = DONE), the rest of the stack 0, then its level table."""
        out = np.zeros((len(tasks), self.config.width), np.uint32)
        row = solver.HEAD  # stack row 0
        out[:, row + solver.COLS] = self.tasks[tasks, 0]
        out[:, row + solver.LD] = self.tasks[tasks, 1]
        out[:, row + solver.RD] = self.tasks[tasks, 2]
        out[:, row + solver.BACK] = solver.DONE
        out[:, row + solver.AV] = self.tasks[tasks, 3]
        out[:, self.config.state_width :] = self.tables[self.owner[tasks]]
        return out

    def call(self, batch, shards: int):
        """`count_items` as a stream calls it (`jaxqueens.parallel.streams`): `(states, work)`,
        compiled once per stream and process; a repeated run loads it without tracing
        (`jaxqueens.parallel.cache.loaded`)."""
        budget = np.int32(self.budget)
        run = cache.loaded(
            "count-items",
            (self.config, shards, self.sizes),
            (batch, budget),
            lambda: batched.count_items.lower(batch, budget, self.config, shards, self.sizes),
        )
        return run(batch, budget)

    def compile(self) -> float:
        """Compile the kernel on every stream (finished items: no work); returns the seconds."""
        c0 = time.perf_counter()
        for s in self.streams:
            parallel_streams.call(
                s, self.call, self.padded(np.zeros((0, self.config.width), np.uint32))
            )
        return time.perf_counter() - c0

    def padded(self, batch: np.ndarray) -> np.ndarray:
        """`batch` padded to a whole call with finished items (`d = -1`: no work)."""
        pad = np.zeros((self.chunk - len(batch), self.config.width), np.uint32)
        pad[:, 0] = solver.DONE
        return np.concatenate([batch, pad])


def task_depth(n: int, allow: np.ndarray, target: int) -> int:
    """The smallest number of host-placed columns giving at least `target` tasks, at least 2 from n
    = 12 on (whole constellations, depth 1, differ too much in size to share the devices evenly) and
    at most n - 4 (deeper, most tasks would be one column, counted on the host). `allow` holds the
    constellations' allowed rows per column (`constellations.allow_masks`)."""
    top = max(1, n - 4)
    depth = 1 if n < 12 else 2
    while depth < top and len(constellations.tasks(n, allow, depth)[0]) < target:
        depth += 1
    return min(depth, top)


def _task_chunk(
    tasks: int, n: int, streams: int, shards: int, sizes: sizing.Sizes, chunk: int | None
) -> int:
    """Tasks per kernel call on one stream, a multiple of `shards` (the devices a call spans).

    On the CPU every host device is an independent stream that takes the next chunk as soon as
    its last call is done, so the chunks only need to be small enough that the streams finish
    together: about `CALLS_PER_STREAM` per stream from n = 15 on (one each below: small counts
    pay no per-call overhead), at most 2048 tasks. On an accelerator one call spans every device
    and fills its lanes: `jaxqueens.parallel.count.TASKS_PER_LANE` tasks per lane."""
    if chunk is None:
        calls = CALLS_PER_STREAM if n >= 15 else 1
        chunk = (
            min(tasks, batched.TASKS_PER_LANE * sizes.count_lanes * shards)
            if sizes.accelerator
            else min(2048, max(8, -(-tasks // (calls * streams))))
        )
    return max(shards, -(-chunk // shards) * shards)


def make_plan(n: int, depth: int | None, chunk: int | None, budget: int | None = None) -> Plan:
    """The canonical constellations of n (>= 4), split into tasks and shuffled, as a `Plan`.

    `depth` is the columns placed on the host (default: `task_depth`; the others are checked by
    `count_setup.CountSettings`), `chunk` the tasks per kernel call (default: `_task_chunk`),
    `budget` the edges per device and call (default:
    `CPU_CALL_EDGES`, or `ACCELERATOR_CALL_STEPS` lockstep iterations on an accelerator). On an
    accelerator the lanes come from `jaxqueens.parallel.count.accelerator_lanes` (unless `sizes()`
    names them) and the tasks number `jaxqueens.parallel.count.TASKS_PER_LANE` per lane."""
    sizes = sizing.sizes()
    num_dev = devices.local_device_count()
    cfg, weights = constellations.constellations(n)
    allow = constellations.allow_masks(n, cfg)
    target = sizes.count_prefixes
    if sizes.accelerator and not sizes.count_lanes:
        target = batched.TASKS_PER_LANE * sizing.device_target().parallelism * num_dev
    if depth is None:
        depth = task_depth(n, allow, target)
    if not 1 <= depth <= n - 2:
        raise QueensError(f"depth {depth} is out of range for n = {n}: give 1 to {n - 2} columns")
    if sizes.accelerator and not sizes.count_lanes:
        choice = batched.accelerator_lanes(n, depth, num_dev)
        if not choice.fits:
            raise QueensError(
                f"counting n = {n} needs {choice.bytes:,} bytes of device memory for even one "
                "lane: the device is too small"
            )
        sizes = dataclasses.replace(sizes, count_lanes=choice.batch)
    if budget is None:
        budget = ACCELERATOR_CALL_STEPS if sizes.accelerator else CPU_CALL_EDGES
    masks, owner = constellations.tasks(n, allow, depth)
    _, levels = constellations.level_columns(n, cfg, depth)
    one = levels[owner] == 1  # the task's column is its last: its free rows are its solutions
    base = int((np.bitwise_count(masks[one, 3]).astype(np.int64) * weights[owner[one]]).sum())
    masks, owner = masks[~one], owner[~one]
    order = np.random.default_rng(SHUFFLE_SEED).permutation(len(masks))
    masks, owner = masks[order], owner[order]
    config = solver.Config(n, constellations.table_levels(n, depth))
    tables = constellations.level_tables(n, cfg, allow, depth).reshape(len(cfg), -1)
    layout = parallel_streams.plan(num_dev, sizes.accelerator)
    chunk = _task_chunk(len(masks), n, len(layout), layout[0].shards, sizes, chunk)
    layout = [s._replace(rows=chunk) for s in layout]
    return Plan(
        config,
        depth,
        masks,
        owner,
        weights[owner],
        tables,
        base,
        len(cfg),
        chunk,
        layout,
        sizes,
        budget,
    )


class Chunk:
    """A chunk being counted: its unfinished searches and what its calls found so far."""

    def __init__(self, plan: Plan, idx: int, lo: int, hi: int):
        self.idx = idx
        self.tasks = np.arange(lo, hi)
        self.batch = plan.items(self.tasks)
        self.found = [0, 0]  # [weighted completions, completions], exact Python ints
        self.edges = 0

    def absorb(self, plan: Plan, states: np.ndarray, work: np.ndarray) -> int:
        """Take a call's states (the first `len(self.batch)` rows are this chunk's) and work;
        returns the searches it finished."""
        self.edges += int(np.asarray(work, np.int64).sum())
        states = states[: len(self.batch)]
        counts = states[:, 1].astype(np.uint64)  # <= edges of one call < 2^31 each
        self.found[0] += int((counts * plan.weights[self.tasks].astype(np.uint64)).sum())
        self.found[1] += int(counts.sum())
        live = states[:, 0] != solver.DONE
        self.batch[:, : plan.config.state_width] = states
        self.batch, self.tasks = self.batch[live], self.tasks[live]
        return int((~live).sum())


def count_chunks(plan: Plan, todo: list[int], chunks: list[tuple[int, int]]):
    """Count the chunks `todo` (indices into `chunks`, the `(lo, hi)` task range of every chunk,
    `Plan.bounds`) on the plan's streams.

    Each call takes at most `plan.budget` edges; a chunk whose searches the budget stopped goes back
    to the front of the queue with only its unfinished searches (their stacks resume where they
    stopped). On the CPU each host device runs its own stream of calls in its own thread
    (`jaxqueens.parallel.streams`), one call at a time, taking the next the moment its last ends, so
    no device waits for another's slowest task; a single stream (an accelerator) has two in flight,
    so the device never waits for the host.

    A generator yielding `(finished, index, record, edges)` after every call, in whatever order
    calls end: the searches it finished; for the call that completes a chunk its index and [weighted
    solutions, completions] (else `None, None`); the edges it took."""
    queue: list[int | Chunk] = list(todo)  # chunk indices not started, or chunks to resume

    def take(stream: int) -> Launch[Chunk] | None:
        if not queue:
            return None
        job = queue.pop(0)
        if not isinstance(job, Chunk):
            job = Chunk(plan, job, *chunks[job])
        return Launch(job, plan.call, plan.padded(job.batch))

    depth = 2 if len(plan.streams) == 1 else 1
    calls: Scheduler[Chunk] = Scheduler(
        plan.streams, depth=depth, ordered=False, name="jaxqueens-count"
    )
    with calls:
        calls.fill(take)  # every stream busy before the host does anything else
        while len(calls):
            ready = []
            for ended in calls.wait():  # every call that has ended
                job, before = ended.job, ended.job.edges
                done = job.absorb(plan, *ended.outputs)
                if len(job.batch):  # stopped by the budget: its stacks resume in the next call
                    queue.insert(0, job)
                ready.append((job, done, job.edges - before))
            calls.fill(take)  # their streams get their next calls before the host records them
            for job, done, edges in sorted(ready, key=lambda r: r[0].idx):
                if len(job.batch):
                    yield done, None, None, edges
                else:
                    yield done, job.idx, list(job.found), edges
