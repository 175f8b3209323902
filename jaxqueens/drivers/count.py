"""Exact N-Queens counts, fundamental counts and enumeration: the host driver.

Method: constellations (the Q27 project, Preusser and Engelhardt 2016, and NQueensFAF;
`jaxqueens.core.constellations`): one border configuration per symmetry class is searched by the
bitmask DFS of `jaxqueens.solvers.count`, its completions weighted by the class size, in resumable
calls of a bounded number of tree edges, chunk by chunk (progress, checkpoints, Ctrl-C).
Fundamental counts (A002562) follow by Burnside's lemma; `plan_count` predicts a count's time from
Knuth probes (1975); `enumerate_solutions` (n <= 14) lists the mirror-symmetric prefixes'
solutions. docs/reference/count.md describes the method, the chunks and the checkpoints.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import arguments, checker, constellations, symmetry
from jaxqueens.core.board import as_size
from jaxqueens.core.prefixes import expand_mirror
from jaxqueens.drivers import count_setup, settings
from jaxqueens.drivers.loop import Tick, guarded, run_chunks
from jaxqueens.errors import QueensError, clip
from jaxqueens.io import checkpoint as ckpt
from jaxqueens.io import count as countio
from jaxqueens.parallel import cache, devices, gather, sizing, threads
from jaxqueens.parallel import count as batched
from jaxqueens.parallel import streams as parallel_streams
from jaxqueens.parallel.scheduler import Launch, Scheduler
from jaxqueens.parallel.shard import pad_rows
from jaxqueens.solvers import count as solver
from jaxqueens.solvers.count_prefix import KernelConfig

SHUFFLE_SEED = 20161  # the fixed order in which tasks are dealt (part of every checkpoint's plan)


class CountResult(NamedTuple):
    """Outcome of `count_solutions` (all counts are exact Python ints)."""

    n: int
    total: int  # all solutions (A000170); interrupted: those of the finished chunks
    unique: int | None  # classes under the 8 symmetries (A002562), if asked for
    seconds: float  # wall time of the search, compilation excluded
    compile_seconds: float
    depth: int  # columns placed by the host expansion
    prefixes: int  # independent tasks searched (subtrees of the canonical constellations)
    chunks: int
    resumed_chunks: int  # chunks taken from the checkpoint, not recounted
    constellations: int = 0  # symmetry classes of border configurations searched
    edges: int = 0  # tree edges the kernel walked in this run (accelerator: lockstep iterations)
    done_chunks: int = 0  # chunks finished (all of them unless interrupted; resumed ones too)
    stopped_by: str = "finished"  # or "interrupted" (Ctrl-C, SIGTERM): a partial result


# --- host side ---------------------------------------------------------------------------------


def choose_depth(n: int, target: int) -> int:
    """The smallest mirror-expansion depth giving at least `target` prefixes (at most n - 2).

    Args:
      n: board size.
      target: prefixes wanted.

    Returns:
      The depth.
    """
    depth = 2 if n % 2 else 1
    while depth < n - 2 and len(expand_mirror(n, depth)[0]) < target:
        depth += 1
    return depth


def _tiny(n: int) -> np.ndarray:
    """All solutions for n <= 3 (too small for the mirror expansion), by brute force."""
    sols = [
        p
        for p in itertools.permutations(range(n))
        if all(abs(p[i] - p[j]) != j - i for i in range(n) for j in range(i + 1, n))
    ]
    return np.asarray(sols, np.uint8).reshape(len(sols), n)


def _decode(words: np.ndarray, queens: np.ndarray, n: int) -> np.ndarray:
    """Boards uint8 `[m, n]` from kernel lists uint32 `[m, W]` and their prefixes `[m, d]`."""
    bits = (words[:, 1:] ^ words[:, :-1]).astype(np.float64)
    return np.concatenate([queens, np.log2(bits).astype(np.uint8)], axis=1)


class _MirrorPlan(NamedTuple):
    config: KernelConfig
    masks: np.ndarray  # [P, 4] uint32
    queens: np.ndarray  # [P, depth] uint8
    chunk: int  # prefixes per kernel call (multiple of devices)
    devices: int
    sizes: sizing.Sizes


def _chunk_size(
    items: int, n: int, num_devices: int, sizes: sizing.Sizes, chunk: int | None
) -> int:
    """Items per kernel call, a multiple of the device count: about 16 calls from n = 15 on
    (progress, checkpoints), at most 2048 per device on the CPU."""
    if chunk is None:
        pieces = 16 if n >= 15 else 1  # small counts: one call, no per-chunk overhead
        chunk = (
            min(items, 1 << 16)
            if sizes.accelerator
            else min(2048, max(8, -(-items // (pieces * num_devices))))
        )
        chunk *= num_devices
    return max(num_devices, -(-chunk // num_devices) * num_devices)


def _mirror_plan(n: int) -> _MirrorPlan:
    """Enumeration's plan (n <= 14). On an accelerator, one lane per prefix up to the device's
    parallelism (a lane of n <= 14 holds a few hundred bytes: memory is never the bound)."""
    sizes = sizing.sizes()
    num_devices = devices.local_device_count()
    if sizes.accelerator and not sizes.count_lanes:
        fill = sizing.device_target().parallelism
        sizes = dataclasses.replace(sizes, count_prefixes=fill, count_lanes=fill)
    depth = choose_depth(n, sizes.count_prefixes)
    masks, queens = expand_mirror(n, depth)
    chunk = _chunk_size(len(masks), n, num_devices, sizes, None)
    return _MirrorPlan(KernelConfig(n, depth), masks, queens, chunk, num_devices, sizes)


def _dispatch_mirror(plan: _MirrorPlan, lo: int):
    """Start counting the mirror prefixes from `lo` (asynchronous): uint32 `[chunk, 2]`. Its
    executable loads (`jaxqueens.parallel.cache.call`): a repeated enumeration, as
    `stats` runs at every start, traces nothing."""
    masks = pad_rows(plan.masks[lo : lo + plan.chunk], plan.chunk)
    static = (plan.config, plan.devices, plan.sizes)
    return cache.call("count-mirror", batched.count_chunk, (masks,), static)


class _Plan(NamedTuple):
    config: solver.Config
    depth: int  # columns placed on the host
    tasks: np.ndarray  # [P, 4] uint32 (cols, ld, rd, av) at column depth, in dealing order
    owner: np.ndarray  # [P] int64 constellation of each task
    weights: np.ndarray  # [P] int64 class size of each task's constellation
    tables: np.ndarray  # [K, config.levels * TABLE_WORDS] uint32 level tables per constellation
    base: int  # weighted completions of one-level tasks (counted on the host, in no chunk)
    constellations: int
    chunk: int  # tasks per kernel call on one stream (a multiple of the devices it spans)
    streams: list  # where calls run (jaxqueens.parallel.streams): one per host device on a CPU
    sizes: sizing.Sizes
    budget: int  # edges per device and call (CPU) or lockstep iterations (accelerator)

    @property
    def devices(self) -> int:
        """Devices one kernel call spans."""
        return self.streams[0].shards


def task_depth(n: int, allow: np.ndarray, target: int) -> int:
    """The smallest number of host-placed columns giving at least `target` tasks, at least 2 from
    n = 12 on (whole constellations, depth 1, differ too much in size to share the devices evenly)
    and at most n - 4 (deeper, most tasks would be one column, counted on the host).

    Args:
      n: board size.
      allow: the constellations' allowed rows per column (`constellations.allow_masks`).
      target: tasks wanted.

    Returns:
      The depth.
    """
    top = max(1, n - 4)
    depth = 1 if n < 12 else 2
    while depth < top and len(constellations.tasks(n, allow, depth)[0]) < target:
        depth += 1
    return min(depth, top)


CALLS_PER_STREAM = 32  # from n = 15 on: progress, checkpoints, and at most ~1/32 idle at the end
CPU_CALL_EDGES = 1 << 27  # edges per CPU call: about a second (6-10 ns an edge), whatever n
ACCELERATOR_CALL_STEPS = 1 << 16  # lockstep iterations per accelerator call


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


def _plan(n: int, depth: int | None, chunk: int | None, budget: int | None = None) -> _Plan:
    """The canonical constellations of n, split into tasks and shuffled (n >= 4). On an
    accelerator the lanes come from `jaxqueens.parallel.count.accelerator_lanes` (unless
    `sizes()` names them) and the tasks number
    `jaxqueens.parallel.count.TASKS_PER_LANE` per lane."""
    depth = arguments.integer(depth, "depth", 1, optional=True)
    chunk = arguments.integer(chunk, "chunk", 1, optional=True)
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
    if not 1 <= budget <= solver.MAX_BUDGET:
        raise QueensError(f"budget {budget} is out of range: give 1 to {solver.MAX_BUDGET} edges")
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
    return _Plan(
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
        int(budget),
    )


def _items(plan: _Plan, tasks: np.ndarray) -> np.ndarray:
    """Fresh search items uint32 `[len(tasks), width]` for task indices `tasks`: level 0 is
    the task's prefix (`back` = DONE), the rest of the stack 0, then its level table."""
    config = plan.config
    out = np.zeros((len(tasks), config.width), np.uint32)
    row = solver.HEAD  # stack row 0
    out[:, row + solver.COLS] = plan.tasks[tasks, 0]
    out[:, row + solver.LD] = plan.tasks[tasks, 1]
    out[:, row + solver.RD] = plan.tasks[tasks, 2]
    out[:, row + solver.BACK] = solver.DONE
    out[:, row + solver.AV] = plan.tasks[tasks, 3]
    out[:, config.state_width :] = plan.tables[plan.owner[tasks]]
    return out


