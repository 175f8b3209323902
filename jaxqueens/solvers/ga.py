"""Genetic algorithms for N-Queens, written for one trial: its islands `[I, P, n]`.

The kernel keeps the package's contract (`jaxqueens.solvers.base`): a static `Config`, dynamic
`Params` (rates, tournament size, elite, migration, budget), `init`, `step` (one generation) and
`run`. Two schemes: `steady` (the classic course GA: tournament, two children replace the two
worst) and `generational` (DEAP's `eaSimple`, Back, Fogel & Michalewicz 2000), with islands on a
ring. Fitness, selection, crossover and mutation take a built-in's name or your own function.
The docs' ga page describes the schemes, the operator signatures, constrained boards and the
randomness.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxqueens.core.rng import chain_seeds, hash_bits, stream_bits
from jaxqueens.errors import QueensError
from jaxqueens.solvers import (
    base,
    ga_crossover,
    ga_fitness,
    ga_genomes,
    ga_masked,
    ga_mutation,
    ga_repair,
    ga_selection,
)
from jaxqueens.solvers.base import as_key
from jaxqueens.solvers.constrained import Mask, allowed_start

I32 = jnp.int32
ENCODINGS = ("permutation", "combination")
SCHEMES = ("steady", "generational")
MAX_N = 32767
"""Largest board (int16 genes)."""


@dataclasses.dataclass(frozen=True)
class Config:
    """Static configuration: fixes shapes and code paths (hashable, a jit static argument).

    Attributes:
      n: board size (4..32767).
      pop: individuals per island.
      encoding: `permutation` (rows distinct) or `combination` (rows may repeat).
      scheme: `steady` or `generational`.
      crossover: a name of `ga_crossover.CROSSOVERS[encoding]` or a function; None: the
        encoding's (`cut` / `one_point`).
      mutation: a name of `ga_mutation.MUTATIONS[encoding]` or a function; None: `swap` /
        `reset`.
      tournament: the most aspirants per tournament (`Params.tournament` is at most this).
      elite: generational: the most best parents kept (`Params.elite` is at most this).
      islands: populations per trial, on a migration ring.
      migrants: the most individuals sent along the ring (`Params.migrants` at most this).
      fitness: a name of `ga_fitness.FITNESS` or a function `[n] int32 -> []` (minimised).
      cx_cap32, mut_cap32, eval_cap32: size the compacted batches of the generational loop in
        32nds (`masked_apply`): results never depend on them,
        only the speed does (set them from the rates: `check_setup`).
      toroidal: queens attack along diagonals modulo n.
      constrained: the kernels read an instance `Problem.mask`: fixed queens, forbidden squares.
      selection: a name of `ga_selection.SELECTIONS` or a function (module docstring); None: the
        scheme's (`distinct_tournament` steady, `tournament` generational).
    """

    n: int
    pop: int
    encoding: str = "permutation"
    scheme: str = "steady"
    crossover: str | Callable | None = None
    mutation: str | Callable | None = None
    tournament: int = 5
    elite: int = 0
    islands: int = 1
    migrants: int = 1
    fitness: str | Callable = "pairs"
    cx_cap32: int = 32
    mut_cap32: int = 32
    eval_cap32: int = 32
    toroidal: bool = False
    constrained: bool = False
    selection: str | Callable | None = None

    def __post_init__(self):
        def need(ok, msg):
            if not ok:
                raise QueensError(f"ga.Config: {msg}")

        for name in ("n", "pop", "islands", "tournament", "elite", "migrants"):
            try:
                base.check_whole(name, getattr(self, name))
            except QueensError as err:
                raise QueensError(f"ga.Config: {err}") from None
        need(4 <= self.n <= MAX_N, f"n = {self.n} must lie in 4..{MAX_N}")
        need(self.encoding in ENCODINGS, f"encoding {self.encoding!r} is not one of {ENCODINGS}")
        need(self.scheme in SCHEMES, f"scheme {self.scheme!r} is not one of {SCHEMES}")
        need(self.pop >= 2 and self.islands >= 1, "pop >= 2 and islands >= 1 required")
        steady = self.scheme == "steady"
        need(
            (2 if steady else 1) <= self.tournament <= self.pop,
            f"tournament = {self.tournament} must lie in {2 if steady else 1}..pop ({self.pop})",
        )
        need(0 <= self.elite < self.pop, f"elite = {self.elite} must lie in 0..pop-1")
        need(not (steady and self.elite), "elite applies to the generational scheme only")
        need(1 <= self.migrants < self.pop, f"migrants = {self.migrants} must lie in 1..pop-1")
        for name in ("cx_cap32", "mut_cap32", "eval_cap32"):
            need(0 <= getattr(self, name) <= 32, f"{name} must lie in 0..32")
        defaults = {
            "selection": ga_selection.DEFAULT_SELECTION[self.scheme],
            "crossover": ga_crossover.DEFAULT_CROSSOVER[self.encoding],
            "mutation": ga_mutation.DEFAULT_MUTATION[self.encoding],
        }
        for name, default in defaults.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, default)
        tables: dict[str, dict[str, Callable]] = {
            "fitness": ga_fitness.TOROIDAL_FITNESS if self.toroidal else ga_fitness.FITNESS,
            "selection": ga_selection.SELECTIONS,
            "crossover": ga_crossover.CROSSOVERS[self.encoding],
            "mutation": ga_mutation.MUTATIONS[self.encoding],
        }
        for name, table in tables.items():
            v = getattr(self, name)
            need(
                callable(v) or (isinstance(v, str) and v in table),
                f"{name} {v!r} is neither a function nor one of {', '.join(table)}"
                + (" (toroidal)" if name == "fitness" and self.toroidal else ""),
            )
        need(
            not self.constrained or (self.n + 1) * ga_fitness.forbidden_weight(self.n) < 2**31,
            f"n = {self.n} is too large for a constrained GA (int32 penalties); use n <= 1000",
        )
        _check_operators(self)

    @property
    def sols_per_gen(self) -> int:
        """Candidates per island and generation checked for solutions (children, or the best)."""
        return 2 if self.scheme == "steady" else 1

    @property
    def parents(self) -> int:
        """Parents one selection call returns per island (the `count` of a selection)."""
        return 2 if self.scheme == "steady" else self.pop


class Params(NamedTuple):
    """Dynamic parameters (0-d arrays): new values never recompile; `jax.vmap` sweeps them.
    Integer counts above their [`Config`][jaxqueens.solvers.ga.Config] capacity are clipped to
    it.

    Attributes:
      cxpb: [] float32: crossover probability per pair
      mutpb: [] float32: mutation probability per child
      indpb: [] float32: per-gene rate of swap / reset mutation; <= 0: one gene
      tournament: [] int32 in 1..Config.tournament (steady: 2..): aspirants
      elite: [] int32 in 0..Config.elite: best parents kept (generational)
      migrants: [] int32 in 1..Config.migrants: individuals sent per migration
      migrate_every: [] int32 >= 0: generations between migrations; 0: never
      generations: [] int32 >= 0: the budget of run / step
      target: [] float32: solved when the best fitness is at most this
    """

    cxpb: jax.Array  # [] float32: crossover probability per pair
    mutpb: jax.Array  # [] float32: mutation probability per child
    indpb: jax.Array  # [] float32: per-gene rate of swap / reset mutation; <= 0: one gene
    tournament: jax.Array  # [] int32 in 1..Config.tournament (steady: 2..): aspirants
    elite: jax.Array  # [] int32 in 0..Config.elite: best parents kept (generational)
    migrants: jax.Array  # [] int32 in 1..Config.migrants: individuals sent per migration
    migrate_every: jax.Array  # [] int32 >= 0: generations between migrations; 0: never
    generations: jax.Array  # [] int32 >= 0: the budget of run / step
    target: jax.Array  # [] float32: solved when the best fitness is at most this


def default_params(
    config: Config,
    *,
    cxpb: float | None = None,
    mutpb: float | None = None,
    indpb: float = 0.0,
    tournament: int | None = None,
    elite: int | None = None,
    migrants: int | None = None,
    migrate_every: int = 0,
    generations: int = 1000,
    target: float = 0.0,
) -> Params:
    """The package's defaults, any of them overridden: cxpb and mutpb 1 (steady) or DEAP's 0.5
    and 0.2 (generational), one gene per mutation, the config's tournament, elite and migrant
    capacities, no migration, 1000 generations, target 0.

    Args:
      config: the static `Config`.
      cxpb: crossover probability per pair, 0..1 (None: 1 steady, 0.5 generational).
      mutpb: mutation probability per child, 0..1 (None: 1 steady, 0.2 generational).
      indpb: per-gene rate of swap/reset mutation; 0 mutates exactly one gene.
      tournament: tournament size, up to `config.tournament` (None: that capacity).
      elite: generational only: best parents kept, up to `config.elite` (None: that capacity).
      migrants: individuals that migrate, up to `config.migrants` (None: that capacity).
      migrate_every: generations between migrations (0: never).
      generations: the generation budget.
      target: a trial is solved when its best fitness is at most this.

    Returns:
      `Params` of NumPy scalars.

    Raises:
      QueensError: a value outside its range, naming it.
    """
    steady = config.scheme == "steady"
    cxpb = (1.0 if steady else 0.5) if cxpb is None else cxpb
    mutpb = (1.0 if steady else 0.2) if mutpb is None else mutpb
    tournament = config.tournament if tournament is None else tournament
    elite = config.elite if elite is None else elite
    migrants = config.migrants if migrants is None else migrants
    values = (cxpb, mutpb, indpb, tournament, elite, migrants, migrate_every, generations, target)
    _check_values(dict(zip(Params._fields, values, strict=True)), config)
    # NumPy leaves: building them dispatches no XLA operation (each eager conversion compiles a
    # program at a process's first use); jit and vmap take them as they take JAX arrays.
    f32 = lambda v: np.asarray(v, np.float32)
    i32 = lambda v: np.asarray(v, np.int32)
    return Params._make(
        (
            f32(cxpb),
            f32(mutpb),
            f32(indpb),
            i32(tournament),
            i32(elite),
            i32(migrants),
            i32(migrate_every),
            i32(generations),
            f32(target),
        )
    )


def _check_values(v: dict, config: Config, prefix: str = "ga.default_params: ") -> None:
    """The values of a `Params` (host numbers), each in its range."""
    steady = config.scheme == "steady"
    ranges = {
        "tournament": (2 if steady else 1, config.tournament),
        "elite": (0, config.elite),
        "migrants": (1, config.migrants),
        "migrate_every": (0, 2**31 - 1),
        "generations": (0, 2**31 - 1),
    }
    try:
        for name in ("cxpb", "mutpb", "indpb"):
            base.check_real(name, v[name], 0, 1)
        for name, (lo, hi) in ranges.items():
            base.check_whole(name, v[name], lo, hi)
        base.check_real("target", v["target"])
    except QueensError as err:
        raise QueensError(f"{prefix}{err}") from None


def _checked(config: Config, params: Params, problem=None, state=None) -> None:
    """The kernel's arguments checked at its boundary (`base`): types,
    the params' shapes and dtypes, and their values where concrete."""
    base.check_type("config", config, Config)
    base.check_params(params, Params, _TEMPLATE, "ga")
    host = [base.concrete(x) for x in params]
    if all(h is not None and h.ndim == 0 for h in host):
        _check_values(
            {k: h.item() for k, h in zip(Params._fields, host, strict=True)},  # type: ignore[union-attr]
            config,
            "params.",
        )
    if state is not None:
        base.check_type("state", state, State, "make it with ga.init")
    if problem is not None:
        base.check_type("problem", problem, Problem)


