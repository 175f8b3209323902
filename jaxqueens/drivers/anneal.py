"""`jaxqueens.anneal`: LS, TA and SA chains (the R package NMOF's LSopt, TAopt, SAopt).

Each method's schedule is calibrated on a random walk (`anneal_setup`) and its chains run through
the shared chain driver. A chain is deterministic given its key, so replaying it recovers its
best-so-far trace or, to the step of its best objective, its best board (`solvers.anneal.replay`)
at no cost to the run. The docs' anneal page describes the methods and schedules.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import checker
from jaxqueens.core import constraints as cons
from jaxqueens.core.board import as_board, as_size
from jaxqueens.drivers import anneal_setup as setup
from jaxqueens.drivers import chains as driver
from jaxqueens.drivers import chains_types
from jaxqueens.drivers import settings as tables
from jaxqueens.drivers.loop import RunControl
from jaxqueens.errors import QueensError
from jaxqueens.parallel import chains as chain_batch
from jaxqueens.parallel.devices import local_device_count
from jaxqueens.solvers import anneal as sls
from jaxqueens.solvers.base import chain_keys


@dataclasses.dataclass
class AnnealResult:
    """What `anneal` returns for one method, built once: the chains' host arrays, the replayed
    traces and best boards, and the summary, from which `jaxqueens anneal` prints its lines,
    writes its files (`jaxqueens.io.anneal.write`) and draws its traces."""

    run: chains_types.ChainRun  #: the chains' per-chain arrays and verified solutions (`ChainRun`).
    summary: dict  #: the run's figures (what `summary.json` holds).
    config: sls.Config  #: the kernel's `Config`.
    schedule: np.ndarray  #: [rounds] thresholds (LS, TA) or temperatures (SA)
    traces: np.ndarray | None = None  #: [k, T] best-so-far objective of chains 0..k-1
    trace_every: int = 1  #: steps between two trace points
    #: [U] int64 ids of the unsolved chains (best_boards=True)
    best_chains: np.ndarray | None = None
    best_boards: np.ndarray | None = None  #: [U, n] int32 the best board of each
    best_pairs: np.ndarray | None = None  #: [U] int64 its attacking pairs (independent checker)
    #: the constrained instance (toroidal included), if any
    instance: cons.Constraints | None = None

    @property
    def status(self) -> str:
        """ "SAT" when a chain solved the board (or instance), else "unknown" (never UNSAT)."""
        return "SAT" if self.run.solved.any() else "unknown"

    @property
    def solutions(self) -> np.ndarray:
        """[S, n] verified solutions, one per solved chain, in chain order."""
        return self.run.solutions


def settings(method: str, preset_name: str = "default", **given) -> dict:
    """The settings a run of `method` ("ls", "ta" or "sa") uses, by name (`LSSettings.values`):
    preset `preset_name`'s ("default", "classic" or "nmof"), each overridden by a value in `given`
    (None: not given); SA's `alpha` is derived from `t_end` when neither is given. An option the
    method or neighbour does not use is refused (`settings.anneal_settings`)."""
    return tables.anneal_settings(method, preset_name, **given).values()


def preset(name: str, method: str) -> dict:
    """Preset `name`'s settings for `method`: `settings(method, name)`."""
    return settings(method, name)


