"""`jaxqueens.solve`: batched min-conflicts, the main job.

Thousands of independent min-conflicts chains (Minton et al. 1992; kernel in
`jaxqueens.solvers.minconflicts`) run per call, batched by `jaxqueens.parallel.chains`; the
chunked driver (`jaxqueens.drivers.chains`) gathers verified solutions and statistics until a
budget is met. Every kernel call of `solve` is bounded in work (`BoundedRunner`), so `--time`
and Ctrl-C, checked between calls, hold even when chains restart a million times. On
constrained boards every solution is checked against the same instance, and an instance no
chain solves is reported `unknown`, never UNSAT.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import arguments, checker, rng
from jaxqueens.core import constraints as cons
from jaxqueens.core.board import as_board, as_size
from jaxqueens.drivers import chains as driver
from jaxqueens.drivers import settings
from jaxqueens.errors import QueensError
from jaxqueens.parallel import chains as chain_batch
from jaxqueens.parallel import devices as backend
from jaxqueens.parallel import sizing
from jaxqueens.parallel.devices import local_device_count
from jaxqueens.solvers import constrained as rules
from jaxqueens.solvers import minconflicts
from jaxqueens.solvers.base import chain_keys
from jaxqueens.solvers.variants import INITS, MAX_BATCHED_N, MOVES, default_max_steps, solver_name

CALL_SECONDS = 0.5
"""Target duration of one bounded kernel call (`BoundedRunner`)."""
FIRST_CALL_STEPS = 1 << 25
"""Steps, over all chains of a chunk, that bound a chunk's first call before the bound adapts to
the measured speed: each chain gets `FIRST_CALL_STEPS // (chunk * (max_steps + n))` attempts."""


@dataclasses.dataclass
class SolveResult:
    """What `solve` returns: per-chain arrays, the summary and an optional trace.

    Attributes:
      run: the chains' per-chain arrays and verified solutions (`ChainRun`).
      summary: the run's figures (what `summary.json` holds).
      config: the kernel's `Config` (None for a trivial board, solved without the kernel).
      trace: "conflicted", "pairs": [T] per step of chain 0
    """

    run: driver.ChainRun
    summary: dict
    config: minconflicts.Config | None
    trace: dict[str, np.ndarray] | None = None  # "conflicted", "pairs": [T] per step of chain 0

    @property
    def solutions(self) -> np.ndarray:
        """[S, n] verified solutions, one per solved chain, in chain order."""
        return self.run.solutions


def check_n(n: int) -> None:
    """Reject sizes without solutions or beyond the batched kernel, with the fix."""
    if n < 1:
        raise QueensError(f"n must be a positive integer, got {n}")
    settings.check_solvable(n)
    if n > MAX_BATCHED_N:
        raise QueensError(
            f"n = {n} is above the batched solver's limit of {MAX_BATCHED_N}; "
            "use --mode large (one or a few chains) or a smaller n"
        )


def default_chunk(n: int, chains: int | None, max_steps: int | None = None) -> int:
    """Chains per kernel call: about 2^21 queens, and at most `devices * settings.CALL_WORK`
    queen-steps for one attempt of each (`max_steps`, default
    `default_max_steps`), split evenly over the chains asked for.
    On an accelerator: enough to fill the device
    (`accelerator_chunk`)."""
    devices = local_device_count()
    if backend.is_accelerator():  # enough chains to fill the device, results within its memory
        return chain_batch.accelerator_chunk(chains, n, sizing.device_target(), devices)
    steps = default_max_steps(n) if max_steps is None else max_steps
    cap = max(devices, min(8192, (1 << 21) // n, devices * settings.CALL_WORK // (steps * n)))
    if chains is not None:
        calls = -(-chains // cap)
        cap = -(-chains // calls)
    return -(-cap // devices) * devices


def _problem(start, mask=None) -> minconflicts.Problem | None:
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
    """Compile the batched solver for `chunk` chains ahead of time; return `run(offset, count)`.

    Chain i uses `fold_in(key, i)`; `start` (a board [n]) is every chain's first board. The
    driver times compilation apart from the run and calls `run` once per chunk. `total`: the
    chains the run asks for, when known (their short last chunk is compiled here too; another
    `count` compiles that size on first use). `bounded`: a
    `BoundedRunner` (each call bounded in work; the same results). `mask`: the
    instance of a constrained config.
    """
    chains = chain_batch.Chains(minconflicts, config)
    run = chain_batch.compile_runner(chains, key, chunk, params, _problem(start, mask), total=total)
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
        self._last: tuple[tuple[int, int], driver.ChunkResult] | None = None  # the last call

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

    def __call__(self, offset: int, count: int) -> driver.ChunkResult:
        prev = (
            self._last[1] if self._last is not None and self._last[0] == (offset, count) else None
        )
        t0 = time.perf_counter()
        out = jax.device_get(self.run(offset, count, self._resume(prev)))
        dt = time.perf_counter() - t0
        paused = ~out.solved & (out.restarts < self.max_restarts)  # minconflicts.paused
        res = driver.ChunkResult.of(out, paused=paused)
        if prev is not None:  # the chains that were not paused keep their results
            assert prev.paused is not None  # this runner sets it for every chain
            if prev.best is not None and res.best is not None:
                # a continued chain reports its best board over every call, not only this one
                older = prev.paused & ~res.solved & (prev.best <= res.best)  # ties: the first
                res = res._replace(
                    rows=np.where(older[:, None], prev.rows, res.rows),
                    best=np.where(older, prev.best, res.best),
                )
            res = prev.where(~prev.paused, res)
        assert res.paused is not None  # set above, for every chain of the call
        if res.paused.any() or dt > 2 * CALL_SECONDS:
            scale = min(4.0, max(0.25, CALL_SECONDS / max(dt, 1e-3)))
            self.cap = int(min(self.max_restarts, max(0, int(scale * (self.cap + 1)) - 1)))
        self._last = ((offset, count), res)
        return res


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
    """Per-step conflicted queens and attacking pairs of chain 0's first attempt, as host arrays,
    cut after the step at which it solved (or after `num_steps` steps)."""
    chain0 = chain_keys(key, jnp.arange(1))[0]
    _, metrics = _trace(config, num_steps)(chain0, params, _problem(start, mask))
    conflicted, pairs = np.asarray(metrics.conflicted), np.asarray(metrics.pairs)
    done = np.flatnonzero(conflicted == 0)
    end = int(done[0]) + 1 if done.size else num_steps
    return minconflicts.Metrics(conflicted[:end], pairs[:end])


def _start_rows(start, n: int) -> np.ndarray | None:
    if start is None:
        return None
    return as_board(np.asarray(start).reshape(-1), n, what="the start board")


INSTANCE_MAX_RESTARTS = settings.INSTANCE_MAX_RESTARTS
"""Default restarts per chain on a constrained instance (which may have no solution at all)."""
INSTANCE_CHAINS = settings.INSTANCE_CHAINS
"""Chains run at most on a constrained instance when neither `chains`, `max_chains` nor
`seconds` bounds the run."""


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
    quiet: bool | None = True,
    checkpoint: str | Path | None = None,
    resume: bool = False,
    checkpoint_every: float = settings.CHECKPOINT_EVERY,
    command: str = "solve",
    instance=None,
    toroidal: bool = False,
) -> SolveResult:
    """Run min-conflicts chains until `chains` solved, `solutions` distinct, or `seconds`.

    Args:
      n: board size (1 or >= 4).
      chains: stop once this many chains have solved (None: no chain budget).
      max_chains: stop once this many chains have run, solved or not (with a finite
        `max_restarts`, a bounded job).
      solutions: stop once this many distinct solutions are found.
      seconds: stop once this much kernel time is spent (checked between kernel calls, each
        bounded to about `CALL_SECONDS` of work; chains still running then are reported
        unsolved and counted in `summary["unfinished"]`).
      max_steps: steps per attempt before a restart from a fresh board, every attempt alike
        (default `default_max_steps`: the tuned restart period
        `min(n^2 // 2, max(500, 2 n))` on a plain board, `max(4000, 2 n)` on a toroidal or
        constrained one).
      init: initial boards: "random", "permutation", "greedy" or "qs4".
      tabu: plateau memory: squares a queen may not revisit during one local minimum (0: off).
      move: "minconflicts" or "cisc352" (the staged row choice).
      seed: chain i uses `fold_in(key(seed), i)`: results do not depend on `batch`.
      batch: chains per kernel call (default: sized from n and `chains`).
      start: a board [n]; every chain's first attempt starts from it.
      max_restarts: restarts before a chain gives up (reported unsolved, with its board of
        fewest attacking pairs; 0: one attempt of `max_steps`, the CP468 give-up mode);
        default 1,000,000, or `INSTANCE_MAX_RESTARTS` with an `instance`.
      trace_steps: if > 0, also trace chain 0 for up to this many steps (for plots).
      quiet: True: no progress line; None: a progress line on a terminal only.
      checkpoint: file for checkpoints of finished chunks (every `checkpoint_every` seconds
        and on Ctrl-C); `resume` continues from it, with the same results as a run that was
        never interrupted.
      command: the command recorded in a checkpoint: a checkpoint resumes only under the command
        that wrote it (`jaxqueens stats` runs these chains too).
      instance: a [`Constraints`][jaxqueens.core.constraints.Constraints] (n: None or its size):
          fixed
        queens never move, forbidden squares are never used; `summary["status"]` is SAT or
        unknown (a plainly unsatisfiable instance raises `InstanceUnsat`
        with the reason before any chain runs). Init random or permutation only, no start
        board. The run is bounded: at most `chains` (else `INSTANCE_CHAINS`) chains run
        unless `max_chains` or `seconds` is given.
      toroidal: queens attack along diagonals modulo n (solutions exist iff n is prime to 6).

    Returns:
      SolveResult with every chain's board, steps, restarts, and the summary.

    Raises:
      QueensError: an argument out of range, naming it; `InstanceUnsat` for a plainly
        unsatisfiable instance.
    """
    c = _checked(
        n,
        chains,
        solutions,
        seconds,
        max_steps,
        init,
        tabu,
        seed,
        batch,
        start,
        max_restarts,
        move,
        trace_steps,
        max_chains,
        instance,
        toroidal,
    )
    n, model, mask, max_steps, max_restarts = c.n, c.model, c.mask, c.max_steps, c.max_restarts
    if n == 1 and mask is None:
        return _solve_trivial(c.budget, c.seed, c.name, model)
    config, params = _kernel_setup(n, init, c.tabu, move, model, mask, max_steps, max_restarts)
    key = rng.seed_key(c.seed)
    chunk = c.batch or default_chunk(
        n, chains if solutions is None and seconds is None else None, max_steps
    )
    t0 = time.perf_counter()
    runner = compile_runner(key, config, params, chunk, c.start_rows, bounded=True, mask=mask)
    compile_s = time.perf_counter() - t0
    run = driver.run_chains(
        runner,
        n,
        c.budget,
        chunk,
        what="min-conflicts",
        compile_s=compile_s,
        quiet=quiet,
        checkpoint=None if checkpoint is None else Path(checkpoint),
        fingerprint=_fingerprint(command, c, model),
        resume=resume,
        checkpoint_every=checkpoint_every,
        limits=f"at most {max_restarts + 1:,} attempts x {max_steps:,} steps a chain",
        model=model,
        solver=c.name,
    )
    trace = None
    if c.trace_steps > 0:
        metrics = trace_chain(key, config, params, c.trace_steps, c.start_rows, mask)
        trace = {"conflicted": np.asarray(metrics.conflicted), "pairs": np.asarray(metrics.pairs)}
    summary = _summary(run, c, chunk, model)
    return SolveResult(run=run, summary=summary, config=config, trace=trace)


class _Checked(NamedTuple):
    """`solve`'s arguments, checked, with the defaults that depend on the problem filled in."""

    n: int
    model: cons.Constraints | None  # the constrained instance (None: a plain board)
    mask: rules.Mask | None  # its allowed squares
    budget: driver.Budget
    seed: int
    batch: int | None
    max_steps: int
    max_restarts: int
    init: str
    tabu: int
    move: str
    trace_steps: int
    start_rows: np.ndarray | None  # [n] the start board
    name: str  # the solver's name in the outputs


