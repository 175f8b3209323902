"""Driver of the large-n path: memory check, QS4 in column chunks with progress, repair rounds,
verification. Kernels in :mod:`jaxqueens.solvers.large`; outputs in :mod:`jaxqueens.io.large`;
the command line is ``jaxqueens solve --mode large`` (:mod:`jaxqueens.cli.solve`).
"""

from __future__ import annotations

import dataclasses
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import arguments, checker
from jaxqueens.core.board import as_size
from jaxqueens.core.rng import chain_seeds
from jaxqueens.drivers.loop import Tick, run_chunks
from jaxqueens.errors import QueensError
from jaxqueens.parallel import memory
from jaxqueens.solvers import large

PEAK_BYTES_PER_QUEEN = 64
"""Planned peak: device state (20 B), scan temporaries, the host copy and the checker's arrays."""
INIT_CALL_COLUMNS = 250_000
"""QS4 runs in calls of this many columns, so progress shows on huge boards."""
MAX_ROUNDS = 100_000
NO_STEP_LIMIT = 1 << 30
"""``max_steps`` of a run without a step limit (swap attempts in all)."""
INITS = {"qs4": None, "permutation": 1}
"""Initial boards of the large path: QS4 (``tries`` swaps per column) or a uniform random
permutation (one random swap per column, Fisher-Yates); the batched path's other initialisations
are O(n^2) (greedy) or not permutations (random), which the swap repair needs."""


@dataclasses.dataclass
class LargeResult:
    """One large-n chain."""

    rows: np.ndarray  # [n] verified solution; unsolved (step limit): the board with fewest pairs
    summary: dict
    trace_pairs: np.ndarray  # attacking pairs after each recorded swap attempt
    round_conflicted: np.ndarray  # conflicted queens at the start of each repair round


def check_memory(n: int, available: int | None = None) -> None:
    """Refuse, before allocating anything, an n that cannot fit
    (:func:`jaxqueens.parallel.memory.check_memory`)."""
    memory.check_memory(
        n * PEAK_BYTES_PER_QUEEN,
        f"n = {n:,} (one large-n chain)",
        "use a smaller n",
        available=available,
    )


def _place_columns(init_fn, s: large.State, n: int, quiet: bool | None) -> large.State:
    """QS4 over all columns, ``INIT_CALL_COLUMNS`` per call, with a progress line; Ctrl-C takes
    effect between calls."""
    placed = [s, 0]

    def chunk() -> Tick:
        s, start = placed
        stop = min(n, start + INIT_CALL_COLUMNS)
        s = init_fn(s, start, stop)
        if not quiet:
            jax.block_until_ready(s.rows)
        placed[:] = [s, stop]
        return Tick(stop, finished=stop >= n)

    if run_chunks(chunk, total=n, unit="columns placed", quiet=quiet):
        raise KeyboardInterrupt
    jax.block_until_ready(placed[0].rows)
    return placed[0]


