"""How an LS/TA/SA run is set up: its kernel config, its chains per call and its schedule.

The schedules are the R package NMOF's: TA's thresholds are quantiles of |delta| along a random
walk (`TAopt`); SA's start temperature is calibrated on the worsening moves of the same walk (or
by SAopt's rule, or given) and cools by `alpha` each round (`SAopt`); LS runs with every
threshold 0. Gilli, Maringer & Schumann, *Numerical Methods and Optimization in Finance*.
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.drivers.settings import t0_rule
from jaxqueens.errors import QueensError
from jaxqueens.parallel import cache, sizing
from jaxqueens.parallel import chains as chain_batch
from jaxqueens.parallel import devices as backend
from jaxqueens.solvers import anneal as sls
from jaxqueens.solvers.base import chain_keys


def chain_problem(start, mask) -> sls.Problem | None:
    """The chains' shared kernel `Problem` of a start board [n] and/or an instance's `Mask` (None:
    neither given)."""
    if start is None and mask is None:
        return None
    return sls.Problem(None if start is None else jnp.asarray(start, jnp.int32), mask)


def _walk_deltas(config: sls.Config, walk: int, key, problem):
    """The executable of `random_walk_deltas` for `(config, walk)`, chain 0's key of `key` made
    inside it, called `(key, problem)`: loaded from the cache folder and kept in the process
    (`cache.loaded`), so that a repeated calibration traces nothing."""
    fn = jax.jit(
        lambda k, b: sls.random_walk_deltas(chain_keys(k, jnp.arange(1))[0], config, walk, b)
    )
    return cache.loaded(
        "anneal-walk", (config, walk), (key, problem), lambda: fn.lower(key, problem)
    )


def schedule_params(schedule: np.ndarray) -> sls.Params:
    """The kernel's `Params` holding a [rounds] schedule as a host array in JAX's float type (no
    eager conversion compiles)."""
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
    """The schedule for `config.method` from a random walk of `walk` (>= 2) steps, and the walk's
    seconds per step: (schedule [rounds] float32, seconds); the settings checked where they entered.

    The walk is chain 0's of `key`, from `start` [n] (None: a random permutation); with `mask` (a
    constrained config's instance) it moves only free queens onto allowed squares. `q` is TA's
    quantile of |delta| for the first threshold, `init_prob` SA's start acceptance of worsening
    moves, `alpha` SA's cooling factor per round, `t0` SA's start temperature: "worsening"
    (`sa_start_temperature`), "nmof" (`sa_start_temperature_nmof`) or a positive number used as
    T0."""
    problem = chain_problem(start, mask)
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
    """The [rounds] float32 schedule for `config.method` from a calibration walk's objective
    changes: TA's thresholds (the last 0), SA's temperatures, or LS's zeros (`q`, `init_prob`,
    `alpha`, `t0` as for `calibrate`)."""
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
    """T0 with mean(exp(-d / T0)) = init_prob over the worsening moves d > 0 of a walk (bisection);
    1.0 when the walk has no worsening move."""
    worse = deltas[deltas > 0]
    if worse.size == 0:
        return 1.0
    lo, hi = 1e-6, 1e6  # acceptance rises monotonically with T
    for _ in range(200):
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if np.mean(np.exp(-worse / mid)) < init_prob else (lo, mid)
    return float(np.sqrt(lo * hi))


NMOF_T0_BRACKET = (1e-5, 1.0)  # SAopt's `uniroot` interval for the start temperature


def sa_start_temperature_nmof(deltas: np.ndarray, init_prob: float) -> float:
    """SAopt's rule (R package NMOF): T0 solving `init_prob = mean(exp(-|d| / T0))` over every
    change d of the walk (zeros included), on SAopt's interval [1e-5, 1] (bisection to full
    precision); where the interval holds no root SAopt stops with an error, and so does this."""
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
    """The kernel's static `Config`: `steps` per chain in total, split evenly over `rounds`
    thresholds or temperatures; `neighbour` "step" or "swap" (`step`: the step neighbour's largest
    move), `objective` "attacks" or "pairs", `edge` "wrap" or "nmof", `toroidal`: diagonals modulo
    n, `constrained`: chains run on an instance's mask. The settings are taken as checked where
    they entered (`settings.check_anneal`); the kernel's own checks raise a `QueensError`."""
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
    """Chains per kernel call, a multiple of `devices`: about 2^22 steps of work per call on a CPU;
    on an accelerator, enough to fill the device (`accelerator_chunk`). `chains` None: unbounded."""
    if backend.is_accelerator():
        return chain_batch.accelerator_chunk(chains, config.n, sizing.device_target(), devices)
    cap = max(devices, (1 << 22) // config.total_steps)
    return min(-(-chains // devices) * devices, cap) if chains else -(-cap // devices) * devices