def _checked(
    n: int | None,
    chains: int | None,
    solutions: int | None,
    seconds: float | None,
    max_steps: int | None,
    init: str,
    tabu: int,
    seed: int,
    batch: int | None,
    start,
    max_restarts: int | None,
    move: str,
    trace_steps: int,
    max_chains: int | None,
    instance,
    toroidal: bool,
) -> _Checked:
    """`solve`'s arguments checked in the order its errors are raised, defaults filled in."""
    model, mask, n = _problem_setup(n, instance, toroidal, start)
    if max_restarts is None:
        max_restarts = (
            settings.SOLVE_DEFAULTS["max_restarts"] if instance is None else INSTANCE_MAX_RESTARTS
        )
    if instance is not None and max_chains is None and seconds is None:
        max_chains = chains or INSTANCE_CHAINS  # it may have no solution: a bounded job
    if mask is not None and start is not None:
        raise QueensError(
            "a constrained instance sets every chain's start itself; drop the start board (--file)"
        )
    budget = driver.Budget(
        chains=chains, solutions=solutions, seconds=seconds, max_chains=max_chains
    )
    budget.check(n)
    if max_steps is None:
        max_steps = default_max_steps(n, plain=model is None)
    seed = arguments.seed(seed, "seed")
    batch = arguments.integer(batch, "batch", 1, optional=True)
    max_steps = arguments.integer(max_steps, "max_steps", 1)
    tabu = arguments.integer(tabu, "tabu", 0)
    max_restarts = arguments.integer(max_restarts, "max_restarts", 0)
    trace_steps = arguments.integer(trace_steps, "trace_steps", 0)
    arguments.choice(init, "init", INITS)
    arguments.choice(move, "move", MOVES)
    return _Checked(
        n=n,
        model=model,
        mask=mask,
        budget=budget,
        seed=seed,
        batch=batch,
        max_steps=max_steps,
        max_restarts=max_restarts,
        init=init,
        tabu=tabu,
        move=move,
        trace_steps=trace_steps,
        start_rows=_start_rows(start, n),
        name=solver_name("minconflicts", init=init, tabu=tabu, move=move),
    )


