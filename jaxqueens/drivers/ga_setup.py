"""Settings of the GA driver: `evolve`'s arguments checked once, each where it enters.

`arguments` makes the run's settings from its preset (`settings.ga_settings`, checked there);
`check_setup` turns them and the run's numbers into the kernel's `Config` and the rates, or raises
a one-line QueensError naming the setting and the fix.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import jax
import jax.numpy as jnp

from jaxqueens.core import arguments as args
from jaxqueens.core import constraints as cons
from jaxqueens.core.board import as_size
from jaxqueens.drivers import chains as driver
from jaxqueens.drivers import settings
from jaxqueens.errors import QueensError
from jaxqueens.io import ga as ga_io
from jaxqueens.solvers import ga_crossover, ga_fitness, ga_mutation
from jaxqueens.solvers.constrained import Mask
from jaxqueens.solvers.ga import Config, operators

RECORDS = ("all", "summary")
"""What a run keeps per generation: "all" (Best / Avg / Worst / evaluations of every trial,
`[G+1, T]` arrays in the result: small runs, the library's default) or "summary" (statistics
over the trials, `io.ga.SUMMARY_STATS`, and per-trial totals: memory that does not grow with
generations x trials; a `sink` may still receive every trial's records chunk by chunk, to
stream them to disk)."""


def check_setup(
    s: settings.SteadySettings,
    *,
    n,
    generations,
    trials,
    crossover,
    mutation,
    fitness="pairs",
    chunk=None,
    toroidal=False,
    constrained=False,
) -> tuple[Config, dict]:
    """Validate a run's numbers and operators with its settings (`settings.ga_settings`, checked
    when made), each in one line: `(Config, {"cxpb", "mutpb", "indpb", "migrate_every"} as Python
    numbers)`.

    `n`, `generations` (>= 0) and `trials` are integers checked where they entered; `trials` are
    independent runs; `crossover` and `mutation` are the operators' names or functions (as for
    `evolve`, the encoding's default filled in), `fitness` as for `evolve`; `chunk` the generations
    per jitted call (None: automatic); `toroidal`: queens attack along diagonals modulo n;
    `constrained`: the run reads an instance's mask. The first setting out of its range is a
    QueensError naming it and the fix."""
    _check_choices(s.encoding, crossover, mutation, fitness)
    _need(chunk is None or args.is_integer(chunk), f"chunk must be an integer, got {chunk!r}")
    _need(n >= 4, f"n = {n} has no solution to evolve towards; use n >= 4")
    _need(n <= 32767, f"n = {n} is above the GA's limit of 32767 (int16 genes); use a smaller n")
    _need(trials >= 1, "generations and migrate_every must be >= 0, trials and islands >= 1")
    _need(chunk is None or chunk >= 1, f"chunk = {chunk} must be at least 1")
    _need(
        not ((toroidal or constrained) and ga_io.checks_zero(fitness)),
        f"fitness {_fitness_name(fitness)} applies to the plain board only; use pairs or excess "
        "with --toroidal or --instance",
    )
    _need(
        not constrained or (n + 1) * ga_fitness.forbidden_weight(n) < 2**31,
        f"n = {n} is too large for a constrained GA (its int32 penalties would overflow); "
        "use n <= 1000",
    )
    cap32 = lambda q: min(32, math.ceil(32 * q))
    config = Config(
        n=n,
        pop=s.pop,
        encoding=s.encoding,
        scheme=s.scheme,
        crossover=crossover,
        mutation=mutation,
        tournament=s.tournament,
        elite=getattr(s, "elite", 0),  # (steady: none)
        islands=s.islands,
        migrants=s.migrants,
        fitness=fitness,
        cx_cap32=cap32(s.cxpb),
        mut_cap32=cap32(s.mutpb),
        eval_cap32=cap32(1 - (1 - s.cxpb) * (1 - s.mutpb)),
        toroidal=bool(toroidal),
        constrained=bool(constrained),
    )
    if callable(fitness):  # the records keep the best per generation and trial as integers
        score = jax.eval_shape(operators(config).fitness, jax.ShapeDtypeStruct((n,), jnp.int32))
        _need(
            jnp.issubdtype(score.dtype, jnp.integer),
            f"fitness {_fitness_name(fitness)} returns {score.dtype}; evolve records fitness as "
            "integers: return an integer score (round or scale it)",
        )
    rates = {"cxpb": float(s.cxpb), "mutpb": float(s.mutpb), "indpb": float(s.indpb)}
    return config, {**rates, "migrate_every": int(s.migrate_every)}


def _need(ok, msg: str) -> None:
    if not ok:
        raise QueensError(msg)


def _check_choices(encoding: str, crossover, mutation, fitness) -> None:
    """`check_setup`'s named choices: the fitness and operators exist (for the encoding)."""
    _need(
        callable(fitness) or fitness in ga_fitness.FITNESS,
        f"fitness {fitness!r} is unknown; use one of {', '.join(ga_fitness.FITNESS)} "
        "or a function [n] int32 -> [] int",
    )
    for what, name, table in (
        ("crossover", crossover, ga_crossover.CROSSOVERS),
        ("mutation", mutation, ga_mutation.MUTATIONS),
    ):
        _need(
            callable(name) or name in table[encoding],
            f"{what} {name!r} does not apply to the {encoding} encoding; "
            f"use one of {', '.join(table[encoding])} or a function (jaxqueens.solvers.ga)",
        )


