"""`jaxqueens.solve`: batched min-conflicts chains (Minton et al. 1992), the main job.

Thousands of independent chains (kernel: `jaxqueens.solvers.minconflicts`) run per call; the
shared chain driver (`jaxqueens.drivers.chains`) gathers verified solutions and statistics until
a budget is met. Every kernel call is bounded in work (`BoundedRunner`), so `--time` and Ctrl-C,
checked between calls, hold even when chains restart a million times; a paused chain continues
in the next call, so results never depend on the bound. On constrained boards an instance no
chain solves is reported `unknown`, never UNSAT.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import checker, rng
from jaxqueens.core import constraints as cons
from jaxqueens.core.board import as_board, as_size
from jaxqueens.drivers import chains as driver
from jaxqueens.drivers import chains_types, solve_setup
from jaxqueens.drivers.loop import RunControl
from jaxqueens.errors import QueensError
from jaxqueens.parallel import chains as chain_batch
from jaxqueens.parallel import devices as backend
from jaxqueens.parallel import sizing
from jaxqueens.parallel.devices import local_device_count
from jaxqueens.solvers import constrained as rules
from jaxqueens.solvers import minconflicts
from jaxqueens.solvers.base import chain_keys
from jaxqueens.solvers.variants import MAX_BATCHED_N, default_max_steps


@dataclasses.dataclass
class SolveResult:
    """What `solve` returns: per-chain arrays, the summary and an optional trace."""

    run: chains_types.ChainRun  #: the chains' per-chain arrays and verified solutions (`ChainRun`).
    summary: dict  #: the run's figures (what `summary.json` holds).
    #: the kernel's `Config` (None for a trivial board, solved without the kernel).
    config: minconflicts.Config | None
    trace: dict[str, np.ndarray] | None = None  #: "conflicted", "pairs": [T] per step of chain 0

    @property
    def solutions(self) -> np.ndarray:
        """[S, n] verified solutions, one per solved chain, in chain order."""
        return self.run.solutions


def check_n(n: int) -> None:
    """Reject board sizes without solutions or beyond the batched kernel, with the fix."""
    if n < 1:
        raise QueensError(f"n must be a positive integer, got {n}")
    solve_setup.check_solvable(n)
    if n > MAX_BATCHED_N:
        raise QueensError(
            f"n = {n} is above the batched solver's limit of {MAX_BATCHED_N}; "
            "use --mode large (one or a few chains) or a smaller n"
        )


def _start_rows(start, n: int) -> np.ndarray | None:
    if start is None:
        return None
    return as_board(np.asarray(start).reshape(-1), n, what="the start board")


INSTANCE_MAX_RESTARTS = solve_setup.INSTANCE_MAX_RESTARTS  # (read by scripts/gpumodel)


def solve(
    n: int | None = 8,
    chains: int | None = 1000,
    *,
    solutions: int | None = None,
    seconds: float | None = None,
    max_steps: int | None = None,
    init: str = "permutation",
    tabu: int = 0,
    seed: int = 0,
    batch: int | None = None,
    start=None,
    max_restarts: int | None = None,
    move: str = "minconflicts",
    trace_steps: int = 0,
    max_chains: int | None = None,
    control: RunControl | None = None,
    command: str = "solve",
    instance=None,
    toroidal: bool = False,
) -> SolveResult:
    """Run min-conflicts chains until `chains` solved, `solutions` distinct, or `seconds`.

    Args:
      n: board size (1 or >= 4).
      chains: stop once this many chains have solved (None: no chain budget).
      solutions: stop once this many distinct solutions are found.
      seconds: stop once this much kernel time is spent (checked between kernel calls, each
        bounded to about `CALL_SECONDS` of work; chains still running are
        reported unsolved).
      max_steps: steps per attempt before a restart (default `default_max_steps`).
      init: initial boards: "random", "permutation", "greedy" or "qs4".
      tabu: plateau memory: squares a queen may not revisit during one local minimum (0: off).
      seed: chain i uses `fold_in(key(seed), i)`: results do not depend on `batch`.
      batch: chains per kernel call (default: sized from n and `chains`).
      start: a board [n]; every chain's first attempt starts from it.
      max_restarts: restarts before a chain gives up, reported unsolved with its best board
        (0: one attempt; default 1,000,000, or 99 with an `instance`).
      move: "minconflicts" or "cisc352" (the staged row choice).
      trace_steps: if > 0, also trace chain 0 for up to this many steps (for plots).
      max_chains: stop once this many chains have run, solved or not.
      control: progress and checkpoints (None: `RunControl()`): the checkpoint holds the
        finished chunks (written periodically and on Ctrl-C); a resumed run continues from it,
        with the same results.
      command: the command recorded in a checkpoint (it resumes only under that command).
      instance: a `Constraints` (n: None or its size); summary["status"] is SAT or unknown.
        Init random or permutation only, no start board; at most `chains` (else
        100) chains run unless `max_chains` or `seconds` is given.
      toroidal: queens attack along diagonals modulo n (n prime to 6).

    Returns:
      SolveResult with every chain's board, steps, restarts, and the summary.

    Raises:
      QueensError: an argument out of range, naming it; `InstanceUnsat` for a plainly
        unsatisfiable instance.
    """
    p = problem(n, chains, solutions, seconds, max_chains, start, instance, toroidal)
    search = {"max_steps": max_steps, "init": init, "tabu": tabu, "seed": seed, "batch": batch}
    search.update(max_restarts=max_restarts, move=move, trace_steps=trace_steps)
    s = solve_setup.solve_settings(
        p.n, plain=p.model is None, instance=instance is not None, **search
    )
    return run(p, s, control, command)


def run(
    p: Problem, s: solve_setup.SolveSettings, control: RunControl | None = None, command="solve"
) -> SolveResult:
    """`solve` of a problem and settings checked where they entered (`problem`,
    `solve_setup.solve_settings`; `jaxqueens solve` checks its settings before JAX loads): the
    kernel compiled, its chains run to the budget and chain 0 traced if asked."""
    if p.n == 1 and p.mask is None:
        return _solve_trivial(p, s, control)
    try:
        config = minconflicts.Config(
            n=p.n,
            init=s.init,
            tabu=s.tabu,
            move=s.move,
            keep_best=True,
            toroidal=p.model is not None and p.model.toroidal,
            constrained=p.mask is not None,
        )
        params = minconflicts.default_params(
            config, max_steps=s.max_steps, max_restarts=s.max_restarts
        )
    except ValueError as err:
        raise QueensError(str(err)) from None
    key = rng.seed_key(s.seed)
    b = p.budget
    sized = b.chains if b.solutions is None and b.seconds is None else None
    chunk = s.batch or default_chunk(p.n, sized, s.max_steps)
    t0 = time.perf_counter()
    runner = compile_runner(key, config, params, chunk, p.start_rows, bounded=True, mask=p.mask)
    compile_s = time.perf_counter() - t0
    start = None if p.start_rows is None else p.start_rows.tolist()
    run = driver.run_chains(
        runner,
        p.n,
        b,
        chunk,
        what="min-conflicts",
        compile_s=compile_s,
        control=control,
        # the settings a checkpoint must match to be resumed
        fingerprint={"command": command, "solver": "min-conflicts", **s.search(), "start": start},
        limits=f"at most {s.max_restarts + 1:,} attempts x {s.max_steps:,} steps a chain",
        model=p.model,
        solver=s.name,
    )
    trace = None
    if s.trace_steps > 0:
        metrics = trace_chain(key, config, params, s.trace_steps, p.start_rows, p.mask)
        trace = {"conflicted": np.asarray(metrics.conflicted), "pairs": np.asarray(metrics.pairs)}
    summary = chains_types.summarize(
        run,
        solver=s.name,
        **s.search(),
        chunk=chunk,
        backend=jax.default_backend(),
        devices=local_device_count(),
        model=p.model,
    )
    return SolveResult(run=run, summary=summary, config=config, trace=trace)


class Problem(NamedTuple):
    """`solve`'s problem, checked (`problem`): the board, the instance, the budget and the start."""

    n: int
    model: cons.Constraints | None  #: the constrained instance (None: a plain board)
    mask: rules.Mask | None  #: its allowed squares
    budget: chains_types.Budget
    start_rows: np.ndarray | None  #: [n] the start board


