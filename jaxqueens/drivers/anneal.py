"""``jaxqueens.anneal``: LS, TA and SA chains through the shared chain driver.

Schedules follow NMOF: ``TAopt`` takes thresholds from quantiles ``q * (nT-1 .. 0) / nT`` of
|delta| along a random walk of ``walk`` accepted moves and sets the last one to 0; for SA the
start temperature ``T0`` is solved so that, over the worsening moves of the same walk, the mean
Metropolis acceptance ``exp(-delta / T0)`` equals ``init_prob``; it then cools by ``alpha`` each
round. The walk's speed gives the estimated run time printed before a long run, as TAopt and
SAopt print it. The command line is :mod:`jaxqueens.cli.anneal`.
"""

from __future__ import annotations

import dataclasses
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core.board import as_size
from jaxqueens.core.rng import chain_seeds
from jaxqueens.drivers import chains as driver
from jaxqueens.errors import QueensError
from jaxqueens.parallel import chains as chain_batch
from jaxqueens.solvers import anneal as sls


@dataclasses.dataclass
class AnnealResult:
    """What :func:`anneal` returns for one method."""

    run: driver.ChainRun
    summary: dict
    config: sls.Config
    schedule: np.ndarray  # [rounds] thresholds (LS, TA) or temperatures (SA)
    traces: np.ndarray | None = None  # [k, T] best-so-far objective of chains 0..k-1
    trace_every: int = 1  # steps between two trace points

    @property
    def solutions(self) -> np.ndarray:
        return self.run.solutions


def calibrate(key, config: sls.Config, walk: int = 2000, q: float = 0.5, init_prob: float = 0.4,
              alpha: float = 0.9) -> tuple[np.ndarray, float]:
    """The schedule [rounds] for ``config.method`` and the walk's seconds per step."""
    if not 0 < q <= 1 or not 0 < init_prob < 1 or not 0 < alpha <= 1 or walk < 2:
        raise QueensError(f"calibration needs 0 < q <= 1, 0 < init_prob < 1, 0 < alpha <= 1 and "
                          f"walk >= 2 (got q={q}, init_prob={init_prob}, alpha={alpha}, walk={walk})")
    seed = chain_seeds(key, jnp.arange(1))[0]
    fn = jax.jit(lambda s: sls.random_walk_deltas(s, config, walk))
    fn(seed).block_until_ready()  # compile
    t0 = time.perf_counter()
    deltas = np.asarray(fn(seed)).astype(np.float64)
    per_step = (time.perf_counter() - t0) / walk
    rounds = config.rounds
    if config.method == "ls":
        return np.zeros(rounds, np.float32), per_step
    if config.method == "ta":
        thresholds = np.quantile(np.abs(deltas), q * np.arange(rounds - 1, -1, -1) / rounds)
        thresholds[-1] = 0.0
        return thresholds.astype(np.float32), per_step
    return (sa_start_temperature(deltas, init_prob) * alpha ** np.arange(rounds)).astype(np.float32), per_step


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