def anneal(
    n: int | None = 8,
    method: str = "ta",
    chains: int = 1000,
    steps: int = 10_000,
    *,
    rounds: int | None = None,
    neighbour: str | None = None,
    step: int | None = None,
    objective: str | None = None,
    edge: str | None = None,
    seed: int = 0,
    batch: int | None = None,
    q: float | None = None,
    init_prob: float | None = None,
    alpha: float | None = None,
    t0: str | float | None = None,
    walk: int = 2000,
    t_end: float | None = None,
    preset: str = "default",
    start=None,
    best_boards: bool = False,
    trace_chains: int = 0,
    control: RunControl | None = None,
    announce=None,
    instance: cons.Constraints | None = None,
    toroidal: bool = False,
) -> AnnealResult:
    """Run `chains` independent LS/TA/SA chains of `steps` steps each (stopping when solved).

    Args:
      n: board size (>= 4).
      method: "ls", "ta" or "sa".
      chains: chains to run; chain i is seeded from `fold_in(key, i)`.
      steps: step budget per chain, split into `rounds` thresholds/temperatures.
      rounds: thresholds/temperatures the `steps` are split into.
      neighbour: "step" (one queen by 1..step rows within its column, NMOF's) or "swap".
      step: the step neighbour's largest move (1..step rows).
      objective: "attacks" (NMOF) or "pairs".
      edge: the step neighbour past the edge: "wrap" (row mod n) or "nmof" (to the far end).
      seed: the run's seed.
      batch: chains per kernel call (default: automatic).
      q: TA's quantile of |delta| for the first threshold.
      init_prob: SA's start acceptance of worsening moves.
      alpha: SA's cooling factor per round.
      t0: SA's start temperature: "worsening", "nmof" or a number (`anneal_setup.calibrate`).
      walk: steps of the calibration walk.
      t_end: SA's last temperature relative to its first; give it or `alpha`, not both.
      preset: "default", "classic" or "nmof": the settings left None (`settings`).
      start: a board [n] every chain starts from (None: a random permutation per chain).
      best_boards: also recover the best board of every unsolved chain, with its pairs.
      trace_chains: also record the best-so-far trace of chains 0..k-1.
      control: progress and checkpoints, as for `jaxqueens.solve` (None: `RunControl()`).
      announce: called with a one-line message (the estimated run time) before the run.
      instance: a constrained instance (n: None or its size; step neighbour, no start).
      toroidal: queens attack along diagonals modulo n.

    Returns:
      The `AnnealResult`; every solution counted has passed the independent checker.

    Raises:
      QueensError: an argument out of range or an option the method does not use, naming it;
        `InstanceUnsat` for a plainly unsatisfiable instance.
    """
    given: dict[str, Any] = {"rounds": rounds, "neighbour": neighbour, "step": step}
    given.update(
        objective=objective, edge=edge, q=q, init_prob=init_prob, alpha=alpha, t_end=t_end, t0=t0
    )
    model, mask = driver.instance_setup(None if n is None else as_size(n), instance, toroidal)
    needs_step = mask is not None or tables.has_repeated_rows(start)
    st = tables.anneal_settings(method, preset, needs_step=needs_step, **given)
    _check_instance(mask, st.neighbour, start)
    n = as_size(n if model is None else model.n)
    numbers = {"chains": chains, "steps": steps, "walk": walk, "seed": seed, "batch": batch}
    c = tables.check_anneal(st, n=n, **numbers)
    return _run(st, preset, c, start, model, mask, best_boards, trace_chains, control, announce)


def run(
    st: tables.LSSettings,
    numbers: dict,
    start=None,
    instance: cons.Constraints | None = None,
    toroidal: bool = False,
    *,
    best_boards: bool = False,
    trace_chains: int = 0,
    control: RunControl | None = None,
    announce=None,
) -> AnnealResult:
    """`anneal` of settings `st` and `numbers` checked where they entered
    (`settings.anneal_settings`, `settings.check_anneal`: `jaxqueens anneal` checks every method's
    before JAX loads); the other arguments as for `anneal`."""
    model, mask = driver.instance_setup(numbers["n"], instance, toroidal)
    _check_instance(mask, st.neighbour, start)
    options = (best_boards, trace_chains, control, announce)
    return _run(st, st.preset, numbers, start, model, mask, *options)