def problem(
    n: int | None,
    chains: int | None,
    solutions: int | None = None,
    seconds: float | None = None,
    max_chains: int | None = None,
    start=None,
    instance=None,
    toroidal: bool = False,
) -> Problem:
    """`solve`'s problem arguments (each as for `solve`) checked in the order its errors are
    raised, the instance's chain cap filled in."""
    if isinstance(instance, cons.Constraints):
        solve_setup.check_instance_n(instance.n)  # before its n x n masks are built
    model, mask = driver.instance_setup(None if n is None else as_size(n), instance, toroidal)
    n = as_size(n if model is None else model.n)
    check_n(n)
    if model is not None and model.toroidal and model.plain and math.gcd(n, 6) != 1:
        raise QueensError(
            f"n = {n} has no toroidal solution (toroidal queens exist only for n prime "
            "to 6: 1, 5, 7, 11, 13, ...; OEIS A051906); choose such an n"
        )
    if instance is not None and max_chains is None and seconds is None:
        max_chains = chains or solve_setup.INSTANCE_CHAINS  # it may have no solution
    if mask is not None and start is not None:
        raise QueensError(
            "a constrained instance sets every chain's start itself; drop the start board (--file)"
        )
    budget = chains_types.Budget(chains, solutions, seconds, max_chains)
    budget.check(n)
    return Problem(n, model, mask, budget, _start_rows(start, n))