def make_config(n: int, method: str, steps: int, rounds: int, neighbour: str, step: int,
                objective: str) -> sls.Config:
    """Validated static configuration (``steps`` in total, split evenly over ``rounds``)."""
    if n < 4:
        raise QueensError(f"n = {n}: local search needs n >= 4 (n = 1 is trivial, 2 and 3 have no solution)")
    if rounds < 1:
        raise QueensError(f"--rounds must be at least 1, got {rounds}")
    if steps < rounds:
        raise QueensError(f"--steps ({steps}) must be at least --rounds ({rounds})")
    try:
        return sls.Config(n=n, method=method, neighbour=neighbour, step=step,
                          objective=objective, rounds=rounds, steps_per_round=-(-steps // rounds))
    except ValueError as err:
        raise QueensError(str(err)) from None


def anneal(n: int = 8, method: str = "ta", chains: int = 1000, steps: int = 10_000, *,
           rounds: int = 10, neighbour: str = "step", step: int = 3, objective: str = "attacks",
           seed: int = 0, batch: int | None = None, q: float = 0.5, init_prob: float = 0.4,
           alpha: float = 0.9, walk: int = 2000, trace_chains: int = 0,
           quiet: bool | None = True, announce=None, checkpoint=None, resume: bool = False,
           checkpoint_every: float = 30.0) -> AnnealResult:
    """Run ``chains`` independent LS/TA/SA chains of ``steps`` steps each (stopping when solved).

    Args:
      n: board size (>= 4).
      method: "ls", "ta" or "sa".
      chains: chains to run; chain i is seeded from ``fold_in(key, i)``.
      steps: step budget per chain, split into ``rounds`` thresholds/temperatures.
      neighbour: "step" (NMOF's move of one queen by 1..step rows, wrapping) or "swap".
      objective: "attacks" (NMOF) or "pairs".
      batch: chains per kernel call (default: automatic).
      q, init_prob, alpha, walk: TA quantile, SA start acceptance, SA cooling, calibration walk.
      trace_chains: also record the best-so-far trace of chains 0..k-1 (every
        ``max(1, steps // 2000)`` steps: ``AnnealResult.trace_every``).
      quiet: no progress line (None: a progress line on a terminal only).
      announce: called with a one-line message (e.g. the estimated run time) before the run.
      checkpoint, resume, checkpoint_every: as for :func:`jaxqueens.solve`.
    """
    n = as_size(n)
    config = make_config(n, method, steps, rounds, neighbour, step, objective)
    if chains < 1:
        raise QueensError(f"--chains must be at least 1, got {chains}")
    if batch is not None and batch < 1:
        raise QueensError(f"--batch must be at least 1, got {batch}")
    cal_key, key = jax.random.split(jax.random.key(seed))
    schedule, per_step = calibrate(cal_key, config, walk, q, init_prob, alpha)
    devices = jax.local_device_count()
    if announce is not None:
        estimate = per_step * config.total_steps * chains / devices
        announce(f"{method.upper()}: estimated run time at most ~{estimate:,.1f} s "
                 f"({chains} chains x {config.total_steps} steps; chains stop when solved)")
    chunk = batch or min(-(-chains // devices) * devices, max(devices, (1 << 22) // config.total_steps))
    kernel = sls.Kernel(config)
    data = jnp.asarray(schedule)
    t0 = time.perf_counter()
    runner = chain_batch.compile_runner(kernel, key, chunk, data)
    compile_s = time.perf_counter() - t0
    fingerprint = {"command": "anneal", "solver": f"annealing-{method}", "config": dataclasses.asdict(config),
                   "schedule": [float(x) for x in schedule], "seed": seed}
    run = driver.run_chains(runner, config.n, driver.Budget(max_chains=chains), chunk,
                            what=f"annealing ({method})", compile_s=compile_s, quiet=quiet,
                            checkpoint=checkpoint, fingerprint=fingerprint, resume=resume,
                            checkpoint_every=checkpoint_every)
    traces = None
    every = max(1, config.total_steps // 2000)
    if trace_chains > 0:
        seeds = chain_seeds(key, jnp.arange(trace_chains))
        traces = np.asarray(jax.jit(jax.vmap(lambda s: sls.trace(s, config, data, every)))(seeds))
    summary = driver.summarize(
        run, solver=f"annealing-{method}", method=method, neighbour=neighbour, step=step,
        objective=objective, steps_budget=config.total_steps, rounds=rounds,
        schedule=[float(x) for x in schedule],
        best_objective_mean=float(run.best.mean()) if run.best is not None and run.best.size else None,
        seed=seed, chunk=chunk, backend=jax.default_backend(), devices=devices)
    return AnnealResult(run=run, summary=summary, config=config, schedule=schedule, traces=traces,
                        trace_every=every)
