"""Exact N-Queens counts, fundamental counts and enumeration: the host driver.

Method: constellations (after the Q27 project, Preusser and Engelhardt 2016, and NQueensFAF),
:mod:`jaxqueens.core.constellations`. Every solution has one queen on each border line (rows and
columns 0 and n-1); the border configurations fall into classes under the 8 symmetries of the
square, and one member per class is searched, its completions weighted by the class size (8, 4
or 2). Each class is split into tasks by placing its first columns on the host; each task's
completions are counted by the branch-free bitmask DFS of :mod:`jaxqueens.solvers.count` with
the class's per-column ``allow`` masks, batched per backend by :mod:`jaxqueens.parallel.items`
(one task per ``lax.map`` iteration on the CPU, lockstep lanes with refill on accelerators).
Tasks are dealt in a fixed shuffled order, so every chunk holds a like mix of large and small
tasks; on the CPU each host device is an independent stream of one-device calls
(:mod:`jaxqueens.parallel.streams`, :func:`_count_chunks`), so no device waits for another. The
DFS walks well under 1/2 of the tree edges of the mirror-symmetric search (6.0 M against 13.5 M
at n = 14, with the member of each class chosen by
:func:`jaxqueens.core.constellations.preference`), which is why this method was
chosen over Takaken's canonical pruning (about 2.6x fewer edges than the plain search in our
measurements at n = 8..13, against 4x here at n = 14, and a leaf check that is costly in a
branch-free kernel). Totals are summed on the host as Python ints from two uint32 words per task
(exact past 2^63).

Fundamental solutions (OEIS A002562) come from the same counts by Burnside's lemma:
``(total + 2 * F90 + F180) / 8``, with the rotation-symmetric solutions F90 and F180 counted by
a small orbit search on the host (:func:`jaxqueens.core.constellations.fixed_by_rotation`), so
``--unique`` needs no enumeration and reaches every n the total does.

Long counts run in chunks of tasks through :func:`jaxqueens.drivers.loop.run_chunks` (progress
line, periodic checkpoint, Ctrl-C at chunk ends). The checkpoint (:mod:`jaxqueens.io.checkpoint`)
holds the finished chunks' weighted totals; a count resumed from it does not recount them. In a
multi-process run each process counts every P-th chunk and keeps its own checkpoint.
:func:`plan_count` (``count --plan``) times a random sample of tasks and predicts the run time.

:func:`enumerate_solutions` (n <= 14) keeps the mirror-symmetric prefixes
(:func:`jaxqueens.core.prefixes.expand_mirror`), whose kernel lists every solution.
"""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Callable
from concurrent import futures
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import arguments, checker, constellations, symmetry
from jaxqueens.core.board import as_size
from jaxqueens.core.prefixes import expand_mirror
from jaxqueens.drivers import settings
from jaxqueens.drivers.loop import Tick, guarded, run_chunks
from jaxqueens.errors import QueensError
from jaxqueens.io import checkpoint as ckpt
from jaxqueens.parallel import devices, gather, items
from jaxqueens.parallel import streams as parallel_streams
from jaxqueens.parallel.lanes import where_lanes
from jaxqueens.parallel.shard import pad_rows
from jaxqueens.solvers import count as solver
from jaxqueens.solvers.count import KernelConfig

SHUFFLE_SEED = 20161  # the fixed order in which tasks are dealt (part of every checkpoint's plan)


class CountResult(NamedTuple):
    """Outcome of :func:`count_solutions` (all counts are exact Python ints)."""

    n: int
    total: int  # all solutions (A000170)
    unique: int | None  # classes under the 8 symmetries (A002562), if asked for
    seconds: float  # wall time of the search, compilation excluded
    compile_seconds: float
    depth: int  # columns placed by the host expansion
    prefixes: int  # independent tasks searched (subtrees of the canonical constellations)
    chunks: int
    resumed_chunks: int  # chunks taken from the checkpoint, not recounted
    constellations: int = 0  # symmetry classes of border configurations searched


# --- the jitted chunks: one kernel per prefix, batched by the backend's strategy --------------


def _advance_lanes(lanes: solver.Lane, active, config: KernelConfig) -> solver.Lane:
    """One lockstep iteration: every live lane (``d >= 0``) takes one tree edge."""
    del active  # a lane without an item is finished (d < 0) and stays as it is
    moved = jax.vmap(lambda s: solver.step(s, config))(lanes)
    return where_lanes(lanes.d >= 0, moved, lanes)