def initial_board(
    n: int,
    *,
    init: str = "permutation",
    seed: int = 0,
    start=None,
    max_steps: int | None = None,
    tabu: int = 0,
    move: str = "minconflicts",
    max_restarts: int = 1_000_000,
) -> tuple[np.ndarray, int, float, float]:
    """Chain 0's first board of `solve` with these settings (each as for `solve`), generated and
    timed on its own (the batched kernel generates boards inside its loop): (rows [n], attacking
    pairs by the independent checker, generation seconds, compile seconds)."""
    n = as_size(n)
    check_n(n)
    config = minconflicts.Config(n=n, init=init, tabu=tabu, move=move, keep_best=True)
    params = minconflicts.default_params(config, max_steps=max_steps, max_restarts=max_restarts)
    chain0 = chain_keys(jax.random.key(seed), jnp.arange(1))[0]
    problem = chain_problem(_start_rows(start, n))
    t0 = time.perf_counter()
    fn = (
        jax.jit(lambda k, p, b: minconflicts.init(k, config, p, b).rows)
        .lower(chain0, params, problem)
        .compile()
    )
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    rows = np.asarray(fn(chain0, params, problem))
    gen_s = time.perf_counter() - t0
    return rows, int(checker.attacking_pairs(rows)), gen_s, compile_s


def _solve_trivial(p: Problem, s: solve_setup.SolveSettings, control) -> SolveResult:
    """n = 1: the one queen is a solution; every chain solves in 0 steps (no checkpoint)."""
    count = p.budget.chains or p.budget.max_chains or 1

    def run_chunk(offset, k):
        return chains_types.ChunkResult(
            rows=np.zeros((k, 1), np.int32),
            solved=np.ones(k, bool),
            steps=np.zeros(k, np.int32),
            restarts=np.zeros(k, np.int32),
        )

    quiet = RunControl(quiet=True if control is None else control.quiet)
    run = driver.run_chains(
        run_chunk, 1, p.budget, count, "min-conflicts", model=p.model, solver=s.name, control=quiet
    )
    summary = chains_types.summarize(run, p.model, solver=s.name, seed=s.seed)
    return SolveResult(run=run, summary=summary, config=None)


CALL_SECONDS = 0.5  # target duration of one bounded kernel call (`BoundedRunner`)
FIRST_CALL_STEPS = 1 << 25
"""Steps, over all chains of a chunk, that bound a chunk's first call before the bound adapts to
the measured speed: each chain gets `FIRST_CALL_STEPS // (chunk * (max_steps + n))` attempts."""


