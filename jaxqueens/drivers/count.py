"""Exact N-Queens counts, fundamental counts and enumeration: the host driver and ``jaxqueens count``.

Method (after Somers' bitmask counter and the GPU counters built on it): the search tree is
expanded breadth-first on the host to a depth d into independent prefixes; each prefix's subtree
is searched by the one-prefix kernel of :mod:`jaxqueens.solvers.count`, batched per backend.
Mirror symmetry: the first column's queen is restricted to the lower half of the rows, and for
odd n the middle row with the second column's queen in the lower half, so every prefix stands for
itself and its mirror image (weight 2). Totals are summed on the host as Python ints from two
uint32 words per prefix, so nothing wraps (2^31 is passed at n = 19).

Fundamental solutions (OEIS A002562) come from the orbit-stabilizer theorem, streamed chunk by
chunk: classes = sum over all solutions of |stabilizer| / 8 (:mod:`jaxqueens.core.symmetry`).

Long counts run in chunks of prefixes: a progress line with time left, and a checkpoint of the
completed chunks (written atomically) from which an interrupted count resumes.
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from typing import Callable, NamedTuple

import jax
import numpy as np

from jaxqueens.parallel import gather
from jaxqueens.io import atomic

from jaxqueens.parallel import devices as backend

from jaxqueens.core import checker, symmetry

from jaxqueens.solvers import count as count_kernel
from jaxqueens.solvers.count import KernelConfig
from jaxqueens.core.oeis import A000170, A002562
from jaxqueens.errors import QueensError

MAX_N = 32  # uint32 masks
ENUMERATE_MAX_N = 14
UNIQUE_MAX_N = 17
TARGET_PREFIXES = {False: 4096, True: 1 << 17}  # by is_accelerator()
CHECKPOINT_FORMAT = "jaxqueens-count-checkpoint-1"


class CountResult(NamedTuple):
    """Outcome of :func:`count_solutions` (all counts are exact Python ints)."""

    n: int
    total: int  # all solutions (A000170)
    unique: int | None  # classes under the 8 symmetries (A002562), if asked for
    seconds: float  # wall time of the search, compilation excluded
    compile_seconds: float
    depth: int  # queens placed by the host expansion
    prefixes: int  # independent subtrees searched (mirror halves only)
    chunks: int
    resumed_chunks: int  # chunks taken from the checkpoint, not recounted


def expand_prefixes(n: int, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Every partial board of ``depth`` queens under the mirror restriction, breadth-first.

    Returns:
      masks: uint32 ``[P, 4]`` (cols, ld, rd, av) ready for the kernel, dead ends dropped.
      queens: uint8 ``[P, depth]`` rows of the placed queens, in lexicographic order.
    """
    if not 1 <= depth <= n - 2 or (n % 2 and depth < 2):
        raise ValueError(f"depth {depth} out of range for n = {n}")
    full, half = (1 << n) - 1, n // 2
    low = (1 << half) - 1
    cols = ld = rd = np.zeros(1, np.uint64)
    queens = np.zeros((1, 0), np.uint8)
    for level in range(depth):
        allowed = np.full(cols.shape, full, np.uint64)
        if level == 0:
            allowed[:] = low | ((1 << half) if n % 2 else 0)
        elif level == 1 and n % 2:
            allowed[queens[:, 0] == half] = low
        av = allowed & ~(cols | ld | rd) & full
        parent, row = np.nonzero((av[:, None] >> np.arange(n, dtype=np.uint64)) & 1)
        bit = np.uint64(1) << row.astype(np.uint64)
        cols, ld, rd = cols[parent] | bit, ((ld[parent] | bit) << 1) & full, (rd[parent] | bit) >> 1
        queens = np.concatenate([queens[parent], row[:, None].astype(np.uint8)], axis=1)
    av = full & ~(cols | ld | rd)
    keep = av != 0
    masks = np.stack([cols, ld, rd, av], axis=1)[keep].astype(np.uint32)
    return masks, queens[keep]


def choose_depth(n: int, target: int) -> int:
    """The smallest expansion depth giving at least ``target`` prefixes (at most n - 2)."""
    depth = 2 if n % 2 else 1
    while depth < n - 2 and len(expand_prefixes(n, depth)[0]) < target:
        depth += 1
    return depth


def _tiny(n: int) -> np.ndarray:
    """All solutions for n <= 3 (too small for the mirror expansion), by brute force."""
    sols = [p for p in itertools.permutations(range(n))
            if all(abs(p[i] - p[j]) != j - i for i in range(n) for j in range(i + 1, n))]
    return np.asarray(sols, np.uint8).reshape(len(sols), n)


