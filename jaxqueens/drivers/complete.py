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
from collections.abc import Callable, Sequence
from typing import NamedTuple

import jax
import numpy as np

from jaxqueens.core import arguments
from jaxqueens.core.constraints import Constraints, unsat_reason
from jaxqueens.drivers.complete_search import Kernels, Search, SearchState
from jaxqueens.drivers.loop import RunControl
from jaxqueens.errors import QueensError
from jaxqueens.io import checkpoint as ckpt
from jaxqueens.io.instances_formats import Instance
from jaxqueens.parallel import complete as batched
from jaxqueens.parallel import devices, gather, memory, sizing, threads_complete
from jaxqueens.parallel import streams as parallel_streams
from jaxqueens.solvers import complete as solver
from jaxqueens.solvers.complete import Config

MODES = ("decide", "count", "enumerate")
MAX_N = solver.MAX_N
BUDGET = 1 << 20  # tree edges per item and kernel call (CPU; splits hard instances)
THREAD_BUDGET = BUDGET  # the thread kernel's: one lane an item, so a call lasts its longest item
CHUNK = 64  # items per kernel call (CPU: split over the host devices)
ENUMERATE_CAP = 1000  # solutions listed per instance by default
# copies of a call's listed solutions, uint32 `[items, cap, n + 1]`, alive at once: the kernel's
# carry, its output and the host's copy (one call read while the next runs)
LISTED_COPIES = 3


class InstanceResult(NamedTuple):
    """One instance's outcome (exact Python ints)."""

    n: int  #: board size
    status: str  #: "SAT", "UNSAT", "unknown" (node limit reached) or "open" (run interrupted)
    solutions: int | None  #: all solutions (count / enumerate modes; not "unknown" or "open")
    nodes: int  #: tree edges searched (queens tried)
    seconds: float  #: share of the chunks' wall time, by steps
    boards: np.ndarray  #: [k, n] uint8 verified solutions (decide: the first; enumerate: up to cap)
    reason: str | None = None  #: UNSAT without a search: why (core.constraints.unsat_reason)


class CompleteResult(NamedTuple):
    """What `solve_instances` returns: each instance's outcome and the run's figures, with the
    table (`rows`) and the summary (`summary`) that `jaxqueens complete` prints and writes."""

    instances: list[InstanceResult]  #: in the order given
    seconds: float  #: wall time of the search, compilation excluded
    compile_seconds: float  #: compiling the kernels
    chunks: int  #: kernel calls
    items: int  #: sub-trees searched (instance roots and split-off frontiers)
    resumed: bool  #: continued from a checkpoint
    stopped_by: str = "finished"  #: or "interrupted" (Ctrl-C, SIGTERM): a partial result

    @property
    def settled(self) -> int:
        """Instances decided (every one, unless the run was interrupted)."""
        return sum(r.status != "open" for r in self.instances)

    def rows(self, inputs: Sequence[Instance]) -> list[list]:
        """The instances as `results.csv`'s rows (`jaxqueens.io.schema.TABLES`).

        Args:
          inputs: the instances as read (`jaxqueens.io.instances.load_instances`), in the order
            solved: each row's `file` is their `source`, its `d` their `d`.

        Returns:
          `[file, d, n, status, solutions, nodes, seconds, reason]` per instance: `d` None for
          an instance that is not an excluded-diagonals file, `solutions` None unless counted,
          `reason` None unless the instance is UNSAT without a search.
        """
        return [
            [i.source, i.d, r.n, r.status, r.solutions, r.nodes, round(r.seconds, 6), r.reason]
            for i, r in zip(inputs, self.instances, strict=True)
        ]

    def summary(self, **extra) -> dict:
        """The run's totals, as `summary.json` holds them.

        Args:
          **extra: keys added after the totals, in their order (the command's mode, timings).

        Returns:
          `instances`, `sat`, `unsat`, `unsat_without_search` (settled without a search),
          `unknown` and `nodes`, then `extra`.
        """
        status = [r.status for r in self.instances]
        return {
            "instances": len(status),
            "sat": status.count("SAT"),
            "unsat": status.count("UNSAT"),
            "unsat_without_search": sum(r.reason is not None for r in self.instances),
            "unknown": status.count("unknown"),
            "nodes": sum(r.nodes for r in self.instances),
            **extra,
        }


def kernel_route(platform: str, mode: str, num_devices: int) -> str:
    """Which kernel searches `complete`'s items on backend `platform` (`jax.default_backend()`) for
    `mode` "decide", "count" or "enumerate": `"threads"` (one search per GPU thread,
    `jaxqueens.parallel.threads_complete`) on one CUDA GPU for decide and count, else `"items"` (the
    lockstep or per-item XLA kernel of `jaxqueens.parallel.complete.search_chunk`)."""
    one_gpu = platform == "gpu" and num_devices == 1
    return "threads" if one_gpu and mode in ("decide", "count") else "items"


