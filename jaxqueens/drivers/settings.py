"""Which options each method, scheme and solver uses, and the checks of settings that need no JAX.

One table per family says, for every option that only some settings use, its default and which
settings use it (:class:`Use`). :func:`resolve` reads a table: an option given (not None) to a
setting that does not use it is refused by name, never accepted and ignored
(``anneal --method ls --alpha 0.5``, ``evolve --scheme steady --elite 2``, a GA option under
``stats --solver minconflicts``); the options not given get their defaults. The drivers
(:func:`jaxqueens.anneal`, :func:`jaxqueens.evolve`, :func:`jaxqueens.stats`) resolve their
arguments here, so the Python API refuses them too; the command line calls the same functions
before it imports JAX, so an argument error never waits for JAX (``tests/test_startup.py``).

Also here, for the same reason: the checks of LS/TA/SA settings (:func:`check_anneal`), the
names and step budgets of :func:`jaxqueens.compare`'s solvers (:data:`COMPARE_SOLVERS`,
:func:`check_compare`). This module imports no JAX.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from jaxqueens.core import arguments
from jaxqueens.errors import QueensError
from jaxqueens.solvers.choices import (
    COUNT_ENUMERATE_MAX_N,
    COUNT_MAX_N,
    EDGES,
    ESTIMATE_MAX_N,
    INITS,
    MAX_BATCHED_N,
    METHODS,
    NEIGHBOURS,
    OBJECTIVES,
    STATS_SOLVERS,
)


@dataclasses.dataclass(frozen=True)
class Use:
    """An option only some settings use: its default (a value, or a function of the setting),
    which settings use it (``when``, described to the user by ``who``) and the setting keys
    that decide it (``keys``, named in the message)."""

    default: Any
    when: Callable[[Mapping[str, Any]], bool]
    who: str
    keys: tuple[str, ...]

    def default_for(self, setting: Mapping[str, Any]) -> Any:
        return self.default(setting) if callable(self.default) else self.default


def _is(key: str, *values) -> Callable[[Mapping[str, Any]], bool]:
    return lambda s: s.get(key) in values


ANNEAL: dict[str, Use] = {
    "q": Use(0.5, _is("method", "ta"), "TA (--method ta)", ("method",)),
    "init_prob": Use(0.4, _is("method", "sa"), "SA (--method sa)", ("method",)),
    "alpha": Use(0.9, _is("method", "sa"), "SA (--method sa)", ("method",)),
    "t0": Use("worsening", _is("method", "sa"), "SA (--method sa)", ("method",)),
    "step": Use(
        3, _is("neighbour", "step"), "the step neighbour (--neighbour step)", ("neighbour",)
    ),
    "edge": Use(
        "wrap", _is("neighbour", "step"), "the step neighbour (--neighbour step)", ("neighbour",)
    ),
}
"""LS/TA/SA: setting keys ``method`` and ``neighbour``."""

GA: dict[str, Use] = {
    "elite": Use(
        lambda s: 1 if s.get("scheme") == "generational" else 0,
        _is("scheme", "generational"),
        "the generational scheme (--scheme generational)",
        ("scheme",),
    ),
    "indpb": Use(
        0.0,
        _is("mutation", None, "swap", "reset"),  # None: the encoding's default, swap or reset
        "the swap and reset mutations (--mutation swap or reset)",
        ("mutation",),
    ),
    "migrate_every": Use(
        0, lambda s: s.get("islands", 1) > 1, "several islands (--islands 2+)", ("islands",)
    ),
    "migrants": Use(
        1,
        lambda s: s.get("islands", 1) > 1 and (s.get("migrate_every") or 0) > 0,
        "ring migration (--islands 2+ with --migrate-every 1+)",
        ("islands", "migrate_every"),
    ),
}
"""Genetic algorithms: setting keys ``scheme``, ``mutation`` (None: the encoding's default,
swap or reset), ``islands`` and ``migrate_every``. (``tournament``, ``cxpb`` and ``mutpb`` are
used by both schemes, with their own defaults: :func:`jaxqueens.evolve`.)"""

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
        "walk",
    ),
    "ga": (
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
"""``stats --solver S``: the options of each solver family (``batch`` and the checkpoint options
are every solver's)."""

STATS: dict[str, Use] = {
    option: Use(None, _is("solver", solver), f"--solver {solver}", ("solver",))
    for solver, names in STATS_OPTIONS.items()
    for option in names
}
"""Which solver of ``stats`` uses each option (defaults: None, the solver's own)."""


FLAGS = {"max_steps": "--maxsteps"}
"""Command-line spellings that are not the option's name with ``-`` for ``_``."""


def _flag(option: str) -> str:
    return FLAGS.get(option, "--" + option.replace("_", "-"))


def resolve(
    table: Mapping[str, Use],
    setting: Mapping[str, Any],
    given: Mapping[str, Any],
    command: str,
    also: Iterable[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The options of ``table`` for ``setting``: each given one (not None) that the setting
    uses, the default of each other one. An option given that the setting does not use is a
    QueensError naming it, the setting and who uses it (``command``: e.g. ``"anneal"``).
    ``also``: the other settings of the same run (``--method all``): an option one of them uses
    is not refused (each setting gets it only if it uses it itself)."""
    also = list(also)
    out = {}
    for option, use in table.items():
        value = given.get(option)
        if value is None:
            out[option] = use.default_for(setting)
        elif use.when(setting):
            out[option] = value
        elif any(use.when(other) for other in also):
            out[option] = use.default_for(setting)
        else:
            shown = " ".join(f"{_flag(k)} {setting.get(k)}" for k in use.keys)
            raise QueensError(
                f"{command} {shown} does not use {option} ({_flag(option)}): only {use.who} "
                "does; drop it"
            )
    return out


def used(
    table: Mapping[str, Use], setting: Mapping[str, Any], given: Mapping[str, Any]
) -> dict[str, Any]:
    """The options of ``given`` (not None) that ``setting`` uses: what a run of several settings
    (``anneal --method all``) passes on to each, after :func:`resolve` has refused the rest."""
    return {
        k: v for k, v in given.items() if v is not None and k in table and table[k].when(setting)
    }


def check_stats_options(solver: str, given: Mapping[str, Any]) -> None:
    """``stats``: every option given (not None) belongs to ``solver`` (or is common); an option
    of another solver, or one no solver has, is a QueensError naming it."""
    arguments.choice(solver, "solver", STATS_SOLVERS)
    known = {o for names in STATS_OPTIONS.values() for o in names}
    unknown = sorted(k for k, v in given.items() if v is not None and k not in known)
    if unknown:
        raise QueensError(
            f"stats --solver {solver}: {unknown[0]!r} is not an option of any solver; the "
            f"{solver} options are {', '.join(STATS_OPTIONS[solver])}"
        )
    resolve(STATS, {"solver": solver}, given, "stats")


# --- LS / TA / SA ---------------------------------------------------------------------------------

T0_RULES = ("worsening", "nmof")
"""SA start-temperature rules; a positive number is taken as T0 itself."""


def t0_rule(value) -> str | float:
    """``--t0``: "worsening", "nmof" or a positive finite number (SAopt's ``initT``)."""
    if isinstance(value, str) and value in T0_RULES:
        return value
    try:
        t0 = float(value)
    except (TypeError, ValueError):
        t0 = float("nan")
    if isinstance(value, bool) or not t0 > 0 or t0 == float("inf"):
        raise QueensError(f"--t0 {value!r}: use worsening, nmof or a positive start temperature")
    return t0


def check_anneal(
    *,
    n,
    method,
    chains,
    steps,
    rounds,
    neighbour,
    objective,
    edge,
    step,
    q,
    init_prob,
    alpha,
    t0,
    walk,
    seed,
    batch,
) -> dict[str, Any]:
    """Every LS/TA/SA setting checked (types, ranges, names), options resolved against
    :data:`ANNEAL` beforehand. Returns the numbers as Python values."""
    n = arguments.integer(n, "n", 1)
    if n < 4:
        raise QueensError(
            f"n = {n}: local search needs n >= 4 (n = 1 is trivial, 2 and 3 have no solution)"
        )
    arguments.choice(method, "method", METHODS)
    arguments.choice(neighbour, "neighbour", NEIGHBOURS)
    arguments.choice(objective, "objective", OBJECTIVES)
    arguments.choice(edge, "edge", EDGES)
    out = {
        "n": n,
        "chains": arguments.integer(chains, "--chains", 1),
        "steps": arguments.integer(steps, "--steps", 1),
        "rounds": arguments.integer(rounds, "--rounds", 1),
        "step": arguments.integer(step, "--step", None, None),
        "walk": arguments.integer(walk, "walk", 2),
        "seed": arguments.seed(seed, "--seed"),
        "batch": arguments.integer(batch, "--batch", 1, optional=True),
        "q": arguments.real(q, "--q", 0.0, 1.0, lo_open=True),
        "init_prob": arguments.real(init_prob, "--init-prob", 0.0, 1.0, lo_open=True, hi_open=True),
        "alpha": arguments.real(alpha, "--alpha", 0.0, 1.0, lo_open=True),
        "t0": t0_rule(t0),
    }
    if not 1 <= out["step"] <= n - 1:
        raise QueensError(f"--step must lie in 1..n-1 (1..{n - 1}), got {out['step']}")
    if out["steps"] < out["rounds"]:
        raise QueensError(
            f"--steps ({out['steps']}) must be at least --rounds ({out['rounds']}): each round "
            "(threshold or temperature) takes one step at least"
        )
    return out


# --- compare --------------------------------------------------------------------------------------

COMPARE_ROUNDS = 10
"""Rounds (thresholds, temperatures) of compare's LS/TA/SA runs: anneal's default."""
COMPARE_POP = 100
"""Population of compare's GA runs."""
COMPARE_TABU = 4
"""Plateau tabu tenure of the ``mc-tabu`` solver."""

COMPARE_SOLVERS: dict[str, dict] = {
    **{f"mc-{init}": {"family": "minconflicts", "init": init, "tabu": 0} for init in INITS},
    "mc-tabu": {"family": "minconflicts", "init": "permutation", "tabu": COMPARE_TABU},
    "ls": {"family": "anneal", "method": "ls"},
    "ta": {"family": "anneal", "method": "ta"},
    "sa": {"family": "anneal", "method": "sa"},
    "ga-permutation": {"family": "ga", "encoding": "permutation"},
    "ga-combination": {"family": "ga", "encoding": "combination"},
}
"""Every solver :func:`jaxqueens.compare` knows, by name: the family and its options (the
families' defaults for the rest)."""


def parse_solvers(text) -> list[str]:
    """A comma list (or list) of names of :data:`COMPARE_SOLVERS`, or ``all``; kept in order, no
    repeats."""
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


def least_steps(name: str) -> int:
    """The smallest step budget per chain solver ``name`` of :func:`jaxqueens.compare` can run:
    1 for min-conflicts, one per round for LS/TA/SA, the initial population and one generation
    for the GA (steady-state: two children)."""
    family = COMPARE_SOLVERS[name]["family"]
    if family == "anneal":
        return COMPARE_ROUNDS
    if family == "ga":
        return COMPARE_POP + 2
    return 1


def check_compare(n, chains, solvers, steps, seed) -> tuple[int, int, list[str], int, int]:
    """``(n, chains, names, steps, seed)`` of a :func:`jaxqueens.compare` run, checked before
    any solver runs: a step budget too small for some solver is refused up front, naming every
    such solver and the budget it needs (not after the solvers before it have run)."""
    n = arguments.integer(n, "n", 1)
    names = parse_solvers(solvers)
    if n < 4:
        raise QueensError(
            f"n = {n}: compare needs n >= 4 (n = 1 is trivial, 2 and 3 have no solution)"
        )
    chains = arguments.integer(chains, "--chains", 1)
    steps = arguments.integer(steps, "--steps", 1)
    seed = arguments.seed(seed, "--seed")
    short = [(name, least_steps(name)) for name in names if steps < least_steps(name)]
    if short:
        why = {
            "anneal": f"LS/TA/SA spread the budget over {COMPARE_ROUNDS} thresholds or "
            "temperatures",
            "ga": f"the GA's initial population alone takes {COMPARE_POP} evaluations",
        }
        families = dict.fromkeys(COMPARE_SOLVERS[name]["family"] for name, _ in short)
        need = max(least for _, least in short)
        raise QueensError(
            f"--steps {steps} is too small for {', '.join(name for name, _ in short)} "
            f"({'; '.join(why[f] for f in families)}); give --steps {need} or more, or leave "
            "those solvers out of --solvers"
        )
    return n, chains, names, steps, seed


# --- solve --instance -----------------------------------------------------------------------------


def check_instance_n(n: int) -> None:
    """Local search on a constrained instance runs on the batched kernel only (the large-n path
    has no masks): an instance beyond its limit is refused in one line, with no advice to switch
    paths (``--mode batched`` and ``--mode large`` both refuse it)."""
    if n > MAX_BATCHED_N:
        raise QueensError(
            f"the instance has n = {n:,}, but local search on an instance runs on the batched "
            f"kernel, which takes n <= {MAX_BATCHED_N:,} (the large-n path takes no instance); "
            "give a smaller instance"
        )


# --- sizes and budgets of the other commands (their drivers call these too) ----------------------


def check_solvable(n: int) -> None:
    """A board size with a solution for the searches that look for one (min-conflicts, the
    large-n path): n = 2 and 3 have none."""
    if n in (2, 3):
        raise QueensError(
            f"n = {n} has no solution (N-Queens is solvable for n = 1 and every n >= 4)"
        )


def check_count_n(n) -> int:
    """``count``'s board size: 1..COUNT_MAX_N."""
    n = arguments.integer(n, "n", None)
    if not 1 <= n <= COUNT_MAX_N:
        raise QueensError(f"n = {n} is out of range: counting supports 1 <= n <= {COUNT_MAX_N}")
    return n


def check_enumerate_n(n) -> int:
    """``count --enumerate``'s board size: 1..COUNT_ENUMERATE_MAX_N."""
    n = arguments.integer(n, "n", None)
    if not 1 <= n <= COUNT_ENUMERATE_MAX_N:
        raise QueensError(
            f"enumeration supports 1 <= n <= {COUNT_ENUMERATE_MAX_N} (n = 14 has 365,596 "
            f"solutions), not n = {n}; use 'jaxqueens count -n {n}' to count them"
        )
    return n


STATS_ANNEAL = {
    "method": "ta",
    "steps": 10_000,
    "rounds": 10,
    "neighbour": "step",
    "objective": "attacks",
    "walk": 2000,
}
"""``stats --solver anneal``: the defaults of its LS/TA/SA settings (anneal's)."""


def check_stats_anneal(n, options: Mapping[str, Any], chains, seed, batch) -> dict[str, Any]:
    """Every setting of ``stats --solver anneal`` (``options``: those given), resolved and
    checked: the defaults of :data:`STATS_ANNEAL` and :data:`ANNEAL`, options the method does not
    use refused, ranges as for ``anneal`` (:func:`check_anneal`). Returns the settings."""
    setting = {**STATS_ANNEAL, **{k: v for k, v in options.items() if k in STATS_ANNEAL}}
    arguments.choice(setting["method"], "--method", METHODS)
    arguments.choice(setting["neighbour"], "--neighbour", NEIGHBOURS)
    opts = resolve(ANNEAL, setting, options, "stats --solver anneal")
    opts.pop("t0"), opts.pop("edge")  # not options of stats (SA's T0 rule "worsening", wrap)
    checked = check_anneal(
        n=n,
        chains=1 if chains is None else chains,
        seed=seed,
        batch=batch,
        t0="worsening",
        edge="wrap",
        **setting,
        **opts,
    )
    return {**setting, **{k: checked[k] for k in ("step", "q", "init_prob", "alpha")}}


def check_stats_budget(chains, solutions, seconds, seed) -> tuple:
    """``(chains, solutions, seconds, seed)`` of a ``stats`` run, checked (None: not given)."""
    return (
        arguments.integer(chains, "--chains", 1, optional=True),
        arguments.integer(solutions, "--solutions", 1, optional=True),
        arguments.seconds(seconds, "--time", optional=True),
        arguments.seed(seed, "--seed"),
    )


def check_estimate(n, probes, level, seed) -> tuple:
    """``(n, probes or None, level, seed)`` of Knuth's estimator, checked: n in
    1..ESTIMATE_MAX_N, probes a positive count (a float such as 1e7 is taken whole), level in
    (0, 1)."""
    n = arguments.integer(n, "n", 1)
    if n > ESTIMATE_MAX_N:
        raise QueensError(
            f"n = {n} is outside 1..{ESTIMATE_MAX_N} (the walks keep two 32-bit words); "
            f"use -n between 1 and {ESTIMATE_MAX_N}"
        )
    if probes is not None:
        real = isinstance(probes, (int, float)) and not isinstance(probes, bool)
        real = real or arguments.is_integer(probes)
        if not real or not math.isfinite(float(probes)):
            raise QueensError(f"--probes must be a positive number like 1e7, got {probes!r}")
        probes = int(probes)
        if probes < 1:
            raise QueensError(f"--probes must be at least 1, got {probes}")
    level = arguments.real(level, "--level", 0.0, 1.0, lo_open=True, hi_open=True)
    return n, probes, level, arguments.seed(seed, "--seed")