def _run(st, preset, c, start, model, mask, best_boards, trace_chains, control, announce):
    """The run of checked settings `st` and numbers `c` (`preset`: as given, for the summary):
    its config, calibrated schedule, chains and replays, as one `AnnealResult`."""
    toroidal, shape = model is not None and model.toroidal, (st.rounds, st.neighbour, st.step)
    config = setup.make_config(
        c["n"], st.method, c["steps"], *shape, st.objective, st.edge, toroidal, mask is not None
    )
    start = _start_board(start, c["n"], st.neighbour)
    cal_key, key = chain_batch.seed_keys(c["seed"], 2)
    v = st.values()
    schedule, per_step = setup.calibrate(
        cal_key, config, c["walk"], v["q"], v["init_prob"], v["alpha"], v["t0"], start, mask
    )
    devices = local_device_count()
    if announce is not None:
        estimate = per_step * config.total_steps * c["chains"] / devices
        announce(
            f"{st.method.upper()}: estimated run time at most ~{estimate:,.1f} s "
            f"({c['chains']} chains x {config.total_steps} steps; chains stop when solved)"
        )
    chunk = c["batch"] or setup.chunk_for(c["chains"], config, devices)
    params, problem = setup.schedule_params(schedule), setup.chain_problem(start, mask)
    budget = chains_types.Budget(max_chains=c["chains"])
    fingerprint = _fingerprint(config, schedule, c["seed"], start)
    run = run_schedule(config, key, params, problem, chunk, budget, control, fingerprint, model)
    traces, every = None, max(1, config.total_steps // 2000)
    if trace_chains > 0:
        keys = chain_keys(key, jnp.arange(trace_chains))
        traces = np.asarray(_trace(config, every)(keys, params, problem))
    best: tuple = (None, None, None)
    if best_boards and run.stopped_by != "interrupted":
        best = best_of_unsolved(key, config, params, problem, run, model)
    has_best = run.best is not None and run.best.size  # (none before the first chunk)
    summary = chains_types.summarize(
        run,
        solver=st.method,
        method=st.method,
        neighbour=st.neighbour,
        step=st.step,
        objective=st.objective,
        edge=st.edge,
        t0=v["t0"],  # (LS, TA: the preset's)
        preset=preset,
        **{k: getattr(st, k, None) for k in ("q", "init_prob", "alpha", "t_end")},  # (own only)
        start=None if start is None else start.tolist(),
        steps_budget=config.total_steps,
        rounds=st.rounds,
        schedule=[float(x) for x in schedule],
        best_objective_mean=float(run.best.mean()) if has_best else None,
        best_objective_min=int(run.best.min()) if has_best else None,
        seed=c["seed"],
        chunk=chunk,
        backend=jax.default_backend(),
        devices=devices,
        model=model,
    )
    ids, boards, pairs = best
    if ids is not None:
        pairs_min = int(pairs.min()) if len(pairs) else None
        summary["best_boards"] = {"chains": len(ids), "pairs_min": pairs_min}
    return AnnealResult(run, summary, config, schedule, traces, every, ids, boards, pairs, model)


def run_schedule(config, key, params, problem, chunk, budget, control, fingerprint, model=None):
    """`config`'s chains on the schedule `params`, compiled for `chunk` chains a call (timed apart)
    and run by the shared chain driver until `budget` is met (`anneal`'s and `stats`' chains),
    each reporting the steps it spent (the step it solved at, or the whole budget: an unsolved
    chain runs to its end; `best_step` stays the kernel's own) and its best objective's unit."""
    started = time.perf_counter()
    runner = chain_batch.compile_runner(
        chain_batch.Chains(sls, config), key, chunk, params, problem, total=budget.max_chains
    )

    def spent_steps(offset: int, count: int) -> chains_types.ChunkResult:
        out = chains_types.ChunkResult.of(runner(offset, count))
        spent = np.where(out.solved, out.steps, config.total_steps).astype(out.steps.dtype)
        return out._replace(steps=spent)

    unit = "pairs_plus_stranded" if config.constrained else "attacking_pairs"
    return driver.run_chains(
        spent_steps,
        config.n,
        budget,
        chunk,
        what=f"annealing ({config.method})",
        compile_s=time.perf_counter() - started,
        control=control,
        fingerprint=fingerprint,
        model=model,
        solver=config.method,
        best_unit="nmof_attacks" if config.objective == "attacks" else unit,
    )


def _check_instance(mask, neighbour: str, start) -> None:
    """Refuse what a constrained chain (`mask` not None) cannot honour: the swap neighbour, a
    start board."""
    if mask is None:
        return
    if neighbour != "step":
        raise QueensError(
            "a constrained instance needs --neighbour step (a swap keeps every "
            "row's occupancy, so it cannot honour fixed queens and forbidden squares)"
        )
    if start is not None:
        raise QueensError(
            "a constrained instance sets every chain's start itself (fixed queens, "
            "allowed squares); drop the start board (--file)"
        )


def _start_board(start, n: int, neighbour: str) -> np.ndarray | None:
    """The start board as rows, checked against the neighbour (swap cannot solve repeated rows)."""
    if start is None:
        return None
    start = as_board(np.asarray(start).reshape(-1), n, what="the start board")
    if neighbour == "swap" and len(np.unique(start)) < n:
        raise QueensError(
            f"the start board has {n - len(np.unique(start))} queen(s) on an occupied row and "
            "--neighbour swap never changes which rows are occupied, so no chain could solve "
            "it; use --neighbour step (moves one queen within its column)"
        )
    return start


def _fingerprint(config: sls.Config, schedule: np.ndarray, seed: int, start) -> dict:
    """The settings a checkpoint of `anneal` must match to be resumed."""
    static = {  # without the accelerator's switches (their CPU values): CPU checkpoints resume
        k: v
        for k, v in dataclasses.asdict(config).items()
        if (k != "edge" or v != "wrap") and k != "scatter_counts"
    }
    fingerprint = {
        "command": "anneal",
        "solver": f"annealing-{config.method}",  # the checkpoint's fingerprint: kept as written
        "config": static,
        "schedule": [float(x) for x in schedule],
        "seed": seed,
        "steps": "spent",  # `steps` holds the steps spent (a checkpoint without it: the best's)
    }
    if start is not None:  # the default run's fingerprint is unchanged (old checkpoints resume)
        fingerprint["start"] = start.tolist()
    return fingerprint


@functools.lru_cache(maxsize=32)
def _trace(config: sls.Config, every: int):
    """`sls.trace` of a batch of chains, jitted once per `(config, every)` in the process; Params
    and the problem are arguments, as the chains run them."""
    return jax.jit(
        jax.vmap(lambda k, p, b: sls.trace(k, config, p, every, b), in_axes=(0, None, None))
    )


@functools.lru_cache(maxsize=32)
def _replay(config: sls.Config):
    """`sls.replay` of a batch of chains to their given steps (their boards), jitted once per
    `config` in the process; Params and the problem are arguments, as the chains run them."""
    return jax.jit(
        jax.vmap(lambda k, u, p, b: sls.replay(k, config, p, u, b).rows, in_axes=(0, 0, None, None))
    )


REPLAY_BATCH = 4096  # unsolved chains replayed per call by `best_of_unsolved` (bounds memory)


def best_of_unsolved(key, config, params, problem, run, model=None) -> tuple:
    """The best boards of the unsolved chains of `run`, by replaying each to the step of its best.

    Each replayed board's objective is checked against the one the chain reported; with `model` (a
    constrained instance) the pairs are counted by the independent constrained checker, and no best
    board may use a forbidden square (outside a column that has none). Returns (chain ids [U] int64,
    best boards [U, n] int32, their attacking pairs [U] int64)."""
    ids = run.chain_id[~run.solved]
    assert run.best_step is not None  # annealing runs record the step of each best board
    upto = run.best_step[~run.solved]
    fn, parts = _replay(config), []
    for i in range(0, len(ids), REPLAY_BATCH):
        keys = chain_keys(key, jnp.asarray(ids[i : i + REPLAY_BATCH]))
        steps = jnp.asarray(upto[i : i + REPLAY_BATCH], jnp.int32)
        parts.append(np.asarray(fn(keys, steps, params, problem)))
    boards = np.concatenate(parts).astype(np.int32) if parts else np.zeros((0, config.n), np.int32)
    if model is None:
        pairs = checker.attacking_pairs(boards) if len(boards) else np.zeros(0, np.int64)
    else:
        pairs = np.array(
            [checker.check_constrained(b, model).attacking_pairs for b in boards], np.int64
        )
    objective = pairs if config.objective == "pairs" else _attacks(boards, config.toroidal)
    mask = None if problem is None else problem.mask
    if mask is not None and len(boards):
        allowed = np.asarray(mask.allowed)
        stranded = ~allowed[np.arange(config.n)[None, :], boards]
        if (stranded & np.asarray(allowed.any(axis=1))[None, :]).any():
            raise RuntimeError("a best board uses a forbidden square")
        objective = objective + stranded.sum(axis=1)
    if run.best is not None and not np.array_equal(objective, run.best[~run.solved]):
        raise RuntimeError("replayed best boards disagree with the chains' best objectives")
    return ids.astype(np.int64), boards, pairs


def _attacks(boards: np.ndarray, toroidal: bool) -> np.ndarray:
    """NMOF's attack count of each board [B, n] in NumPy: queens minus lines occupied, over
    rows, diagonals and anti-diagonals (taken modulo n when `toroidal`)."""
    n, cols = boards.shape[1], np.arange(boards.shape[1])
    diagonals = (boards - cols, boards + cols)
    lines = (boards, *(d % n for d in diagonals)) if toroidal else (boards, *diagonals)
    return np.array(
        [sum(n - len(np.unique(line[i])) for line in lines) for i in range(len(boards))], np.int64
    )
