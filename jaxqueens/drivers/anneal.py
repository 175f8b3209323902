"""`jaxqueens.anneal`: LS, TA and SA chains through the shared chain driver.

Schedules follow NMOF: TA's thresholds come from quantiles of |delta| along a random walk
(`TAopt`), SA's start temperature is calibrated on the worsening moves of the same walk (or by
SAopt's rule, or given) and cools by `alpha` each round. With `best_boards=True` the best board
of every unsolved chain is recovered by replaying the chain (`jaxqueens.solvers.anneal.replay`).
On constrained boards every solution is checked against the same instance, and a run that solves
no chain reports the instance `unknown`. The docs' anneal page describes the schedules.
"""

from __future__ import annotations

import dataclasses
import functools
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import checker
from jaxqueens.core import constraints as cons
from jaxqueens.core.board import as_board, as_size
from jaxqueens.drivers import chains as driver
from jaxqueens.drivers import settings as tables
from jaxqueens.errors import QueensError
from jaxqueens.parallel import cache, sizing
from jaxqueens.parallel import chains as chain_batch
from jaxqueens.parallel import devices as backend
from jaxqueens.parallel.devices import local_device_count
from jaxqueens.solvers import anneal as sls
from jaxqueens.solvers.base import chain_keys


@dataclasses.dataclass
class AnnealResult:
    """What `anneal` returns for one method.

    Attributes:
      run: the chains' per-chain arrays and verified solutions (`ChainRun`).
      summary: the run's figures (what `summary.json` holds).
      config: the kernel's `Config`.
      schedule: [rounds] thresholds (LS, TA) or temperatures (SA)
      traces: [k, T] best-so-far objective of chains 0..k-1
      trace_every: steps between two trace points
      best_chains: [U] int64 ids of the unsolved chains (best_boards=True)
      best_boards: [U, n] int32 the best board of each
      best_pairs: [U] int64 its attacking pairs (independent checker)
      instance: the constrained instance (toroidal included), if any
    """

    run: driver.ChainRun
    summary: dict
    config: sls.Config
    schedule: np.ndarray  # [rounds] thresholds (LS, TA) or temperatures (SA)
    traces: np.ndarray | None = None  # [k, T] best-so-far objective of chains 0..k-1
    trace_every: int = 1  # steps between two trace points
    best_chains: np.ndarray | None = None  # [U] int64 ids of the unsolved chains (best_boards=True)
    best_boards: np.ndarray | None = None  # [U, n] int32 the best board of each
    best_pairs: np.ndarray | None = None  # [U] int64 its attacking pairs (independent checker)
    instance: cons.Constraints | None = None  # the constrained instance (toroidal included), if any

    @property
    def status(self) -> str:
        """ "SAT" when a chain solved the board (or instance), else "unknown" (never UNSAT)."""
        return "SAT" if self.run.solved.any() else "unknown"

    @property
    def solutions(self) -> np.ndarray:
        return self.run.solutions


CLASSIC = tables.ANNEAL_CLASSIC
"""The classic settings (`--preset classic`): `settings.ANNEAL_CLASSIC`."""
DEFAULTS = tables.ANNEAL_DEFAULTS
"""Measured defaults (`--preset default`): `settings.ANNEAL_DEFAULTS`."""
PRESETS = tables.ANNEAL_PRESET_SETTINGS
"""Named settings (`--preset`): `default` (tuned, `DEFAULTS`), `classic` (NMOF's
TAopt/SAopt settings, `CLASSIC`) and `nmof` (classic with the vignette's far-end edge and
SAopt's start-temperature rule); one table,
`ANNEAL_PRESET_SETTINGS`, which the command line reads before
JAX is imported."""
SETTINGS = tables.ANNEAL_SETTINGS


def preset(name: str, method: str) -> dict:
    """The settings of preset `name` for `method` (a copy; SA's `alpha` is derived from
    `t_end` when the preset gives none, as in `settings`)."""
    return settings(method, name)


def settings(method: str, preset_name: str = "default", **given) -> dict:
    """The settings a run uses: preset `preset_name`'s for `method`, each overridden by the
    value given (None: not given); an option the method or neighbour does not use is refused
    (`anneal_settings`)."""
    return tables.anneal_settings(method, preset_name, **given)