def _thread_kernel(batch, shards: int, config: Config, programs: int):
    """`jaxqueens.parallel.threads_complete.search_chunk` as a stream calls it (one device;
    off a GPU, where only tests route here, interpreted)."""
    del shards
    interpret = jax.default_backend() != "gpu"
    unroll = 1 if interpret else threads_complete.UNROLL  # the same results, less to compile
    return threads_complete.search_chunk(
        batch, config, programs=programs, unroll=unroll, interpret=interpret
    )


def _thread_lanes() -> int:
    """The thread kernel's lanes: one warp a block, 32 blocks an SM (4 blocks off a GPU)."""
    block = threads_complete.BLOCK
    if jax.default_backend() != "gpu":
        return 4 * block
    return max(1, sizing.device_target().parallelism // (2 * block)) * block


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
    """Bytes the listed solutions of `--enumerate` hold at once: `LISTED_COPIES` copies of `chunk`
    items with room for `cap` boards of `n + 1` uint32 words."""
    return LISTED_COPIES * chunk * cap * (n + 1) * 4


def check_listed_memory(cap: int, n: int, chunk: int, available: int | None = None) -> None:
    """Refuse with a QueensError, before anything is allocated, a `cap` (boards listed per instance)
    whose listed solutions (`listed_bytes`, `n` the largest board size) cannot fit in the
    `available` bytes (default: the machine's, when known), in one line with the largest cap that
    fits."""
    available = memory.available_memory() if available is None else available
    if available is None:
        return
    most = int(memory.HEADROOM * available) // listed_bytes(1, n, chunk)
    if cap > most:
        raise QueensError(
            f"cap={cap:,} (n = {n}, {chunk} instances a call) needs about "
            f"{memory.format_bytes(listed_bytes(cap, n, chunk))} of memory for the listed "
            f"solutions but {memory.format_bytes(available)} is available; give cap="
            f"{max(most, 1):,} or less",
            param="cap",
        )


def _plan(
    models: Sequence[Constraints], mine: list[int], mode: str, cap: int, budget, chunk
) -> tuple[sizing.Sizes, int, int, Kernels]:
    """The backend's sizes, the budget, the chunk (a multiple of the devices) and, per group
    (n, toroidal) of this process's instances (`mine`), the kernel config and call, on the kernel
    `kernel_route` picks: the thread kernel with `_thread_lanes` lanes, or the items kernel with,
    on an accelerator, lanes fitted to the largest board; enumeration's memory checked (`cap`
    boards listed per instance)."""
    sizes, num_dev = sizing.sizes(), devices.local_device_count()
    config = lambda n, tor: Config(n, tor, cap if mode == "enumerate" else 0, mode == "decide")
    if kernel_route(jax.default_backend(), mode, num_dev) == "threads":
        sizes = dataclasses.replace(sizes, count_lanes=_thread_lanes())
        budget = budget or THREAD_BUDGET
        chunk = chunk or sizes.count_lanes * batched.ITEMS_PER_LANE
        programs = sizes.count_lanes // threads_complete.BLOCK
        call: Callable = functools.partial(_thread_kernel, programs=programs)
    else:
        if sizes.accelerator and not sizes.count_lanes and models:
            # lanes from the compiled kernel of the largest board against the device
            big = max(models, key=lambda m: (m.n, m.toroidal))
            choice = batched.accelerator_lanes(config(big.n, big.toroidal), num_dev)
            if not choice.fits:
                raise QueensError(
                    f"n = {big.n} needs {choice.bytes:,} bytes of device memory for even one "
                    "lane: the device is too small (or lower the enumeration cap)"
                )
            sizes = dataclasses.replace(sizes, count_lanes=choice.batch)
        call = lambda batch, shards, config: batched.search_chunk(batch, config, shards, sizes)
    budget = int(budget or (BUDGET * 16 if sizes.accelerator else BUDGET))
    chunk = int(
        chunk
        or (sizes.count_lanes * batched.ITEMS_PER_LANE * num_dev if sizes.accelerator else CHUNK)
    )
    chunk = max(num_dev, -(-chunk // num_dev) * num_dev)
    if mode == "enumerate":
        check_listed_memory(cap, max((m.n for m in models), default=1), chunk)
    groups = sorted({(models[i].n, models[i].toroidal) for i in mine})
    kernels: Kernels = {g: (cfg := config(*g), functools.partial(call, config=cfg)) for g in groups}
    return sizes, budget, chunk, kernels


def solve_instances(
    models: Sequence[Constraints],
    mode: str = "decide",
    *,
    cap: int = ENUMERATE_CAP,
    max_nodes: int | None = None,
    control: RunControl | None = None,
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
      control: progress and checkpoints, as for `jaxqueens.drivers.count.count_solutions`
        (None: `RunControl()`; by default a checkpoint that exists is resumed).
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
    list_cap = cap if mode == "enumerate" else 1
    procs, me = gather.process_count(), gather.process_index()
    mine = list(range(me, len(models), procs))
    sizes, budget, chunk, kernels = _plan(models, mine, mode, list_cap, budget, chunk)
    fingerprint = _fingerprint(models, mode, cap, budget, chunk, max_nodes, orient)
    control = RunControl() if control is None else control
    path = ckpt.process_path(control.checkpoint) if control.checkpoint is not None else None
    resume = path is not None and path.exists() if control.resume is None else control.resume
    reasons = [unsat_reason(m) for m in models]
    st = SearchState.start(models, mine, reasons, path if resume else None, fingerprint)
    streams = parallel_streams.plan(chunk, sizes.accelerator)  # one per host device on a CPU
    c0 = time.perf_counter()
    for (n, _), (cfg, kernel) in kernels.items():  # compile: one call on an empty batch
        for s in streams:
            if n >= 2:
                parallel_streams.call(s, kernel, np.zeros((s.rows, cfg.width), np.uint32))
    t1 = time.perf_counter()
    run = Search(
        models, mode, list_cap, max_nodes, budget, orient, st, mine, kernels, streams, on_chunk
    )
    stopped = run.run(path, fingerprint, control)
    seconds = time.perf_counter() - t1
    if not stopped and procs > 1:
        st = _gather(st, models, mine)
    out = _results(st, models, mode, reasons)
    stop = "interrupted" if stopped else "finished"
    return CompleteResult(out, seconds, t1 - c0, st.chunks, st.items, bool(resume), stop)


def _results(st: SearchState, models, mode: str, reasons: list) -> list[InstanceResult]:
    """Each instance's outcome, in the order given ("open": the run was interrupted first)."""
    out = []
    for i, m in enumerate(models):
        status = st.status[i] or "open"
        counted = mode != "decide" and status not in ("unknown", "open")
        solutions = st.solutions[i] if counted else None
        boards = np.array(st.boards[i], np.uint8).reshape(len(st.boards[i]), m.n)
        reason = reasons[i] if status == "UNSAT" else None
        out.append(
            InstanceResult(m.n, status, solutions, st.nodes[i], st.seconds[i], boards, reason)
        )
    return out


_STATUS = ("", "SAT", "UNSAT", "unknown")


def _gather(st: SearchState, models, mine) -> SearchState:
    """Merge every process's instances (process p holds instances p, p + P, ...): the tallies of
    each from its process, and every process's boards, exchanged as the checkpoint holds them."""
    count, tree = len(models), st.tree()
    tallies = [(st.solutions[i], st.nodes[i]) if i in mine else (0, 0) for i in range(count)]
    words = gather.int_words(tallies).reshape(count, 2, gather.INT_WORDS)
    status = np.array([_STATUS.index(s) for s in st.status], np.int32)
    seconds = tree["instances"]["seconds"]
    all_words, all_status, all_secs = map(gather.allgather, (words, status, seconds))
    own = (np.arange(count) % len(all_words), np.arange(count))  # (process, instance)
    ints = np.array(gather.word_ints(all_words[own]), object).reshape(count, 2)  # exact ints
    tree["instances"] = {
        "solutions": ints[:, 0],
        "nodes": ints[:, 1],
        "seconds": all_secs[own],
        "status": [_STATUS[s] for s in all_status[own]],
    }
    tree["boards"] = {key: gather.ragged(rows) for key, rows in tree["boards"].items()}
    merged = SearchState(count, st.n_max)
    merged.restore(tree, models)
    return merged


def toroidal_count(n: int, **kwargs) -> int:
    """Solutions of the n-queens problem on a torus (OEIS A051906), exactly; `kwargs` as for
    `solve_instances` (control, budget, ...).

    Raises KeyboardInterrupt after Ctrl-C or SIGTERM (the count has no partial value; a checkpoint
    given keeps the finished work)."""
    res = solve_instances([Constraints(n, toroidal=True)], mode="count", **kwargs)
    if res.stopped_by == "interrupted":
        raise KeyboardInterrupt(f"{res.settled} of 1 instances")
    solutions = res.instances[0].solutions
    assert solutions is not None  # the count mode counts every instance
    return solutions