def _count_words(lanes: solver.Lane):
    return jnp.stack([lanes.lo, lanes.hi], 1)  # [B, 2] uint32


def _search_each(
    rows, count_one, init_one, config: KernelConfig, num_devices: int, sizes: devices.Sizes
):
    """``count_one(row, config)`` per row, or lockstep lanes from ``init_one(row, config)`` on an
    accelerator (:func:`jaxqueens.parallel.items.search_each`): uint32 ``[P, 2]`` count words."""
    return items.search_each(
        lambda r: count_one(r, config),
        lambda r: init_one(r, config),
        functools.partial(_advance_lanes, config=config),
        lambda s: s.d < 0,
        _count_words,
        rows,
        num_devices,
        sizes.count_lanes,
    )


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def count_chunk(prefixes, config: KernelConfig, num_devices: int, sizes: devices.Sizes):
    """Count words per prefix, batched the backend's way (``sizes`` is :func:`devices.sizes`).

    Args:
      prefixes: uint32 ``[P, 4]`` (cols, ld, rd, av), P a multiple of ``num_devices`` (pad with
        zero rows: ``av = 0`` is an empty search).
    Returns:
      uint32 ``[P, 2]``: solutions below each prefix, low and high word.
    """
    return _search_each(prefixes, solver.count_prefix, solver.init, config, num_devices, sizes)


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def count_tasks(tasks, config: KernelConfig, num_devices: int, sizes: devices.Sizes):
    """Completions per constellation task, batched the backend's way.

    Args:
      tasks: uint32 ``[P, 4 + n]`` (cols, ld, rd, av, then the ``allow`` masks;
        :func:`jaxqueens.solvers.count.init_task`), P a multiple of ``num_devices`` (pad with
        zero rows: ``av = 0`` is an empty search).
    Returns:
      uint32 ``[P, 2]``: completions of each task, low and high word.
    """
    return _search_each(tasks, solver.count_task, solver.init_task, config, num_devices, sizes)


@functools.partial(jax.jit, static_argnums=(1, 2, 3, 4))
def enumerate_chunk(
    prefixes, config: KernelConfig, cap: int, num_devices: int, sizes: devices.Sizes
):
    """Every prefix's solutions (at most ``cap`` each): counts uint32 ``[P, 2]`` and lists
    uint32 ``[P, cap, W]`` (:func:`jaxqueens.solvers.count.enumerate_prefix`). ``sizes`` only
    keys the compilation to the backend's strategy."""
    del sizes
    return items.each(lambda p: solver.enumerate_prefix(p, config, cap), prefixes, num_devices)


# --- host side ---------------------------------------------------------------------------------


def choose_depth(n: int, target: int) -> int:
    """The smallest expansion depth giving at least ``target`` prefixes (at most n - 2)."""
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
    """Boards uint8 ``[m, n]`` from kernel lists uint32 ``[m, W]`` and their prefixes ``[m, d]``."""
    bits = (words[:, 1:] ^ words[:, :-1]).astype(np.float64)
    return np.concatenate([queens, np.log2(bits).astype(np.uint8)], axis=1)


class _MirrorPlan(NamedTuple):
    config: KernelConfig
    masks: np.ndarray  # [P, 4] uint32
    queens: np.ndarray  # [P, depth] uint8
    chunk: int  # prefixes per kernel call (multiple of devices)
    devices: int
    sizes: devices.Sizes


