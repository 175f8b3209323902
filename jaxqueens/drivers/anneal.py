"""``jaxqueens.anneal``: LS, TA and SA chains through the shared chain driver.

Schedules follow NMOF: ``TAopt`` takes thresholds from quantiles ``q * (nT-1 .. 0) / nT`` of
|delta| along a random walk of ``walk`` accepted moves and sets the last one to 0; for SA the
start temperature ``T0`` is solved so that, over the worsening moves of the same walk, the mean
Metropolis acceptance ``exp(-delta / T0)`` equals ``init_prob`` (``t0="worsening"``, the default),
or by SAopt's own rule (``t0="nmof"``: :func:`sa_start_temperature_nmof`), or given as a number
(SAopt's ``initT``); it then cools by ``alpha`` each round. The walk starts from the chains'
first board (a random permutation, or ``start``, as SAopt walks from ``x0``). The walk's speed
gives the estimated run time printed before a long run, as TAopt and SAopt print it.

With ``best_boards=True`` the best board of every unsolved chain is recovered by replaying the
chain to the step at which its best objective was found (:func:`jaxqueens.solvers.anneal.replay`;
the run itself keeps no board but its current one). The command line is
:mod:`jaxqueens.cli.anneal`.

Constrained boards (issue 16): ``instance`` (a :class:`~jaxqueens.core.constraints.Constraints`:
fixed queens, blocked squares, excluded rows, columns and diagonals) and ``toroidal`` switch the
kernel's static ``toroidal`` / ``constrained`` paths (:mod:`jaxqueens.solvers.anneal`), the
instance's allowed squares (:func:`~jaxqueens.core.constraints.allowed_squares`) going in as a
dynamic mask. Every solution is checked by the independent constrained checker
(:func:`~jaxqueens.core.checker.require_constrained`) against the same instance; a run that
solves no chain reports the instance ``unknown`` (local search never proves UNSAT; a plainly
unsatisfiable instance is refused before any chain with :class:`~jaxqueens.errors.InstanceUnsat`
and its reason).
"""

from __future__ import annotations

import dataclasses
import time

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import arguments, checker
from jaxqueens.core import constraints as cons
from jaxqueens.core.board import as_board, as_size
from jaxqueens.core.rng import chain_seeds
from jaxqueens.drivers import chains as driver
from jaxqueens.drivers import settings
from jaxqueens.errors import QueensError
from jaxqueens.parallel import chains as chain_batch
from jaxqueens.solvers import anneal as sls
from jaxqueens.solvers import choices as sls_choices


@dataclasses.dataclass
class AnnealResult:
    """What :func:`anneal` returns for one method."""

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


T0_RULES = settings.T0_RULES
"""SA start-temperature rules (:func:`calibrate`); a positive number is taken as T0 itself."""
t0_rule = settings.t0_rule  # "worsening", "nmof" or a positive number (SAopt's ``initT``)


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
    """The schedule [rounds] for ``config.method`` and the walk's seconds per step.

    ``t0`` (SA only): "worsening" (:func:`sa_start_temperature`), "nmof"
    (:func:`sa_start_temperature_nmof`) or a positive number used as T0. The walk starts from
    ``start`` ([n]) when given, else from a random permutation (``mask``: the instance of a
    constrained config, whose walk moves only free queens onto allowed squares)."""
    if not 0 < q <= 1 or not 0 < init_prob < 1 or not 0 < alpha <= 1 or walk < 2:
        raise QueensError(
            f"calibration needs 0 < q <= 1, 0 < init_prob < 1, 0 < alpha <= 1 and "
            f"walk >= 2 (got q={q}, init_prob={init_prob}, alpha={alpha}, walk={walk})"
        )
    t0 = t0_rule(t0)
    seed = chain_seeds(key, jnp.arange(1))[0]
    fn = jax.jit(lambda s, b, m: sls.random_walk_deltas(s, config, walk, b, m))
    board = None if start is None else jnp.asarray(start, jnp.int32)
    fn(seed, board, mask).block_until_ready()  # compile
    t_start = time.perf_counter()
    deltas = np.asarray(fn(seed, board, mask)).astype(np.float64)
    per_step = (time.perf_counter() - t_start) / walk
    rounds = config.rounds
    if config.method == "ls":
        return np.zeros(rounds, np.float32), per_step
    if config.method == "ta":
        thresholds = np.quantile(np.abs(deltas), q * np.arange(rounds - 1, -1, -1) / rounds)
        thresholds[-1] = 0.0
        return thresholds.astype(np.float32), per_step
    if t0 == "nmof":
        temp = sa_start_temperature_nmof(deltas, init_prob)
    elif t0 == "worsening":
        temp = sa_start_temperature(deltas, init_prob)
    else:
        temp = float(t0)
    return (temp * alpha ** np.arange(rounds)).astype(np.float32), per_step


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
"""SAopt's ``uniroot`` interval for the start temperature."""


