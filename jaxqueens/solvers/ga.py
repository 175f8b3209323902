"""Genetic algorithms for N-Queens, written for one trial: its islands `[I, P, n]`.

Two schemes: `steady` (the classic course GA: tournament, two children replace the two worst)
and `generational` (DEAP's `eaSimple`, Back, Fogel & Michalewicz 2000), with islands on a ring.
The kernel keeps the package's contract (`jaxqueens.solvers.base`); `Config` and `Params` are
defined in `ga_config`, the operators and schemes in `ga_ops`, all importable from here. The
docs' ga page describes the schemes, the operator signatures, constrained boards and the
randomness.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxqueens.core.rng import chain_seeds, stream_bits
from jaxqueens.solvers import base, ga_genomes, ga_repair
from jaxqueens.solvers.base import as_key
from jaxqueens.solvers.constrained import Mask, allowed_start
from jaxqueens.solvers.ga_config import ENCODINGS as ENCODINGS
from jaxqueens.solvers.ga_config import MAX_N as MAX_N
from jaxqueens.solvers.ga_config import SCHEMES as SCHEMES
from jaxqueens.solvers.ga_config import Config as Config
from jaxqueens.solvers.ga_config import Params as Params
from jaxqueens.solvers.ga_config import check_values
from jaxqueens.solvers.ga_config import default_params as default_params
from jaxqueens.solvers.ga_ops import Operators as Operators
from jaxqueens.solvers.ga_ops import Shared as Shared
from jaxqueens.solvers.ga_ops import crossover_row as crossover_row
from jaxqueens.solvers.ga_ops import fitness_row as fitness_row
from jaxqueens.solvers.ga_ops import generational_islands as generational_islands
from jaxqueens.solvers.ga_ops import migrate as migrate
from jaxqueens.solvers.ga_ops import mutation_row as mutation_row
from jaxqueens.solvers.ga_ops import operators as operators
from jaxqueens.solvers.ga_ops import shared_of
from jaxqueens.solvers.ga_ops import steady_island as steady_island

I32 = jnp.int32


def _checked(config: Config, params: Params, problem=None, state=None) -> None:
    base.check_kernel_args(
        "ga",
        config,
        Config,
        params,
        _TEMPLATE,
        lambda values: check_values(
            dict(zip(Params._fields, values, strict=True)), config, "params."
        ),
        state,
        State,
    )
    if problem is not None:
        base.check_type("problem", problem, Problem)


_TEMPLATE = Params._make(
    np.zeros((), np.int32 if f in Params._fields[3:8] else np.float32) for f in Params._fields
)


class Problem(NamedTuple):
    """What is solved beyond `n` (dynamic; every trial of a batch may share it)."""

    mask: Mask | None = None  #: the instance (Config.constrained), or None


def _problem(problem) -> Problem:
    return Problem() if problem is None else problem


class State(NamedTuple):
    """One trial (add a leading [T] axis when batched)."""

    genes: jax.Array  #: [I, P, n] int8/int16 genomes
    fit: jax.Array  #: [I, P] int32 (or the fitness' dtype), fitness of each genome
    seed: jax.Array  #: [I, 2] uint32 islands' 64-bit stream seeds (fixed for the run)
    gen: jax.Array  #: [] int32 generations done
    best_rows: jax.Array  #: [n] int8/int16 the best genome seen (the first with its fitness)
    best_fit: jax.Array  #: [] its fitness


class Metrics(NamedTuple):
    """One generation of one trial (what the driver records)."""

    best: jax.Array  #: [] lowest fitness over the islands
    avg: jax.Array  #: [] float32 mean fitness
    worst: jax.Array  #: [] highest fitness
    nevals: jax.Array  #: [] int32 evaluations, counted as DEAP does
    sols: jax.Array  #: [I, K, n] int8/int16 candidates (K = Config.sols_per_gen)
    #: [I, K] bool: the candidate reached Params.target (a solution, except under the report's
    #: fitness or a user's, where the driver checks it)
    sols_ok: jax.Array


class Result(NamedTuple):
    """What one trial reports ([T] leading axis when batched)."""

    rows: jax.Array  #: [n] int32 the best board seen (the first with the lowest fitness)
    solved: jax.Array  #: [] bool its fitness reached Params.target
    steps: jax.Array  #: [] int32 generations run (work spent; the initial population is 0)
    best: jax.Array  #: [] fitness of rows


# ----------------------------------------------------------------------------- init


def init(key: jax.Array, config: Config, params: Params, problem: Problem | None = None) -> State:
    """Random initial islands of one trial.

    Island i draws from `fold_in(key, i)` only. Under `config.constrained` every fixed queen
    of `problem.mask` stands on its square (and the combination encoding starts from a random
    allowed square per column).

    Args:
      key: a typed `jax.random.key` (consumed).
      config: the static `Config`.
      params: the `Params`.
      problem: the instance (`Problem`), under `config.constrained`; else None.

    Returns:
      The trial's first `State`.

    Raises:
      QueensError: an argument of the wrong type or shape, or a concrete value out of range.
    """
    _checked(config, params, problem)
    n, p = config.n, config.pop
    sh = shared_of(config, params, _problem(problem))
    mask = sh.mask
    slot = jnp.arange(p, dtype=jnp.uint32)

    def island(seed):
        s = stream_bits(seed, 0x7FFFFFFF, slot)
        if config.encoding == "permutation":
            g = jax.vmap(lambda s: ga_genomes.fisher_yates(s, n))(s)
            if sh.fixed is not None:  # constrained
                fixed = sh.fixed
                g = jax.vmap(lambda x: ga_repair.repair_permutation(x, fixed))(g)
        elif mask is not None:  # constrained: a random allowed square per column, fixed queens
            wide = jnp.stack([s, stream_bits(seed, 0x7FFFFFFE, slot)], axis=-1)  # [P, 2]
            g = jax.vmap(lambda s2: allowed_start(s2, mask))(wide)
        else:
            g = jax.vmap(lambda s: ga_genomes.randint(s, 0, n, n))(s)
        return g.astype(ga_genomes.gene_dtype(n))

    seeds = chain_seeds(as_key(key), jnp.arange(config.islands, dtype=I32))
    genes = jax.vmap(island)(seeds)
    fit_one = fitness_row(config)
    fit = jax.vmap(jax.vmap(lambda x: fit_one(sh, x)))(genes)
    best = jnp.argmin(fit.reshape(-1))
    return State(
        genes=genes,
        fit=fit,
        seed=seeds,
        gen=jnp.int32(0),
        best_rows=genes.reshape(-1, n)[best],
        best_fit=fit.reshape(-1)[best],
    )


def initial_metrics(state: State, config: Config, params: Params) -> Metrics:
    """Metrics of the initial islands (generation 0); evaluations = the initial population.

    Args:
      state: the trial's first `State` (from `init`).
      config: the static `Config`.
      params: the `Params`.

    Returns:
      `Metrics` of generation 0.
    """
    best = jnp.argmin(state.fit, axis=1)  # [I]
    sols = jnp.take_along_axis(state.genes, best[:, None, None], axis=1)
    sols = jnp.broadcast_to(sols, (config.islands, config.sols_per_gen, config.n))
    ok = jnp.min(state.fit, axis=1) <= params.target
    ok = jnp.broadcast_to(ok[:, None], sols.shape[:2])
    return _metrics(state.fit, jnp.int32(config.islands * config.pop), sols, ok)


def _metrics(fit, nevals, sols, ok, best=None) -> Metrics:
    best = jnp.min(fit) if best is None else best
    return Metrics(best, jnp.mean(fit, dtype=jnp.float32), jnp.max(fit), nevals, sols, ok)


def generation(
    state: State, config: Config, params: Params, problem: Problem | None = None
) -> tuple[State, Metrics]:
    """Generation `state.gen + 1` of every island (then migration when due), with its metrics.
    Runs whether or not the trial is [`done`][jaxqueens.solvers.ga.done]
    ([`step`][jaxqueens.solvers.ga.step] is the gated form).

    Args:
      state: the trial's `State`.
      config: the static `Config`.
      params: the `Params`.
      problem: as for `init`.

    Returns:
      `(state, metrics)`: the next `State` and the generation's `Metrics`.
    """
    sh = shared_of(config, params, _problem(problem))
    gen = state.gen + 1
    seeds = stream_bits(state.seed, gen, jnp.zeros((), jnp.uint32))  # [I] this generation's
    if config.scheme == "steady":
        island = lambda s, g, f: steady_island(s, g, f, config, params, sh)
        genes, fit, nevals, sols, ok = jax.vmap(island)(seeds, state.genes, state.fit)
        nevals = jnp.sum(nevals)
    else:
        genes, fit, nevals, sols, ok = generational_islands(
            seeds, state.genes, state.fit, config, params, sh
        )
    if config.islands > 1:
        every = params.migrate_every
        due = (every > 0) & (gen % jnp.maximum(every, 1) == 0)
        genes, fit = lax.cond(
            due,
            lambda g, f: migrate(g, f, config, params.migrants),
            lambda g, f: (g, f),
            genes,
            fit,
        )
    flat = fit.reshape(-1)
    i = jnp.argmin(flat)  # the generation's best: the metric and the best seen, one reduction
    better = flat[i] < state.best_fit
    state = State(
        genes=genes,
        fit=fit,
        seed=state.seed,
        gen=gen,
        best_rows=jnp.where(better, genes.reshape(-1, config.n)[i], state.best_rows),
        best_fit=jnp.where(better, flat[i], state.best_fit),
    )
    return state, _metrics(fit, nevals, sols, ok, flat[i])


def done(state: State, config: Config, params: Params) -> jax.Array:
    """[] bool: solved (best fitness at most `params.target`) or `params.generations` run.

    Args:
      state: the trial's `State`.
      config: the static `Config`.
      params: the `Params`.

    Returns:
      [] bool.
    """
    return (state.gen >= params.generations) | (state.best_fit <= params.target)


def step(state: State, config: Config, params: Params, problem: Problem | None = None) -> State:
    """One generation ([`generation`][jaxqueens.solvers.ga.generation]); a no-op once
    [`done`][jaxqueens.solvers.ga.done].

    Args:
      state: the trial's `State`.
      config: the static `Config`.
      params: the `Params`.
      problem: as for `init`.

    Returns:
      The next `State`.
    """
    _checked(config, params, problem, state)
    return lax.cond(
        done(state, config, params),
        lambda s: s,
        lambda s: generation(s, config, params, problem)[0],
        state,
    )


def result(state: State, config: Config, params: Params) -> Result:
    """What the trial reports: its best board seen, solved, generations run, best fitness.

    Args:
      state: the trial's `State`.
      config: the static `Config`.
      params: the `Params`.

    Returns:
      The trial's `Result`.
    """
    return Result(
        rows=state.best_rows.astype(I32),
        solved=state.best_fit <= params.target,
        steps=state.gen,
        best=state.best_fit,
    )


def finish(state: State, config: Config, params: Params, problem: Problem | None = None) -> Result:
    """Generations from `state` until [`done`][jaxqueens.solvers.ga.done] (a `lax.while_loop`), then
    its result: [`run`][jaxqueens.solvers.ga.run] from a given state.

    Args:
      state: the trial's `State`.
      config: the static `Config`.
      params: the `Params`.
      problem: as for `init`.

    Returns:
      The trial's `Result`.
    """
    _checked(config, params, problem, state)
    state = lax.while_loop(
        lambda s: ~done(s, config, params),
        lambda s: generation(s, config, params, problem)[0],
        state,
    )
    return result(state, config, params)


def run(key: jax.Array, config: Config, params: Params, problem: Problem | None = None) -> Result:
    """One trial: generations until solved or `params.generations` are run.

    Args:
      key: a typed `jax.random.key` (consumed).
      config: the static `Config`.
      params: the `Params`.
      problem: as for `init`.

    Returns:
      The trial's `Result`.

    Raises:
      QueensError: as for `init`.
    """
    return finish(init(key, config, params, problem), config, params, problem)