def _padded(plan: _Plan, batch: np.ndarray) -> np.ndarray:
    """`batch` padded to a whole call with finished items (`d = -1`: no work)."""
    pad = np.zeros((plan.chunk - len(batch), plan.config.width), np.uint32)
    pad[:, 0] = solver.DONE
    return np.concatenate([batch, pad])


def _kernel(batch, shards: int, plan: _Plan):
    """`count_items` as a stream calls it (`jaxqueens.parallel.streams`), compiled once
    per stream and process; a repeated run loads it without tracing
    (`jaxqueens.parallel.cache.loaded`)."""
    budget = np.int32(plan.budget)
    run = cache.loaded(
        "count-items",
        (plan.config, shards, plan.sizes),
        (batch, budget),
        lambda: batched.count_items.lower(batch, budget, plan.config, shards, plan.sizes),
    )
    return run(batch, budget)


def _compile(plan: _Plan) -> float:
    """Compile the kernel on every stream (finished items: no work); returns the seconds taken."""
    c0 = time.perf_counter()
    kernel = functools.partial(_kernel, plan=plan)
    for s in plan.streams:
        parallel_streams.call(s, kernel, _padded(plan, np.zeros((0, plan.config.width), np.uint32)))
    return time.perf_counter() - c0


def _bounds(plan: _Plan, stop: int | None = None, step: int | None = None) -> list[tuple[int, int]]:
    """`(lo, hi)` of the chunks of the first `stop` tasks (default: all), `step` tasks
    each (default and at most: the plan's chunk)."""
    stop = len(plan.tasks) if stop is None else stop
    step = plan.chunk if step is None else min(step, plan.chunk)
    return [(lo, min(lo + step, stop)) for lo in range(0, stop, step)]


