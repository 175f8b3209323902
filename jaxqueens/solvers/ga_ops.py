"""The GA's operators over rows and its two schemes over islands (`jaxqueens.solvers.ga`).

A config's fitness, selection, crossover and mutation resolved to functions (`operators`),
checked once on abstract arguments (`check_operators`), and their per-row forms; one
steady-state generation of an island, one generational (DEAP's `eaSimple`) generation of a
trial's islands, and ring migration. Every function reads the static `ga.Config` it is given.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import NamedTuple

import jax
import jax.numpy as jnp

from jaxqueens.core.rng import hash_bits
from jaxqueens.errors import QueensError
from jaxqueens.solvers import (
    constrained,
    ga_crossover,
    ga_fitness,
    ga_genomes,
    ga_masked,
    ga_mutation,
    ga_repair,
    ga_selection,
)
from jaxqueens.solvers.constrained import Mask

I32 = jnp.int32


class Operators(NamedTuple):
    """A config's four operators, names resolved to functions."""

    fitness: Callable  #: `f(x [n] int32) -> []`.
    select: Callable  #: `s(seed, fit [P], size, count) -> [count]` indices.
    crossover: Callable  #: `c(seed, a [n], b [n]) -> (child1, child2)`.
    mutation: Callable  #: `m(seed, x [n], indpb) -> [n]`.


def operator_tables(config) -> dict[str, dict[str, Callable]]:
    """The built-in operators `config` may name, per field, in the order of `Operators`:
    the fitnesses (toroidal ones under `config.toroidal`), the selections bound to the
    tournament capacity, the crossovers and mutations of `config.encoding`.

    Args:
      config: the static `Config`.

    Returns:
      `{field: {name: function}}` for `fitness`, `selection`, `crossover` and `mutation`.
    """
    sized: dict[str, Callable] = {
        k: partial(f, max_size=config.tournament) for k, f in ga_selection.SELECTIONS.items()
    }
    return {
        "fitness": ga_fitness.TOROIDAL_FITNESS if config.toroidal else ga_fitness.FITNESS,
        "selection": sized,
        "crossover": ga_crossover.CROSSOVERS[config.encoding],
        "mutation": ga_mutation.MUTATIONS[config.encoding],
    }


def operators(config) -> Operators:
    """The operators of `config`: a name is looked up in its table (`operator_tables`), a
    function used as given.

    Args:
      config: the static `Config`.

    Returns:
      The config's `Operators`, names resolved to functions.
    """
    chosen = ((getattr(config, k), table) for k, table in operator_tables(config).items())
    return Operators(*(table[v] if isinstance(v, str) else v for v, table in chosen))


def _shown(x) -> str:
    return f"{jnp.dtype(x.dtype).name}{list(x.shape)}" if hasattr(x, "shape") else repr(x)


def check_operators(config) -> None:
    """Trace every user function of `config` once on abstract arguments (`jax.eval_shape`).

    Args:
      config: the static `ga.Config` (built-in operators are not traced).

    Raises:
      QueensError: one line, when a function fails or returns other shapes or dtypes than it
        must.
    """
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
    """What every row of a generation reads besides its own genome (dynamic)."""

    indpb: jax.Array  #: [] float32
    fixed: ga_repair.Fixed | None  #: the instance's fixed queens (constrained), or None
    mask: Mask | None  #: the instance (constrained), or None


def shared_of(config, params, problem) -> Shared:
    """What every row of a generation reads besides its genome.

    Args:
      config: the static `ga.Config`.
      params: the `ga.Params`.
      problem: the `ga.Problem`.

    Returns:
      `Shared`.

    Raises:
      QueensError: `config.constrained` without an instance's mask.
    """
    mask = problem.mask if config.constrained else None
    if config.constrained and mask is None:
        raise QueensError(
            "ga.Config(constrained=True) reads an instance: pass problem=ga.Problem(mask) "
            "(jaxqueens.solvers.constrained.mask_of)"
        )
    return Shared(params.indpb, None if mask is None else ga_repair.fixed_of(mask), mask)


def fitness_row(config):
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
    return lambda sh, x: f(x.astype(I32)) + weight * constrained.stranded(x, sh.mask)


def _repair(config):
    g = ga_genomes.gene_dtype(config.n)
    if not config.constrained:
        return lambda sh, x: x.astype(g)
    repair = ga_repair.REPAIRS[config.encoding]
    return lambda sh, x: repair(x.astype(g), sh.fixed)


def crossover_row(config):
    """`(shared, seed, a [n], b [n]) -> (c1, c2)`: the config's crossover, children in the
    gene dtype and, under `config.constrained`, repaired (every fixed queen on its square).

    Args:
      config: the static `Config`.

    Returns:
      The function `(shared, seed, a [n], b [n]) -> (c1, c2)`.
    """
    cx, fix = operators(config).crossover, _repair(config)
    return lambda sh, s, a, b: tuple(fix(sh, c) for c in cx(s, a, b))


def mutation_row(config):
    """`(shared, seed, x [n]) -> x'`: the config's mutation at rate `shared.indpb`, repaired
    like [`crossover_row`][jaxqueens.solvers.ga_ops.crossover_row].

    Args:
      config: the static `Config`.

    Returns:
      The function `(shared, seed, x [n]) -> x'`.
    """
    mut, fix = operators(config).mutation, _repair(config)
    return lambda sh, s, x: fix(sh, mut(s, x, sh.indpb))


def steady_island(seed, genes, fit, config, params, sh: Shared):
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


def generational_islands(seeds, genes, fit, config, params, sh: Shared):
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


def migrate(genes, fit, config, migrants=None):
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