def _chunk_size(
    items: int, n: int, num_devices: int, sizes: devices.Sizes, chunk: int | None
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
    sizes = devices.sizes()
    num_devices = jax.local_device_count()
    depth = choose_depth(n, sizes.count_prefixes)
    masks, queens = expand_mirror(n, depth)
    chunk = _chunk_size(len(masks), n, num_devices, sizes, None)
    return _MirrorPlan(KernelConfig(n, depth), masks, queens, chunk, num_devices, sizes)


def _dispatch_mirror(plan: _MirrorPlan, lo: int):
    """Start counting the mirror prefixes from ``lo`` (asynchronous): uint32 ``[chunk, 2]``."""
    return count_chunk(
        pad_rows(plan.masks[lo : lo + plan.chunk], plan.chunk),
        plan.config,
        plan.devices,
        plan.sizes,
    )


class _Plan(NamedTuple):
    config: KernelConfig
    tasks: np.ndarray  # [P, 4 + n] uint32, in dealing order (prefix masks, then allow masks)
    weights: np.ndarray  # [P] int64 class size of each task's constellation
    constellations: int
    chunk: int  # tasks per kernel call on one stream (a multiple of the devices it spans)
    streams: list  # where calls run (jaxqueens.parallel.streams): one per host device on a CPU
    sizes: devices.Sizes

    @property
    def devices(self) -> int:
        """Devices one kernel call spans."""
        return self.streams[0].shards


def task_depth(n: int, allow: np.ndarray, target: int) -> int:
    """The smallest number of host-placed columns giving at least ``target`` tasks (1..n-2), and
    at least 2 from n = 12 on: whole constellations (depth 1) differ too much in size to share
    the devices evenly."""
    depth = 1 if n < 12 else 2
    while depth < n - 2 and len(constellations.tasks(n, allow, depth)[0]) < target:
        depth += 1
    return min(depth, n - 2)


CALLS_PER_STREAM = 32  # from n = 15 on: progress, checkpoints, and at most ~1/32 idle at the end


def _task_chunk(
    tasks: int, n: int, streams: int, shards: int, sizes: devices.Sizes, chunk: int | None
) -> int:
    """Tasks per kernel call on one stream, a multiple of ``shards`` (the devices a call spans).

    On the CPU every host device is an independent stream that takes the next chunk as soon as
    its last one is done, so the chunks only need to be small enough that the streams finish
    together: about ``CALLS_PER_STREAM`` per stream from n = 15 on (one each below: small counts
    pay no per-call overhead), at most 2048 tasks. On an accelerator one call spans every device
    and fills its lanes: up to 2^16 tasks."""
    if chunk is None:
        calls = CALLS_PER_STREAM if n >= 15 else 1
        chunk = (
            min(tasks, 1 << 16)
            if sizes.accelerator
            else min(2048, max(8, -(-tasks // (calls * streams))))
        )
    return max(shards, -(-chunk // shards) * shards)


def _plan(n: int, depth: int | None, chunk: int | None) -> _Plan:
    """The canonical constellations of n, split into tasks and shuffled (n >= 4)."""
    depth = arguments.integer(depth, "depth", 1, optional=True)
    chunk = arguments.integer(chunk, "chunk", 1, optional=True)
    sizes = devices.sizes()
    cfg, weights = constellations.constellations(n)
    allow = constellations.allow_masks(n, cfg)
    if depth is None:
        depth = task_depth(n, allow, sizes.count_prefixes)
    if not 1 <= depth <= n - 2:
        raise QueensError(f"depth {depth} is out of range for n = {n}: give 1 to {n - 2} columns")
    masks, owner = constellations.tasks(n, allow, depth)
    order = np.random.default_rng(SHUFFLE_SEED).permutation(len(masks))
    masks, owner = masks[order], owner[order]
    tasks = np.concatenate([masks, allow[owner]], axis=1).astype(np.uint32)
    layout = parallel_streams.plan(jax.local_device_count(), sizes.accelerator)
    chunk = _task_chunk(len(tasks), n, len(layout), layout[0].shards, sizes, chunk)
    layout = [s._replace(rows=chunk) for s in layout]
    return _Plan(KernelConfig(n, depth), tasks, weights[owner], len(cfg), chunk, layout, sizes)


def _kernel(batch, shards: int, config: KernelConfig, sizes: devices.Sizes):
    """:func:`count_tasks` as a stream calls it (:mod:`jaxqueens.parallel.streams`)."""
    return (count_tasks(batch, config, shards, sizes),)


def _compile(plan: _Plan) -> float:
    """Compile the kernel on every stream (empty tasks: ``av = 0``); returns the seconds taken."""
    c0 = time.perf_counter()
    kernel = functools.partial(_kernel, config=plan.config, sizes=plan.sizes)
    for s in plan.streams:
        parallel_streams.call(s, kernel, np.zeros((plan.chunk, plan.tasks.shape[1]), np.uint32))
    return time.perf_counter() - c0


def _bounds(plan: _Plan, stop: int | None = None, step: int | None = None) -> list[tuple[int, int]]:
    """``(lo, hi)`` of the chunks of the first ``stop`` tasks (default: all), ``step`` tasks
    each (default and at most: the plan's chunk)."""
    stop = len(plan.tasks) if stop is None else stop
    step = plan.chunk if step is None else min(step, plan.chunk)
    return [(lo, min(lo + step, stop)) for lo in range(0, stop, step)]


def _count_chunks(plan: _Plan, todo: list[int], bounds: list[tuple[int, int]]):
    """Count the chunks ``todo`` (indices into ``bounds``) on the plan's streams; yields
    ``(index, counts uint32 [chunk, 2])`` as each call ends, in whatever order they end.

    On the CPU each host device runs its own stream of calls in its own thread
    (:mod:`jaxqueens.parallel.streams`): a stream takes the next chunk the moment its last one
    ends, so no device waits for another's slowest task (one call spanning both devices ended
    with its slower half: measured 1.45-1.75 s against 1.22 s for the same tasks at n = 16). One
    call at a time per stream keeps the finish even; a single stream (an accelerator) has two in
    flight, so the device never waits for the host.
    """
    kernel = functools.partial(_kernel, config=plan.config, sizes=plan.sizes)
    depth = 2 if len(plan.streams) == 1 else 1
    queue = list(todo)
    flight: dict = {}  # future -> (chunk index, stream)
    with parallel_streams.Workers(plan.streams, "jaxqueens-count") as workers:

        def fill() -> None:  # every stream busy before the host does anything else
            for k in range(len(plan.streams)):
                while queue and sum(s == k for _, s in flight.values()) < depth:
                    idx = queue.pop(0)
                    lo, hi = bounds[idx]
                    flight[workers.submit(k, kernel, pad_rows(plan.tasks[lo:hi], plan.chunk))] = (
                        idx,
                        k,
                    )

        fill()
        while flight:
            finished, _ = futures.wait(list(flight), return_when=futures.FIRST_COMPLETED)
            ready = [(flight.pop(fut)[0], fut) for fut in finished]
            fill()
            for idx, fut in sorted(ready, key=lambda r: r[0]):
                yield idx, fut.result()[0][0]


def _words(counts) -> list[int]:
    c = np.asarray(counts).astype(np.uint64)
    return [int(x) for x in (c[:, 0] | (c[:, 1] << np.uint64(32)))]


def _chunk_boards(plan: _MirrorPlan, lo: int, hi: int, counts: list[int]) -> np.ndarray:
    """Enumerate the solutions of prefixes ``lo:hi`` (mirror halves only): uint8 ``[m, n]``."""
    cap = 1 << max(0, max(counts, default=1) - 1).bit_length()
    _, lists = enumerate_chunk(
        pad_rows(plan.masks[lo:hi], plan.chunk), plan.config, cap, plan.devices, plan.sizes
    )
    lists = np.asarray(lists)
    words = np.concatenate([lists[i, :c] for i, c in enumerate(counts)])
    queens = np.repeat(plan.queens[lo:hi], counts, axis=0)
    return _decode(words, queens, plan.config.n)


# finished chunks: {chunk index: [weighted solutions, unweighted completions]} (exact ints),
# stored as four 32-bit words per value in checkpoints and gathers
_WORDS = 4


def _pack(done: dict[int, list[int]], chunks: int) -> tuple[np.ndarray, np.ndarray]:
    """(``have`` bool ``[C]``, ``words`` uint32 ``[C, 2, 4]``) of the finished chunks."""
    have = np.zeros(chunks, bool)
    words = np.zeros((chunks, 2, _WORDS), np.uint32)
    for i, vals in done.items():
        have[i] = True
        for j, v in enumerate(vals):
            words[i, j] = [(int(v) >> (32 * k)) & 0xFFFFFFFF for k in range(_WORDS)]
    return have, words


def _unpack(have: np.ndarray, words: np.ndarray) -> dict[int, list[int]]:
    return {
        int(i): [sum(int(w) << (32 * k) for k, w in enumerate(words[i, j])) for j in range(2)]
        for i in np.flatnonzero(have)
    }


def _gather_done(done: dict, chunks: int) -> dict:
    """Merge every process's finished chunks."""
    have, words = _pack(done, chunks)
    all_have, all_words = gather.allgather(have), gather.allgather(words)
    merged = {}
    for p in range(all_have.shape[0]):
        merged.update(_unpack(all_have[p], all_words[p]))
    return merged


def _load(path: Path, fingerprint: dict, chunks: int) -> dict[int, list[int]]:
    """The finished chunks of a checkpoint planned with ``chunks`` chunks (other shapes refused)."""
    arrays = ckpt.load(path, fingerprint, shapes={"done": (chunks,), "words": (chunks, 2, _WORDS)})
    return _unpack(arrays["done"], arrays["words"])


def _save(path: Path, fingerprint: dict, done: dict, chunks: int) -> None:
    have, words = _pack(done, chunks)
    ckpt.save(path, fingerprint, done=have, words=words)


def _check_n(n, unique: bool = False) -> int:
    """``n`` as an int (NumPy integers accepted), checked."""
    del unique  # fundamental counts reach every n the total does
    return settings.check_count_n(as_size(n))


def _fingerprint(plan: _Plan, unique: bool, procs: int) -> dict:
    return {
        "n": plan.config.n,
        "method": "constellations",
        "depth": plan.config.depth,
        "chunk": plan.chunk,
        "prefixes": len(plan.tasks),
        "unique": bool(unique),
        "processes": procs,
    }


def _record(plan: _Plan, lo: int, out) -> list[int]:
    """[weighted solutions, completions] of the chunk from ``lo`` (exact Python ints)."""
    hi = min(lo + plan.chunk, len(plan.tasks))
    counts = _words(out)[: hi - lo]
    return [sum(int(w) * c for w, c in zip(plan.weights[lo:hi], counts)), sum(counts)]


def count_solutions(
    n: int,
    unique: bool = False,
    progress: bool = False,
    checkpoint: str | Path | None = None,
    *,
    resume: bool | None = None,
    quiet: bool | None = True,
    checkpoint_every: float = 1.0,
    depth: int | None = None,
    chunk: int | None = None,
    on_chunk: Callable[[int, int], None] | None = None,
) -> CountResult:
    """Count all n-queens solutions exactly, optionally also the fundamental ones.

    Args:
      n: Board size, 1..32.
      unique: Also count solutions distinct under rotations and reflections (A002562), from
        the same search (Burnside's lemma; no enumeration).
      progress: Show a progress line with the time left on stderr (same as ``quiet=False``).
      checkpoint: ``.npz`` file of finished chunks (:mod:`jaxqueens.io.checkpoint`), saved every
        ``checkpoint_every`` seconds, on Ctrl-C and at the end; in a multi-process run each
        process keeps its own (:func:`jaxqueens.io.checkpoint.process_path`).
      resume: Continue from ``checkpoint`` (its chunks are not recounted; one written with other
        settings is refused). Default: resume if the file exists.
      quiet: True (default): no progress line; None: one on a terminal only; False: always.
      depth, chunk: Override the columns placed on the host and the tasks per kernel call.
      on_chunk: Called as ``on_chunk(chunks_done, chunks_total)`` after each chunk has been
        recorded (tests raise ``KeyboardInterrupt`` here; the checkpoint is then saved).

    Returns:
      :class:`CountResult`.

    Raises:
      KeyboardInterrupt: after Ctrl-C at a chunk end, once the checkpoint is saved; its message
        says how many chunks are finished.
    """
    n = _check_n(n, unique)
    t0 = time.perf_counter()
    if n <= 3:
        sols = _tiny(n)
        u = len(symmetry.fundamental(sols)) if unique else None
        return CountResult(n, len(sols), u, time.perf_counter() - t0, 0.0, 0, 0, 0, 0)
    plan = _plan(n, depth, chunk)
    num = len(plan.tasks)
    bounds = _bounds(plan)  # (lo, hi) of every chunk
    procs, me = gather.process_count(), gather.process_index()
    fingerprint = _fingerprint(plan, unique, procs)
    path = ckpt.process_path(checkpoint) if checkpoint is not None else None
    if resume is None:
        resume = path is not None and path.exists()
    done = _load(path, fingerprint, len(bounds)) if resume and path is not None else {}
    resumed = len(done)
    compile_s = _compile(plan)

    skipped = sum(bounds[i][1] - bounds[i][0] for i in done)
    todo = [i for i in range(me, len(bounds), procs) if i not in done]  # process p: chunks p mod P
    save = None if path is None else guarded(lambda: _save(path, fingerprint, done, len(bounds)))
    tally = {"tasks": 0, "found": sum(v[0] for v in done.values()), "pos": 0}
    t1 = time.perf_counter()
    results = _count_chunks(plan, todo, bounds)  # calls start at the first next()
    fixed = []  # (F90, F180) once known

    def one_chunk() -> Tick:
        idx, out = next(results)
        if unique and not fixed:  # the rotation-symmetric solutions, counted on the host while
            fixed.append(constellations.fixed_by_rotation(n))  # the streams run the next chunks
        tally["pos"] += 1
        lo, hi = bounds[idx]
        done[idx] = _record(plan, lo, out)
        tally["tasks"] += hi - lo
        tally["found"] += done[idx][0]
        if on_chunk:
            on_chunk(len(done), len(bounds))
        return Tick(
            tally["tasks"],
            f"{tally['found']:,} solutions so far",
            finished=tally["pos"] == len(todo),
        )

    # progress counts only this run's tasks, so the rate and time left stay honest
    try:
        stopped = todo and run_chunks(
            one_chunk,
            total=num - skipped,
            unit="tasks",
            quiet=False if progress else quiet,
            save=save,
            every=checkpoint_every,
        )
    finally:
        results.close()  # on Ctrl-C or an error: calls not started are cancelled
    if stopped:
        raise KeyboardInterrupt(f"{len(done)} of {len(bounds)} chunks")
    if save is not None:
        save()
    if procs > 1:
        done = _gather_done(done, len(bounds))
        if len(done) != len(bounds):
            raise RuntimeError(f"{len(bounds) - len(done)} chunks missing after gathering (a bug)")
    total = sum(v[0] for v in done.values())
    u = constellations.classes(total, n, fixed[0] if fixed else None) if unique else None
    return CountResult(
        n,
        total,
        u,
        time.perf_counter() - t1,
        compile_s,
        plan.config.depth,
        num,
        len(bounds),
        resumed,
        plan.constellations,
    )


class CountPlan(NamedTuple):
    """What :func:`plan_count` found (``count --plan``)."""

    n: int
    constellations: int  # symmetry classes of border configurations
    tasks: int
    depth: int  # columns placed on the host
    chunks: int
    devices: int
    sampled: int  # tasks counted to time the estimate
    sample_seconds: float
    estimate_seconds: float  # predicted search time of the whole count (compilation excluded)
    compile_seconds: float


def plan_count(
    n: int, budget: float = 2.0, depth: int | None = None, chunk: int | None = None
) -> CountPlan:
    """Plan a count without running it: the tasks, and the run time predicted from a sample.

    The tasks are dealt in a shuffled order, so the first ones are a random sample of all.
    Samples of growing size (1/8 of a chunk, then twice as many each time) are counted until one
    takes at least ``budget`` seconds or holds half the tasks (a short count: then every task is
    counted); the estimate scales the last sample's time by ``tasks / sampled``.
    """
    n = _check_n(n)
    if n <= 3:
        return CountPlan(n, 0, 0, 0, 0, 1, 0, 0.0, 0.0, 0.0)
    plan = _plan(n, depth, chunk)
    num = len(plan.tasks)
    compile_s = _compile(plan)
    sampled, seconds = 0, 0.0
    while True:
        sampled = min(num, max(plan.chunk // 8, 2 * sampled))
        if 2 * sampled > num:
            sampled = num
        pieces = _bounds(plan, sampled, -(-sampled // len(plan.streams)))  # every stream busy
        t = time.perf_counter()
        list(_count_chunks(plan, list(range(len(pieces))), pieces))  # counts unused: timing only
        seconds = time.perf_counter() - t
        if seconds >= budget or sampled == num:
            break
    return CountPlan(
        n,
        plan.constellations,
        num,
        plan.config.depth,
        -(-num // plan.chunk),
        jax.local_device_count(),
        sampled,
        seconds,
        seconds * num / sampled,
        compile_s,
    )


def enumerate_solutions(n: int) -> np.ndarray:
    """Every solution for n <= 14, verified by the checker: uint8 ``[A000170(n), n]``, sorted."""
    n = settings.check_enumerate_n(as_size(n))
    if n <= 3:
        boards = _tiny(n)
    else:
        plan = _mirror_plan(n)
        parts = []
        for lo in range(0, len(plan.masks), plan.chunk):
            hi = min(lo + plan.chunk, len(plan.masks))
            counts = _words(_dispatch_mirror(plan, lo))[: hi - lo]
            parts.append(_chunk_boards(plan, lo, hi, counts))
        half = np.concatenate(parts)
        boards = np.concatenate([half, (n - 1 - half).astype(np.uint8)])
    boards = np.unique(boards, axis=0)
    checker.require_solutions(boards, what=f"enumerated solutions for n = {n}", n=n)
    return boards
