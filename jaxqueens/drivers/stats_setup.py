"""The settings of `jaxqueens stats`: each solver family's options and their checks, JAX-free.

`stats` samples the solutions of one family (`STATS_SOLVERS`); an option belongs to the families
that list it (`STATS_OPTIONS`), and `check_stats_options` refuses the others by name before JAX
is imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jaxqueens.core import arguments
from jaxqueens.drivers.settings import (
    ANNEAL_SETTINGS,
    GA_PRESETS,
    anneal_settings,
    check_anneal,
)
from jaxqueens.errors import QueensError

STATS_SOLVERS = ("minconflicts", "anneal", "ga")  # `stats --solver`: the families `stats` samples


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
        "scheme",
        "crossover",
        "mutation",
        "tournament",
        "cxpb",
        "mutpb",
        "indpb",
        "elite",
        "islands",
        "migrate_every",
        "migrants",
        "fitness",
    ),
}
"""`stats --solver S`: the options of each solver family (`batch` and the checkpoint options
are every solver's)."""


def check_stats_options(solver: str, given: Mapping[str, Any]) -> None:
    """`stats`: every option `given` (not None) belongs to `solver` (one of `STATS_SOLVERS`) or is
    common; an option of another solver, or one no solver has, is a QueensError naming it."""
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
        arguments.choice(given["preset"], "preset", GA_PRESETS)


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
    given = {k: v for k, v in options.items() if k in ANNEAL_SETTINGS}
    for name in ("edge", "t0"):
        if given.get(name) is not None:
            raise QueensError(f"stats --solver anneal has no {arguments.flag_of(name)}; drop it")
    s = anneal_settings(
        setting["method"], setting["preset"], command="stats --solver anneal", **given
    )
    chains = 1 if chains is None else chains
    numbers = {"steps": setting["steps"], "walk": setting["walk"], "seed": seed, "batch": batch}
    return s, check_anneal(s, n=n, chains=chains, **numbers)


def check_stats_budget(chains, solutions, seconds, seed) -> tuple:
    """The budget and seed of a `stats` run, checked: `(chains, solutions, seconds, seed)` (a budget
    None: not given)."""
    return (
        arguments.integer(chains, "chains", 1, optional=True),
        arguments.integer(solutions, "solutions", 1, optional=True),
        arguments.seconds(seconds, "seconds", optional=True),
        arguments.seed(seed, "seed"),
    )
