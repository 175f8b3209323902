"""Genetic algorithms for N-Queens: many populations evolved at once, ``lax.scan`` over generations.

Two loops over batches of trials, each of several populations (*islands*):

- ``steady`` (the classic course GA): each generation one tournament of ``k`` distinct random
  individuals; its best two breed (crossover with probability ``cxpb``), each child is mutated
  with probability ``mutpb``, both are added, and the two worst of the ``pop + 2`` are removed
  (ties: older individuals go first), so the best individual is never lost.
- ``generational`` (DEAP's ``eaSimple``, Back, Fogel & Michalewicz 2000): ``pop`` tournament
  selections (size ``k``, with replacement), consecutive pairs mated with probability ``cxpb``,
  each offspring mutated with probability ``mutpb``, then the offspring replace the population;
  ``elite > 0`` copies that many best parents over the worst offspring (0 is pure eaSimple).
  Selection and replacement are written for one island (``ask``/``tell``) and vmapped; crossover,
  mutation and evaluation run on the flattened batch, only on the rows they apply to
  (``ga_ops.masked_apply``: DEAP's rates leave most rows unchanged).

Islands of a trial exchange individuals on a ring every ``migrate_every`` generations: island i's
``migrants`` best replace island i+1's worst. Trials are independent; trial t is seeded from
``fold_in(key(seed), t)``, so its result does not depend on how many trials run beside it.

Fitness is the number of attacking pairs (minimised, 0 = solution; ``fitness="excess"`` selects
DEAP's sum over lines of queens beyond the first instead; ``fitness="report-diagonals-only"`` the
GA report's score, diagonal pairs only, whose 0 is not always a solution: the driver checks and
labels such boards). "Evaluations" are counted as
DEAP counts them: the initial population plus, per generation, every individual changed by
crossover or mutation (steady-state: the two children).

Constrained boards (issue 16): the static switches ``GAConfig.toroidal`` (diagonals taken modulo
n: :data:`~jaxqueens.solvers.ga_ops.TOROIDAL_FITNESS`) and ``GAConfig.constrained`` (an instance's
:class:`~jaxqueens.solvers.constrained.Mask`, a dynamic argument ``mask``: a new instance of the
same n never recompiles); both off, the code is what it was. Under ``constrained`` every genome
the GA creates (initial, crossover, mutation) is repaired so that each fixed queen stands on its
square (:data:`~jaxqueens.solvers.ga_ops.REPAIRS`: a swap in the permutation encoding, which
keeps a permutation; a reset in the combination encoding), so no evaluated or reported genome
moves a fixed queen; a queen on a forbidden square adds
:func:`~jaxqueens.solvers.ga_ops.forbidden_weight` (more than all attacking pairs together) to the
fitness, so a board of fitness 0 never uses one. The combination encoding starts from a random
allowed square per column (:func:`~jaxqueens.solvers.constrained.allowed_start`).

Static configuration (shapes, code paths) is :class:`GAConfig`; the rates are the dynamic
:class:`GAParams`. This module is the kernel: :func:`init` / :func:`init_trials`, :func:`step`
(one generation) and :func:`run_chunk` (a ``lax.scan`` over a chunk of generations). The host
driver, :func:`jaxqueens.drivers.ga.evolve`, splits the trials over devices, runs the chunks and
keeps the records.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens.core.rng import chain_seeds, hash_bits
from jaxqueens.solvers import ga_ops as ops
from jaxqueens.solvers.constrained import Mask, allowed_start

I32 = jnp.int32
ENCODINGS = ("permutation", "combination")
SCHEMES = ("steady", "generational")


@dataclasses.dataclass(frozen=True)
class GAConfig:
    """Static configuration: fixes shapes and code paths (hashable, a jit static argument).

    ``cx_cap32`` / ``mut_cap32`` / ``eval_cap32`` (0..32) size the compacted batches of the
    generational loop in 32nds (see :func:`jaxqueens.solvers.ga_ops.masked_apply`): results never
    depend on them, only the speed does; :func:`jaxqueens.drivers.ga.check_setup` sets them from
    the rates.
    """

    n: int
    pop: int
    encoding: str = "permutation"
    scheme: str = "steady"
    crossover: str = "cut"
    mutation: str = "swap"
    tournament: int = 5
    elite: int = 0  # generational: best parents kept over the worst offspring
    islands: int = 1
    migrants: int = 1
    fitness: str = "pairs"  # "pairs": attacking pairs; "excess": sum(k - 1) over lines (DEAP's);
    # "report-diagonals-only": diagonal pairs, rows ignored (the GA report's; 0 may not be solved)
    cx_cap32: int = 32
    mut_cap32: int = 32
    eval_cap32: int = 32
    toroidal: bool = False  # queens attack along diagonals modulo n
    constrained: bool = False  # the kernels read an instance Mask: fixed queens, forbidden squares

    @property
    def sols_per_gen(self) -> int:
        """Individuals per island and generation checked for solutions (children, or the best)."""
        return 2 if self.scheme == "steady" else 1


class GAParams(NamedTuple):
    """Dynamic parameters (a pytree: change or vmap them without recompiling)."""

    cxpb: jax.Array  # [] float32: crossover probability per pair
    mutpb: jax.Array  # [] float32: mutation probability per child
    indpb: jax.Array  # [] float32: per-gene rate of swap / reset mutation; <= 0: one gene
    migrate_every: jax.Array  # [] int32: generations between migrations; 0: never


class State(NamedTuple):
    """A batch of T trials, each of I islands of P genomes."""

    genes: jax.Array  # [T, I, P, n] int8/int16 genomes
    fit: jax.Array  # [T, I, P] int32 fitness (attacking pairs, or excess)
    seed: jax.Array  # [T, I] uint32 island seeds


class Metrics(NamedTuple):
    """One generation of T trials."""

    best: jax.Array  # [T] int32 lowest fitness over the islands
    avg: jax.Array  # [T] float32 mean fitness
    worst: jax.Array  # [T] int32 highest fitness
    nevals: jax.Array  # [T] int32 evaluations, counted as DEAP does
    sols: jax.Array  # [T, I, K, n] int8/int16 candidates (K = sols_per_gen)
    sols_ok: jax.Array  # [T, I, K] bool: the candidate has fitness 0 (a solution, except under
    # the report's fitness, where the driver checks it)


def _islands(f, *args):
    """``f`` written for one island, mapped over the [T, I] leading axes."""
    return jax.vmap(jax.vmap(f))(*args)


def fitness_fn(config: GAConfig, mask: Mask | None = None):
    """The fitness of one genome ``[n]`` under ``config``'s attack rule, plus
    :func:`~jaxqueens.solvers.ga_ops.forbidden_weight` per queen on a square ``mask`` forbids
    (``config.constrained``)."""
    base = (ops.TOROIDAL_FITNESS if config.toroidal else ops.FITNESS)[config.fitness]
    if not config.constrained:
        return base
    assert mask is not None  # a constrained config comes with its instance
    weight = ops.forbidden_weight(config.n)
    return lambda x: base(x) + weight * ops.forbidden(x, mask)


def operators(config: GAConfig, mask: Mask | None = None):
    """(crossover, mutation) of ``config``; under ``config.constrained`` each child is repaired
    so that every fixed queen of ``mask`` stands on its square."""
    cx = ops.CROSSOVERS[config.encoding][config.crossover]
    mut = ops.MUTATIONS[config.encoding][config.mutation]
    if not config.constrained:
        return cx, mut
    assert mask is not None  # a constrained config comes with its instance
    fixed, repair = ops.fixed_of(mask), ops.REPAIRS[config.encoding]
    fix = lambda x: repair(x, fixed)
    return (
        lambda s, a, b: tuple(fix(c) for c in cx(s, a, b)),
        lambda s, x, indpb: fix(mut(s, x, indpb)),
    )


def init(
    key: jax.Array, config: GAConfig, trials: int, first: int = 0, mask: Mask | None = None
) -> State:
    """Random initial islands of trials ``first .. first+trials-1`` (key is consumed).

    Trial t draws from ``fold_in(key, t)`` only, so it does not depend on ``trials``. Under
    ``config.constrained`` every fixed queen of ``mask`` stands on its square.
    """
    n, p = config.n, config.pop
    slot = jnp.arange(p, dtype=jnp.uint32)

    def island(seed):
        s = hash_bits(seed, 0x7FFFFFFF, slot)
        if config.encoding == "permutation":
            g = jax.vmap(lambda s: ops.fisher_yates(s, n))(s)
            if config.constrained:
                assert mask is not None  # a constrained config comes with its instance
                fixed = ops.fixed_of(mask)
                g = jax.vmap(lambda x: ops.repair_permutation(x, fixed))(g)
        elif config.constrained:  # a random allowed square per column, fixed queens included
            assert mask is not None  # a constrained config comes with its instance
            g = jax.vmap(lambda s: allowed_start(s, mask))(s)
        else:
            g = jax.vmap(lambda s: ops.randint(s, 0, n, n))(s)
        return g.astype(ops.gene_dtype(n))

    trial_keys = jax.vmap(lambda t: jax.random.fold_in(key, t))(first + jnp.arange(trials))
    seeds = jax.vmap(lambda k: chain_seeds(k, jnp.arange(config.islands, dtype=I32)))(trial_keys)
    genes = _islands(island, seeds)
    return State(genes, _islands(jax.vmap(fitness_fn(config, mask)), genes), seeds)


def steady_island(seed, genes, fit, params: GAParams, config: GAConfig, mask: Mask | None = None):
    """One steady-state generation of one island ``genes [P, n]``: two children, two worst out."""
    cx, mut = operators(config, mask)
    s = hash_bits(seed, 1, jnp.arange(4, dtype=jnp.uint32))
    par = ops.tournament_best_two(s[0], fit, config.tournament)
    a, b = genes[par[0]], genes[par[1]]
    c1, c2 = cx(s[1], a, b)
    do_cx = ops.uniform(s[1], 42, 1)[0] < params.cxpb
    kids = jnp.where(do_cx, jnp.stack([c1, c2]), jnp.stack([a, b]))
    do_mut = ops.uniform(s[2], 41, 2) < params.mutpb
    mutated = jax.vmap(mut, in_axes=(0, 0, None))(s[2:], kids, params.indpb)
    kids = jnp.where(do_mut[:, None], mutated, kids)
    kfit = jax.vmap(fitness_fn(config, mask))(kids)
    p = config.pop
    worst = ops.worst_indices(jnp.concatenate([fit, kfit]), 2)  # pop first: ties remove the old
    kid_out = jnp.any(worst[:, None] == p + jnp.arange(2), axis=0)  # [2] child removed
    free = jnp.sort(jnp.where(worst < p, worst, p))  # freed pop slots first, p = none
    dst = jnp.where(kid_out, p, jnp.stack([free[0], free[jnp.where(kid_out[0], 0, 1)]]))
    genes = genes.at[dst].set(kids, mode="drop")
    fit = fit.at[dst].set(kfit, mode="drop")
    return genes, fit, I32(2), kids, kfit == 0


def generational_step(
    seeds, genes, fit, params: GAParams, config: GAConfig, mask: Mask | None = None
):
    """One generation of DEAP's eaSimple (plus optional elitism) on islands ``[T, I, P, n]``.

    Selection and replacement run per island; crossover, mutation and evaluation run on the
    flattened batch, each only on the rows it applies to (``ops.masked_apply``).
    """
    cx, mut = operators(config, mask)
    T, I, p, n = genes.shape
    h = p // 2
    slot = jnp.arange(p, dtype=jnp.uint32)

    def ask(seed, g, f):  # tournament selection and this island's random draws
        sel = jax.vmap(lambda s: ops.tournament(s, f, config.tournament))(hash_bits(seed, 1, slot))
        do_cx = ops.uniform(seed, 43, h) < params.cxpb
        do_mut = ops.uniform(seed, 44, p) < params.mutpb
        return g[sel], f[sel], hash_bits(seed, 2, slot[:h]), hash_bits(seed, 3, slot), do_cx, do_mut

    off, off_fit, cx_seeds, mut_seeds, do_cx, do_mut = _islands(ask, seeds, genes, fit)
    rows = lambda x: x.reshape((-1,) + x.shape[3:])
    a, b = rows(off[:, :, 0 : 2 * h : 2]), rows(off[:, :, 1 : 2 * h : 2])
    c1, c2 = ops.masked_apply(
        jax.vmap(cx), rows(do_cx), (rows(cx_seeds), a, b), (a, b), config.cx_cap32
    )
    kids = jnp.stack([c1, c2], axis=1).reshape(T, I, 2 * h, n)
    off = jnp.concatenate([kids, off[:, :, 2 * h :]], axis=2)
    crossed = jnp.concatenate([jnp.repeat(do_cx, 2, axis=2), jnp.zeros((T, I, p - 2 * h), bool)], 2)
    flat = rows(off)
    mutate = jax.vmap(lambda s, x: mut(s, x, params.indpb))
    flat = ops.masked_apply(mutate, rows(do_mut), (rows(mut_seeds), flat), flat, config.mut_cap32)
    invalid = crossed | do_mut
    off_fit = ops.masked_apply(
        jax.vmap(fitness_fn(config, mask)), rows(invalid), (flat,), rows(off_fit), config.eval_cap32
    ).reshape(T, I, p)
    off = flat.reshape(T, I, p, n)

    def tell(g, f, o, of):  # elitism and this island's best
        if config.elite:
            keep, out = ops.best_indices(f, config.elite), ops.worst_indices(of, config.elite)
            o, of = o.at[out].set(g[keep]), of.at[out].set(f[keep])
        best = jnp.argmin(of)
        return o, of, o[best][None], (of[best] == 0)[None]

    off, off_fit, sols, ok = _islands(tell, genes, fit, off, off_fit)
    return off, off_fit, jnp.sum(invalid, axis=2, dtype=I32), sols, ok


def migrate(genes, fit, config: GAConfig):
    """Ring migration over one trial's islands ``[I, P, n]``: island i's best replace island
    i+1's worst."""
    m = config.migrants
    best = jax.vmap(lambda f: ops.best_indices(f, m))(fit)  # [I, m]
    worst = jax.vmap(lambda f: ops.worst_indices(f, m))(fit)
    take = lambda x: jnp.roll(jax.vmap(lambda xi, bi: xi[bi])(x, best), 1, axis=0)
    put = jax.vmap(lambda x, w, v: x.at[w].set(v))
    return put(genes, worst, take(genes)), put(fit, worst, take(fit))


