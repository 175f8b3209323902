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
import time
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import checker, constellations, symmetry
from jaxqueens.core.board import as_size
from jaxqueens.core.prefixes import expand_mirror
from jaxqueens.drivers import count_chunks as chunks
from jaxqueens.drivers import count_setup
from jaxqueens.drivers.count_chunks import Plan, task_depth
from jaxqueens.drivers.loop import RunControl, Tick, guarded, run_chunks
from jaxqueens.errors import QueensError
from jaxqueens.io import checkpoint as ckpt
from jaxqueens.io import count as countio
from jaxqueens.parallel import cache, devices, gather, sizing, threads
from jaxqueens.parallel import count as batched
from jaxqueens.parallel.shard import pad_rows
from jaxqueens.solvers.count_prefix import KernelConfig


class CountResult(NamedTuple):
    """Outcome of `count_solutions` (all counts are exact Python ints)."""

    n: int  #: board size
    total: int  #: all solutions (A000170); interrupted: those of the finished chunks
    unique: int | None  #: classes under the 8 symmetries (A002562), if asked for
    seconds: float  #: wall time of the search, compilation excluded
    compile_seconds: float  #: compiling the kernels
    depth: int  #: columns placed by the host expansion
    prefixes: int  #: independent tasks searched (subtrees of the canonical constellations)
    chunks: int  #: kernel-call chunks the tasks were split into
    resumed_chunks: int  #: chunks taken from the checkpoint, not recounted
    constellations: int = 0  #: symmetry classes of border configurations searched
    edges: int = 0  #: tree edges the kernel walked in this run (accelerator: lockstep iterations)
    done_chunks: int = 0  #: chunks finished (all of them unless interrupted; resumed ones too)
    stopped_by: str = "finished"  #: or "interrupted" (Ctrl-C, SIGTERM): a partial result


def choose_depth(n: int, target: int) -> int:
    """The smallest mirror-expansion depth (at most n - 2) giving at least `target` prefixes."""
    depth = 2 if n % 2 else 1
    while depth < n - 2 and len(expand_mirror(n, depth)[0]) < target:
        depth += 1
    return depth


def _tiny(n: int) -> np.ndarray:
    """All solutions for n <= 3 (too small for the mirror expansion): only n = 1 has one."""
    return np.zeros((1 if n == 1 else 0, n), np.uint8)


class _MirrorPlan(NamedTuple):
    config: KernelConfig
    masks: np.ndarray  #: [P, 4] uint32
    queens: np.ndarray  #: [P, depth] uint8
    chunk: int  #: prefixes per kernel call (multiple of devices)
    devices: int
    sizes: sizing.Sizes