class _Chunk:
    """A chunk being counted: its unfinished searches and what its calls found so far."""

    def __init__(self, plan: _Plan, idx: int, lo: int, hi: int):
        self.idx, self.lo = idx, lo
        self.tasks = np.arange(lo, hi)
        self.batch = _items(plan, self.tasks)
        self.found = [0, 0]  # [weighted completions, completions], exact Python ints
        self.edges = 0

    def absorb(self, plan: _Plan, states: np.ndarray, work: np.ndarray) -> int:
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


def _count_chunks(plan: _Plan, todo: list[int], bounds: list[tuple[int, int]]):
    """Count the chunks `todo` (indices into `bounds`) on the plan's streams.

    Each call takes at most `plan.budget` edges; a chunk whose searches the budget stopped goes
    back to the front of the queue with only its unfinished searches (their stacks resume where
    they stopped). On the CPU each host device runs its own stream of calls in its own thread
    (`jaxqueens.parallel.streams`), one call at a time, taking the next the moment its last
    ends, so no device waits for another's slowest task; a single stream (an accelerator) has
    two in flight, so the device never waits for the host.

    Args:
      plan: The count's plan.
      todo: Indices into `bounds` of the chunks to count.
      bounds: `(lo, hi)` task range of every chunk.

    Returns:
      A generator yielding `(finished, index, record, edges)` after every call, in whatever
      order calls end: the searches it finished; for the call that completes a chunk its index
      and [weighted solutions, completions] (else `None, None`); the edges it took.
    """
    kernel = functools.partial(_kernel, plan=plan)
    queue: list[int | _Chunk] = list(todo)  # chunk indices not started, or chunks to resume

    def take(stream: int) -> Launch[_Chunk] | None:
        if not queue:
            return None
        job = queue.pop(0)
        if not isinstance(job, _Chunk):
            job = _Chunk(plan, job, *bounds[job])
        return Launch(job, kernel, _padded(plan, job.batch))

    depth = 2 if len(plan.streams) == 1 else 1
    calls: Scheduler[_Chunk] = Scheduler(
        plan.streams, depth=depth, ordered=False, name="jaxqueens-count"
    )
    with calls:
        calls.fill(take)  # every stream busy before the host does anything else
        while len(calls):
            ready = []
            for call in calls.wait():  # every call that has ended
                job, before = call.job, call.job.edges
                done = job.absorb(plan, *call.outputs)
                if len(job.batch):  # stopped by the budget: its stacks resume in the next call
                    queue.insert(0, job)
                ready.append((job, done, job.edges - before))
            calls.fill(take)  # their streams get their next calls before the host records them
            for job, done, edges in sorted(ready, key=lambda r: r[0].idx):
                if len(job.batch):
                    yield done, None, None, edges
                else:
                    yield done, job.idx, _record(plan, job.lo, job.found), edges


