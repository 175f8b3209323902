"""The settings of `jaxqueens compare`: its solvers, the keys each takes and their checks, no JAX.

Every solver runs at its family's tuned defaults (`COMPARE_PRESET`) unless given its own settings
(`COMPARE_KEYS`); `check_compare` checks a whole run, every solver's settings included, before
the first solver runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from jaxqueens.core import arguments
from jaxqueens.drivers.settings import (
    ANNEAL_OPTIONAL,
    ANNEAL_PRESET_SETTINGS,
    ANNEAL_PRESETS,
    ANNEAL_SETTINGS,
    GA_OPTIONAL,
    GA_PRESETS,
    LSSettings,
    anneal_neighbour,
    anneal_settings,
    check_anneal,
    ga_settings,
    ga_unused,
    t0_rule,
)
from jaxqueens.drivers.stats_setup import GA_OPERATORS
from jaxqueens.errors import QueensError
from jaxqueens.solvers.variants import EDGES, INITS, NEIGHBOURS, OBJECTIVES

COMPARE_TABU = 4  # plateau tabu tenure of the `mc-tabu` solver

COMPARE_SOLVERS: dict[str, dict] = {
    **{f"mc-{init}": {"family": "minconflicts", "init": init, "tabu": 0} for init in INITS},
    "mc-tabu": {"family": "minconflicts", "init": "permutation", "tabu": COMPARE_TABU},
    "ls": {"family": "anneal", "method": "ls"},
    "ta": {"family": "anneal", "method": "ta"},
    "sa": {"family": "anneal", "method": "sa"},
    "ga-permutation": {"family": "ga", "encoding": "permutation"},
    "ga-combination": {"family": "ga", "encoding": "combination"},
}
"""Every solver `jaxqueens.compare` knows, by name: the family and its options (the
families' defaults for the rest)."""


def parse_solvers(text) -> list[str]:
    """The solvers a `compare` run names, in order, without repeats: `text` is a comma list (or
    list) of names of `COMPARE_SOLVERS`, or "all"."""
    items = text if isinstance(text, (list, tuple)) else str(text).split(",")
    names = (
        list(COMPARE_SOLVERS)
        if [str(s).strip() for s in items] == ["all"]
        else list(dict.fromkeys(str(s).strip() for s in items if str(s).strip()))
    )
    bad = [s for s in names if s not in COMPARE_SOLVERS]
    if bad or not names:
        raise QueensError(
            f"solvers {', '.join(bad) or '(none)'}: unknown; use a comma list of "
            f"{', '.join(COMPARE_SOLVERS)}, or all"
        )
    return names


COMPARE_PRESET = "default"
"""Every solver of `jaxqueens.compare` runs at its family's tuned defaults, unless its
own settings (`compare_settings`) say otherwise."""

COMPARE_KEYS: dict[str, tuple[str, ...]] = {
    "minconflicts": ("steps", "maxsteps", "tabu"),
    "anneal": (
        "steps",
        "preset",
        "rounds",
        "neighbour",
        "step",
        "edge",
        "objective",
        "q",
        "init_prob",
        "alpha",
        "t_end",
        "t0",
    ),
    "ga": ("steps", "generations", "preset", "pop", *GA_OPERATORS),
}
"""The settings a solver of `jaxqueens.compare` takes per family (`[solvers.sa]` in a
config, `--set sa.rounds=100`): its own step budget `steps` (default: the run's), and the
options of the family's command with the same names (`solve --maxsteps`, `anneal --rounds`,
`evolve --pop`); the GA may give `generations` instead of `steps` (its budget is then the
initial population and those generations). What the solver's name fixes (min-conflicts' init,
the LS/TA/SA method, the GA's encoding) is not a setting."""


def compare_ga(name: str, given: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The settings of `jaxqueens.compare`'s GA solver `name`: the scheme and encoding and the
    preset's population, tournament, rates and elite (`ga_settings`), each overridden by `given`
    (None or absent: the preset's)."""
    spec = COMPARE_SOLVERS[name]
    given = {k: v for k, v in (given or {}).items() if v is not None}
    scheme = given.get("scheme", spec.get("scheme", "steady"))
    arguments.choice(scheme, "scheme", ("steady", "generational"))
    preset = given.get("preset", COMPARE_PRESET)
    chosen = {"scheme": scheme, **dataclasses.asdict(ga_settings(preset, spec["encoding"], scheme))}
    for key in ("pop", "tournament", "cxpb", "mutpb"):
        if key in given:
            chosen[key] = given[key]
    return chosen


def ga_per_generation(ga: Mapping[str, Any]) -> int:
    """Evaluations per generation of a GA solver's settings (`compare_ga`): two children in the
    steady-state scheme, a whole population in the generational one."""
    return 2 if ga["scheme"] == "steady" else ga["pop"]


def least_steps(name: str, given: Mapping[str, Any] | None = None) -> int:
    """The smallest step budget per chain solver `name` of `jaxqueens.compare` can run with its
    settings `given` (None: the defaults): 1 for min-conflicts, one per round for LS/TA/SA, the
    initial population and one generation for the GA (steady-state: two children)."""
    return _least_steps(name, given)[0]


def _least_steps(name: str, given: Mapping[str, Any] | None = None) -> tuple[int, str]:
    """`least_steps` and why, in words ("" for min-conflicts: one step)."""
    spec = COMPARE_SOLVERS[name]
    given = given or {}
    if spec["family"] == "anneal":
        preset = given.get("preset") or COMPARE_PRESET
        arguments.choice(preset, "preset", ANNEAL_PRESETS)
        least = given.get("rounds")
        least = ANNEAL_PRESET_SETTINGS[preset][spec["method"]]["rounds"] if least is None else least
        return least, f"{name}: {least} thresholds or temperatures, a step each at least"
    if spec["family"] == "ga":
        ga = compare_ga(name, given)
        least = ga["pop"] + ga_per_generation(ga)
        why = f"its initial population of {ga['pop']} and one generation take {least} evaluations"
        return least, f"{name}: {why}"
    return 1, ""


def _solver_key(name: str, key: str, value: Any) -> Any:
    """One setting of compare's solver `name`, type- and range-checked (a one-line QueensError
    naming `name.key` and the fix)."""
    where = f"{name}.{key}"
    if key in ("steps", "generations", "maxsteps", "rounds", "pop", "tournament"):
        return arguments.integer(value, where, 1)
    if key in ("tabu", "elite", "step"):
        return arguments.integer(value, where, 0)
    if key in ("cxpb", "mutpb", "indpb"):
        return arguments.real(value, where, 0.0, 1.0)
    if key in ("q", "alpha", "t_end"):
        return arguments.real(value, where, 0.0, 1.0, lo_open=True)
    if key == "init_prob":
        return arguments.real(value, where, 0.0, 1.0, lo_open=True, hi_open=True)
    if key == "t0":
        return t0_rule(value)
    choices = {
        "neighbour": NEIGHBOURS,
        "edge": EDGES,
        "objective": OBJECTIVES,
        "scheme": ("steady", "generational"),
    }
    if key == "preset":
        family = COMPARE_SOLVERS[name]["family"]
        return arguments.choice(value, where, ANNEAL_PRESETS if family == "anneal" else GA_PRESETS)
    if key in choices:
        return arguments.choice(value, where, choices[key])
    if not isinstance(value, str) or not value:  # crossover, mutation: the GA checks the name
        raise QueensError(f"{where} must be a name, got {value!r}")
    return value


def compare_settings(
    n: int, names: Iterable[str], steps: int, given: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, dict[str, Any]]:
    """Every solver's own settings for a `jaxqueens.compare` run, checked before any solver runs:
    solver -> its settings as given, with `steps`, the solver's own budget, filled in (GA: the
    initial population and `generations`, when given).

    `given` maps solver -> key -> value, as `[solvers.sa] rounds = 100` or `--set sa.rounds=100`;
    `steps` is the run's step budget per chain. An unknown solver, a solver not in `names`, a key
    the solver's family does not take (`COMPARE_KEYS`) or uses in no setting of it (`sa.q`,
    `ga-permutation.elite` in the steady-state scheme), a bad value, or a budget too small for a
    solver is a one-line QueensError naming it and the fix."""
    names = list(names)
    given = dict(given or {})
    for name in given:
        if name not in COMPARE_SOLVERS:
            raise QueensError(
                f"settings for solver {name!r}: no such solver; use one of "
                f"{', '.join(COMPARE_SOLVERS)}"
            )
        if name not in names:
            raise QueensError(
                f"settings for {name} given, but {name} is not among the solvers run "
                f"({', '.join(names)}); add it to solvers or drop its settings"
            )
    out: dict[str, dict[str, Any]] = {}
    resolved: dict[str, LSSettings] = {}  # LS/TA/SA: every setting, defaults filled in
    for name in names:
        out[name] = _solver_settings(name, given.get(name), steps, resolved)
    _check_budgets(out, given, steps)
    for name, s in resolved.items():  # the ranges anneal checks (--step within 1..n-1, ...)
        try:
            check_anneal(s, n=n, chains=1, steps=out[name]["steps"], walk=2000, seed=0, batch=None)
        except QueensError as err:
            raise QueensError(f"{name}: {err}") from None
    return out


def _solver_settings(name: str, raw: Any, steps: int, resolved: dict[str, LSSettings]) -> dict:
    """Solver `name`'s settings `raw` checked, its budget filled in (`resolved` gets an LS/TA/SA
    solver's every setting, defaults filled in)."""
    spec = COMPARE_SOLVERS[name]
    family = spec["family"]
    if not isinstance(raw or {}, Mapping):
        raise QueensError(f"settings for {name} must be a table of key = value")
    raw = dict(raw or {})
    keys = COMPARE_KEYS[family]
    for key in raw:
        if key not in keys:
            raise QueensError(
                f"{name}: unknown setting {key!r} (valid for {name}: {', '.join(keys)})"
            )
    # a setting the solver does not use (`anneal_neighbour`, `ga_unused`: `sa.q`,
    # `ga-permutation.elite` in the steady-state scheme) is refused by name before its value is
    # checked: `sa.q = 3` is not used, whatever its range
    optional = {"anneal": ANNEAL_OPTIONAL, "ga": GA_OPTIONAL}.get(family, ())
    mine = {k: _solver_key(name, k, v) for k, v in raw.items() if k not in optional}
    command = f"compare {name}"
    if family == "anneal":
        anneal_neighbour(spec["method"], mine.get("preset"), {**raw, **mine}, command=command)
    elif family == "ga":
        scheme, mutation = compare_ga(name, mine)["scheme"], mine.get("mutation")
        ga_unused(
            raw, scheme=scheme, mutation=mutation, islands=1, migrate_every=None, command=command
        )
    mine = {k: mine[k] if k in mine else _solver_key(name, k, v) for k, v in raw.items()}
    if family == "anneal":
        try:
            resolved[name] = anneal_settings(
                spec["method"],
                mine.get("preset"),
                command=command,
                **{k: v for k, v in mine.items() if k in ANNEAL_SETTINGS},
            )
        except QueensError as err:  # (the unused-option message names compare and name)
            if str(err).startswith("compare "):
                raise
            raise QueensError(f"{name}: {err}") from None
    if family == "ga":
        _check_ga_sizes(name, mine)
    mine.setdefault("steps", steps)
    return mine


def _check_ga_sizes(name: str, mine: dict[str, Any]) -> None:
    """GA solver `name`'s population, tournament and elite checked together; its `generations`,
    when given, turned into its budget `steps` (in `mine`)."""
    ga = compare_ga(name, mine)
    if ga["pop"] < 2 or ga["tournament"] < (2 if ga["scheme"] == "steady" else 1):
        raise QueensError(
            f"{name}: pop {ga['pop']} and tournament {ga['tournament']} are too small "
            "(a population of 2 at least, a tournament of 2 in the steady-state scheme)"
        )
    if ga["tournament"] > ga["pop"]:
        raise QueensError(
            f"{name}: pop {ga['pop']} is smaller than the tournament {ga['tournament']}; "
            "raise pop or lower tournament"
        )
    if mine.get("elite") is not None and mine["elite"] >= ga["pop"]:
        raise QueensError(f"{name}: elite must lie in 0..pop-1 ({ga['pop'] - 1})")
    if "generations" in mine:
        if "steps" in mine:
            raise QueensError(
                f"{name}: give steps (the budget in evaluations) or generations, not both"
            )
        mine["steps"] = ga["pop"] + ga_per_generation(ga) * mine.pop("generations")


def _check_budgets(out: dict[str, dict[str, Any]], given: Mapping[str, Any], steps: int) -> None:
    """Every solver's budget is enough for it: its own `steps` (`given`), else the run's."""
    short: list[tuple[str, int, str]] = []  # the solvers the run's budget leaves short
    for name, s in out.items():
        least, why = _least_steps(name, s)
        own = {"steps", "generations"} & set(given.get(name) or {})
        if not own and steps < least:
            short.append((name, least, why))
        if own and s["steps"] < least:  # (generations >= 1 always fit)
            raise QueensError(
                f"{name}.steps {s['steps']} is too small ({why}); give {name}.steps {least} or more"
            )
    if short:
        names, needs, whys = zip(*short, strict=True)
        raise QueensError(
            f"--steps {steps} is too small for {', '.join(names)} ({'; '.join(whys)}); give "
            f"--steps {max(needs)} or more, or leave those solvers out of --solvers"
        )


COMPARE_REPEATS_MAX = 100  # the most timed repeats of one `jaxqueens.compare` run (`--repeats`)


@dataclasses.dataclass(frozen=True)
class CompareSetup:
    """A `jaxqueens.compare` run's settings, checked once (`check_compare`)."""

    n: int  #: >= 4
    chains: int  #: per solver (GA: trials)
    names: list[str]  #: the solvers run, in order
    steps: int  #: the step budget per chain
    seed: int  #: the same for every solver
    repeats: int  #: timed runs of each solver
    #: solver -> its settings, `steps` filled in (`compare_settings`)
    own: dict[str, dict[str, Any]]
    given: dict[str, dict[str, Any]]  #: solver -> its settings as given


def check_compare(
    n: Any,
    chains: Any,
    solvers: Any,
    steps: Any,
    seed: Any,
    given: Mapping[str, Mapping[str, Any]] | None = None,
    repeats: Any = 1,
) -> CompareSetup:
    """A `jaxqueens.compare` run checked before any solver runs, every solver's own settings
    (`compare_settings`) included, as its `CompareSetup`.

    `chains` are per solver (GA: trials), `solvers` names of `COMPARE_SOLVERS`, a comma list, or
    "all", `steps` the step budget per chain, `repeats` the timed runs of each solver (1 ..
    `COMPARE_REPEATS_MAX`). A value out of range or a setting refused is a QueensError naming it and
    the fix; a step budget too small for some solver is refused up front, naming every such solver
    and the budget it needs."""
    n = arguments.integer(n, "n", 1)
    names = parse_solvers(solvers)
    if n < 4:
        raise QueensError(
            f"n = {n}: compare needs n >= 4 (n = 1 is trivial, 2 and 3 have no solution)"
        )
    chains = arguments.integer(chains, "chains", 1)
    steps = arguments.integer(steps, "steps", 1)
    seed = arguments.seed(seed, "seed")
    repeats = arguments.integer(repeats, "repeats", 1, COMPARE_REPEATS_MAX)
    own = compare_settings(n, names, steps, given)
    as_given = {name: dict(v) for name, v in (given or {}).items()}
    return CompareSetup(n, chains, names, steps, seed, repeats, own, as_given)