def _problem_setup(
    n: int | None, instance, toroidal: bool, start
) -> tuple[cons.Constraints | None, rules.Mask | None, int]:
    """`solve`'s instance model, its mask and the board size, checked (start board included)."""
    if isinstance(instance, cons.Constraints):
        settings.check_instance_n(instance.n)  # before its n x n masks are built
    model, mask = driver.instance_setup(None if n is None else as_size(n), instance, toroidal)
    n = as_size(n if model is None else model.n)
    check_n(n)
    if model is not None and model.toroidal and model.plain and math.gcd(n, 6) != 1:
        raise QueensError(
            f"n = {n} has no toroidal solution (toroidal queens exist only for n prime "
            "to 6: 1, 5, 7, 11, 13, ...; OEIS A051906); choose such an n"
        )
    return model, mask, n


def _kernel_setup(
    n: int,
    init: str,
    tabu: int,
    move: str,
    model: cons.Constraints | None,
    mask: rules.Mask | None,
    max_steps: int,
    max_restarts: int,
) -> tuple[minconflicts.Config, minconflicts.Params]:
    """The kernel's static `Config` and its `Params` for `solve`'s checked settings."""
    try:
        config = minconflicts.Config(
            n=n,
            init=init,
            tabu=tabu,
            move=move,
            keep_best=True,
            toroidal=model is not None and model.toroidal,
            constrained=mask is not None,
        )
        params = minconflicts.default_params(config, max_steps=max_steps, max_restarts=max_restarts)
    except ValueError as err:
        raise QueensError(str(err)) from None
    return config, params