def default_chunk(n: int, chains: int | None, max_steps: int | None = None) -> int:
    """Chains per kernel call, a multiple of the local device count: about 2^21 queens and at most
    `devices * solve_setup.CALL_WORK` queen-steps for one attempt of each, split evenly over the
    `chains` asked for (None: unbounded); on an accelerator, enough to fill the device
    (`accelerator_chunk`). `max_steps` per attempt defaults to `default_max_steps`."""
    devices = local_device_count()
    if backend.is_accelerator():  # enough chains to fill the device, results within its memory
        return chain_batch.accelerator_chunk(chains, n, sizing.device_target(), devices)
    steps = default_max_steps(n) if max_steps is None else max_steps
    cap = max(devices, min(8192, (1 << 21) // n, devices * solve_setup.CALL_WORK // (steps * n)))
    if chains is not None:
        calls = -(-chains // cap)
        cap = -(-chains // calls)
    return -(-cap // devices) * devices


def chain_problem(start, mask=None) -> minconflicts.Problem | None:
    """The chains' shared kernel `Problem` of a start board [n] and/or an instance's `Mask` (None:
    neither given)."""
    start = None if start is None else jnp.asarray(start, jnp.int32)
    return None if start is None and mask is None else minconflicts.Problem(start, mask)


def compile_runner(
    key,
    config: minconflicts.Config,
    params: minconflicts.Params,
    chunk: int,
    start=None,
    bounded: bool = False,
    mask=None,
    total: int | None = None,
) -> Callable[[int, int], minconflicts.Result] | BoundedRunner:
    """Compile the batched solver for `chunk` chains ahead of time: `run(offset, count)`, which the
    driver calls once per chunk; chain i uses `fold_in(key, i)`.

    `start` is every chain's first board [n] (or None), `mask` the instance of a constrained config
    (or None). With `bounded` it returns a `BoundedRunner` (each call bounded in work; the same
    results). `total` is the chains the run asks for, when known: their short last chunk is compiled
    here too (another count compiles on first use)."""
    chains = chain_batch.Chains(minconflicts, config)
    run = chain_batch.compile_runner(
        chains, key, chunk, params, chain_problem(start, mask), total=total
    )
    return BoundedRunner(run, config, params, chunk) if bounded else run


class BoundedRunner:
    """`run(offset, count)` whose kernel calls are bounded in work, with the results of an
    unbounded run.

    Each chain may spend at most `cap + 1` attempts in one call; `cap` is a dynamic input
    (`Fresh`), so nothing recompiles when it changes.
    A chain that reaches it pauses (`ChunkResult.paused`); calling again with the same
    `(offset, count)` continues exactly the paused chains from their last attempt (the others
    are skipped), so chains, seeds and results never depend on `cap`. `cap` adapts to the
    measured call time (`CALL_SECONDS`).
    """

    def __init__(self, run, config: minconflicts.Config, params: minconflicts.Params, chunk: int):
        self.run, self.config = run, config
        self.max_restarts = int(params.max_restarts)
        first = FIRST_CALL_STEPS // (max(chunk, 1) * (int(params.max_steps) + config.n))
        self.cap = int(min(self.max_restarts, max(0, first - 1)))
        self._last: tuple[tuple[int, int], chains_types.ChunkResult] | None = None  # the last call

    def _resume(self, prev) -> minconflicts.Fresh | minconflicts.Resume:
        if prev is None:
            return minconflicts.fresh(until=self.cap)
        p = prev.paused
        until = np.minimum(prev.restarts.astype(np.int64) + 1 + self.cap, minconflicts.NO_PAUSE)
        return minconflicts.Resume(
            restarts=np.where(p, prev.restarts, -1).astype(np.int32),
            total_steps=np.where(p, prev.steps, 0).astype(np.int32),
            until=np.where(p, until, -1).astype(np.int32),
        )

    def __call__(self, offset: int, count: int) -> chains_types.ChunkResult:
        prev = (
            self._last[1] if self._last is not None and self._last[0] == (offset, count) else None
        )
        t0 = time.perf_counter()
        out = jax.device_get(self.run(offset, count, self._resume(prev)))
        dt = time.perf_counter() - t0
        paused = ~out.solved & (out.restarts < self.max_restarts)  # minconflicts.paused
        res = chains_types.ChunkResult.of(out, paused=paused)
        if prev is not None:  # the chains that were not paused keep their results
            assert prev.paused is not None  # this runner sets it for every chain
            keep = ~prev.paused
            older = keep
            if prev.best is not None and res.best is not None:
                # a continued chain reports its best board over every call, not only this one
                older = keep | (~res.solved & (prev.best <= res.best))  # ties: the first
            picked: dict[str, Any] = {
                f: _pick(older if f in ("rows", "best") else keep, prev, res, f)
                for f in res._fields
            }
            res = chains_types.ChunkResult(**picked)
        assert res.paused is not None  # set above, for every chain of the call
        if res.paused.any() or dt > 2 * CALL_SECONDS:
            scale = min(4.0, max(0.25, CALL_SECONDS / max(dt, 1e-3)))
            self.cap = int(min(self.max_restarts, max(0, int(scale * (self.cap + 1)) - 1)))
        self._last = ((offset, count), res)
        return res


def _pick(keep: np.ndarray, a, b, field: str) -> np.ndarray | None:
    """Per chain: `a`'s `field` where `keep` [count], else `b`'s (None where either lacks it)."""
    x, y = getattr(a, field), getattr(b, field)
    if x is None or y is None:
        return None
    return np.where(keep.reshape((-1,) + (1,) * (x.ndim - 1)), x, y)


@functools.lru_cache(maxsize=32)
def _trace(config: minconflicts.Config, num_steps: int):
    """`trace` jitted for `(config, num_steps)` (Params
    and the problem are arguments), one function per pair: a repeated trace reuses its compile."""
    return jax.jit(lambda k, p, b: minconflicts.trace(k, config, p, num_steps, b))


def trace_chain(
    key,
    config: minconflicts.Config,
    params: minconflicts.Params,
    num_steps: int,
    start=None,
    mask=None,
) -> minconflicts.Metrics:
    """Per-step conflicted queens and attacking pairs of chain 0's first attempt, at most
    `num_steps`: `Metrics` of host arrays, cut after the step at which the chain solved. `start` is
    every chain's first board [n] (or None), `mask` the instance of a constrained config (or
    None)."""
    chain0 = chain_keys(key, jnp.arange(1))[0]
    _, metrics = _trace(config, num_steps)(chain0, params, chain_problem(start, mask))
    conflicted, pairs = np.asarray(metrics.conflicted), np.asarray(metrics.pairs)
    done = np.flatnonzero(conflicted == 0)
    end = int(done[0]) + 1 if done.size else num_steps
    return minconflicts.Metrics(conflicted[:end], pairs[:end])