_TEMPLATE = Params._make(
    np.zeros((), np.int32 if f in Params._fields[3:8] else np.float32) for f in Params._fields
)


class Problem(NamedTuple):
    """What is solved beyond `n` (dynamic; every trial of a batch may share it).

    Attributes:
      mask: the instance (Config.constrained), or None
    """

    mask: Mask | None = None  # the instance (Config.constrained), or None


def _problem(problem) -> Problem:
    return Problem() if problem is None else problem


class State(NamedTuple):
    """One trial (add a leading [T] axis when batched).

    Attributes:
      genes: [I, P, n] int8/int16 genomes
      fit: [I, P] int32 (or the fitness' dtype), fitness of each genome
      seed: [I, 2] uint32 islands' 64-bit stream seeds (fixed for the run)
      gen: [] int32 generations done
      best_rows: [n] int8/int16 the best genome seen (the first with its fitness)
      best_fit: [] its fitness
    """

    genes: jax.Array  # [I, P, n] int8/int16 genomes
    fit: jax.Array  # [I, P] int32 (or the fitness' dtype), fitness of each genome
    seed: jax.Array  # [I, 2] uint32 islands' 64-bit stream seeds (fixed for the run)
    gen: jax.Array  # [] int32 generations done
    best_rows: jax.Array  # [n] int8/int16 the best genome seen (the first with its fitness)
    best_fit: jax.Array  # [] its fitness