T0_RULES = tables.T0_RULES
"""SA start-temperature rules (`calibrate`); a positive number is taken as T0 itself."""
t0_rule = tables.t0_rule  # "worsening", "nmof" or a positive number (SAopt's `initT`)


@functools.lru_cache(maxsize=32)
def _trace(config: sls.Config, every: int):
    """`trace` of a batch of chains jitted for `(config,
    every)`, Params and the problem as arguments (as the chains run them): a repeated run in the
    process reuses its compile."""
    return jax.jit(
        jax.vmap(lambda k, p, b: sls.trace(k, config, p, every, b), in_axes=(0, None, None))
    )


@functools.lru_cache(maxsize=32)
def _replay(config: sls.Config):
    """`replay` of a batch of chains, their boards, jitted for
    `config`, Params and the problem as arguments (as the chains run them): a repeated run in
    the process reuses its compile."""
    return jax.jit(
        jax.vmap(lambda k, u, p, b: sls.replay(k, config, p, u, b).rows, in_axes=(0, 0, None, None))
    )


def _walk_deltas(config: sls.Config, walk: int, key, problem):
    """The executable of `random_walk_deltas` for `(config,
    walk)`, chain 0's key of `key` made inside it, called `(key, problem)`: loaded from the
    cache folder and kept in the process (`loaded`), so that a
    repeated calibration traces nothing."""
    fn = jax.jit(
        lambda k, b: sls.random_walk_deltas(chain_keys(k, jnp.arange(1))[0], config, walk, b)
    )
    return cache.loaded(
        "anneal-walk", (config, walk), (key, problem), lambda: fn.lower(key, problem)
    )


def schedule_params(schedule: np.ndarray) -> sls.Params:
    """The Params of `schedule` [rounds] as a host array of JAX's float type (no eager
    conversion runs: each compiles a program at a process's first use)."""
    return sls.Params._make((np.asarray(schedule, jax.dtypes.canonicalize_dtype(np.float64)),))


def calibrate(
    key,
    config: sls.Config,
    walk: int = 2000,
    q: float = 0.5,
    init_prob: float = 0.4,
    alpha: float = 0.9,
    t0: str | float = "worsening",
    start: np.ndarray | None = None,
    mask: sls.Mask | None = None,
) -> tuple[np.ndarray, float]:
    """The schedule [rounds] for `config.method` and the walk's seconds per step.

    `t0` (SA only): "worsening" (`sa_start_temperature`), "nmof"
    (`sa_start_temperature_nmof`) or a positive number used as T0. The walk starts from
    `start` ([n]) when given, else from a random permutation (`mask`: the instance of a
    constrained config, whose walk moves only free queens onto allowed squares)."""
    if not 0 < q <= 1 or not 0 < init_prob < 1 or not 0 < alpha <= 1 or walk < 2:
        raise QueensError(
            f"calibration needs 0 < q <= 1, 0 < init_prob < 1, 0 < alpha <= 1 and "
            f"walk >= 2 (got q={q}, init_prob={init_prob}, alpha={alpha}, walk={walk})"
        )
    t0 = t0_rule(t0)
    problem = _problem(start, mask)
    fn = _walk_deltas(config, walk, key, problem)
    fn(key, problem).block_until_ready()  # the first call is not timed
    t_start = time.perf_counter()
    deltas = np.asarray(fn(key, problem)).astype(np.float64)
    per_step = (time.perf_counter() - t_start) / walk
    return schedule_of(deltas, config, q, init_prob, alpha, t0), per_step


def schedule_of(
    deltas: np.ndarray,
    config: sls.Config,
    q: float = 0.5,
    init_prob: float = 0.4,
    alpha: float = 0.9,
    t0: str | float = "worsening",
) -> np.ndarray:
    """The schedule [rounds] float32 for `config.method` from the objective changes `deltas`
    of a calibration walk (`calibrate`'s rules; LS: zeros)."""
    rounds = config.rounds
    if config.method == "ls":
        return np.zeros(rounds, np.float32)
    if config.method == "ta":
        thresholds = np.quantile(np.abs(deltas), q * np.arange(rounds - 1, -1, -1) / rounds)
        thresholds[-1] = 0.0
        return thresholds.astype(np.float32)
    t0 = t0_rule(t0)
    if t0 == "nmof":
        temp = sa_start_temperature_nmof(deltas, init_prob)
    elif t0 == "worsening":
        temp = sa_start_temperature(deltas, init_prob)
    else:
        temp = float(t0)
    return (temp * alpha ** np.arange(rounds)).astype(np.float32)


