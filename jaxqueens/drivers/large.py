"""Driver of the large-n path: memory check, QS4 in column chunks with progress, repair rounds,
verification. Kernels in `large`; outputs in `large`;
the command line is `jaxqueens solve --mode large` (`solve`).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import functools
import time
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import arguments, checker
from jaxqueens.core.board import as_size
from jaxqueens.drivers.loop import RunControl, Tick, run_chunks
from jaxqueens.errors import QueensError
from jaxqueens.parallel import cache, memory
from jaxqueens.parallel import devices as backend
from jaxqueens.solvers import large

PEAK_BYTES_PER_QUEEN = 64
"""Planned peak: device state (20 B), scan temporaries, the host copy and the checker's arrays."""
INIT_CALL_COLUMNS = 250_000
"""QS4 runs in calls of this many columns, so progress shows on huge boards."""
MAX_ROUNDS = 100_000
NO_STEP_LIMIT = 1 << 30  # `max_steps` of a run without a step limit (swap attempts in all)
INITS = {"qs4": None, "permutation": 1}
"""Initial boards of the large path: QS4 (`tries` swaps per column) or a uniform random
permutation (one random swap per column, Fisher-Yates); the batched path's other initialisations
are O(n^2) (greedy) or not permutations (random), which the swap repair needs."""


@dataclasses.dataclass
class LargeResult:
    """One large-n chain."""

    rows: np.ndarray  #: [n] verified solution; unsolved (step limit): the board with fewest pairs
    summary: dict  #: the run's figures (settings, solved, pairs, timings, steps).
    trace_pairs: np.ndarray  #: attacking pairs after each recorded swap attempt
    round_conflicted: np.ndarray  #: conflicted queens at the start of each repair round


def check_memory(n: int, available: int | None = None) -> None:
    """Refuse, before allocating anything, an n whose chain cannot fit in the `available` bytes
    (default: `memory.available_memory()`; unknown: no check), with a QueensError naming n, the
    bytes needed and available, and the fix."""
    memory.check_memory(
        n * PEAK_BYTES_PER_QUEEN,
        f"n = {n:,} (one large-n chain)",
        "use a smaller n",
        available=available,
    )


def _place_columns(place_fn, s: large.State, n: int, control: RunControl) -> large.State:
    """QS4 over all columns, `INIT_CALL_COLUMNS` per call of `place_fn`
    (`place`), with a progress line; Ctrl-C takes effect between
    calls."""
    state, placed = s, 0  # the state and the columns placed in it so far

    def chunk() -> Tick:
        nonlocal state, placed
        stop = min(n, placed + INIT_CALL_COLUMNS)
        state = place_fn(state, placed, stop)
        if not control.quiet:
            jax.block_until_ready(state.rows)
        placed = stop
        return Tick(stop, finished=stop >= n)

    if run_chunks(chunk, total=n, unit="columns placed", control=control):
        raise KeyboardInterrupt
    jax.block_until_ready(state.rows)
    return state


@functools.partial(jax.jit, static_argnums=(2,))
def _empty(seed, chain, config: large.Config, params: large.Params) -> large.State:
    """The chain's QS4 start, keyed `fold_in(key(seed), chain)` inside the executable (done
    eagerly, the two key operations would compile at every start)."""
    return large.empty(jax.random.fold_in(jax.random.key(seed), chain), config, params)


_place = jax.jit(large.place, static_argnums=(1,), donate_argnums=(0,))
_renew = jax.jit(large.renew, static_argnums=(1,), donate_argnums=(0,))


@functools.partial(jax.jit, static_argnums=(1,), donate_argnums=(0,))
def _ready(s: large.State, config: large.Config, params: large.Params):
    """The placed board opened for repair, and its conflicted queens (in the same call: counted
    outside it, each array operation would be compiled and dispatched on its own)."""
    s = large.ready(s, config, params)
    return s, jnp.sum(large.conflicted(s), dtype=jnp.int32)


@functools.partial(jax.jit, static_argnums=(1,), donate_argnums=(0,))
def _repair(s: large.State, config: large.Config, params: large.Params):
    """One repair round, and whether the chain is then done or due for a restart."""
    s = large.repair(s, config, params)
    return s, large.done(s, config, params), large.retry(s, config, params)