def _chunk_boards(plan: _MirrorPlan, lo: int, hi: int, counts: list[int]) -> np.ndarray:
    """Enumerate the solutions of prefixes `lo:hi` (mirror halves only): uint8 `[m, n]`."""
    cap = 1 << max(0, max(counts, default=1) - 1).bit_length()
    masks = pad_rows(plan.masks[lo:hi], plan.chunk)
    static = (plan.config, cap, plan.devices, plan.sizes)
    _, lists = cache.call("count-enumerate", batched.enumerate_chunk, (masks,), static)
    lists = np.asarray(lists)
    words = np.concatenate([lists[i, :c] for i, c in enumerate(counts)])
    queens = np.repeat(plan.queens[lo:hi], counts, axis=0)
    return _decode(words, queens, plan.config.n)


def _check_n(n, unique: bool = False) -> int:
    """`n` as an int (NumPy integers accepted), checked, and `unique` a bool (fundamental
    counts reach every n the total does)."""
    if not isinstance(unique, bool | np.bool_):
        raise QueensError(f"unique must be True or False, got {clip(repr(unique))}")
    return count_setup.check_count_n(as_size(n))


def _fingerprint(plan: _Plan, unique: bool, procs: int) -> dict:
    return {
        "n": plan.config.n,
        "method": "constellations-levels",  # skipped border columns, look-ahead (a new split)
        "depth": plan.depth,
        "chunk": plan.chunk,
        "prefixes": len(plan.tasks),
        "unique": bool(unique),
        "processes": procs,
    }