class Metrics(NamedTuple):
    """One generation of one trial (what the driver records).

    Attributes:
      best: [] lowest fitness over the islands
      avg: [] float32 mean fitness
      worst: [] highest fitness
      nevals: [] int32 evaluations, counted as DEAP does
      sols: [I, K, n] int8/int16 candidates (K = Config.sols_per_gen)
      sols_ok: [I, K] bool: the candidate reached Params.target (a solution, except
    """

    best: jax.Array  # [] lowest fitness over the islands
    avg: jax.Array  # [] float32 mean fitness
    worst: jax.Array  # [] highest fitness
    nevals: jax.Array  # [] int32 evaluations, counted as DEAP does
    sols: jax.Array  # [I, K, n] int8/int16 candidates (K = Config.sols_per_gen)
    sols_ok: jax.Array  # [I, K] bool: the candidate reached Params.target (a solution, except
    # under the report's fitness or a user's, where the driver checks it)


class Result(NamedTuple):
    """What one trial reports ([T] leading axis when batched).

    Attributes:
      rows: [n] int32 the best board seen (the first with the lowest fitness)
      solved: [] bool its fitness reached Params.target
      steps: [] int32 generations run (work spent; the initial population is 0)
      best: [] fitness of rows
    """

    rows: jax.Array  # [n] int32 the best board seen (the first with the lowest fitness)
    solved: jax.Array  # [] bool its fitness reached Params.target
    steps: jax.Array  # [] int32 generations run (work spent; the initial population is 0)
    best: jax.Array  # [] fitness of rows


