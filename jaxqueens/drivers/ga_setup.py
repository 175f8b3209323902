"""Settings of the GA driver: `evolve`'s arguments checked once, each where it enters.

`check_setup` turns a complete set of settings into the kernel's `Config` and the rates, or
raises a one-line QueensError naming the setting and the fix; `arguments` fills in the preset's
and the options table's defaults first.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import arguments as args
from jaxqueens.core import constraints as cons
from jaxqueens.core.board import as_size
from jaxqueens.drivers import chains as driver
from jaxqueens.drivers import settings
from jaxqueens.errors import QueensError
from jaxqueens.io import ga as ga_io
from jaxqueens.solvers import ga_crossover, ga_fitness, ga_mutation
from jaxqueens.solvers.constrained import Mask
from jaxqueens.solvers.ga import ENCODINGS, SCHEMES, Config, operators

RECORDS = ("all", "summary")
"""What a run keeps per generation: "all" (Best / Avg / Worst / evaluations of every trial,
`[G+1, T]` arrays in the result: small runs, the library's default) or "summary" (statistics
over the trials, `SUMMARY`, and per-trial totals: memory that does not grow with
generations x trials; a `sink` may still receive every trial's records chunk by chunk, to
stream them to disk)."""


def check_setup(
    *,
    n,
    pop,
    generations,
    trials,
    encoding,
    scheme,
    crossover,
    mutation,
    tournament,
    cxpb,
    mutpb,
    indpb,
    elite,
    islands,
    migrate_every,
    migrants,
    fitness="pairs",
    chunk=None,
    toroidal=False,
    constrained=False,
) -> tuple[Config, dict]:
    """Validate every setting of a run, each in one line.

    Args:
      n: board size.
      pop, generations, trials, encoding, scheme, crossover, mutation, tournament, cxpb, mutpb,
        indpb, elite, islands, migrate_every, migrants, fitness, chunk: as for `evolve`, with
        the preset's and the table's defaults filled in.
      toroidal: queens attack along diagonals modulo n.
      constrained: the run reads an instance's mask.

    Returns:
      `(Config, {"cxpb", "mutpb", "indpb", "migrate_every"} as Python numbers)`.

    Raises:
      QueensError: the first setting out of its range, naming it and the fix.
    """
    s = SimpleNamespace(**locals())
    _check_choices(encoding, scheme, crossover, mutation, fitness)
    whole = ("n", "pop", "generations", "trials", "tournament", "elite", "islands")
    for name in (*whole, "migrate_every", "migrants", "chunk"):
        v = getattr(s, name)
        _need(
            v is None or (isinstance(v, (int, np.integer)) and not isinstance(v, bool)),
            f"{name} must be an integer, got {v!r}",
        )
    _check_ranges(s)
    cap32 = lambda q: min(32, math.ceil(32 * q))
    config = Config(
        n=n,
        pop=pop,
        encoding=encoding,
        scheme=scheme,
        crossover=crossover,
        mutation=mutation,
        tournament=tournament,
        elite=elite if scheme != "steady" else 0,
        islands=islands,
        migrants=migrants,
        fitness=fitness,
        cx_cap32=cap32(cxpb),
        mut_cap32=cap32(mutpb),
        eval_cap32=cap32(1 - (1 - cxpb) * (1 - mutpb)),
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
    rates = {"cxpb": float(cxpb), "mutpb": float(mutpb), "indpb": float(indpb)}
    return config, {**rates, "migrate_every": int(migrate_every)}


def _check_ranges(s: SimpleNamespace) -> None:
    """`check_setup`'s numbers in their ranges, and the fitness allowed on the board."""
    n, pop, tournament, elite, migrants = s.n, s.pop, s.tournament, s.elite, s.migrants
    least = 2 if s.scheme == "steady" else 1
    _need(n >= 4, f"n = {n} has no solution to evolve towards; use n >= 4")
    _need(n <= 32767, f"n = {n} is above the GA's limit of 32767 (int16 genes); use a smaller n")
    _need(pop >= 2, f"pop = {pop} is too small; a population needs at least 2 individuals")
    _need(tournament >= least, f"tournament = {tournament} is too small; use at least {least}")
    _need(
        pop >= tournament,
        f"pop = {pop} is smaller than the tournament size {tournament}; "
        "raise --pop or lower --tournament",
    )
    for name in ("cxpb", "mutpb", "indpb"):
        v = getattr(s, name)
        _need(isinstance(v, (int, float)) and 0.0 <= v <= 1.0, f"{name} = {v!r} must lie in [0, 1]")
    _need(
        s.generations >= 0 and s.trials >= 1 and s.islands >= 1 and s.migrate_every >= 0,
        "generations and migrate_every must be >= 0, trials and islands >= 1",
    )
    _need(0 <= elite < pop, f"elite = {elite} must lie in 0..pop-1 ({pop - 1})")
    _need(1 <= migrants < pop, f"migrants = {migrants} must lie in 1..pop-1 ({pop - 1})")
    _need(s.chunk is None or s.chunk >= 1, f"chunk = {s.chunk} must be at least 1")
    _need(
        not ((s.toroidal or s.constrained) and ga_io.checks_zero(s.fitness)),
        f"fitness {_fitness_name(s.fitness)} applies to the plain board only; use pairs or excess "
        "with --toroidal or --instance",
    )
    _need(
        not s.constrained or (n + 1) * ga_fitness.forbidden_weight(n) < 2**31,
        f"n = {n} is too large for a constrained GA (its int32 penalties would overflow); "
        "use n <= 1000",
    )