def solve_large(
    n: int,
    seed: int = 0,
    chain: int = 0,
    tries: int = 100,
    free_tail: int = 0,
    max_steps: int = NO_STEP_LIMIT,
    quiet: bool | None = True,
    init: str = "qs4",
    give_up: bool = False,
) -> LargeResult:
    """Solve one board of size n in O(n) expected time; the result is verified.

    Args:
      n: board size (1 or >= 4; up to what memory allows).
      seed, chain: the chain's key is ``fold_in(key(seed), chain)``.
      tries: QS4 attempts per column; free_tail: last columns placed with one random swap.
      max_steps: swap attempts allowed in all; then QueensError (raise it or change the seed),
        or with ``give_up`` an unsolved result (``summary["solved"]`` False) whose ``rows`` is the
        board with the fewest attacking pairs (the repair never takes a worsening swap, so the
        last board) and ``summary["pairs"]`` its count.
      init: "qs4" (default) or "permutation" (:data:`INITS`).
      quiet: True: no progress line; None: a progress line on a terminal only.
    """
    n = as_size(n)
    if n < 1 or n in (2, 3):
        raise QueensError(
            f"n = {n} has no solution (N-Queens is solvable for n = 1 and every n >= 4)"
        )
    if n == 1:
        return LargeResult(
            np.zeros(1, np.int32),
            {"n": 1, "steps": 0, "verified": True},
            np.zeros(0, np.int32),
            np.zeros(0, np.int32),
        )
    if init not in INITS:
        raise QueensError(
            f"--init {init} is not available on the large-n path (O(n^2) or not a "
            f"permutation); use --init {' or --init '.join(INITS)}, or --mode batched"
        )
    seed = arguments.seed(seed, "--seed")
    chain = arguments.integer(chain, "chain", 0)
    tries = arguments.integer(tries, "tries", 1)
    free_tail = arguments.integer(free_tail, "free_tail", 0, n)
    max_steps = arguments.integer(max_steps, "--maxsteps", 1)
    check_memory(n)
    tries = INITS[init] or tries
    config = large.Config(n=n, tries=tries, free_tail=free_tail)
    chain_seed = chain_seeds(jax.random.key(seed), jnp.arange(chain, chain + 1))[0]

    t0 = time.perf_counter()
    probe = large.new_state(chain_seed, n)
    init_fn = large.init_columns.lower(probe, config, 0, 1).compile()
    round_fn = large.repair_round.lower(probe, config, 1, False).compile()
    del probe
    compile_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    restarts, trace, conflicted_rounds, steps, moves, rounds = 0, [], [], 0, 0, 0
    attempt_seed = chain_seed
    while True:
        s = _place_columns(init_fn, large.new_state(attempt_seed, n), n, quiet)
        if restarts == 0:
            init_s = time.perf_counter() - t0
            after_init = int(np.asarray(large.conflicted(s)).sum())
            pairs_after_init = int(large.pairs_of(s, config))
            t1 = time.perf_counter()
        best, stalled, pairs = None, 0, pairs_after_init if restarts == 0 else None
        while (
            pairs != 0
            and stalled < config.stall_rounds
            and steps < max_steps
            and rounds < MAX_ROUNDS
        ):
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
        if (steps >= max_steps or rounds >= MAX_ROUNDS) and give_up:
            break
        if steps >= max_steps or rounds >= MAX_ROUNDS:
            raise QueensError(
                f"n = {n}: no solution within {steps:,} swap attempts; "
                "raise the step limit or try another --seed"
            )
        restarts += 1  # stalled: a fresh QS4 board from the chain's next seed
        attempt_seed = jax.random.bits(
            jax.random.fold_in(jax.random.key(seed), 2**31 - 1 - restarts), (), jnp.uint32
        )
    search_s = time.perf_counter() - t1
    rows = np.asarray(s.rows)
    del s
    t2 = time.perf_counter()
    solved = pairs == 0
    if solved:
        checker.require_solutions(rows[None], what="large-n min-conflicts", n=n)
    else:
        pairs = int(checker.attacking_pairs(rows))  # the independent count of what is reported
    verify_s = time.perf_counter() - t2
    summary = {
        "n": n,
        "mode": "large",
        "seed": seed,
        "chain": chain,
        "init": init,
        "tries": tries,
        "free_tail": free_tail,
        "max_steps": max_steps,
        "solved": bool(solved),
        "pairs": int(pairs),
        "compile_s": compile_s,
        "init_s": init_s,
        "search_s": search_s,
        "verify_s": verify_s,
        "total_s": init_s + search_s + verify_s,
        "conflicted_after_init": after_init,
        "pairs_after_init": pairs_after_init,
        "steps": steps,
        "moves": moves,
        "rounds": rounds,
        "restarts": restarts,
        "verified": bool(solved),
        "backend": jax.default_backend(),
    }
    return LargeResult(
        rows,
        summary,
        np.concatenate(trace) if trace else np.zeros(0, np.int32),
        np.asarray(conflicted_rounds, np.int32),
    )