def step(
    state: State, params: GAParams, gen, config: GAConfig, mask: Mask | None = None
) -> tuple[State, Metrics]:
    """Generation ``gen + 1`` of every trial and island (then migration when due); ``mask``: the
    instance, read only under ``config.constrained``."""
    seeds = hash_bits(state.seed, gen + 1, jnp.zeros((), jnp.uint32))  # [T, I]
    if config.scheme == "steady":
        island = lambda s, g, f: steady_island(s, g, f, params, config, mask)
        genes, fit, nevals, sols, ok = _islands(island, seeds, state.genes, state.fit)
    else:
        genes, fit, nevals, sols, ok = generational_step(
            seeds, state.genes, state.fit, params, config, mask
        )
    if config.islands > 1:
        every = params.migrate_every
        due = (every > 0) & ((gen + 1) % jnp.maximum(every, 1) == 0)
        genes, fit = lax.cond(
            due, jax.vmap(lambda g, f: migrate(g, f, config)), lambda g, f: (g, f), genes, fit
        )
    return State(genes, fit, state.seed), _metrics(fit, jnp.sum(nevals, axis=1), sols, ok)


def _metrics(fit, nevals, sols, ok) -> Metrics:
    return Metrics(
        jnp.min(fit, axis=(1, 2)),
        jnp.mean(fit, axis=(1, 2), dtype=jnp.float32),
        jnp.max(fit, axis=(1, 2)),
        nevals,
        sols,
        ok,
    )


