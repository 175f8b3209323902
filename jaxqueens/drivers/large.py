"""Driver of the large-n path: memory check, QS4 in column chunks with progress, repair rounds,
verification and outputs. Kernels in :mod:`jaxqueens.solvers.large`.
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import checker

from jaxqueens.solvers import large

from jaxqueens.io import logs
from jaxqueens.errors import QueensError
from jaxqueens.io.progress import Progress
from jaxqueens.core.rng import chain_seeds

PEAK_BYTES_PER_QUEEN = 64
"""Planned peak: device state (20 B), scan temporaries, the host copy and the checker's arrays."""
INIT_CALL_COLUMNS = 250_000
"""QS4 runs in calls of this many columns, so progress shows on huge boards."""
MAX_ROUNDS = 100_000


@dataclasses.dataclass
class LargeResult:
    """One large-n chain."""

    rows: np.ndarray  # [n] verified solution
    summary: dict
    trace_pairs: np.ndarray  # attacking pairs after each recorded swap attempt
    round_conflicted: np.ndarray  # conflicted queens at the start of each repair round


def available_memory() -> int | None:
    """Bytes of memory available now (Linux ``MemAvailable``, else ``sysconf``), or None."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return _sysconf_available()
    return _sysconf_available()


def _sysconf_available() -> int | None:
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(n: int, available: int | None = None) -> None:
    """Refuse, before allocating anything, an n that cannot fit."""
    need = n * PEAK_BYTES_PER_QUEEN
    available = available_memory() if available is None else available
    if available is not None and need > 0.9 * available:
        raise QueensError(f"n = {n:,} needs about {need / 2**30:.1f} GiB at peak but only "
                          f"{available / 2**30:.1f} GiB is available; use a smaller n")


def solve_large(n: int, seed: int = 0, chain: int = 0, tries: int = 100, free_tail: int = 0,
                max_steps: int = 1 << 30, quiet: bool = True) -> LargeResult:
    """Solve one board of size n in O(n) expected time; the result is verified.

    Args:
      n: board size (1 or >= 4; up to what memory allows).
      seed, chain: the chain's key is ``fold_in(key(seed), chain)``.
      tries: QS4 attempts per column; free_tail: last columns placed with one random swap.
      max_steps: swap attempts allowed in all (then QueensError: raise it or change the seed).
      quiet: no progress line.
    """
    if n < 1 or n in (2, 3):
        raise QueensError(f"n = {n} has no solution (N-Queens is solvable for n = 1 and every n >= 4)")
    if n == 1:
        return LargeResult(np.zeros(1, np.int32), {"n": 1, "steps": 0, "verified": True},
                           np.zeros(0, np.int32), np.zeros(0, np.int32))
    check_memory(n)
    config = large.Config(n=n, tries=tries, free_tail=free_tail)
    chain_seed = chain_seeds(jax.random.key(seed), jnp.arange(chain, chain + 1))[0]

    t0 = time.perf_counter()
    probe = large.new_state(chain_seed, n)
    init_fn = large.init_columns.lower(probe, config, 0, 1).compile()
    round_fn = large.repair_round.lower(probe, config, 1, False).compile()
    del probe
    compile_s = time.perf_counter() - t0

    bar = Progress(n, "columns placed", quiet=quiet)
    t0 = time.perf_counter()
    step = INIT_CALL_COLUMNS
    restarts, trace, conflicted_rounds, steps, moves, rounds = 0, [], [], 0, 0, 0
    attempt_seed = chain_seed
    while True:
        s = large.new_state(attempt_seed, n)
        for start in range(0, n, step):
            s = init_fn(s, start, min(n, start + step))
            if not quiet:
                jax.block_until_ready(s.rows)
                bar.update(min(n, start + step))
        jax.block_until_ready(s.rows)
        if restarts == 0:
            init_s = time.perf_counter() - t0
            bar.close()
            after_init = int(np.asarray(large.conflicted_mask(s)).sum())
            pairs_after_init = int(large.attacking_pairs(s, config))
            t1 = time.perf_counter()
        best, stalled, pairs = None, 0, pairs_after_init if restarts == 0 else None
        while pairs != 0 and stalled < config.stall_rounds and steps < max_steps and rounds < MAX_ROUNDS:
            s, st = round_fn(s, min(max_steps - steps, 1 << 30), stalled > 0)
            st = jax.device_get(st)
            rounds, steps, moves = rounds + 1, steps + int(st.steps), moves + int(st.moves)
            pairs = int(st.pairs)
            conflicted_rounds.append(int(st.conflicted))
            trace.append(st.trace[st.trace >= 0])
            stalled = 0 if best is None or pairs < best else stalled + 1
            best = pairs if best is None else min(best, pairs)
        if pairs == 0:
            break
        if steps >= max_steps or rounds >= MAX_ROUNDS:
            raise QueensError(f"n = {n}: no solution within {steps:,} swap attempts; "
                              "raise the step limit or try another --seed")
        restarts += 1  # stalled: a fresh QS4 board from the chain's next seed
        attempt_seed = jax.random.bits(jax.random.fold_in(jax.random.key(seed), 2**31 - 1 - restarts),
                                       (), jnp.uint32)
    search_s = time.perf_counter() - t1
    rows = np.asarray(s.rows)
    del s
    t2 = time.perf_counter()
    checker.require_solutions(rows[None], what="large-n min-conflicts", n=n)
    verify_s = time.perf_counter() - t2
    summary = {
        "n": n, "mode": "large", "seed": seed, "chain": chain, "tries": tries, "free_tail": free_tail,
        "compile_s": compile_s, "init_s": init_s, "search_s": search_s, "verify_s": verify_s,
        "total_s": init_s + search_s + verify_s,
        "conflicted_after_init": after_init, "pairs_after_init": pairs_after_init,
        "steps": steps, "moves": moves, "rounds": rounds, "restarts": restarts, "verified": True,
        "backend": jax.default_backend(),
    }
    return LargeResult(rows, summary, np.concatenate(trace) if trace else np.zeros(0, np.int32),
                       np.asarray(conflicted_rounds, np.int32))


def write_outputs(res: LargeResult, out_dir: str | Path, plot: bool) -> list[Path]:
    """``solution.npy``, ``solution.txt`` (text board), ``summary.json``; figures with ``plot``."""
    import json

    from jaxqueens.io import boards as boardio

    from jaxqueens.plots import figures as plots, render
    from jaxqueens.io.atomic import write_text

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    boardio.write_boards_npy(out / "solution.npy", res.rows[None])
    boardio.write_board(out / "solution.txt", res.rows)
    write_text(out / "summary.json", json.dumps(res.summary, indent=2) + "\n")
    files = [out / "solution.npy", out / "solution.txt", out / "summary.json"]
    n = res.rows.shape[0]
    if n <= render.MAX_PNG_N:
        render.render_png(res.rows, out / "solution.png")
        files.append(out / "solution.png")
    if plot:
        files.append(plots.trace_plot(res.trace_pairs, out / "trace_conflicting_pairs.png",
                                      "conflicting pairs", f"large-n repair, n = {n:,} (recorded steps)"))
        files.append(plots.trace_plot(res.round_conflicted, out / "trace_conflicted_queens.png",
                                      "conflicting queens", f"large-n repair, n = {n:,}: per round",
                                      xlabel="repair round"))
    return files


def cmd_large(args, n: int) -> int:
    """``solve`` on the large-n path: ``--chains`` (default 1) chains one after another."""
    from jaxqueens.plots import render

    chains = args.chains or 1
    for chain in range(chains):
        res = solve_large(n, seed=args.seed, chain=chain, quiet=args.quiet)
        s = res.summary
        logs.log("summary", **s)
        print(f"n = {n:,}{f' chain {chain}' if chains > 1 else ''}: solved and verified; "
              f"init {s.get('init_s', 0):.2f} s ({s.get('conflicted_after_init', 0)} conflicted queens "
              f"left), search {s.get('search_s', 0):.2f} s ({s['steps']} steps, {s.get('moves', 0)} "
              f"moves, {s.get('restarts', 0)} restarts), verify {s.get('verify_s', 0):.2f} s; "
              f"compile {s.get('compile_s', 0):.2f} s excluded")
        if n <= 16:
            print(render.ascii_board(res.rows))
        if args.out:
            out = Path(args.out) / f"chain-{chain}" if chains > 1 else Path(args.out)
            files = write_outputs(res, out, args.plot)
            print(f"wrote {', '.join(f.name for f in files)} to {out}")
    return 0
