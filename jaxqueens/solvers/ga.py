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
DEAP's sum over lines of queens beyond the first instead). "Evaluations" are counted as
DEAP counts them: the initial population plus, per generation, every individual changed by
crossover or mutation (steady-state: the two children).

Static configuration (shapes, code paths) is :class:`GAConfig`; the rates are the dynamic
:class:`GAParams`. The host driver (:func:`evolve`) runs jitted chunks of generations and keeps
the records: Best / Avg / Worst per generation and trial, the first solved generation, every
distinct verified solution seen (steady-state children, each generation's best, the final
populations) and the final populations.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxqueens.solvers import ga_ops as ops
from jaxqueens.core.rng import chain_seeds, hash_bits

I32 = jnp.int32
ENCODINGS = ("permutation", "combination")
SCHEMES = ("steady", "generational")


@dataclasses.dataclass(frozen=True)
class GAConfig:
    """Static configuration: fixes shapes and code paths (hashable, a jit static argument).

    ``cx_cap32`` / ``mut_cap32`` / ``eval_cap32`` (0..32) size the compacted batches of the
    generational loop in 32nds (see :func:`jaxqueens.solvers.ga_ops.masked_apply`): results never depend
    on them, only the speed does; :func:`evolve` sets them from the rates.
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
    fitness: str = "pairs"  # "pairs": attacking pairs; "excess": sum(k - 1) over lines (DEAP's)
    cx_cap32: int = 32
    mut_cap32: int = 32
    eval_cap32: int = 32

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
    fit: jax.Array  # [T, I, P] int32 attacking pairs
    seed: jax.Array  # [T, I] uint32 island seeds


class Metrics(NamedTuple):
    """One generation of T trials."""

    best: jax.Array  # [T] int32 lowest fitness over the islands
    avg: jax.Array  # [T] float32 mean fitness
    worst: jax.Array  # [T] int32 highest fitness
    nevals: jax.Array  # [T] int32 evaluations, counted as DEAP does
    sols: jax.Array  # [T, I, K, n] candidates (K = sols_per_gen)
    sols_ok: jax.Array  # [T, I, K] bool: the candidate has fitness 0


def _islands(f, *args):
    """``f`` written for one island, mapped over the [T, I] leading axes."""
    return jax.vmap(jax.vmap(f))(*args)


def init(key: jax.Array, config: GAConfig, trials: int, first: int = 0) -> State:
    """Random initial islands of trials ``first .. first+trials-1`` (key is consumed).

    Trial t draws from ``fold_in(key, t)`` only, so it does not depend on ``trials``.
    """
    n, p = config.n, config.pop
    slot = jnp.arange(p, dtype=jnp.uint32)

    def island(seed):
        s = hash_bits(seed, 0x7FFFFFFF, slot)
        if config.encoding == "permutation":
            g = jax.vmap(lambda s: ops.random_permutation(s, n))(s)
        else:
            g = jax.vmap(lambda s: ops.randint(s, 0, n, n))(s)
        return g.astype(ops.gene_dtype(n))

    trial_keys = jax.vmap(lambda t: jax.random.fold_in(key, t))(first + jnp.arange(trials))
    seeds = jax.vmap(lambda k: chain_seeds(k, jnp.arange(config.islands, dtype=I32)))(trial_keys)
    genes = _islands(island, seeds)
    return State(genes, _islands(jax.vmap(ops.FITNESS[config.fitness]), genes), seeds)


def steady_island(seed, genes, fit, params: GAParams, config: GAConfig):
    """One steady-state generation of one island ``genes [P, n]``: two children, two worst out."""
    cx = ops.CROSSOVERS[config.encoding][config.crossover]
    mut = ops.MUTATIONS[config.encoding][config.mutation]
    s = hash_bits(seed, 1, jnp.arange(4, dtype=jnp.uint32))
    par = ops.tournament_best_two(s[0], fit, config.tournament)
    a, b = genes[par[0]], genes[par[1]]
    c1, c2 = cx(s[1], a, b)
    do_cx = ops.uniform(s[1], 42, 1)[0] < params.cxpb
    kids = jnp.where(do_cx, jnp.stack([c1, c2]), jnp.stack([a, b]))
    do_mut = ops.uniform(s[2], 41, 2) < params.mutpb
    mutated = jax.vmap(mut, in_axes=(0, 0, None))(s[2:], kids, params.indpb)
    kids = jnp.where(do_mut[:, None], mutated, kids)
    kfit = jax.vmap(ops.FITNESS[config.fitness])(kids)
    p = config.pop
    worst = ops.worst_indices(jnp.concatenate([fit, kfit]), 2)  # pop first: ties remove the old
    kid_out = jnp.any(worst[:, None] == p + jnp.arange(2), axis=0)  # [2] child removed
    free = jnp.sort(jnp.where(worst < p, worst, p))  # freed pop slots first, p = none
    dst = jnp.where(kid_out, p, jnp.stack([free[0], free[jnp.where(kid_out[0], 0, 1)]]))
    genes = genes.at[dst].set(kids, mode="drop")
    fit = fit.at[dst].set(kfit, mode="drop")
    return genes, fit, I32(2), kids, kfit == 0


def generational_step(seeds, genes, fit, params: GAParams, config: GAConfig):
    """One generation of DEAP's eaSimple (plus optional elitism) on islands ``[T, I, P, n]``.

    Selection and replacement run per island; crossover, mutation and evaluation run on the
    flattened batch, each only on the rows it applies to (``ops.masked_apply``).
    """
    cx = ops.CROSSOVERS[config.encoding][config.crossover]
    mut = ops.MUTATIONS[config.encoding][config.mutation]
    T, I, p, n = genes.shape
    h = p // 2
    slot = jnp.arange(p, dtype=jnp.uint32)

    def ask(seed, g, f):  # tournament selection and this island's random draws
        sel = jax.vmap(lambda s: ops.tournament(s, f, config.tournament))(hash_bits(seed, 1, slot))
        do_cx = ops.uniform(seed, 43, h) < params.cxpb
        do_mut = ops.uniform(seed, 44, p) < params.mutpb
        return g[sel], f[sel], hash_bits(seed, 2, slot[:h]), hash_bits(seed, 3, slot), do_cx, do_mut

    off, off_fit, cx_seeds, mut_seeds, do_cx, do_mut = _islands(ask, seeds, genes, fit)
    rows = lambda x: x.reshape((-1,) + x.shape[3:])  # noqa: E731  [T, I, k, ...] -> [T*I*k, ...]
    a, b = rows(off[:, :, 0 : 2 * h : 2]), rows(off[:, :, 1 : 2 * h : 2])
    c1, c2 = ops.masked_apply(jax.vmap(cx), rows(do_cx), (rows(cx_seeds), a, b), (a, b),
                              config.cx_cap32)
    kids = jnp.stack([c1, c2], axis=1).reshape(T, I, 2 * h, n)
    off = jnp.concatenate([kids, off[:, :, 2 * h :]], axis=2)
    crossed = jnp.concatenate([jnp.repeat(do_cx, 2, axis=2), jnp.zeros((T, I, p - 2 * h), bool)], 2)
    flat = rows(off)
    mutate = jax.vmap(lambda s, x: mut(s, x, params.indpb))
    flat = ops.masked_apply(mutate, rows(do_mut), (rows(mut_seeds), flat), flat,
                            config.mut_cap32)
    invalid = crossed | do_mut
    off_fit = ops.masked_apply(jax.vmap(ops.FITNESS[config.fitness]), rows(invalid), (flat,), rows(off_fit),
                               config.eval_cap32).reshape(T, I, p)
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
    take = lambda x: jnp.roll(jax.vmap(lambda xi, bi: xi[bi])(x, best), 1, axis=0)  # noqa: E731
    put = jax.vmap(lambda x, w, v: x.at[w].set(v))
    return put(genes, worst, take(genes)), put(fit, worst, take(fit))


def step(state: State, params: GAParams, gen, config: GAConfig) -> tuple[State, Metrics]:
    """Generation ``gen + 1`` of every trial and island (then migration when due)."""
    seeds = hash_bits(state.seed, gen + 1, jnp.zeros((), jnp.uint32))  # [T, I]
    if config.scheme == "steady":
        island = lambda s, g, f: steady_island(s, g, f, params, config)  # noqa: E731
        genes, fit, nevals, sols, ok = _islands(island, seeds, state.genes, state.fit)
    else:
        genes, fit, nevals, sols, ok = generational_step(seeds, state.genes, state.fit, params, config)
    if config.islands > 1:
        every = params.migrate_every
        due = (every > 0) & ((gen + 1) % jnp.maximum(every, 1) == 0)
        genes, fit = lax.cond(due, jax.vmap(lambda g, f: migrate(g, f, config)),
                              lambda g, f: (g, f), genes, fit)
    return State(genes, fit, state.seed), _metrics(fit, jnp.sum(nevals, axis=1), sols, ok)


def _metrics(fit, nevals, sols, ok) -> Metrics:
    return Metrics(jnp.min(fit, axis=(1, 2)), jnp.mean(fit, axis=(1, 2), dtype=jnp.float32),
                   jnp.max(fit, axis=(1, 2)), nevals, sols, ok)


def initial_metrics(state: State, config: GAConfig) -> Metrics:
    """Metrics of the initial islands (generation 0); evaluations = the initial population."""
    T, I = state.fit.shape[:2]
    best = jnp.argmin(state.fit, axis=2)
    sols = jnp.take_along_axis(state.genes, best[:, :, None, None], axis=2)
    sols = jnp.broadcast_to(sols, (T, I, config.sols_per_gen, config.n))
    ok = jnp.broadcast_to((jnp.min(state.fit, axis=2) == 0)[:, :, None], sols.shape[:3])
    return _metrics(state.fit, jnp.full(T, I * config.pop, I32), sols, ok)


@functools.partial(jax.jit, static_argnums=(1, 2))
def init_trials(key, config: GAConfig, trials: int, first: int = 0) -> tuple[State, Metrics]:
    """Initial states of trials ``first..first+trials-1`` and their generation-0 metrics."""
    state = init(key, config, trials, first)
    return state, initial_metrics(state, config)


@functools.partial(jax.jit, static_argnums=(4, 5, 6), donate_argnums=(0,))
def run_chunk(states: State, params: GAParams, gen0, stop_gen, config: GAConfig, length: int,
              devices: int = 1):
    """Generations ``gen0 .. gen0 + length - 1`` of every trial (a ``lax.scan``); those at or past
    ``stop_gen`` are skipped (zero metrics), so every chunk has one shape and compiles once.
    ``devices > 1`` splits the trials over that many devices with ``shard_map`` (trials are
    independent: no communication)."""
    if devices > 1:
        from jaxqueens.parallel.devices import BATCH_AXIS

        mesh = jax.make_mesh((devices,), (BATCH_AXIS,), devices=jax.devices()[:devices],
                             axis_types=(jax.sharding.AxisType.Auto,))
        P = jax.sharding.PartitionSpec
        local = functools.partial(_scan, config=config, length=length)
        return jax.shard_map(local, mesh=mesh, in_specs=(P(BATCH_AXIS), P(), P(), P()),
                             out_specs=(P(BATCH_AXIS), P(None, BATCH_AXIS)), check_vma=False,
                             )(states, params, gen0, stop_gen)
    return _scan(states, params, gen0, stop_gen, config, length)


def _scan(states, params, gen0, stop_gen, config, length):
    def skip(st, g):
        zero = jax.eval_shape(lambda s: step(s, params, g, config), st)[1]
        return st, jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), zero)

    def body(st, g):
        return lax.cond(g < stop_gen, lambda s, g: step(s, params, g, config), skip, st, g)

    return lax.scan(body, states, gen0 + jnp.arange(length, dtype=I32))


# ----------------------------------------------------------------------------- host driver


@dataclasses.dataclass
class EvolveResult:
    """What :func:`evolve` returns (NumPy arrays; generation 0 is the initial population)."""

    config: GAConfig
    params: dict  # cxpb, mutpb, indpb, migrate_every as Python numbers
    seed: int
    best: np.ndarray  # [G+1, T] int32 lowest attacking pairs per generation and trial
    avg: np.ndarray  # [G+1, T] float32 mean
    worst: np.ndarray  # [G+1, T] int32 highest
    evaluations: np.ndarray  # [G+1, T] int64 evaluations per generation (DEAP's count)
    solutions: np.ndarray  # [S, n] distinct verified solutions seen in any trial (sorted)
    population: np.ndarray  # [T, I, P, n] final genomes
    fitness: np.ndarray  # [T, I, P] final attacking pairs
    wall_s: float  # generations, excluding compilation and initialisation
    compile_s: float
    init_s: float
    interrupted: bool = False  # Ctrl-C: the records cover the generations finished so far

    @property
    def first_solved(self) -> np.ndarray:
        """[T] int: first generation whose best is a solution; -1 if the trial never solved."""
        hit = self.best == 0
        return np.where(hit.any(axis=0), hit.argmax(axis=0), -1)

    @property
    def success_rate(self) -> float:
        """Fraction of trials that found a solution."""
        return float(np.mean(self.first_solved >= 0))

    def success_curve(self) -> np.ndarray:
        """[G+1] fraction of trials solved by generation g."""
        fs = self.first_solved
        g = np.arange(self.best.shape[0])[:, None]
        return np.mean((fs[None, :] >= 0) & (fs[None, :] <= g), axis=1)

    @property
    def evals_per_s(self) -> float:
        """Evaluations (DEAP's count) per second of generation time (initial population included)."""
        return float(self.evaluations.sum()) / max(self.wall_s, 1e-12)


def check_setup(*, n, pop, generations, trials, encoding, scheme, crossover, mutation, tournament,
                cxpb, mutpb, indpb, elite, islands, migrate_every, migrants, fitness="pairs", chunk=None):
    """Validate every setting; return (GAConfig, params dict) or raise a one-line QueensError."""
    from jaxqueens.errors import QueensError

    def need(ok, msg):
        if not ok:
            raise QueensError(msg)

    need(encoding in ENCODINGS, f"encoding {encoding!r} is unknown; use one of {', '.join(ENCODINGS)}")
    need(fitness in ops.FITNESS, f"fitness {fitness!r} is unknown; use one of {', '.join(ops.FITNESS)}")
    need(scheme in SCHEMES, f"scheme {scheme!r} is unknown; use one of {', '.join(SCHEMES)}")
    for what, name, table in (("crossover", crossover, ops.CROSSOVERS), ("mutation", mutation, ops.MUTATIONS)):
        need(name in table[encoding], f"{what} {name!r} does not apply to the {encoding} encoding; "
             f"use one of {', '.join(table[encoding])}")
    for name, v in (("n", n), ("pop", pop), ("generations", generations), ("trials", trials),
                    ("tournament", tournament), ("elite", elite), ("islands", islands),
                    ("migrate_every", migrate_every), ("migrants", migrants), ("chunk", chunk)):
        need(v is None or (isinstance(v, (int, np.integer)) and not isinstance(v, bool)),
             f"{name} must be an integer, got {v!r}")
    need(n >= 4, f"n = {n} has no solution to evolve towards; use n >= 4")
    need(n <= 32767, f"n = {n} is above the GA's limit of 32767 (int16 genes); use a smaller n")
    need(pop >= 2, f"pop = {pop} is too small; a population needs at least 2 individuals")
    need(tournament >= (2 if scheme == "steady" else 1),
         f"tournament = {tournament} is too small; use at least {2 if scheme == 'steady' else 1}")
    need(pop >= tournament, f"pop = {pop} is smaller than the tournament size {tournament}; "
         "raise --pop or lower --tournament")
    for name, v in (("cxpb", cxpb), ("mutpb", mutpb), ("indpb", indpb)):
        need(isinstance(v, (int, float)) and 0.0 <= v <= 1.0, f"{name} = {v!r} must lie in [0, 1]")
    need(generations >= 0 and trials >= 1 and islands >= 1 and migrate_every >= 0,
         "generations and migrate_every must be >= 0, trials and islands >= 1")
    need(0 <= elite < pop, f"elite = {elite} must lie in 0..pop-1 ({pop - 1})")
    need(1 <= migrants < pop, f"migrants = {migrants} must lie in 1..pop-1 ({pop - 1})")
    need(chunk is None or chunk >= 1, f"chunk = {chunk} must be at least 1")
    cap32 = lambda q: min(32, math.ceil(32 * q))  # noqa: E731
    config = GAConfig(n=n, pop=pop, encoding=encoding, scheme=scheme, crossover=crossover,
                      mutation=mutation, tournament=tournament, elite=elite if scheme != "steady" else 0,
                      islands=islands, migrants=migrants, fitness=fitness, cx_cap32=cap32(cxpb), mut_cap32=cap32(mutpb),
                      eval_cap32=cap32(1 - (1 - cxpb) * (1 - mutpb)))
    params = {"cxpb": float(cxpb), "mutpb": float(mutpb), "indpb": float(indpb),
              "migrate_every": int(migrate_every)}
    return config, params


def default_chunk(config: GAConfig, trials: int, generations: int) -> int:
    """Generations per jitted chunk: all of them for small runs, ~2^26 genes of work per chunk."""
    work = trials * config.islands * config.pop * config.n
    return max(1, min(generations, max(10, (1 << 26) // max(work, 1))))


def _place(tree):
    """Shard the leading (trial) axis over host devices when it divides evenly."""
    from jaxqueens.parallel import devices as backend

    return jax.tree.map(backend.shard_batch, tree)


def _collect(found: list, sols, ok):
    sols, ok = np.asarray(sols), np.asarray(ok)
    if ok.any():
        found.append(np.unique(sols[ok].reshape(-1, sols.shape[-1]), axis=0))


def _gather_trials(best, avg, worst, nevals, genes, fit, sols, trials: int):
    """Across processes: records [G+1, T] and populations [T, ...] of all trials, in order,
    and the union of the distinct solutions."""
    from jax.experimental import multihost_utils

    def cat(x, axis):  # [P, ...] from every process, joined along the trial axis, cut to T
        g = np.asarray(multihost_utils.process_allgather(np.asarray(x)))
        return np.take(np.concatenate(list(g), axis=axis), np.arange(trials), axis=axis)

    out = [cat(x, 1) for x in (best, avg, worst, nevals)] + [cat(genes, 0), cat(fit, 0)]
    sizes = np.asarray(multihost_utils.process_allgather(np.int32(len(sols))))
    padded = np.zeros((int(sizes.max()), sols.shape[1]), sols.dtype)
    padded[:len(sols)] = sols
    every = np.asarray(multihost_utils.process_allgather(padded))
    merged = np.concatenate([every[p, :sizes[p]] for p in range(len(sizes))])
    return (*out, np.unique(merged, axis=0) if len(merged) else sols)


def _save_checkpoint(path, states: State, hist, found, done: int, fingerprint: dict) -> None:
    """Population, records and solutions after ``done`` generations, written atomically."""
    from jaxqueens.io import checkpoint

    cols = [np.concatenate([h[i] for h in hist]) for i in range(4)]
    sols = np.concatenate(found) if found else np.zeros((0, states.genes.shape[-1]), np.int32)
    checkpoint.save(path, fingerprint, genes=np.asarray(states.genes), fit=np.asarray(states.fit),
                    seed=np.asarray(states.seed), best=cols[0], avg=cols[1], worst=cols[2],
                    nevals=cols[3], sols=sols, done=done)


def _load_checkpoint(path, fingerprint: dict, like: State):
    """(states, hist, found, generations done) from a checkpoint made with the same settings."""
    from jaxqueens.io import checkpoint

    z = checkpoint.load(path, fingerprint)
    states = _place(State(genes=jnp.asarray(z["genes"]), fit=jnp.asarray(z["fit"]),
                          seed=jnp.asarray(z["seed"])))
    hist = [[z["best"], z["avg"], z["worst"], z["nevals"]]]
    return states, hist, [z["sols"]] if len(z["sols"]) else [], int(z["done"])


def evolve(n: int = 8, pop: int = 100, generations: int = 1000, trials: int = 1, *,
           encoding: str = "permutation", scheme: str = "steady", crossover: str | None = None,
           mutation: str | None = None, tournament: int | None = None, cxpb: float | None = None,
           mutpb: float | None = None, indpb: float = 0.0, elite: int | None = None,
           islands: int = 1, migrate_every: int = 0, migrants: int = 1, fitness: str = "pairs",
           seed: int = 0, chunk: int | None = None, quiet: bool = True,
           checkpoint=None, resume: bool = False, checkpoint_every: float = 30.0) -> EvolveResult:
    """Evolve ``trials`` independent runs (each of ``islands`` populations of ``pop``) at once.

    Args:
      n: board size (>= 4).
      pop: individuals per island.
      generations: generations per trial.
      trials: independent runs (trial t seeded from ``fold_in(key(seed), t)``).
      encoding: "permutation" or "combination".
      scheme: "steady" (two children per generation replace the two worst) or "generational"
        (DEAP's eaSimple, plus ``elite`` best parents kept).
      crossover: permutation: "cut" (default), "pmx", "ox1", "cycle"; combination: "one_point"
        (default), "uniform".
      mutation: permutation: "swap" (default), "inversion", "scramble"; combination: "reset".
      tournament: tournament size (default 5 steady, 3 generational).
      cxpb: crossover probability (default 1 steady, 0.5 generational).
      mutpb: mutation probability per child (default 1 steady, 0.2 generational).
      indpb: per-gene rate of swap/reset mutation (DEAP's indpb); 0 mutates exactly one gene.
      elite: generational only: best parents copied over the worst offspring (default 1).
      islands: populations per trial, on a migration ring.
      migrate_every: generations between migrations (0: never).
      migrants: individuals sent along the ring per migration.
      fitness: what the GA minimises and the records report: "pairs" (attacking pairs, default)
        or "excess" (sum over lines of queens beyond the first: DEAP's N-Queens fitness). Both
        are 0 exactly for solutions.
      seed: random seed.
      chunk: generations per jitted call (default: :func:`default_chunk`).
      quiet: no progress line.
      checkpoint: file for checkpoints (population, records and solutions after whole chunks of
        generations, every ``checkpoint_every`` seconds and on Ctrl-C, written atomically);
        ``resume`` continues from it with the same results as an uninterrupted run. An
        interrupted run returns what it finished with ``interrupted`` set.

    Returns:
      EvolveResult; every solution in it has passed the independent checker.
    """
    from jaxqueens.core import checker
    from jaxqueens.io import progress

    steady = scheme == "steady"
    config, params = check_setup(
        n=n, pop=pop, generations=generations, trials=trials, encoding=encoding, scheme=scheme,
        crossover=crossover or ops.DEFAULT_CROSSOVER.get(encoding, ""),
        mutation=mutation or ops.DEFAULT_MUTATION.get(encoding, ""),
        tournament=tournament if tournament is not None else (5 if steady else 3),
        cxpb=cxpb if cxpb is not None else (1.0 if steady else 0.5),
        mutpb=mutpb if mutpb is not None else (1.0 if steady else 0.2),
        indpb=indpb, elite=elite if elite is not None else (0 if steady else 1),
        islands=islands, migrate_every=migrate_every, migrants=migrants, fitness=fitness, chunk=chunk)
    chunk = chunk or default_chunk(config, trials, generations)
    dyn = GAParams(jnp.float32(params["cxpb"]), jnp.float32(params["mutpb"]),
                   jnp.float32(params["indpb"]), jnp.int32(params["migrate_every"]))
    t0 = time.perf_counter()
    procs, me = jax.process_count(), jax.process_index()
    total_trials, trials = trials, -(-trials // procs)  # process p runs trials p*L .. p*L+L-1
    states, m0 = init_trials(jax.random.key(seed), config, trials, first=me * trials)
    states = jax.block_until_ready(_place(states))
    init_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    stop = jnp.int32(generations)
    devices = jax.local_device_count()
    devices = devices if devices > 1 and trials % devices == 0 else 1
    compiled = run_chunk.lower(states, dyn, stop, stop, config, chunk, devices).compile()
    compile_s = time.perf_counter() - t0

    hist = [[np.asarray(x)[None] for x in (m0.best, m0.avg, m0.worst, m0.nevals)]]
    found: list[np.ndarray] = []
    _collect(found, m0.sols, m0.sols_ok)
    fingerprint = {"config": repr(config), "params": params, "seed": seed, "trials": total_trials,
                   "generations": generations, "chunk": chunk, "processes": procs}
    if checkpoint is not None and procs > 1:  # one file per process: each holds its own trials
        checkpoint = Path(checkpoint).with_name(f"{Path(checkpoint).stem}.process{me}of{procs}.npz")
    start = 0
    if resume and checkpoint is not None:
        states, hist, found, start = _load_checkpoint(checkpoint, fingerprint, states)
    bar = progress.Progress(generations, "generations", quiet=quiet)
    t0 = time.perf_counter()
    last_save, interrupted, done = time.perf_counter(), False, start
    safe = progress.SafePoints().__enter__()
    try:
        for done in range(start, generations, chunk):
            safe.check()  # a Ctrl-C during the last chunk stops here, with states and hist in step
            states, m = compiled(states, dyn, jnp.int32(done), stop)
            keep = min(chunk, generations - done)
            hist.append([np.asarray(x)[:keep] for x in (m.best, m.avg, m.worst, m.nevals)])
            _collect(found, m.sols[:keep], m.sols_ok[:keep])
            bar.update(done + keep, f"best {int(hist[-1][0][-1].min())}")
            if checkpoint is not None and done + keep < generations and \
                    time.perf_counter() - last_save >= checkpoint_every:
                _save_checkpoint(checkpoint, states, hist, found, done + keep, fingerprint)
                last_save = time.perf_counter()
        done = generations
    except KeyboardInterrupt:
        interrupted = True
        done = sum(len(h[0]) for h in hist) - 1
        if checkpoint is not None:
            _save_checkpoint(checkpoint, states, hist, found, done, fingerprint)
    finally:
        safe.__exit__(None, None, None)
    genes, fit = np.asarray(states.genes), np.asarray(states.fit)
    wall_s = time.perf_counter() - t0
    bar.close()

    _collect(found, genes, fit == 0)
    sols = np.unique(np.concatenate(found), axis=0) if found else np.zeros((0, n), genes.dtype)
    best, avg, worst, nevals = (np.concatenate([h[i] for h in hist]) for i in range(4))
    if procs > 1:  # every process gets every trial, in trial order, and all solutions
        best, avg, worst, nevals, genes, fit, sols = _gather_trials(
            best, avg, worst, nevals, genes, fit, sols, total_trials)
    if len(sols):
        checker.require_solutions(sols, what=f"GA ({encoding}, {scheme})", n=n)
    return EvolveResult(config, params, seed, best, avg, worst, nevals.astype(np.int64), sols,
                        genes, fit, wall_s, compile_s, init_s, interrupted)