def _fitness_name(fitness) -> str:
    return repr(fitness) if isinstance(fitness, str) else ga_io.operator_name(fitness)


def arguments(
    a: SimpleNamespace,
) -> tuple[Config, dict, cons.Constraints | None, Mask | None, int, float | None]:
    """`evolve`'s arguments (by name in `a`) checked, each once, in the order they are read:
    `(Config, the rates (check_setup's), the instance (toroidal applied) or None, its mask or None,
    the seed, the time budget or None)`."""
    n = settings.GARun.n if a.n is None and a.instance is None else a.n
    seed = args.seed(a.seed, "seed")
    seconds = args.seconds(a.seconds, "seconds", optional=True)
    islands = args.integer(a.islands, "islands", 1)
    migrate_every = args.integer(a.migrate_every, "migrate_every", 0, optional=True)
    args.integer(a.pop, "pop", 0, optional=True)
    for name, value in (("generations", a.generations), ("trials", a.trials)):
        args.integer(value, name, 0)
    given = {k: getattr(a, k) for k in ("pop", "tournament", "cxpb", "mutpb", "indpb", "elite")}
    s = settings.ga_settings(
        a.preset,
        a.encoding,
        a.scheme,
        mutation=a.mutation,  # (a function takes indpb)
        **given,
        islands=islands,
        migrate_every=migrate_every,
        migrants=a.migrants,
    )
    model, mask = driver.instance_setup(None if n is None else as_size(n), a.instance, a.toroidal)
    n = model.n if model is not None else n
    if mask is not None and model is not None and a.encoding == "permutation":
        rows = [y for _, y in model.fixed]
        if len(set(rows)) < len(rows):
            raise QueensError(
                "two fixed queens share a row, which no permutation can hold; "
                "use --encoding combination (the instance has no solution anyway)"
            )
    config, params = check_setup(
        s,
        n=n,
        generations=a.generations,
        trials=a.trials,
        crossover=a.crossover or ga_crossover.DEFAULT_CROSSOVER.get(a.encoding, ""),
        mutation=a.mutation or ga_mutation.DEFAULT_MUTATION.get(a.encoding, ""),
        fitness=a.fitness,
        chunk=a.chunk,
        toroidal=model is not None and model.toroidal,
        constrained=mask is not None,
    )
    if a.records not in RECORDS:
        raise QueensError(f"records {a.records!r} is unknown; use one of {', '.join(RECORDS)}")
    return config, params, model, mask, seed, seconds