def sa_start_temperature(deltas: np.ndarray, init_prob: float) -> float:
    """T0 with mean(exp(-d / T0)) = init_prob over the worsening moves d > 0 (bisection)."""
    worse = deltas[deltas > 0]
    if worse.size == 0:
        return 1.0
    lo, hi = 1e-6, 1e6  # acceptance rises monotonically with T
    for _ in range(200):
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if np.mean(np.exp(-worse / mid)) < init_prob else (lo, mid)
    return float(np.sqrt(lo * hi))


NMOF_T0_BRACKET = (1e-5, 1.0)
"""SAopt's `uniroot` interval for the start temperature."""


def sa_start_temperature_nmof(deltas: np.ndarray, init_prob: float) -> float:
    """SAopt's rule (R package NMOF): T0 solves `init_prob = mean(exp(-|d| / T0))` over ALL
    |changes| d of the walk (moves that change nothing included, each accepted with
    probability 1), on SAopt's interval [1e-5, 1] (`uniroot`; bisection here, to full
    precision). Where the interval holds no root SAopt stops with an error; so does this, in
    one line."""
    d = np.abs(np.asarray(deltas, np.float64))
    lo, hi = NMOF_T0_BRACKET
    accept = lambda t: float(np.mean(np.exp(-d / t)))
    if not accept(lo) <= init_prob <= accept(hi):
        raise QueensError(
            f"--t0 nmof: no start temperature in SAopt's interval [1e-05, 1] gives an acceptance "
            f"of {init_prob} over the calibration walk (it ranges {accept(lo):.3f} .. "
            f"{accept(hi):.3f}; {100 * np.mean(d == 0):.0f}% of its moves change nothing); "
            "choose --init-prob in that range (--preset nmof sets NMOF's 0.4), or use --t0 "
            "worsening"
        )
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if accept(mid) < init_prob else (lo, mid)
    return 0.5 * (lo + hi)