def sa_start_temperature_nmof(deltas: np.ndarray, init_prob: float) -> float:
    """SAopt's rule (R package NMOF): T0 solves ``init_prob = mean(exp(-|d| / T0))`` over ALL
    |changes| d of the walk (moves that change nothing included, each accepted with
    probability 1), on SAopt's interval [1e-5, 1] (``uniroot``; bisection here, to full
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
            "choose --init-prob in that range, or use --t0 worsening"
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
    """Validated static configuration (``steps`` in total, split evenly over ``rounds``)."""
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


def anneal(
    n: int | None = 8,
    method: str = "ta",
    chains: int = 1000,
    steps: int = 10_000,
    *,
    rounds: int = 10,
    neighbour: str = "step",
    step: int | None = None,
    objective: str = "attacks",
    edge: str | None = None,
    seed: int = 0,
    batch: int | None = None,
    q: float | None = None,
    init_prob: float | None = None,
    alpha: float | None = None,
    t0: str | float | None = None,
    walk: int = 2000,
    start=None,
    best_boards: bool = False,
    trace_chains: int = 0,
    quiet: bool | None = True,
    announce=None,
    checkpoint=None,
    resume: bool = False,
    checkpoint_every: float = 30.0,
    instance: cons.Constraints | None = None,
    toroidal: bool = False,
) -> AnnealResult:
    """Run ``chains`` independent LS/TA/SA chains of ``steps`` steps each (stopping when solved).

    Args:
      n: board size (>= 4).
      method: "ls", "ta" or "sa".
      chains: chains to run; chain i is seeded from ``fold_in(key, i)``.
      steps: step budget per chain, split into ``rounds`` thresholds/temperatures.
      neighbour: "step" (NMOF's move of one queen by 1..step rows within its column) or "swap".
      step: the step neighbour's largest move (default 3).
      objective: "attacks" (NMOF) or "pairs".
      edge: the step neighbour past the edge: "wrap" (row mod n, default) or "nmof" (to the far
        end, as the NMOF vignette's ``neighbour``).
      batch: chains per kernel call (default: automatic).
      q: TA's first threshold quantile (default 0.5); init_prob, alpha: SA's start acceptance
        (0.4) and cooling (0.9); walk: the calibration walk's moves.
      t0: SA start temperature: "worsening" (default), "nmof" (SAopt's rule) or a number (see
        :func:`calibrate`).

      An option the method (or neighbour) does not use is refused by name
      (:data:`jaxqueens.drivers.settings.ANNEAL`): ``alpha`` with "ls", ``q`` with "sa",
      ``step`` with the swap neighbour.
      start: a board [n] (rows 0..n-1, repeats allowed) every chain starts from (default: a
        random permutation per chain). Rows that repeat need the step neighbour (swap keeps
        every row's occupancy, so it could never solve such a start).
      best_boards: also recover the best board of every unsolved chain
        (``AnnealResult.best_boards``, with its attacking pairs).
      trace_chains: also record the best-so-far trace of chains 0..k-1 (every
        ``max(1, steps // 2000)`` steps: ``AnnealResult.trace_every``).
      quiet: no progress line (None: a progress line on a terminal only).
      announce: called with a one-line message (e.g. the estimated run time) before the run.
      checkpoint, resume, checkpoint_every: as for :func:`jaxqueens.solve`.
      instance: a constrained instance (n is then its size: pass None or the same n); fixed
        queens never move, forbidden squares are never used (step neighbour only, no start).
      toroidal: queens attack along diagonals modulo n (also when ``instance`` says so).
    """
    arguments.choice(method, "method", sls_choices.METHODS)
    arguments.choice(neighbour, "neighbour", sls_choices.NEIGHBOURS)
    opts = settings.resolve(
        settings.ANNEAL,
        {"method": method, "neighbour": neighbour},
        {"q": q, "init_prob": init_prob, "alpha": alpha, "t0": t0, "step": step, "edge": edge},
        "anneal",
    )
    model, mask = _instance(n, instance, toroidal, neighbour, start)
    n = as_size(n if model is None else model.n)
    checked = settings.check_anneal(
        n=n,
        method=method,
        chains=chains,
        steps=steps,
        rounds=rounds,
        neighbour=neighbour,
        objective=objective,
        walk=walk,
        seed=seed,
        batch=batch,
        **opts,
    )
    seed, step, edge = checked["seed"], checked["step"], opts["edge"]
    q, init_prob, alpha, t0 = checked["q"], checked["init_prob"], checked["alpha"], checked["t0"]
    constrained = mask is not None
    config = make_config(
        n,
        method,
        steps,
        rounds,
        neighbour,
        step,
        objective,
        edge,
        toroidal=model is not None and model.toroidal,
        constrained=constrained,
    )
    if start is not None:
        start = as_board(np.asarray(start).reshape(-1), n, what="the start board")
        if neighbour == "swap" and len(np.unique(start)) < n:
            raise QueensError(
                f"the start board has {n - len(np.unique(start))} queen(s) on an occupied row and "
                "--neighbour swap never changes which rows are occupied, so no chain could solve "
                "it; use --neighbour step (moves one queen within its column)"
            )
    cal_key, key = jax.random.split(jax.random.key(seed))
    schedule, per_step = calibrate(cal_key, config, walk, q, init_prob, alpha, t0, start, mask)
    devices = jax.local_device_count()
    if announce is not None:
        estimate = per_step * config.total_steps * chains / devices
        announce(
            f"{method.upper()}: estimated run time at most ~{estimate:,.1f} s "
            f"({chains} chains x {config.total_steps} steps; chains stop when solved)"
        )
    chunk = batch or min(
        -(-chains // devices) * devices, max(devices, (1 << 22) // config.total_steps)
    )
    kernel = sls.Kernel(config)
    board = None if start is None else jnp.asarray(start)
    data = sls.Data(jnp.asarray(schedule), board, mask)
    started = time.perf_counter()
    runner = chain_batch.compile_runner(kernel, key, chunk, data)
    compile_s = time.perf_counter() - started
    fields = {k: v for k, v in dataclasses.asdict(config).items() if k != "edge" or v != "wrap"}
    fingerprint = {
        "command": "anneal",
        "solver": f"annealing-{method}",
        "config": fields,
        "schedule": [float(x) for x in schedule],
        "seed": seed,
    }
    if start is not None:  # the default run's fingerprint is unchanged (old checkpoints resume)
        fingerprint["start"] = start.tolist()
    if model is not None:
        fingerprint["instance"] = model.to_dict()
    run = driver.run_chains(
        runner,
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
    )
    traces = None
    every = max(1, config.total_steps // 2000)
    if trace_chains > 0:
        seeds = chain_seeds(key, jnp.arange(trace_chains))
        traces = np.asarray(
            jax.jit(
                jax.vmap(
                    lambda s: sls.trace(s, config, data.schedule, every, data.start, data.mask)
                )
            )(seeds)
        )
    best = (
        best_of_unsolved(key, config, data, run, model)
        if best_boards and run.stopped_by != "interrupted"
        else (None, None, None)
    )
    summary = driver.summarize(
        run,
        solver=f"annealing-{method}",
        method=method,
        neighbour=neighbour,
        step=step,
        objective=objective,
        edge=edge,
        t0=t0,
        start=None if start is None else start.tolist(),
        steps_budget=config.total_steps,
        rounds=rounds,
        schedule=[float(x) for x in schedule],
        best_objective_mean=float(run.best.mean())
        if run.best is not None and run.best.size
        else None,
        best_objective_min=int(run.best.min()) if run.best is not None and run.best.size else None,
        seed=seed,
        chunk=chunk,
        backend=jax.default_backend(),
        devices=devices,
    )
    if model is not None:
        summary["instance"] = model.to_dict()
        summary["status"] = "SAT" if run.solved.any() else "unknown"
    if best[0] is not None:
        summary["best_boards"] = {
            "chains": len(best[0]),
            "pairs_min": int(best[2].min()) if len(best[2]) else None,
        }
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


def _instance(n, instance, toroidal: bool, neighbour: str, start):
    """(model or None, kernel mask or None): :func:`jaxqueens.drivers.chains.instance_setup`,
    refusing what a constrained chain cannot honour (the swap neighbour, a start board)."""
    model, mask = driver.instance_setup(None if n is None else as_size(n), instance, toroidal)
    if mask is None:
        return model, None
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
    return model, mask


REPLAY_BATCH = 4096
"""Unsolved chains replayed per call by :func:`best_of_unsolved` (bounds memory)."""


def best_of_unsolved(
    key,
    config: sls.Config,
    data: sls.Data,
    run: driver.ChainRun,
    model: cons.Constraints | None = None,
):
    """(chain ids [U], best boards [U, n], their attacking pairs [U]) of the unsolved chains of
    ``run``, by replaying each to the step of its best objective; each replayed board's
    objective is checked against the one the chain reported. With ``model`` the pairs are
    counted by the independent constrained checker (modular diagonals on the torus), and no
    best board may move a fixed queen or use a forbidden square (outside a column that has none)."""
    ids = run.chain_id[~run.solved]
    upto = run.steps[~run.solved]
    fn = jax.jit(
        jax.vmap(lambda s, u: sls.replay(s, config, data.schedule, u, data.start, data.mask).rows)
    )
    parts = [
        np.asarray(
            fn(
                chain_seeds(key, jnp.asarray(ids[i : i + REPLAY_BATCH])),
                jnp.asarray(upto[i : i + REPLAY_BATCH], jnp.int32),
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
    if data.mask is not None and len(boards):
        allowed = np.asarray(data.mask.allowed)
        stranded = ~allowed[np.arange(config.n)[None, :], boards]
        if (stranded & allowed.any(axis=1)[None, :]).any():
            raise RuntimeError("a best board uses a forbidden square")
        objective = objective + stranded.sum(axis=1)
    if run.best is not None and not np.array_equal(objective, run.best[~run.solved]):
        raise RuntimeError("replayed best boards disagree with the chains' best objectives")
    return ids.astype(np.int64), boards, pairs


def _attacks(boards: np.ndarray, toroidal: bool = False) -> np.ndarray:
    """NMOF's attack count of each board [B, n] in NumPy: queens minus lines occupied, over
    rows, diagonals and anti-diagonals (taken modulo n when ``toroidal``)."""
    n = boards.shape[1] if boards.ndim == 2 else 0
    cols = np.arange(n)
    lines = (boards, boards - cols, boards + cols)
    if toroidal:
        lines = (boards, (boards - cols) % n, (boards + cols) % n)
    return np.array(
        [sum(n - len(np.unique(line[i])) for line in lines) for i in range(len(boards))], np.int64
    )
