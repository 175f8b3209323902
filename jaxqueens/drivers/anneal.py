"""`jaxqueens.anneal`: LS, TA and SA chains (the R package NMOF's LSopt, TAopt, SAopt).

Each method's schedule is calibrated on a random walk (`anneal_setup`), its chains run
through the shared chain driver, and unsolved chains' best boards are replayed on request
(`anneal_replay`). The docs' anneal page describes the methods and schedules.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, NamedTuple

import jax
import numpy as np

from jaxqueens.core import constraints as cons
from jaxqueens.core.board import as_board, as_size
from jaxqueens.drivers import chains as driver
from jaxqueens.drivers import chains_types
from jaxqueens.drivers import settings as tables
from jaxqueens.drivers.anneal_replay import replays
from jaxqueens.drivers.anneal_setup import (
    calibrate_checked,
    chain_problem,
    chunk_for,
    config_checked,
    schedule_params,
)
from jaxqueens.drivers.loop import RunControl
from jaxqueens.errors import QueensError
from jaxqueens.parallel import chains as chain_batch
from jaxqueens.parallel.devices import local_device_count
from jaxqueens.solvers import anneal as sls


@dataclasses.dataclass
class AnnealResult:
    """What `anneal` returns for one method."""

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


def preset(name: str, method: str) -> dict:
    """A copy of preset `name`'s ("default", "classic" or "nmof") settings for `method` ("ls", "ta"
    or "sa"), as `settings` returns them; SA's `alpha` is derived from `t_end` when the preset gives
    none."""
    return settings(method, name)


def settings(method: str, preset_name: str = "default", **given) -> dict:
    """The settings a run of `method` ("ls", "ta" or "sa") uses, by name (`LSSettings.values`):
    preset `preset_name`'s ("default", "classic" or "nmof"), each overridden by a value in `given`
    (None: not given).

    An option the method or neighbour does not use is refused (`settings.anneal_settings`)."""
    return tables.anneal_settings(method, preset_name, **given).values()


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
    numbers = {"chains": chains, "steps": steps, "walk": walk, "seed": seed, "batch": batch}
    s = _setup(n, method, preset, numbers, start, instance, toroidal, given)
    prep = _prepare(s, announce)
    run = _run(s, prep, control)
    return _result(s, prep, run, trace_chains, best_boards)


class _Setup(NamedTuple):
    """`anneal`'s arguments, checked once."""

    method: str
    preset: str
    model: cons.Constraints | None  #: the constrained instance (toroidal included), if any
    mask: sls.Mask | None  #: its allowed squares
    settings: tables.LSSettings  #: the method's settings (`settings.anneal_settings`)
    checked: dict  #: the run's numbers, checked (`settings.check_anneal`)
    config: sls.Config
    start: np.ndarray | None  #: [n] the start board


class _Prepared(NamedTuple):
    """What `anneal` runs: the calibrated schedule and the chains' layout."""

    key: jax.Array  #: the chains' key
    schedule: np.ndarray  #: [rounds]
    params: sls.Params
    problem: sls.Problem | None
    chunk: int  #: chains per kernel call


def _setup(n, method, preset, numbers, start, instance, toroidal, given) -> _Setup:
    """`anneal`'s arguments checked in the order its errors are raised (`numbers`: chains,
    steps, walk, seed and batch; `given`: the settings a preset fills in)."""
    model, mask = driver.instance_setup(None if n is None else as_size(n), instance, toroidal)
    needs_step = mask is not None or tables.has_repeated_rows(start)
    st = tables.anneal_settings(method, preset, needs_step=needs_step, **given)
    _check_instance(mask, st.neighbour, start)
    n = as_size(n if model is None else model.n)
    c = tables.check_anneal(st, n=n, **numbers)
    toroidal = model is not None and model.toroidal
    shape = (st.rounds, st.neighbour, st.step, st.objective, st.edge)
    config = config_checked(n, method, c["steps"], *shape, toroidal, mask is not None)
    return _Setup(method, preset, model, mask, st, c, config, _start_board(start, n, st.neighbour))


def _prepare(s: _Setup, announce) -> _Prepared:
    """Calibrate the schedule and size the chunks."""
    config, c, v = s.config, s.checked, s.settings.values()
    cal_key, key = chain_batch.seed_keys(c["seed"], 2)
    schedule, per_step = calibrate_checked(
        cal_key, config, c["walk"], v["q"], v["init_prob"], v["alpha"], v["t0"], s.start, s.mask
    )
    devices = local_device_count()
    if announce is not None:
        estimate = per_step * config.total_steps * c["chains"] / devices
        announce(
            f"{s.method.upper()}: estimated run time at most ~{estimate:,.1f} s "
            f"({c['chains']} chains x {config.total_steps} steps; chains stop when solved)"
        )
    chunk = c["batch"] or chunk_for(c["chains"], config, devices)
    params, problem = schedule_params(schedule), chain_problem(s.start, s.mask)
    return _Prepared(key, schedule, params, problem, chunk)