def make_config(
    n: int,
    method: str,
    steps: int,
    rounds: int,
    neighbour: str,
    step: int,
    objective: str,
    edge: str = "wrap",
    toroidal: bool = False,
    constrained: bool = False,
) -> sls.Config:
    """Validated static configuration (`steps` in total, split evenly over `rounds`)."""
    if n < 4:
        raise QueensError(
            f"n = {n}: local search needs n >= 4 (n = 1 is trivial, 2 and 3 have no solution)"
        )
    if rounds < 1:
        raise QueensError(f"--rounds must be at least 1, got {rounds}")
    if steps < rounds:
        raise QueensError(f"--steps ({steps}) must be at least --rounds ({rounds})")
    try:
        return sls.Config(
            n=n,
            method=method,
            neighbour=neighbour,
            step=step,
            edge=edge,
            objective=objective,
            rounds=rounds,
            steps_per_round=-(-steps // rounds),
            toroidal=toroidal,
            constrained=constrained,
        )
    except ValueError as err:
        raise QueensError(str(err)) from None


def chunk_for(chains: int | None, config: sls.Config, devices: int) -> int:
    """Chains per kernel call: about 2^22 steps of work per call on a CPU; on an accelerator,
    enough to fill the device (`accelerator_chunk`)."""
    if backend.is_accelerator():
        return chain_batch.accelerator_chunk(chains, config.n, sizing.device_target(), devices)
    cap = max(devices, (1 << 22) // config.total_steps)
    return min(-(-chains // devices) * devices, cap) if chains else -(-cap // devices) * devices


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
    quiet: bool | None = True,
    announce=None,
    checkpoint=None,
    resume: bool = False,
    checkpoint_every: float = tables.CHECKPOINT_EVERY,
    instance: cons.Constraints | None = None,
    toroidal: bool = False,
) -> AnnealResult:
    """Run `chains` independent LS/TA/SA chains of `steps` steps each (stopping when solved).

    An option the method (or neighbour) does not use is refused by name
    (`ANNEAL`): `alpha` with "ls", `q` with "sa",
    `step` with the swap neighbour.

    Args:
      n: board size (>= 4).
      method: "ls", "ta" or "sa".
      chains: chains to run; chain i is seeded from `fold_in(key, i)`.
      steps: step budget per chain, split into `rounds` thresholds/temperatures.
      preset: where the settings not given come from: "default" (tuned for each method,
        `DEFAULTS`), "classic" (NMOF's TAopt/SAopt settings with the
        step neighbour) or "nmof" (classic with the vignette's edge and SAopt's T0 rule).
        `rounds`, `neighbour`, `step`, `objective`, `edge`, `q`, `init_prob`,
        `alpha`, `t_end` and `t0` left None take the preset's value (`settings`).
      rounds: thresholds/temperatures the `steps` are split into.
      step: the step neighbour's largest move (1..step rows).
      neighbour: "step" (NMOF's move of one queen by 1..step rows within its column) or "swap";
        not given, a swap preset runs the step neighbour on a constrained instance or from a
        start board with repeated rows (which swaps cannot honour or leave).
      objective: "attacks" (NMOF) or "pairs".
      edge: the step neighbour past the edge: "wrap" (row mod n, default) or "nmof" (to the far
        end, as the NMOF vignette's `neighbour`).
      batch: chains per kernel call (default: automatic).
      q: TA's quantile of |delta| for the first threshold.
      init_prob: SA's start acceptance of worsening moves.
      alpha: SA's cooling factor per round.
      walk: steps of the calibration walk.
      t_end: SA's last temperature relative to its first (then alpha = t_end^(1/(rounds - 1)));
        give it or `alpha`, not both.
      t0: SA start temperature: "worsening", "nmof" (SAopt's rule) or a number (see
        `calibrate`).
      start: a board [n] (rows 0..n-1, repeats allowed) every chain starts from (default: a
        random permutation per chain). Rows that repeat need the step neighbour (swap keeps
        every row's occupancy, so it could never solve such a start).
      best_boards: also recover the best board of every unsolved chain
        (`AnnealResult.best_boards`, with its attacking pairs).
      trace_chains: also record the best-so-far trace of chains 0..k-1 (every
        `max(1, steps // 2000)` steps: `AnnealResult.trace_every`).
      quiet: no progress line (None: a progress line on a terminal only).
      announce: called with a one-line message (e.g. the estimated run time) before the run.
      checkpoint: checkpoint file, as for `jaxqueens.solve`.
      resume: continue from `checkpoint`.
      checkpoint_every: seconds between checkpoints.
      instance: a constrained instance (n is then its size: pass None or the same n); fixed
        queens never move, forbidden squares are never used (step neighbour only, no start).
      toroidal: queens attack along diagonals modulo n (also when `instance` says so).

    Returns:
      The `AnnealResult`; every solution counted has passed the independent checker.

    Raises:
      QueensError: an argument out of range or an option the method does not use, naming it;
        `InstanceUnsat` for a plainly unsatisfiable instance.
    """
    model, mask = driver.instance_setup(None if n is None else as_size(n), instance, toroidal)
    opts = tables.anneal_settings(
        method,
        preset,
        needs_step=mask is not None or tables.has_repeated_rows(start),
        rounds=rounds,
        neighbour=neighbour,
        step=step,
        objective=objective,
        edge=edge,
        q=q,
        init_prob=init_prob,
        alpha=alpha,
        t_end=t_end,
        t0=t0,
    )
    neighbour = opts["neighbour"]
    _check_instance(mask, neighbour, start)
    n = as_size(n if model is None else model.n)
    checked = tables.check_anneal(
        n=n, method=method, chains=chains, steps=steps, walk=walk, seed=seed, batch=batch, **opts
    )
    seed = checked["seed"]
    config = make_config(
        n,
        method,
        steps,
        checked["rounds"],
        neighbour,
        checked["step"],
        opts["objective"],
        opts["edge"],
        toroidal=model is not None and model.toroidal,
        constrained=mask is not None,
    )
    start = _start_board(start, n, neighbour)
    cal_key, key = chain_batch.seed_keys(seed, 2)
    q, init_prob, alpha, t0 = checked["q"], checked["init_prob"], checked["alpha"], checked["t0"]
    schedule, per_step = calibrate(cal_key, config, walk, q, init_prob, alpha, t0, start, mask)
    devices = local_device_count()
    if announce is not None:
        estimate = per_step * config.total_steps * chains / devices
        announce(
            f"{method.upper()}: estimated run time at most ~{estimate:,.1f} s "
            f"({chains} chains x {config.total_steps} steps; chains stop when solved)"
        )
    chunk = batch or chunk_for(chains, config, devices)
    params = schedule_params(schedule)
    problem = _problem(start, mask)
    started = time.perf_counter()
    runner = chain_batch.compile_runner(
        chain_batch.Chains(sls, config), key, chunk, params, problem, total=chains
    )
    compile_s = time.perf_counter() - started
    fingerprint = _fingerprint(method, config, schedule, seed, start, model)
    run = driver.run_chains(
        spent_steps(runner, config),
        config.n,
        driver.Budget(max_chains=chains),
        chunk,
        what=f"annealing ({method})",
        compile_s=compile_s,
        quiet=quiet,
        checkpoint=checkpoint,
        fingerprint=fingerprint,
        resume=resume,
        checkpoint_every=checkpoint_every,
        model=model,
        solver=method,
        best_unit=best_unit(config),
    )
    traces, every, best = _replays(
        key, config, params, problem, run, model, trace_chains, best_boards
    )
    summary = _summary(
        run, method, preset, opts, checked, config, schedule, start, chunk, model, best
    )
    return AnnealResult(
        run=run,
        summary=summary,
        config=config,
        schedule=schedule,
        traces=traces,
        trace_every=every,
        best_chains=best[0],
        best_boards=best[1],
        best_pairs=best[2],
        instance=model,
    )


def _replays(
    key,
    config: sls.Config,
    params: sls.Params,
    problem: sls.Problem | None,
    run: driver.ChainRun,
    model: cons.Constraints | None,
    trace_chains: int,
    best_boards: bool,
) -> tuple[np.ndarray | None, int, tuple]:
    """What `anneal` replays after the run: (the traces of chains 0..trace_chains-1, their
    step between records, the best boards of the unsolved chains)."""
    traces = None
    every = max(1, config.total_steps // 2000)
    if trace_chains > 0:
        keys = chain_keys(key, jnp.arange(trace_chains))
        traces = np.asarray(_trace(config, every)(keys, params, problem))
    best = (
        best_of_unsolved(key, config, params, problem, run, model)
        if best_boards and run.stopped_by != "interrupted"
        else (None, None, None)
    )
    return traces, every, best


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


def _fingerprint(
    method: str,
    config: sls.Config,
    schedule: np.ndarray,
    seed: int,
    start: np.ndarray | None,
    model: cons.Constraints | None,
) -> dict:
    """The settings a checkpoint of `anneal` must match to be resumed."""
    static = {  # without the accelerator's switches (their CPU values): CPU checkpoints resume
        k: v
        for k, v in dataclasses.asdict(config).items()
        if (k != "edge" or v != "wrap") and k != "scatter_counts"
    }
    fingerprint = {
        "command": "anneal",
        "solver": f"annealing-{method}",  # the checkpoint's fingerprint: kept as written
        "config": static,
        "schedule": [float(x) for x in schedule],
        "seed": seed,
        "steps": "spent",  # `steps` holds the steps spent (a checkpoint without it: the best's)
    }
    if start is not None:  # the default run's fingerprint is unchanged (old checkpoints resume)
        fingerprint["start"] = start.tolist()
    if model is not None:
        fingerprint["instance"] = model.to_dict()
    return fingerprint


def _summary(
    run: driver.ChainRun,
    method: str,
    preset: str,
    opts: dict,
    checked: dict,
    config: sls.Config,
    schedule: np.ndarray,
    start: np.ndarray | None,
    chunk: int,
    model: cons.Constraints | None,
    best: tuple,
) -> dict:
    """`anneal`'s summary: the run's figures, its settings and schedule, the best boards'."""
    summary = driver.summarize(
        run,
        solver=method,
        method=method,
        neighbour=opts["neighbour"],
        step=checked["step"],
        objective=opts["objective"],
        edge=opts["edge"],
        t0=checked["t0"],
        preset=preset,
        q=checked["q"] if method == "ta" else None,
        init_prob=checked["init_prob"] if method == "sa" else None,
        alpha=checked["alpha"] if method == "sa" else None,
        t_end=opts["t_end"] if method == "sa" else None,
        start=None if start is None else start.tolist(),
        steps_budget=config.total_steps,
        rounds=checked["rounds"],
        schedule=[float(x) for x in schedule],
        best_objective_mean=float(run.best.mean())
        if run.best is not None and run.best.size
        else None,
        best_objective_min=int(run.best.min()) if run.best is not None and run.best.size else None,
        seed=checked["seed"],
        chunk=chunk,
        backend=jax.default_backend(),
        devices=local_device_count(),
    )
    if model is not None:
        summary["instance"] = model.to_dict()
        summary["status"] = "SAT" if run.solved.any() else "unknown"
    if best[0] is not None and best[2] is not None:
        summary["best_boards"] = {
            "chains": len(best[0]),
            "pairs_min": int(best[2].min()) if len(best[2]) else None,
        }
    return summary


def spent_steps(runner, config: sls.Config):
    """`runner` whose results say the steps each chain spent: the step it solved at, or the
    whole budget (an unsolved chain runs to its end); `best_step` is the kernel's own."""

    def run(offset: int, count: int) -> driver.ChunkResult:
        out = driver.ChunkResult.of(runner(offset, count))
        spent = np.where(out.solved, out.steps, config.total_steps).astype(out.steps.dtype)
        return out._replace(steps=spent)

    return run


def best_unit(config: sls.Config) -> str:
    """What a chain's best objective counts: attacking pairs (objective pairs on a board without
    forbidden squares), NMOF's attacks (objective attacks), or pairs plus stranded queens
    (objective pairs on a constrained instance)."""
    if config.objective == "attacks":
        return "nmof_attacks"
    return "pairs_plus_stranded" if config.constrained else "attacking_pairs"


def _problem(start, mask) -> sls.Problem | None:
    """The chains' shared problem: a start board [n] and/or an instance mask (None: neither)."""
    if start is None and mask is None:
        return None
    return sls.Problem(None if start is None else jnp.asarray(start, jnp.int32), mask)


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


REPLAY_BATCH = 4096
"""Unsolved chains replayed per call by `best_of_unsolved` (bounds memory)."""


def best_of_unsolved(
    key,
    config: sls.Config,
    params: sls.Params,
    problem: sls.Problem | None,
    run: driver.ChainRun,
    model: cons.Constraints | None = None,
):
    """(chain ids [U], best boards [U, n], their attacking pairs [U]) of the unsolved chains of
    `run`, by replaying each to the step of its best objective; each replayed board's
    objective is checked against the one the chain reported. With `model` the pairs are
    counted by the independent constrained checker (modular diagonals on the torus), and no
    best board may move a fixed queen or use a forbidden square (outside a column that has none)."""
    ids = run.chain_id[~run.solved]
    assert run.best_step is not None  # annealing runs record the step of each best board
    upto = run.best_step[~run.solved]
    fn = _replay(config)
    parts = [
        np.asarray(
            fn(
                chain_keys(key, jnp.asarray(ids[i : i + REPLAY_BATCH])),
                jnp.asarray(upto[i : i + REPLAY_BATCH], jnp.int32),
                params,
                problem,
            )
        )
        for i in range(0, len(ids), REPLAY_BATCH)
    ]
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


def _attacks(boards: np.ndarray, toroidal: bool = False) -> np.ndarray:
    """NMOF's attack count of each board [B, n] in NumPy: queens minus lines occupied, over
    rows, diagonals and anti-diagonals (taken modulo n when `toroidal`)."""
    n = boards.shape[1] if boards.ndim == 2 else 0
    cols = np.arange(n)
    lines = (boards, boards - cols, boards + cols)
    if toroidal:
        lines = (boards, (boards - cols) % n, (boards + cols) % n)
    return np.array(
        [sum(n - len(np.unique(line[i])) for line in lines) for i in range(len(boards))], np.int64
    )