# ----------------------------------------------------------------------------- operators


class Operators(NamedTuple):
    """A config's four operators in their one signature (module docstring).

    Attributes:
      fitness: `f(x [n] int32) -> []`.
      select: `s(seed, fit [P], size, count) -> [count]` indices.
      crossover: `c(seed, a [n], b [n]) -> (child1, child2)`.
      mutation: `m(seed, x [n], indpb) -> [n]`.
    """

    fitness: Callable
    select: Callable
    crossover: Callable
    mutation: Callable


def operators(config: Config) -> Operators:
    """The operators of `config`: a name is looked up in the operator modules' tables
    (built-in selections bound to the tournament capacity), a function used as given.

    Args:
      config: the static `Config`.

    Returns:
      The config's `Operators`, names resolved to functions.
    """

    def pick(v, table):
        return table[v] if isinstance(v, str) else v

    chosen = config.selection
    assert chosen is not None  # Config resolves the scheme's default
    select: Callable
    if isinstance(chosen, str):
        builtin = ga_selection.SELECTIONS[chosen]
        select = lambda seed, fit, size, count: builtin(
            seed, fit, size, count, max_size=config.tournament
        )
    else:
        select = chosen
    fitnesses = ga_fitness.TOROIDAL_FITNESS if config.toroidal else ga_fitness.FITNESS
    return Operators(
        pick(config.fitness, fitnesses),
        select,
        pick(config.crossover, ga_crossover.CROSSOVERS[config.encoding]),
        pick(config.mutation, ga_mutation.MUTATIONS[config.encoding]),
    )


def _shown(x) -> str:
    return f"{jnp.dtype(x.dtype).name}{list(x.shape)}" if hasattr(x, "shape") else repr(x)