class _Kernels:
    """The large kernel's public functions for one (config, params), jitted with the state
    donated from call to call (one copy of the board on the device); all but `renew` are
    compiled ahead, so that compilation is timed apart.

    `ready` and `repair` load (or compile) in a background thread while QS4 places the board
    on one core, instead of before it. The time the chain
    then waits for them is `waited`, which the driver counts as compilation."""

    def __init__(self, config: large.Config, params: large.Params):
        one = np.int32(0)  # NumPy scalars throughout: no eager XLA operation before the search
        self.config, self.params = config, params
        self.waited = 0.0  # seconds spent waiting for the background loads

        def load(name, fn, *args, lead=1):  # loaded without tracing, once per process
            return cache.loaded(
                f"large-{name}",
                (config,),
                args,
                lambda: fn.lower(*args[:lead], config, *args[lead:]),
            )

        self.empty = load("empty", _empty, np.uint32(0), one, params, lead=2)
        shape = self.empty.out_info
        pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="jaxqueens-load")
        self._later = pool.submit(
            lambda: (load("ready", _ready, shape, params), load("repair", _repair, shape, params))
        )
        pool.shutdown(wait=False)
        self.place = load("place", _place, shape, params, one, one)

    def _loaded(self):
        """(ready, repair), once the background thread has them (its error raised here)."""
        if not self._later.done():
            t0 = time.perf_counter()
            concurrent.futures.wait([self._later])
            self.waited += time.perf_counter() - t0
        return self._later.result()

    def ready(self, s: large.State, params: large.Params):
        return self._loaded()[0](s, params)

    def repair(self, s: large.State, params: large.Params):
        return self._loaded()[1](s, params)

    def board(self, s: large.State, control: RunControl) -> tuple[large.State, jax.Array]:
        """QS4 of a fresh start (from `empty` or
        `renew`), opened for repair, with progress; and its
        conflicted queens."""
        p = self.params
        s = _place_columns(
            lambda s, a, b: self.place(s, p, np.int32(a), np.int32(b)), s, self.config.n, control
        )
        return self.ready(s, p)

    def renew(self, s: large.State) -> large.State:
        """The next attempt's start (compiled at the first restart: few chains need one)."""
        return _renew(s, self.config, self.params)


def solve_large(
    n: int,
    seed: int = 0,
    chain: int = 0,
    tries: int = 100,
    free_tail: int = 0,
    max_steps: int = NO_STEP_LIMIT,
    control: RunControl | None = None,
    init: str = "qs4",
    give_up: bool = False,
) -> LargeResult:
    """Solve one board of size n in O(n) expected time; the result is verified.

    The chain is the kernel [`run`][jaxqueens.solvers.large.run] keyed `fold_in(key(seed),
    chain)`, run in jitted pieces (QS4 over column ranges with a progress line, one call per
    repair round) with identical results.

    Args:
      n: board size (1 or >= 4; up to what memory allows).
      seed: the run's seed.
      chain: the chain's key is `fold_in(key(seed), chain)`.
      tries: QS4 attempts per column.
      free_tail: last columns placed with one random swap.
      max_steps: swap attempts allowed in all; then QueensError (raise it or change the seed),
        or with `give_up` an unsolved result (`summary["solved"]` False) whose `rows` is the
        board with the fewest attacking pairs (the repair never takes a worsening swap, so the
        last board) and `summary["pairs"]` its count. At most 2^31 - 1.
      init: "qs4" (default) or "permutation" (`INITS`).
      control: the progress line (None: `RunControl()`); the path keeps no checkpoint.
      give_up: return an unsolved result instead of raising when `max_steps` is spent.

    Returns:
      A `LargeResult`: the board (verified when solved) and its summary.

    Raises:
      QueensError: an argument out of range, n = 2 or 3 (no solution), or (without `give_up`)
        no solution within `max_steps` swap attempts.
    """
    n = as_size(n)
    if n < 1 or n in (2, 3):
        raise QueensError(
            f"n = {n} has no solution (N-Queens is solvable for n = 1 and every n >= 4)"
        )
    if n == 1:
        return LargeResult(
            np.zeros(1, np.int32),
            {"n": 1, "chain": chain, "solved": True, "steps": 0, "verified": True},
            np.zeros(0, np.int32),
            np.zeros(0, np.int32),
        )
    if init not in INITS:
        raise QueensError(
            f"--init {init} is not available on the large-n path (O(n^2) or not a "
            f"permutation); use --init {' or --init '.join(INITS)}, or --mode batched"
        )
    control = RunControl() if control is None else control
    if control.checkpoint is not None:
        raise QueensError("solve_large keeps no checkpoint; give a RunControl without one")
    seed = arguments.seed(seed, "seed")
    chain = arguments.integer(chain, "chain", 0)
    tries = arguments.integer(tries, "tries", 1, large.INT32_MAX)
    free_tail = arguments.integer(free_tail, "free_tail", 0, n)
    max_steps = arguments.integer(max_steps, "max_steps", None, None)
    if not 1 <= max_steps <= large.INT32_MAX:
        raise QueensError(
            f"--maxsteps must lie between 1 and {large.INT32_MAX:,} on the large-n path, "
            f"got {max_steps:,}"
        )
    check_memory(n)
    # On an accelerator this one chain runs on the host CPU: its loops are scalar steps that
    # XLA:CPU compiles in place, while the GPU executable copies the board and both count
    # arrays at every swap attempt (docs/gpu.md).
    host = jax.devices("cpu")[0] if backend.is_accelerator() else None
    with jax.default_device(host) if host is not None else contextlib.nullcontext():
        return _solve_large(n, seed, chain, tries, free_tail, max_steps, control, init, give_up)