def _decode(words: np.ndarray, queens: np.ndarray, n: int) -> np.ndarray:
    """Boards uint8 ``[m, n]`` from kernel lists uint32 ``[m, W]`` and their prefixes ``[m, d]``."""
    bits = (words[:, 1:] ^ words[:, :-1]).astype(np.float64)
    return np.concatenate([queens, np.log2(bits).astype(np.uint8)], axis=1)


class _Plan(NamedTuple):
    config: KernelConfig
    masks: np.ndarray  # [P, 4]
    queens: np.ndarray  # [P, depth]
    chunk: int  # prefixes per kernel call (multiple of devices)
    devices: int


def _plan(n: int, depth: int | None, chunk: int | None) -> _Plan:
    accel = backend.is_accelerator()
    devices = jax.local_device_count()
    depth = depth or choose_depth(n, TARGET_PREFIXES[accel])
    masks, queens = expand_prefixes(n, depth)
    if chunk is None:
        pieces = 16 if n >= 15 else 1  # small counts: one call, no per-chunk overhead
        chunk = (min(len(masks), 1 << 16) if accel
                 else min(2048, max(8, -(-len(masks) // (pieces * devices)))))
        chunk *= devices
    chunk = max(devices, -(-chunk // devices) * devices)
    return _Plan(KernelConfig(n, depth), masks, queens, chunk, devices)


def _padded(masks: np.ndarray, size: int) -> np.ndarray:
    pad = np.zeros((size - len(masks), 4), np.uint32)  # av = 0: an empty search
    return np.concatenate([masks, pad])


def _words(counts) -> list[int]:
    c = np.asarray(counts).astype(np.uint64)
    return [int(x) for x in (c[:, 0] | (c[:, 1] << np.uint64(32)))]


def _chunk_boards(plan: _Plan, lo: int, hi: int, counts: list[int]) -> np.ndarray:
    """Enumerate the solutions of prefixes ``lo:hi`` (mirror halves only): uint8 ``[m, n]``."""
    cap = 1 << max(0, max(counts, default=1) - 1).bit_length()
    _, lists = count_kernel.enumerate_mapped(_padded(plan.masks[lo:hi], plan.chunk), plan.config,
                                             cap, plan.devices)
    lists = np.asarray(lists)
    words = np.concatenate([lists[i, :c] for i, c in enumerate(counts)])
    queens = np.repeat(plan.queens[lo:hi], counts, axis=0)
    return _decode(words, queens, plan.config.n)


def _load_checkpoint(path: Path, key: dict) -> dict[int, list[int]]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        saved = {k: data[k] for k in key}
        done = {int(i): [int(v) for v in vals] for i, vals in data["done"].items()}
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise QueensError(f"checkpoint {path} is not a jaxqueens count checkpoint ({err}); "
                          "delete it or pass another --checkpoint file") from None
    if saved != key:
        raise QueensError(f"checkpoint {path} belongs to another count ({saved}, this one is "
                          f"{key}); delete it or pass another --checkpoint file")
    return done


def count_solutions(n: int, unique: bool = False, progress: bool = False,
                    checkpoint: str | Path | None = None, *, depth: int | None = None,
                    chunk: int | None = None,
                    on_chunk: Callable[[int, int], None] | None = None) -> CountResult:
    """Count all n-queens solutions exactly, optionally also the fundamental ones.

    Args:
      n: Board size, 1..32 (``unique`` needs n <= 17: it enumerates every solution).
      unique: Also count solutions distinct under rotations and reflections (A002562).
      progress: Show a progress line with the time left on stderr.
      checkpoint: JSON file of completed chunks; an existing one for the same count is resumed
        (its chunks are not recounted), and it is rewritten atomically as chunks complete.
      depth, chunk: Override the prefix depth and the prefixes per kernel call.
      on_chunk: Called as ``on_chunk(chunks_done, chunks_total)`` after each chunk has been
        recorded (tests raise ``KeyboardInterrupt`` here; the checkpoint is then saved).

    Returns:
      :class:`CountResult`.
    """
    if not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_N:
        raise QueensError(f"n = {n} is out of range: counting supports 1 <= n <= {MAX_N}")
    if unique and n > UNIQUE_MAX_N:
        raise QueensError(f"--unique enumerates every solution and supports n <= {UNIQUE_MAX_N}, "
                          f"not n = {n}; drop --unique (or see OEIS A002562 for larger n)")
    t0 = time.perf_counter()
    if n <= 3:
        sols = _tiny(n)
        u = len(symmetry.fundamental(sols)) if unique else None
        return CountResult(n, len(sols), u, time.perf_counter() - t0, 0.0, 0, 0, 0, 0)
    plan = _plan(n, depth, chunk)
    num = len(plan.masks)
    starts = list(range(0, num, plan.chunk))
    key = {"format": CHECKPOINT_FORMAT, "n": n, "depth": plan.config.depth, "chunk": plan.chunk,
           "prefixes": num, "unique": bool(unique)}
    procs, me = jax.process_count(), jax.process_index()
    path = Path(checkpoint) if checkpoint is not None else None
    if path is not None and procs > 1:  # one file per process: each records its own chunks
        path = path.with_name(f"{path.stem}.process{me}of{procs}{path.suffix}")
    done = _load_checkpoint(path, key) if path else {}
    resumed = len(done)
    run = count_kernel.count_batch
    c0 = time.perf_counter()
    jax.block_until_ready(run(_padded(plan.masks[:0], plan.chunk), plan.config, plan.devices))
    compile_s = time.perf_counter() - c0

    def save():
        if path:
            payload = {**key, "done": {str(i): [str(v) for v in vals] for i, vals in done.items()}}
            atomic.write_text(path, json.dumps(payload) + "\n")

    size = lambda i: min(starts[i] + plan.chunk, num) - starts[i]  # noqa: E731
    skipped = sum(size(i) for i in done)
    bar = None
    if progress:  # counts only this run's prefixes, so the rate and time left stay honest
        from jaxqueens.io.progress import Progress
        bar = Progress(num - skipped, "prefixes", quiet=False)
    todo = [i for i in range(len(starts)) if i not in done][me::procs]  # process p: every P-th
    t1, last_save = time.perf_counter(), time.perf_counter()
    try:
        pending = None
        for pos in range(len(todo) + 1):
            nxt = None
            if pos < len(todo):  # dispatch chunk pos before reading chunk pos - 1 (async)
                lo = starts[todo[pos]]
                nxt = (todo[pos], run(_padded(plan.masks[lo:lo + plan.chunk], plan.chunk),
                                      plan.config, plan.devices))
            if pending is not None:
                idx, out = pending
                lo = starts[idx]
                hi = min(lo + plan.chunk, num)
                counts = _words(out)[: hi - lo]
                stab = 0
                if unique:
                    boards = _chunk_boards(plan, lo, hi, counts)
                    stab = int(symmetry.stabilizer_sizes(boards).sum())
                done[idx] = [sum(counts), stab]
                if path and time.perf_counter() - last_save > 1.0:
                    save()
                    last_save = time.perf_counter()
                if bar:
                    finished = sum(size(i) for i in done) - skipped
                    bar.update(finished, f"{2 * sum(v[0] for v in done.values()):,} solutions so far")
                if on_chunk:
                    on_chunk(len(done), len(starts))
            pending = nxt
    finally:
        save()
        if bar:
            bar.close()
    if procs > 1:
        done = _gather_done(done, len(starts))
        if len(done) != len(starts):
            raise RuntimeError(f"{len(starts) - len(done)} chunks missing after gathering (a bug)")
    total = 2 * sum(v[0] for v in done.values())
    u = None
    if unique:
        stab = 2 * sum(v[1] for v in done.values())  # the mirror half has the same stabilizers
        if stab % 8:
            raise RuntimeError(f"stabilizer sum {stab} is not a multiple of 8 (a bug)")
        u = stab // 8
    return CountResult(n, total, u, time.perf_counter() - t1, compile_s, plan.config.depth, num,
                       len(starts), resumed)


def _gather_done(done: dict, chunks: int) -> dict:
    """Merge every process's finished chunks (exact integers as four 32-bit words each)."""
    from jax.experimental import multihost_utils

    words = np.zeros((chunks, 2, 4), np.uint32)
    have = np.zeros(chunks, np.uint32)
    for i, vals in done.items():
        have[i] = 1
        for j, v in enumerate(vals):
            words[i, j] = [(int(v) >> (32 * k)) & 0xFFFFFFFF for k in range(4)]
    all_words = np.asarray(multihost_utils.process_allgather(words))
    all_have = np.asarray(multihost_utils.process_allgather(have))
    merged = {}
    for p in range(all_have.shape[0]):
        for i in np.flatnonzero(all_have[p]):
            merged[int(i)] = [sum(int(w) << (32 * k) for k, w in enumerate(all_words[p, i, j]))
                              for j in range(2)]
    return merged


def enumerate_solutions(n: int) -> np.ndarray:
    """Every solution for n <= 14, verified by the checker: uint8 ``[A000170(n), n]``, sorted."""
    if not 1 <= n <= ENUMERATE_MAX_N:
        raise QueensError(f"enumeration supports 1 <= n <= {ENUMERATE_MAX_N} (n = 14 has 365,596 "
                          f"solutions), not n = {n}; use 'jaxqueens count -n {n}' to count them")
    if n <= 3:
        boards = _tiny(n)
    else:
        plan = _plan(n, None, None)
        parts = []
        for lo in range(0, len(plan.masks), plan.chunk):
            hi = min(lo + plan.chunk, len(plan.masks))
            counts = _words(count_kernel.count_batch(_padded(plan.masks[lo:hi], plan.chunk),
                                                     plan.config, plan.devices))[: hi - lo]
            parts.append(_chunk_boards(plan, lo, hi, counts))
        half = np.concatenate(parts)
        boards = np.concatenate([half, (n - 1 - half).astype(np.uint8)])
    boards = np.unique(boards, axis=0)
    checker.require_solutions(boards, what=f"enumerated solutions for n = {n}", n=n)
    return boards


def add_command(sub) -> None:
    """Register ``jaxqueens count`` on an argparse subparsers object."""
    p = sub.add_parser("count", help="count all solutions exactly (and list them for n <= 14)",
                       description="Count every n-queens solution exactly with bitmask DFS over "
                                   "independent prefixes (mirror symmetry used); optionally the "
                                   "fundamental solutions, and every solution written to .npy.")
    p.add_argument("-n", type=int, required=True, help=f"board size, 1..{MAX_N}")
    p.add_argument("--unique", action="store_true",
                   help=f"also count solutions distinct under the 8 symmetries (n <= {UNIQUE_MAX_N})")
    p.add_argument("--enumerate", action="store_true",
                   help=f"write every solution to --out (n <= {ENUMERATE_MAX_N})")
    p.add_argument("--out", default=None, metavar="FILE.npy",
                   help="with --enumerate: all solutions [S, n] uint8; the fundamental "
                        "representatives go to FILE_fundamental.npy")
    p.add_argument("--progress", action="store_true", help="progress line with time left")
    p.add_argument("--checkpoint", default=None, metavar="FILE.json",
                   help="record completed prefixes here and resume from it after an interruption")
    p.set_defaults(func=cmd_count)


def _known(value: int, table: dict[int, int], n: int, name: str) -> str:
    if n not in table:
        return ""
    return f" (OEIS {name}: {'agrees' if table[n] == value else f'MISMATCH, expected {table[n]:,}'})"


def cmd_count(args) -> int:
    """The ``count`` command."""
    if args.enumerate and not args.out:
        raise QueensError("--enumerate needs --out FILE.npy to write the solutions to")
    if args.out and not args.enumerate:
        raise QueensError("--out is only used with --enumerate; add --enumerate or drop --out")
    if args.enumerate:
        from jaxqueens.io import boards as boardio

        boards = enumerate_solutions(args.n)
        reps = symmetry.fundamental(boards)
        out = Path(args.out)
        fund = out.with_name(out.stem + "_fundamental" + (out.suffix or ".npy"))
        if gather.is_writer():  # several processes: process 0 writes
            boardio.write_boards_npy(out, boards, dtype=np.uint8)
            boardio.write_boards_npy(fund, reps, dtype=np.uint8)
        print(f"n = {args.n}: {len(boards):,} solutions{_known(len(boards), A000170, args.n, 'A000170')}, "
              f"{len(reps):,} fundamental{_known(len(reps), A002562, args.n, 'A002562')}; "
              f"all verified; wrote {out} and {fund}")
        return 0
    res = count_solutions(args.n, unique=args.unique, progress=args.progress,
                          checkpoint=args.checkpoint)
    print(f"n = {res.n}: {res.total:,} solutions{_known(res.total, A000170, res.n, 'A000170')}")
    if res.unique is not None:
        print(f"fundamental (distinct under rotations and reflections): {res.unique:,}"
              f"{_known(res.unique, A002562, res.n, 'A002562')}")
    resumed = (f", {res.resumed_chunks} of {res.chunks} chunks resumed from checkpoint"
               if res.resumed_chunks else "")
    print(f"{res.seconds:.2f} s ({res.prefixes:,} prefixes of depth {res.depth}, "
          f"compile {res.compile_seconds:.2f} s excluded{resumed})")
    bad = (res.n in A000170 and res.total != A000170[res.n]) or (
        res.unique is not None and res.n in A002562 and res.unique != A002562[res.n])
    return 1 if bad else 0