def _check_operators(config: Config) -> None:
    """Trace every user function once on abstract arguments (`jax.eval_shape`) and raise a
    one-line QueensError when one fails or returns other shapes or dtypes than it must."""
    n, g = config.n, ga_genomes.gene_dtype(config.n)
    u32, gene = jax.ShapeDtypeStruct((), jnp.uint32), jax.ShapeDtypeStruct((n,), g)
    integer = lambda x: hasattr(x, "dtype") and jnp.issubdtype(x.dtype, jnp.integer)

    def probe(name, fn, args, sig, want, ok):
        try:
            out = jax.eval_shape(fn, *args)
        except Exception as e:
            first = (str(e).strip().splitlines() or [""])[0][:200]
            raise QueensError(
                f"ga.Config.{name} failed on {sig}: {type(e).__name__}: {first}; "
                f"it must map {sig} to {want}"
            ) from e
        if not ok(out):
            got = (
                "(" + ", ".join(_shown(x) for x in out) + ")"
                if isinstance(out, (tuple, list))
                else _shown(out)
            )
            raise QueensError(f"ga.Config.{name} must map {sig} to {want}; it returned {got}")
        return out

    op = operators(config)
    fit = jax.ShapeDtypeStruct((), jnp.int32)
    if callable(config.fitness):
        fit = probe(
            "fitness",
            op.fitness,
            (jax.ShapeDtypeStruct((n,), jnp.int32),),
            f"x int32[{n}]",
            "a scalar int or float (shape [])",
            lambda f: (
                hasattr(f, "shape")
                and f.shape == ()
                and (integer(f) or jnp.issubdtype(f.dtype, jnp.floating))
            ),
        )
    if callable(config.selection):
        count = config.parents
        pop_fit = jax.ShapeDtypeStruct((config.pop,), fit.dtype)
        probe(
            "selection",
            lambda s, f, k: op.select(s, f, k, count),
            (u32, pop_fit, jax.ShapeDtypeStruct((), jnp.int32)),
            f"(seed uint32[], fit {_shown(pop_fit)}, size int32[], count={count})",
            f"int indices [{count}]",
            lambda x: integer(x) and x.shape == (count,),
        )
    child = lambda x: integer(x) and x.shape == (n,)
    if callable(config.crossover):
        probe(
            "crossover",
            op.crossover,
            (u32, gene, gene),
            f"(seed uint32[], a {_shown(gene)}, b {_shown(gene)})",
            f"two int children [{n}]",
            lambda c: isinstance(c, (tuple, list)) and len(c) == 2 and all(map(child, c)),
        )
    if callable(config.mutation):
        probe(
            "mutation",
            op.mutation,
            (u32, gene, jax.ShapeDtypeStruct((), jnp.float32)),
            f"(seed uint32[], x {_shown(gene)}, indpb float32[])",
            f"an int genome [{n}]",
            child,
        )


class Shared(NamedTuple):
    """What every row of a generation reads besides its own genome (dynamic).

    Attributes:
      indpb: [] float32
      fixed: the instance's fixed queens (constrained), or None
      mask: the instance (constrained), or None
    """

    indpb: jax.Array  # [] float32
    fixed: ga_repair.Fixed | None  # the instance's fixed queens (constrained), or None
    mask: Mask | None  # the instance (constrained), or None


def _shared(config: Config, params: Params, problem: Problem) -> Shared:
    mask = problem.mask if config.constrained else None
    if config.constrained and mask is None:
        raise QueensError(
            "ga.Config(constrained=True) reads an instance: pass problem=ga.Problem(mask) "
            "(jaxqueens.solvers.constrained.mask_of)"
        )
    return Shared(params.indpb, None if mask is None else ga_repair.fixed_of(mask), mask)


def fitness_row(config: Config):
    """`(shared, x [n]) -> []`: the config's fitness, plus
    `forbidden_weight` per queen on a square the instance
    forbids (`config.constrained`).

    Args:
      config: the static `Config`.

    Returns:
      The function `(shared, x [n]) -> []`.
    """
    f = operators(config).fitness
    if not config.constrained:
        return lambda sh, x: f(x.astype(I32))
    weight = ga_fitness.forbidden_weight(config.n)
    return lambda sh, x: f(x.astype(I32)) + weight * ga_fitness.forbidden(x, sh.mask)


def _repair(config: Config):
    g = ga_genomes.gene_dtype(config.n)
    if not config.constrained:
        return lambda sh, x: x.astype(g)
    repair = ga_repair.REPAIRS[config.encoding]
    return lambda sh, x: repair(x.astype(g), sh.fixed)