def run_summary(results: Sequence[LargeResult]) -> dict:
    """The summary (`summary.json`) of a large-path run of one or more chains, from their results in
    chain order: the settings, how many chains ran and solved, their seconds and swap attempts in
    all, and each chain's own summary (`solve_large`) under `per_chain`."""
    per_chain = [r.summary for r in results]
    first = per_chain[0] if per_chain else {}
    keep = ("n", "mode", "seed", "init", "tries", "free_tail", "max_steps", "backend")
    return {
        **{k: first[k] for k in keep if k in first},
        "chains": len(per_chain),
        "solved": sum(bool(s.get("solved", True)) for s in per_chain),
        "steps": sum(int(s.get("steps", 0)) for s in per_chain),
        "total_s": sum(float(s.get("total_s", 0.0)) for s in per_chain),
        "verified": all(s.get("verified", False) for s in per_chain if s.get("solved", True)),
        "per_chain": per_chain,
    }


def _search(kernels: _Kernels, s, config: large.Config, params, control, finished: bool):
    """The repair rounds until the board is solved or the chain gives up (a stalled board starts
    again from a fresh QS4 board): (the last state, the trace of each round, the conflicted
    queens after each round)."""
    trace: list[np.ndarray] = []
    conflicted_rounds: list[int] = []
    stalled_out = False
    while not finished:
        if stalled_out:  # a fresh QS4 board from the chain's next seed
            s, _ = kernels.board(kernels.renew(s), control)
            finished = bool(large.done(s, config, params))
            stalled_out = bool(large.retry(s, config, params))
            continue
        s, finished, stalled_out = kernels.repair(s, params)
        conflicted, tr, finished, stalled_out = jax.device_get(
            (s.conflicted, s.trace, finished, stalled_out)
        )
        conflicted_rounds.append(int(conflicted))
        trace.append(tr[tr >= 0])
    return s, trace, conflicted_rounds


def _solve_large(n, seed, chain, tries, free_tail, max_steps, control, init, give_up):
    """`solve_large` once its arguments are checked, on the default device."""
    tries = INITS[init] or tries
    config = large.Config(n=n)
    params = large.default_params(
        config, tries=tries, free_tail=free_tail, max_steps=max_steps, max_rounds=MAX_ROUNDS
    )

    t0 = time.perf_counter()
    kernels = _Kernels(config, params)
    compile_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    start = kernels.empty(np.uint32(seed), np.int32(chain), params)
    s, conflicted_after_init = kernels.board(start, control)
    after_init = int(conflicted_after_init)
    init_s = time.perf_counter() - t0 - kernels.waited
    pairs_after_init = int(s.pairs)
    waited, t1 = kernels.waited, time.perf_counter()
    s, trace, conflicted_rounds = _search(
        kernels, s, config, params, control, pairs_after_init == 0
    )
    search_s = time.perf_counter() - t1 - (kernels.waited - waited)
    compile_s += kernels.waited
    pairs, steps, moves, rounds, restarts = (
        int(x) for x in jax.device_get((s.pairs, s.steps, s.moves, s.rounds, s.restarts))
    )
    rows = np.asarray(s.rows)
    del s
    solved = pairs == 0
    if not solved and not give_up:
        raise QueensError(
            f"n = {n}: no solution within {steps:,} swap attempts; "
            "raise the step limit or try another --seed"
        )
    t2 = time.perf_counter()
    if solved:
        checker.require_solutions(rows[None], what="large-n min-conflicts", n=n)
    reported = 0 if solved else int(checker.attacking_pairs(rows))  # the independent count
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
        "pairs": reported,
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