def initial_metrics(state: State, config: GAConfig) -> Metrics:
    """Metrics of the initial islands (generation 0); evaluations = the initial population."""
    T, I = state.fit.shape[:2]
    best = jnp.argmin(state.fit, axis=2)
    sols = jnp.take_along_axis(state.genes, best[:, :, None, None], axis=2)
    sols = jnp.broadcast_to(sols, (T, I, config.sols_per_gen, config.n))
    ok = jnp.broadcast_to((jnp.min(state.fit, axis=2) == 0)[:, :, None], sols.shape[:3])
    return _metrics(state.fit, jnp.full(T, I * config.pop, I32), sols, ok)


@functools.partial(jax.jit, static_argnums=(1, 2))
def init_trials(
    key, config: GAConfig, trials: int, first: int = 0, mask: Mask | None = None
) -> tuple[State, Metrics]:
    """Initial states of trials ``first..first+trials-1`` and their generation-0 metrics."""
    state = init(key, config, trials, first, mask)
    return state, initial_metrics(state, config)


def run_chunk(
    states: State,
    params: GAParams,
    gen0,
    stop_gen,
    config: GAConfig,
    length: int,
    mask: Mask | None = None,
) -> tuple[State, Metrics]:
    """Generations ``gen0 .. gen0 + length - 1`` of every trial (a ``lax.scan`` of :func:`step`).

    Generations at or past ``stop_gen`` are skipped (zero metrics), so every chunk has one shape
    and compiles once (``mask``: the instance of a constrained config, dynamic). Trials are
    independent, so a caller may split ``states`` along its trial
    axis (the driver shards it over devices).

    Returns:
      The states after the chunk and the metrics of each generation, ``[length, T, ...]``.
    """

    def skip(st, g):
        zero = jax.eval_shape(lambda s: step(s, params, g, config, mask), st)[1]
        return st, jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), zero)

    def body(st, g):
        return lax.cond(g < stop_gen, lambda s, g: step(s, params, g, config, mask), skip, st, g)

    return lax.scan(body, states, gen0 + jnp.arange(length, dtype=I32))