def _need(ok, msg: str) -> None:
    if not ok:
        raise QueensError(msg)


def _check_choices(encoding: str, scheme: str, crossover, mutation, fitness) -> None:
    """`check_setup`'s named choices: the encoding, fitness, scheme and operators exist."""
    _need(
        encoding in ENCODINGS,
        f"encoding {encoding!r} is unknown; use one of {', '.join(ENCODINGS)}",
    )
    _need(
        callable(fitness) or fitness in ga_fitness.FITNESS,
        f"fitness {fitness!r} is unknown; use one of {', '.join(ga_fitness.FITNESS)} "
        "or a function [n] int32 -> [] int",
    )
    _need(scheme in SCHEMES, f"scheme {scheme!r} is unknown; use one of {', '.join(SCHEMES)}")
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
    """`evolve`'s arguments checked, each once, in the order they are read.

    Args:
      a: `evolve`'s arguments by name.

    Returns:
      `(Config, the rates (check_setup's), the instance (toroidal applied) or None, its mask
      or None, the seed, the time budget or None)`.
    """
    n = 8 if a.n is None and a.instance is None else a.n
    seed = args.seed(a.seed, "seed")
    seconds = args.seconds(a.seconds, "seconds", optional=True)
    islands = args.integer(a.islands, "islands", 1)
    migrate_every = args.integer(a.migrate_every, "migrate_every", 0, optional=True)
    chosen = settings.ga_preset(a.preset, a.encoding, a.scheme)
    pop = chosen["pop"] if a.pop is None else a.pop
    for name, value in (("pop", pop), ("generations", a.generations), ("trials", a.trials)):
        args.integer(value, name, 0)
    opts = settings.resolve(
        settings.GA,
        {
            "scheme": a.scheme,
            "mutation": None if callable(a.mutation) else a.mutation,  # a function takes indpb
            "islands": islands,
            "migrate_every": migrate_every,
            "preset": a.preset,
            "encoding": a.encoding,
        },
        {
            "elite": a.elite,
            "indpb": a.indpb,
            "migrate_every": migrate_every,
            "migrants": a.migrants,
        },
        "evolve",
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
    given = {k: getattr(a, k) for k in ("tournament", "cxpb", "mutpb")}
    config, params = check_setup(
        n=n,
        pop=pop,
        generations=a.generations,
        trials=a.trials,
        encoding=a.encoding,
        scheme=a.scheme,
        crossover=a.crossover or ga_crossover.DEFAULT_CROSSOVER.get(a.encoding, ""),
        mutation=a.mutation or ga_mutation.DEFAULT_MUTATION.get(a.encoding, ""),
        **{k: chosen[k] if v is None else v for k, v in given.items()},
        indpb=opts["indpb"],
        elite=opts["elite"],
        islands=islands,
        migrate_every=opts["migrate_every"],
        migrants=opts["migrants"],
        fitness=a.fitness,
        chunk=a.chunk,
        toroidal=model is not None and model.toroidal,
        constrained=mask is not None,
    )
    if a.records not in RECORDS:
        raise QueensError(f"records {a.records!r} is unknown; use one of {', '.join(RECORDS)}")
    return config, params, model, mask, seed, seconds
