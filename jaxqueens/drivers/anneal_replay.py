"""Replays of LS/TA/SA chains after a run: best-so-far traces and unsolved chains' best boards.

A chain is deterministic given its key, so replaying it to the step of its best objective
recovers its best board (`jaxqueens.solvers.anneal.replay`) at no cost to the run itself.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import checker
from jaxqueens.core import constraints as cons
from jaxqueens.drivers import chains_types
from jaxqueens.solvers import anneal as sls
from jaxqueens.solvers.base import chain_keys


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


def replays(
    key,
    config: sls.Config,
    params: sls.Params,
    problem: sls.Problem | None,
    run: chains_types.ChainRun,
    model: cons.Constraints | None,
    trace_chains: int,
    best_boards: bool,
) -> tuple[np.ndarray | None, int, tuple]:
    """What `anneal` replays after the run (the chains are deterministic given their keys): chains
    0..trace_chains-1 traced, and with `best_boards` the best board of every unsolved chain
    (`best_of_unsolved`).

    `problem` is the chains' start board and/or mask (or None), `model` the constrained instance (or
    None). Returns (the traces [k, T] or None, their steps between records, the `best_of_unsolved`
    triple or three Nones)."""
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


REPLAY_BATCH = 4096  # unsolved chains replayed per call by `best_of_unsolved` (bounds memory)


def best_of_unsolved(
    key,
    config: sls.Config,
    params: sls.Params,
    problem: sls.Problem | None,
    run: chains_types.ChainRun,
    model: cons.Constraints | None = None,
):
    """The best boards of the unsolved chains of `run`, by replaying each to the step of its best.

    Each replayed board's objective is checked against the one the chain reported; with `model` (a
    constrained instance) the pairs are counted by the independent constrained checker, and no best
    board may use a forbidden square (outside a column that has none). Returns (chain ids [U] int64,
    best boards [U, n] int32, their attacking pairs [U] int64)."""
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