def _mirror_plan(n: int) -> _MirrorPlan:
    """Enumeration's plan (n <= 14): one call of at most 2048 prefixes a device on the CPU. On an
    accelerator, one lane per prefix up to the device's parallelism (a lane of n <= 14 holds a
    few hundred bytes: memory is never the bound)."""
    sizes = sizing.sizes()
    num_devices = devices.local_device_count()
    if sizes.accelerator and not sizes.count_lanes:
        fill = sizing.device_target().parallelism
        sizes = dataclasses.replace(sizes, count_prefixes=fill, count_lanes=fill)
    depth = choose_depth(n, sizes.count_prefixes)
    masks, queens = expand_mirror(n, depth)
    per_device = (
        min(len(masks), 1 << 16)
        if sizes.accelerator
        else min(2048, max(8, -(-len(masks) // num_devices)))
    )
    chunk = per_device * num_devices
    return _MirrorPlan(KernelConfig(n, depth), masks, queens, chunk, num_devices, sizes)


def _mirror_boards(plan: _MirrorPlan, lo: int) -> np.ndarray:
    """The solutions of the chunk of mirror prefixes from `lo` (mirror halves only): uint8
    `[m, n]`. Its executables load (`jaxqueens.parallel.cache.call`): a repeated enumeration,
    as `stats` runs at every start, traces nothing."""
    hi = min(lo + plan.chunk, len(plan.masks))
    masks = pad_rows(plan.masks[lo:hi], plan.chunk)
    found = cache.call(
        "count-mirror", batched.count_chunk, (masks,), (plan.config, plan.devices, plan.sizes)
    )
    counts = gather.word_ints(found)[: hi - lo]
    cap = 1 << max(0, max(counts, default=1) - 1).bit_length()
    static = (plan.config, cap, plan.devices, plan.sizes)
    _, lists = cache.call("count-enumerate", batched.enumerate_chunk, (masks,), static)
    lists = np.asarray(lists)
    words = np.concatenate([lists[i, :c] for i, c in enumerate(counts)])
    queens = np.repeat(plan.queens[lo:hi], counts, axis=0)
    bits = (words[:, 1:] ^ words[:, :-1]).astype(np.float64)  # each column's queen, one bit
    return np.concatenate([queens, np.log2(bits).astype(np.uint8)], axis=1)


def kernel_route(platform: str, n: int) -> str:
    """Which kernel counts n on backend `platform` (`jax.default_backend()`): `"threads"` (one
    search per GPU thread, `jaxqueens.parallel.threads`) on a CUDA GPU for n up to its limit, else
    `"items"` (the resumable XLA kernels of `jaxqueens.parallel.count.count_items`)."""
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
    unroll = 1 if interpret else threads.UNROLL  # the same counts, less to compile
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


def _route(n: int, s: count_setup.CountSettings, control: RunControl) -> str:
    """The kernel that counts n: `s.kernel`, checked against the run's (the thread kernel takes
    no checkpoint, depth, chunk or budget), or the backend's (`kernel_route`)."""
    plain = control.checkpoint is None and (s.depth, s.chunk, s.budget) == (None, None, None)
    if s.kernel == "threads" and not (plain and 4 <= n <= threads.MAX_N):
        raise QueensError(
            f"the thread kernel counts n = 4..{threads.MAX_N} with no checkpoint, depth, chunk or "
            "budget: drop them or use kernel='items'"
        )
    if s.kernel is None:
        return kernel_route(jax.default_backend(), n) if plain else "items"
    return s.kernel


@dataclasses.dataclass
class _Run:
    """A count in progress: its chunks, those finished (`done`, from the checkpoint too) and
    this process's still to count (`todo`), and the tallies of this run."""

    plan: Plan
    bounds: list[tuple[int, int]]  #: (lo, hi) of every chunk
    done: dict[int, list[int]]  #: finished chunks: [weighted solutions, completions]
    todo: list[int]  #: this process's chunks not yet counted (process p: chunks p mod P)
    resumed: int  #: chunks taken from the checkpoint
    save: Callable[[], object] | None
    tasks: int = 0  #: tasks finished in this run
    finished: int = 0  #: chunks finished in this run
    edges: int = 0

    @property
    def found(self) -> int:
        """Weighted solutions of the finished chunks and the one-level tasks."""
        return self.plan.base + sum(v[0] for v in self.done.values())


def _start(plan: Plan, unique: bool, control: RunControl) -> _Run:
    """The count's chunks, with those its checkpoint holds already done (when resuming)."""
    bounds = plan.bounds
    procs, me = gather.process_count(), gather.process_index()
    fingerprint = {  # the settings a checkpoint must match to be resumed
        "n": plan.config.n,
        "method": "constellations-levels",  # skipped border columns, look-ahead (a new split)
        "depth": plan.depth,
        "chunk": plan.chunk,
        "prefixes": len(plan.tasks),
        "unique": bool(unique),
        "processes": procs,
    }
    path = ckpt.process_path(control.checkpoint) if control.checkpoint is not None else None
    resume = path is not None and path.exists() if control.resume is None else control.resume
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
    run: _Run, n: int, unique: bool, control: RunControl, on_chunk
) -> tuple[bool, tuple[int, int] | None]:
    """Count the run's chunks still to do; returns (stopped by Ctrl-C or SIGTERM, the
    rotation-symmetric counts (F90, F180) when `unique`, counted while the streams run)."""
    results = chunks.count_chunks(run.plan, run.todo, run.bounds)  # calls start at the first next()
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
            control=control,
            save=run.save,
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
    *,
    control: RunControl | None = None,
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
      control: Progress and checkpoints (None: `RunControl()`): the checkpoint is an `.npz`
        file of finished chunks (`jaxqueens.io.checkpoint`), saved periodically, on Ctrl-C and
        at the end; in a multi-process run each process keeps its own
        (`jaxqueens.io.checkpoint.process_path`). A resumed count does not recount its chunks
        (a checkpoint written with other settings is refused); by default it resumes a
        checkpoint that exists.
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
    s = count_setup.CountSettings(
        unique=unique, depth=depth, chunk=chunk, budget=budget, kernel=kernel
    )
    return count(count_setup.check_count_n(as_size(n)), s, control or RunControl(), on_chunk)


def count(n: int, s: count_setup.CountSettings, control: RunControl, on_chunk=None) -> CountResult:
    """`count_solutions` of a checked board size `n` and settings `s`."""
    t0 = time.perf_counter()
    if n <= 3:
        sols = _tiny(n)
        u = len(symmetry.fundamental(sols)) if s.unique else None
        return CountResult(n, len(sols), u, time.perf_counter() - t0, 0.0, 0, 0, 0, 0)
    if _route(n, s, control) == "threads":
        return _count_threads(n, s.unique)
    plan = chunks.make_plan(n, s.depth, s.chunk, s.budget)
    run = _start(plan, s.unique, control)
    compile_s = plan.compile()
    t1 = time.perf_counter()
    stopped, fixed = _count_todo(run, n, s.unique, control, on_chunk)
    if not stopped:  # (interrupted: the checkpoint is saved; this process's chunks, not gathered)
        _collect(run)
    total = run.found
    u = constellations.classes(total, n, fixed) if s.unique and not stopped else None
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
    n = count_setup.check_count_n(as_size(n), listed=True)
    if n <= 3:
        boards = _tiny(n)
    else:
        plan = _mirror_plan(n)
        half = np.concatenate(
            [_mirror_boards(plan, lo) for lo in range(0, len(plan.masks), plan.chunk)]
        )
        boards = np.concatenate([half, (n - 1 - half).astype(np.uint8)])
    boards = np.unique(boards, axis=0)
    checker.require_solutions(boards, what=f"enumerated solutions for n = {n}", n=n)
    return boards