def crossover_row(config: Config):
    """`(shared, seed, a [n], b [n]) -> (c1, c2)`: the config's crossover, children in the
    gene dtype and, under `config.constrained`, repaired (every fixed queen on its square).

    Args:
      config: the static `Config`.

    Returns:
      The function `(shared, seed, a [n], b [n]) -> (c1, c2)`.
    """
    cx, fix = operators(config).crossover, _repair(config)
    return lambda sh, s, a, b: tuple(fix(sh, c) for c in cx(s, a, b))


def mutation_row(config: Config):
    """`(shared, seed, x [n]) -> x'`: the config's mutation at rate `shared.indpb`, repaired
    like [`crossover_row`][jaxqueens.solvers.ga.crossover_row].

    Args:
      config: the static `Config`.

    Returns:
      The function `(shared, seed, x [n]) -> x'`.
    """
    mut, fix = operators(config).mutation, _repair(config)
    return lambda sh, s, x: fix(sh, mut(s, x, sh.indpb))


# ----------------------------------------------------------------------------- init


def init(key: jax.Array, config: Config, params: Params, problem: Problem | None = None) -> State:
    """Random initial islands of one trial (key is consumed).

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
    sh = _shared(config, params, _problem(problem))
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


# ----------------------------------------------------------------------------- one generation


def steady_island(seed, genes, fit, config: Config, params: Params, sh: Shared):
    """One steady-state generation of one island `genes [P, n]`: two children, two worst out.
    Returns (genes, fit, evaluations, children [2, n], children reached the target [2]).

    Args:
      seed: [] uint32 the island's hash seed for this generation.
      genes: [P, n] the island's genomes.
      fit: [P] their fitness.
      config: the static `Config`.
      params: the `Params`.
      sh: what every row reads besides its genome (`Shared`: the mutation rate, the instance).
    """
    op, fit_one = operators(config), fitness_row(config)
    cx, mut = crossover_row(config), mutation_row(config)
    s = hash_bits(seed, 1, jnp.arange(4, dtype=jnp.uint32))
    size = jnp.clip(params.tournament, 2, config.tournament)
    par = op.select(s[0], fit, size, 2).astype(I32)
    a, b = genes[par[0]], genes[par[1]]
    c1, c2 = cx(sh, s[1], a, b)
    do_cx = ga_genomes.uniform(s[1], 42, 1)[0] < params.cxpb
    kids = jnp.where(do_cx, jnp.stack([c1, c2]), jnp.stack([a, b]))
    do_mut = ga_genomes.uniform(s[2], 41, 2) < params.mutpb
    mutated = jax.vmap(lambda s, x: mut(sh, s, x))(s[2:], kids)
    kids = jnp.where(do_mut[:, None], mutated, kids)
    kfit = jax.vmap(lambda x: fit_one(sh, x))(kids).astype(fit.dtype)
    p = config.pop
    both = jnp.concatenate([fit, kfit])
    worst = ga_selection.worst_indices(both, 2)  # pop first: ties remove the old
    kid_out = jnp.any(worst[:, None] == p + jnp.arange(2), axis=0)  # [2] child removed
    free = jnp.sort(jnp.where(worst < p, worst, p))  # freed pop slots first, p = none
    dst = jnp.where(kid_out, p, jnp.stack([free[0], free[jnp.where(kid_out[0], 0, 1)]]))
    genes = genes.at[dst].set(kids, mode="drop")
    fit = fit.at[dst].set(kfit, mode="drop")
    return genes, fit, I32(2), kids, kfit <= params.target


def generational_islands(seeds, genes, fit, config: Config, params: Params, sh: Shared):
    """One generation of DEAP's eaSimple (plus elitism) on one trial's islands `[I, P, n]`.

    Selection and replacement run per island; crossover, mutation and evaluation run over the
    trial's rows, each only on the rows it applies to (`ga_masked.masked_apply`; vmapped over
    trials, its batching rule compacts the rows of every trial at once).

    Args:
      seeds: [I] uint32 the islands' hash seeds for this generation.
      genes: [I, P, n] the islands' genomes.
      fit: [I, P] their fitness.
      config: the static `Config`.
      params: the `Params`.
      sh: what every row reads besides its genome (`Shared`: the mutation rate, the instance).

    Returns:
      `(genes [I, P, n], fit [I, P], evaluations [] int32 over the trial, each island's best
      [I, 1, n], whether it reached the target [I, 1])`.
    """
    op = operators(config)
    I, p, n = genes.shape
    h = p // 2
    slot = jnp.arange(p, dtype=jnp.uint32)
    size = jnp.clip(params.tournament, 1, config.tournament)

    def ask(seed, g, f):  # selection and this island's random draws
        sel = op.select(seed, f, size, p).astype(I32)
        do_cx = ga_genomes.uniform(seed, 43, h) < params.cxpb
        do_mut = ga_genomes.uniform(seed, 44, p) < params.mutpb
        return g[sel], f[sel], hash_bits(seed, 2, slot[:h]), hash_bits(seed, 3, slot), do_cx, do_mut

    off, off_fit, cx_seeds, mut_seeds, do_cx, do_mut = jax.vmap(ask)(seeds, genes, fit)
    rows = lambda x: x.reshape((-1, *x.shape[2:]))
    a, b = rows(off[:, 0 : 2 * h : 2]), rows(off[:, 1 : 2 * h : 2])
    c1, c2 = ga_masked.masked_apply(
        crossover_row(config), rows(do_cx), (rows(cx_seeds), a, b), (a, b), config.cx_cap32, (sh,)
    )
    kids = jnp.stack([c1, c2], axis=1).reshape(I, 2 * h, n)
    off = jnp.concatenate([kids, off[:, 2 * h :]], axis=1)
    crossed = jnp.concatenate([jnp.repeat(do_cx, 2, axis=1), jnp.zeros((I, p - 2 * h), bool)], 1)
    flat = rows(off)
    flat = ga_masked.masked_apply(
        mutation_row(config), rows(do_mut), (rows(mut_seeds), flat), flat, config.mut_cap32, (sh,)
    )
    invalid = crossed | do_mut
    off_fit = ga_masked.masked_apply(
        fitness_row(config), rows(invalid), (flat,), rows(off_fit), config.eval_cap32, (sh,)
    ).reshape(I, p)
    off = flat.reshape(I, p, n)
    elite = jnp.clip(params.elite, 0, config.elite)

    def tell(g, f, o, of):  # elitism and this island's best
        if config.elite:
            keep = ga_selection.best_indices(f, config.elite)
            out = ga_selection.worst_indices(of, config.elite)
            out = jnp.where(jnp.arange(config.elite) < elite, out, p)
            o = o.at[out].set(g[keep], mode="drop")
            of = of.at[out].set(f[keep], mode="drop")
        best = jnp.argmin(of)
        return o, of, o[best][None], (of[best] <= params.target)[None]

    off, off_fit, sols, ok = jax.vmap(tell)(genes, fit, off, off_fit)
    return off, off_fit, jnp.sum(invalid, dtype=I32), sols, ok


def migrate(genes, fit, config: Config, migrants=None):
    """Ring migration over one trial's islands `[I, P, n]`: island i's `migrants` (dynamic,
    1..`config.migrants`; default all of them) best replace island i+1's worst.

    Args:
      genes: `[I, P, n]` the islands' genomes.
      fit: `[I, P]` their fitness.
      config: the static `Config`.
      migrants: [] int32, how many migrate (None: `config.migrants`).

    Returns:
      `(genes, fit)` after migration.
    """
    m = config.migrants
    best = jax.vmap(lambda f: ga_selection.best_indices(f, m))(fit)  # [I, m]
    worst = jax.vmap(lambda f: ga_selection.worst_indices(f, m))(fit)
    if migrants is not None:
        worst = jnp.where(jnp.arange(m) < jnp.clip(migrants, 1, m), worst, fit.shape[1])
    take = lambda x: jnp.roll(jax.vmap(lambda xi, bi: xi[bi])(x, best), 1, axis=0)
    put = jax.vmap(lambda x, w, v: x.at[w].set(v, mode="drop"))
    return put(genes, worst, take(genes)), put(fit, worst, take(fit))


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
    sh = _shared(config, params, _problem(problem))
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
    """One trial: generations until solved or `params.generations` are run (key is consumed).

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


GAConfig = Config
"""The name `jaxqueens` exports (`jaxqueens.GAConfig`)."""
GAParams = Params
"""The name `jaxqueens` exports (`jaxqueens.GAParams`)."""