def _record(plan: _Plan, lo: int, found: list[int]) -> list[int]:
    """[weighted solutions, completions] of the finished chunk from `lo` (exact Python ints)."""
    del plan, lo  # the chunk's calls summed them as they ended
    return list(found)


def kernel_route(platform: str, n: int) -> str:
    """Which kernel counts n on a JAX backend.

    Args:
      platform: the backend (`jax.default_backend()`).
      n: board size.

    Returns:
      `"threads"` (one search per GPU thread, `jaxqueens.parallel.threads`) on a CUDA GPU for n
      up to its limit, else `"items"` (the resumable XLA kernels of
      `jaxqueens.parallel.count.count_items`).
    """
    return "threads" if platform == "gpu" and 4 <= n <= threads.MAX_N else "items"


THREAD_TASKS_PER_LANE = 64  # tasks per lane of the thread kernel: lanes refill, so their
# totals even out (lanes of a warp wait for its slowest)


def _count_threads(n: int, unique: bool) -> CountResult:
    """The count of n by the thread kernel: every task in one call, lanes filling the device
    (one warp a block, 32 blocks an SM; 4 blocks off a GPU, where the kernel is interpreted),
    the depth giving about `THREAD_TASKS_PER_LANE` tasks a lane."""
    interpret = jax.default_backend() != "gpu"  # elsewhere (tests) the kernel is interpreted
    parallelism = 4 * 2 * threads.BLOCK if interpret else sizing.device_target().parallelism
    programs = max(1, parallelism // (2 * threads.BLOCK))
    cfg, _ = constellations.constellations(n)
    allow = constellations.allow_masks(n, cfg)
    depth = task_depth(n, allow, THREAD_TASKS_PER_LANE * programs * threads.BLOCK)
    plan = threads.tasks(n, depth)
    words = jnp.asarray(plan.words)
    c0 = time.perf_counter()
    unroll = 1 if interpret else threads.UNROLL  # the same counts; interpreted, 4x less to compile
    run = threads.count_tasks.lower(
        words, n=n, programs=programs, unroll=unroll, interpret=interpret
    ).compile()
    compile_s = time.perf_counter() - c0
    t1 = time.perf_counter()
    total = plan.base + threads.lane_total(run(words))
    seconds = time.perf_counter() - t1
    u = constellations.classes(total, n, constellations.fixed_by_rotation(n)) if unique else None
    tasks = plan.words.shape[1]
    return CountResult(n, total, u, seconds, compile_s, depth, tasks, 1, 0, len(cfg), 0, 1)


def _route(n: int, kernel: str | None, plain: bool) -> str:
    """The kernel that counts n: `kernel` checked against the run's options (`plain`: no
    checkpoint, depth, chunk or budget given), or the backend's (`kernel_route`)."""
    if kernel not in (None, "threads", "items"):
        raise QueensError(f"kernel must be 'threads' or 'items', not {clip(repr(kernel))}")
    if kernel == "threads" and not (plain and 4 <= n <= threads.MAX_N):
        raise QueensError(
            f"the thread kernel counts n = 4..{threads.MAX_N} with no checkpoint, depth, chunk or "
            "budget: drop them or use kernel='items'"
        )
    if kernel is None:
        return kernel_route(jax.default_backend(), n) if plain else "items"
    return kernel


@dataclasses.dataclass
class _Run:
    """A count in progress: its chunks, those finished (`done`, from the checkpoint too) and
    this process's still to count (`todo`), and the tallies of this run."""

    plan: _Plan
    bounds: list[tuple[int, int]]  # (lo, hi) of every chunk
    done: dict[int, list[int]]  # finished chunks: [weighted solutions, completions]
    todo: list[int]  # this process's chunks not yet counted (process p: chunks p mod P)
    resumed: int  # chunks taken from the checkpoint
    save: Callable[[], object] | None
    tasks: int = 0  # tasks finished in this run
    finished: int = 0  # chunks finished in this run
    edges: int = 0

    @property
    def found(self) -> int:
        """Weighted solutions of the finished chunks and the one-level tasks."""
        return self.plan.base + sum(v[0] for v in self.done.values())


def _start(plan: _Plan, unique: bool, checkpoint, resume: bool | None) -> _Run:
    """The count's chunks, with those its checkpoint holds already done (when resuming)."""
    bounds = _bounds(plan)
    procs, me = gather.process_count(), gather.process_index()
    fingerprint = _fingerprint(plan, unique, procs)
    path = ckpt.process_path(checkpoint) if checkpoint is not None else None
    if resume is None:
        resume = path is not None and path.exists()
    done = (
        countio.load_checkpoint(path, fingerprint, len(bounds))
        if resume and path is not None
        else {}
    )
    todo = [i for i in range(me, len(bounds), procs) if i not in done]
    save = None
    if path is not None:
        save = guarded(lambda: countio.save_checkpoint(path, fingerprint, done, len(bounds)))
    return _Run(plan, bounds, done, todo, len(done), save)


def _count_todo(
    run: _Run, n: int, unique: bool, quiet, every: float, on_chunk
) -> tuple[bool, tuple[int, int] | None]:
    """Count the run's chunks still to do; returns (stopped by Ctrl-C or SIGTERM, the
    rotation-symmetric counts (F90, F180) when `unique`, counted while the streams run)."""
    results = _count_chunks(run.plan, run.todo, run.bounds)  # calls start at the first next()
    fixed: list[tuple[int, int]] = []

    def one_call() -> Tick:
        finished, idx, record, edges = next(results)
        run.edges += edges
        if unique and not fixed:
            fixed.append(constellations.fixed_by_rotation(n))
        run.tasks += finished
        if idx is not None:
            run.finished += 1
            run.done[idx] = record
            if on_chunk:
                on_chunk(len(run.done), len(run.bounds))
        done = run.finished == len(run.todo)
        return Tick(run.tasks, f"{run.found:,} solutions so far", finished=done)

    skipped = sum(run.bounds[i][1] - run.bounds[i][0] for i in run.done)
    try:  # progress counts only this run's tasks, so the rate and time left stay honest
        stopped = bool(run.todo) and run_chunks(
            one_call,
            total=len(run.plan.tasks) - skipped,
            unit="tasks",
            quiet=quiet,
            save=run.save,
            every=every,
        )
    finally:
        results.close()  # on Ctrl-C or an error: calls not started are cancelled
    return stopped, fixed[0] if fixed else None


def _collect(run: _Run) -> None:
    """Save the finished count's checkpoint and gather every process's chunks."""
    if run.save is not None:
        run.save()
    if gather.process_count() > 1:
        run.done = countio.gather_chunks(run.done, len(run.bounds))
        if len(run.done) != len(run.bounds):
            missing = len(run.bounds) - len(run.done)
            raise RuntimeError(f"{missing} chunks missing after gathering (a bug)")


def count_solutions(
    n: int,
    unique: bool = False,
    checkpoint: str | Path | None = None,
    *,
    resume: bool | None = None,
    quiet: bool | None = True,
    checkpoint_every: float = settings.CHECKPOINT_EVERY,
    depth: int | None = None,
    chunk: int | None = None,
    budget: int | None = None,
    on_chunk: Callable[[int, int], None] | None = None,
    kernel: str | None = None,
) -> CountResult:
    """Count all n-queens solutions exactly, optionally also the fundamental ones.

    Args:
      n: Board size, 1..32.
      unique: Also count solutions distinct under rotations and reflections (A002562), from
        the same search (Burnside's lemma; no enumeration).
      checkpoint: `.npz` file of finished chunks (`jaxqueens.io.checkpoint`), saved every
        `checkpoint_every` seconds, on Ctrl-C and at the end; in a multi-process run each
        process keeps its own (`jaxqueens.io.checkpoint.process_path`).
      resume: Continue from `checkpoint` (its chunks are not recounted; one written with other
        settings is refused). Default: resume if the file exists.
      quiet: True (default): no progress line; None: one on a terminal only; False: always
        (on stderr, with the time left).
      checkpoint_every: Seconds between periodic checkpoints.
      depth: Override the columns placed on the host.
      chunk: Override the tasks per kernel call.
      budget: Tree edges per device and kernel call (lockstep iterations on an accelerator);
        default about a second of work (`CPU_CALL_EDGES`). A search the budget stops is
        resumed by a later call from its stack, so the totals never depend on it; a call never
        runs much longer, so Ctrl-C ends a run within about a second at any n.
      on_chunk: Called as `on_chunk(chunks_done, chunks_total)` after each chunk has been
        recorded (tests raise `KeyboardInterrupt` here, as Ctrl-C would).
      kernel: `"threads"` (one search per GPU thread, every task in one call: no checkpoint,
        depth, chunk or budget), `"items"` (the resumable XLA kernels) or None: the backend's
        (`kernel_route`: threads on a CUDA GPU when none of those is given).

    Returns:
      `CountResult`. After Ctrl-C or SIGTERM (at the end of the call in flight, about a
      second), once the checkpoint of the finished chunks is saved, the partial result with
      `stopped_by="interrupted"`: `total` and `edges` are those of the finished chunks
      (`done_chunks` of `chunks`), `unique` is None.
    """
    n = _check_n(n, unique)
    t0 = time.perf_counter()
    if n <= 3:
        sols = _tiny(n)
        u = len(symmetry.fundamental(sols)) if unique else None
        return CountResult(n, len(sols), u, time.perf_counter() - t0, 0.0, 0, 0, 0, 0)
    plain = checkpoint is None and depth is None and chunk is None and budget is None
    if _route(n, kernel, plain) == "threads":
        return _count_threads(n, unique)
    plan = _plan(n, depth, chunk, budget)
    run = _start(plan, unique, checkpoint, resume)
    compile_s = _compile(plan)
    t1 = time.perf_counter()
    stopped, fixed = _count_todo(run, n, unique, quiet, checkpoint_every, on_chunk)
    if not stopped:  # (interrupted: the checkpoint is saved; this process's chunks, not gathered)
        _collect(run)
    total = run.found
    u = constellations.classes(total, n, fixed) if unique and not stopped else None
    return CountResult(
        n,
        total,
        u,
        time.perf_counter() - t1,
        compile_s,
        plan.depth,
        len(plan.tasks),
        len(run.bounds),
        run.resumed,
        plan.constellations,
        run.edges,
        len(run.done),
        "interrupted" if stopped else "finished",
    )


def enumerate_solutions(n: int) -> np.ndarray:
    """Every solution for n <= 14, verified by the checker.

    Args:
      n: board size, 1..14.

    Returns:
      uint8 `[A000170(n), n]`, the rows of the queens column by column, sorted.
    """
    n = count_setup.check_enumerate_n(as_size(n))
    if n <= 3:
        boards = _tiny(n)
    else:
        plan = _mirror_plan(n)
        parts = []
        for lo in range(0, len(plan.masks), plan.chunk):
            hi = min(lo + plan.chunk, len(plan.masks))
            counts = gather.word_ints(_dispatch_mirror(plan, lo))[: hi - lo]
            parts.append(_chunk_boards(plan, lo, hi, counts))
        half = np.concatenate(parts)
        boards = np.concatenate([half, (n - 1 - half).astype(np.uint8)])
    boards = np.unique(boards, axis=0)
    checker.require_solutions(boards, what=f"enumerated solutions for n = {n}", n=n)
    return boards