def _run(s: _Setup, prep: _Prepared, control: RunControl | None):
    """The chains, compiled and run by the shared chain driver."""
    budget = chains_types.Budget(max_chains=s.checked["chains"])
    fingerprint = _fingerprint(s, prep.schedule)
    return run_schedule(
        s.config,
        prep.key,
        prep.params,
        prep.problem,
        prep.chunk,
        budget,
        control,
        fingerprint,
        s.model,
    )


def run_schedule(config, key, params, problem, chunk, budget, control, fingerprint, model=None):
    """`config`'s chains on the schedule `params`, compiled for `chunk` chains a call (timed apart)
    and run by the shared chain driver until `budget` is met, each reporting the steps it spent
    (`spent_steps`): `anneal`'s and `stats`' chains."""
    started = time.perf_counter()
    runner = chain_batch.compile_runner(
        chain_batch.Chains(sls, config), key, chunk, params, problem, total=budget.max_chains
    )
    return driver.run_chains(
        spent_steps(runner, config),
        config.n,
        budget,
        chunk,
        what=f"annealing ({config.method})",
        compile_s=time.perf_counter() - started,
        control=control,
        fingerprint=fingerprint,
        model=model,
        solver=config.method,
        best_unit=best_unit(config),
    )


def _result(
    s: _Setup, prep: _Prepared, run: chains_types.ChainRun, trace_chains: int, best_boards: bool
) -> AnnealResult:
    """The run's one result: replayed traces and best boards, the summary."""
    traces, every, best = replays(
        prep.key, s.config, prep.params, prep.problem, run, s.model, trace_chains, best_boards
    )
    return AnnealResult(
        run=run,
        summary=_summary(run, s, prep.schedule, prep.chunk, best),
        config=s.config,
        schedule=prep.schedule,
        traces=traces,
        trace_every=every,
        best_chains=best[0],
        best_boards=best[1],
        best_pairs=best[2],
        instance=s.model,
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


def _fingerprint(s: _Setup, schedule: np.ndarray) -> dict:
    """The settings a checkpoint of `anneal` must match to be resumed."""
    config, start = s.config, s.start
    static = {  # without the accelerator's switches (their CPU values): CPU checkpoints resume
        k: v
        for k, v in dataclasses.asdict(config).items()
        if (k != "edge" or v != "wrap") and k != "scatter_counts"
    }
    fingerprint = {
        "command": "anneal",
        "solver": f"annealing-{s.method}",  # the checkpoint's fingerprint: kept as written
        "config": static,
        "schedule": [float(x) for x in schedule],
        "seed": s.checked["seed"],
        "steps": "spent",  # `steps` holds the steps spent (a checkpoint without it: the best's)
    }
    if start is not None:  # the default run's fingerprint is unchanged (old checkpoints resume)
        fingerprint["start"] = start.tolist()
    return fingerprint


def _summary(
    run: chains_types.ChainRun, s: _Setup, schedule: np.ndarray, chunk: int, best: tuple
) -> dict:
    """`anneal`'s summary: the run's figures, its settings and schedule, the best boards'."""
    method, st, v, start, model = s.method, s.settings, s.settings.values(), s.start, s.model
    summary = chains_types.summarize(
        run,
        solver=method,
        method=method,
        neighbour=st.neighbour,
        step=st.step,
        objective=st.objective,
        edge=st.edge,
        t0=v["t0"],  # (LS, TA: the preset's)
        preset=s.preset,
        q=getattr(st, "q", None),  # (a method's own settings, None for the others)
        init_prob=getattr(st, "init_prob", None),
        alpha=getattr(st, "alpha", None),
        t_end=getattr(st, "t_end", None),
        start=None if start is None else start.tolist(),
        steps_budget=s.config.total_steps,
        rounds=st.rounds,
        schedule=[float(x) for x in schedule],
        best_objective_mean=float(run.best.mean())
        if run.best is not None and run.best.size
        else None,
        best_objective_min=int(run.best.min()) if run.best is not None and run.best.size else None,
        seed=s.checked["seed"],
        chunk=chunk,
        backend=jax.default_backend(),
        devices=local_device_count(),
        model=model,
    )
    if best[0] is not None and best[2] is not None:
        summary["best_boards"] = {
            "chains": len(best[0]),
            "pairs_min": int(best[2].min()) if len(best[2]) else None,
        }
    return summary


def spent_steps(runner, config: sls.Config):
    """`runner` (`run_chunk(offset, count)` of the compiled chains) made to report the steps each
    chain spent: the step it solved at, or the whole budget for an unsolved chain (which runs to its
    end); `best_step` stays the kernel's own."""

    def run(offset: int, count: int) -> chains_types.ChunkResult:
        out = chains_types.ChunkResult.of(runner(offset, count))
        spent = np.where(out.solved, out.steps, config.total_steps).astype(out.steps.dtype)
        return out._replace(steps=spent)

    return run


def best_unit(config: sls.Config) -> str:
    """What a chain's best objective counts: "nmof_attacks" (objective attacks),
    "pairs_plus_stranded" (objective pairs on a constrained instance) or "attacking_pairs"."""
    if config.objective == "attacks":
        return "nmof_attacks"
    return "pairs_plus_stranded" if config.constrained else "attacking_pairs"


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