def _fingerprint(command: str, c: _Checked, model: cons.Constraints | None) -> dict:
    """The settings a checkpoint of `solve` must match to be resumed."""
    fingerprint = {
        "command": command,
        "solver": "min-conflicts",
        "init": c.init,
        "tabu": c.tabu,
        "max_steps": c.max_steps,
        "seed": c.seed,
        "max_restarts": c.max_restarts,
        "move": c.move,
        "start": None if c.start_rows is None else c.start_rows.tolist(),
    }
    if model is not None:  # the default run's fingerprint is unchanged (old checkpoints resume)
        fingerprint["instance"] = model.to_dict()
    return fingerprint


def _summary(run: driver.ChainRun, c: _Checked, chunk: int, model: cons.Constraints | None) -> dict:
    """`solve`'s summary: the run's figures and its settings (the instance's status with one)."""
    summary = driver.summarize(
        run,
        solver=c.name,
        init=c.init,
        tabu=c.tabu,
        max_steps=c.max_steps,
        max_restarts=c.max_restarts,
        move=c.move,
        seed=c.seed,
        chunk=chunk,
        backend=jax.default_backend(),
        devices=local_device_count(),
    )
    if model is not None:
        summary.update(instance=model.to_dict(), status="SAT" if run.solved.any() else "unknown")
    return summary


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
    """Chain 0's first board of `solve` with these settings, generated on its own: (rows
    [n], attacking pairs by the independent checker, generation seconds, compile seconds). The
    batched kernel generates boards inside its loop; this times one board's generation apart."""
    n = as_size(n)
    check_n(n)
    config = minconflicts.Config(n=n, init=init, tabu=tabu, move=move, keep_best=True)
    params = minconflicts.default_params(config, max_steps=max_steps, max_restarts=max_restarts)
    chain0 = chain_keys(jax.random.key(seed), jnp.arange(1))[0]
    problem = _problem(_start_rows(start, n))
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


def _solve_trivial(budget: driver.Budget, seed: int, name: str, model=None) -> SolveResult:
    """n = 1: the one queen is a solution; every chain solves in 0 steps."""
    count = budget.chains or budget.max_chains or 1

    def run_chunk(offset, k):
        return driver.ChunkResult(
            rows=np.zeros((k, 1), np.int32),
            solved=np.ones(k, bool),
            steps=np.zeros(k, np.int32),
            restarts=np.zeros(k, np.int32),
        )

    run = driver.run_chains(
        run_chunk, 1, budget, count, what="min-conflicts", model=model, solver=name
    )
    summary = driver.summarize(run, solver=name, seed=seed)
    if model is not None:
        summary.update(instance=model.to_dict(), status="SAT")
    return SolveResult(run=run, summary=summary, config=None)
