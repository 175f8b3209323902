"""The settings of `jaxqueens stats`: each solver family's options and their checks, JAX-free.

`stats` samples the solutions of one family (`STATS_SOLVERS`); an option belongs to the families
that list it (`STATS_OPTIONS`). `check_stats` checks a run's settings once, before JAX is
imported, into the `StatsSettings` the driver runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from jaxqueens.core import arguments
from jaxqueens.core.oeis import A000170
from jaxqueens.drivers import settings
from jaxqueens.errors import QueensError

STATS_SOLVERS = ("minconflicts", "anneal", "ga")  # `stats --solver`: the families `stats` samples

GA_OPERATORS = ("scheme", "crossover", "mutation", "tournament", "cxpb", "mutpb", "indpb", "elite")
"""The GA's scheme and operator options, as `evolve` names them: `stats` and `compare` take all."""

STATS_OPTIONS: dict[str, tuple[str, ...]] = {
    "minconflicts": ("max_steps", "init", "tabu", "max_restarts"),
    "anneal": (
        "method",
        "steps",
        "rounds",
        "neighbour",
        "step",
        "objective",
        "q",
        "init_prob",
        "alpha",
        "t_end",
        "walk",
        "preset",
    ),
    "ga": (
        "preset",
        "pop",
        "generations",
        "encoding",
        *GA_OPERATORS,
        "islands",
        "migrate_every",
        "migrants",
        "fitness",
    ),
}
"""`stats --solver S`: the options of each solver family, in the order messages list them
(`batch` and the checkpoint options are every solver's)."""


def check_stats_options(solver: str, given: Mapping[str, Any]) -> None:
    """`stats`: every option `given` (not None) belongs to `solver` (one of `STATS_SOLVERS`); an
    option of another solver, or one no solver has, is a QueensError naming it."""
    arguments.choice(solver, "solver", STATS_SOLVERS)
    known = dict.fromkeys(o for names in STATS_OPTIONS.values() for o in names)
    unknown = sorted(k for k, v in given.items() if v is not None and k not in known)
    if unknown:
        raise QueensError(
            f"stats --solver {solver}: {unknown[0]!r} is not an option of any solver; the "
            f"{solver} options are {', '.join(STATS_OPTIONS[solver])}"
        )
    for option in (o for o in known if given.get(o) is not None):
        if option not in STATS_OPTIONS[solver]:
            who = " or ".join(
                f"--solver {s}" for s, names in STATS_OPTIONS.items() if option in names
            )
            raise arguments.unused("stats", f"--solver {solver}", option, who)
    if solver == "ga" and given.get("preset") is not None:
        arguments.choice(given["preset"], "preset", settings.GA_PRESETS)


STATS_ANNEAL = {"method": "ta", "steps": 10_000, "walk": 2000, "preset": "default"}
"""`stats --solver anneal`: the defaults of the settings no preset gives (anneal's); the rest
are the preset's (`anneal_settings`)."""


def check_stats_anneal(n, options: Mapping[str, Any], chains, seed, batch) -> tuple:
    """Every setting of `stats --solver anneal` (`options`: those given; `chains`, `batch` None: not
    given), resolved and checked: the defaults of `STATS_ANNEAL` and of the preset, options the
    method does not use refused, ranges as for `anneal` (`check_anneal`). `stats` has no `--edge` or
    `--t0`: its runs wrap at the edge and take SA's start temperature from the worsening moves
    (whatever the settings' `edge` and `t0`).

    Returns `(settings, numbers)`: the method's `LSSettings` (its `method` and `preset` included)
    and the run's numbers checked (`check_anneal`: steps, walk, ...)."""
    setting = {**STATS_ANNEAL, **{k: v for k, v in options.items() if k in STATS_ANNEAL}}
    given = {k: v for k, v in options.items() if k in settings.ANNEAL_SETTINGS}
    for name in ("edge", "t0"):
        if given.get(name) is not None:
            raise QueensError(f"stats --solver anneal has no {arguments.flag_of(name)}; drop it")
    s = settings.anneal_settings(
        setting["method"], setting["preset"], command="stats --solver anneal", **given
    )
    chains = 1 if chains is None else chains
    numbers = {"steps": setting["steps"], "walk": setting["walk"], "seed": seed, "batch": batch}
    return s, settings.check_anneal(s, n=n, chains=chains, **numbers)


@dataclasses.dataclass(frozen=True)
class StatsSettings:
    """A `stats` run's settings as `check_stats` checked them (frozen): the budgets (None: no
    such budget), the seed, the chains per kernel call (GA: trials per round; None: automatic)
    and the options given of the solver's own (`STATS_OPTIONS`)."""

    n: int
    solver: str  #: one of `STATS_SOLVERS`
    chains: int | None  #: chains (GA: trials) to run; min-conflicts: chains solved
    solutions: int | None  #: stop at this many distinct solutions
    seconds: float | None  #: stop after this much kernel time
    seed: int
    batch: int | None
    options: dict[str, Any]
    anneal: tuple[settings.LSSettings, dict[str, Any]] | None  #: "anneal": `check_stats_anneal`'s


def check_stats(
    n: int,
    solver: str = "minconflicts",
    *,
    chains: int | None = None,
    solutions: int | None = None,
    seconds: float | None = None,
    seed: int = 0,
    batch: int | None = None,
    **options,
) -> StatsSettings:
    """The checked settings of a `stats` run on an n x n board (`n` an int): options of another
    solver refused (`check_stats_options`), the budgets and seed in range, `solutions` at most the
    board's solutions (OEIS A000170), LS/TA/SA's settings resolved (`check_stats_anneal`); with no
    budget given, 10,000 chains. An option None is not given (the solver's default)."""
    if solver not in STATS_SOLVERS:
        raise QueensError(f"solver {solver!r} is unknown; use one of {', '.join(STATS_SOLVERS)}")
    options = {k: v for k, v in options.items() if v is not None}
    check_stats_options(solver, options)
    chains = arguments.integer(chains, "chains", 1, optional=True)
    solutions = arguments.integer(solutions, "solutions", 1, optional=True)
    seconds = arguments.seconds(seconds, "seconds", optional=True)
    seed = arguments.seed(seed, "seed")
    anneal = check_stats_anneal(n, options, chains, seed, batch) if solver == "anneal" else None
    if solutions is not None and n in A000170 and solutions > A000170[n]:
        raise QueensError(
            f"--solutions {solutions}: n = {n} has only {A000170[n]:,} solutions; "
            f"ask for at most that many"
        )
    if chains is None and solutions is None and seconds is None:
        chains = 10_000
    return StatsSettings(n, solver, chains, solutions, seconds, seed, batch, options, anneal)
