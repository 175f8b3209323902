"""The settings of the solvers' families, JAX-free: the one source of the LS/TA/SA and GA
defaults and presets, and which options each method and scheme uses.

One table per family says, for every option that only some settings use, its default and which
settings use it (`Use`); `resolve` refuses an option given to a setting that does not use it, by
name, and fills in the defaults of the others. Each command's own settings live beside its driver
(`compare_setup`, `stats_setup`, `solve_setup`, `count_setup`, `estimate_setup`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from jaxqueens.core import arguments
from jaxqueens.errors import QueensError
from jaxqueens.solvers.variants import EDGES, METHODS, NEIGHBOURS, OBJECTIVES


@dataclasses.dataclass(frozen=True)
class Use:
    """An option only some settings use: its default (a value, or a function of the setting),
    which settings use it (`when`, described to the user by `who`) and the setting keys
    that decide it (`keys`, named in the message)."""

    default: Any
    when: Callable[[Mapping[str, Any]], bool]
    who: str
    keys: tuple[str, ...]

    def default_for(self, setting: Mapping[str, Any]) -> Any:
        return self.default(setting) if callable(self.default) else self.default


def _is(key: str, *values) -> Callable[[Mapping[str, Any]], bool]:
    return lambda s: s.get(key) in values


# --- presets: the defaults of LS/TA/SA and of the GA ----------------------------------------------

ANNEAL_CLASSIC: dict[str, Any] = {
    "neighbour": "step",
    "step": 3,
    "edge": "wrap",
    "objective": "attacks",
    "rounds": 10,
    "q": 0.5,
    "init_prob": 0.4,
    "alpha": 0.9,
    "t_end": None,
    "t0": "worsening",
}
"""The classic LS/TA/SA settings (`--preset classic`): NMOF's TAopt/SAopt settings with the
vignette's step neighbour (one queen by 1..3 rows, wrapping)."""

ANNEAL_DEFAULTS: dict[str, dict[str, Any]] = {
    "ls": {**ANNEAL_CLASSIC, "neighbour": "swap"},
    "ta": {**ANNEAL_CLASSIC, "neighbour": "swap", "q": 0.4},
    "sa": {
        **ANNEAL_CLASSIC,
        "neighbour": "swap",
        "rounds": 100,
        "init_prob": 0.1,
        "alpha": None,
        "t_end": 0.001,
    },
}
"""Tuned LS/TA/SA defaults per method (`scripts/tune_defaults.py anneal`); the docs' anneal
page says why."""

ANNEAL_PRESET_SETTINGS: dict[str, dict[str, dict[str, Any]]] = {
    "default": ANNEAL_DEFAULTS,
    "classic": {m: dict(ANNEAL_CLASSIC) for m in METHODS},
    "nmof": {m: {**ANNEAL_CLASSIC, "edge": "nmof", "t0": "nmof"} for m in METHODS},
}
"""LS/TA/SA settings by `--preset`: `default`, `classic` and `nmof` (classic with the vignette's
far-end edge and SAopt's start-temperature rule)."""
ANNEAL_PRESETS = tuple(ANNEAL_PRESET_SETTINGS)
"""`anneal --preset`: tuned defaults, the classic (NMOF TAopt/SAopt) ones, NMOF's vignette."""
ANNEAL_SETTINGS = tuple(ANNEAL_CLASSIC)
"""The settings of an LS/TA/SA run that a preset gives (and a user may override)."""

GA_CLASSIC: dict[str, dict[str, Any]] = {
    "steady": {"pop": 100, "tournament": 5, "cxpb": 1.0, "mutpb": 1.0, "elite": 0},
    "generational": {"pop": 100, "tournament": 3, "cxpb": 0.5, "mutpb": 0.2, "elite": 1},
}
"""The classic GA settings (`--preset classic`): the classic course GA (steady state) and
DEAP's eaSimple rates (generational)."""

GA_DEFAULTS: dict[str, dict[str, dict[str, Any]]] = {
    "permutation": {
        "steady": {"pop": 10, "tournament": 4, "cxpb": 0.2, "mutpb": 1.0, "elite": 0},
        "generational": {"pop": 20, "tournament": 3, "cxpb": 0.2, "mutpb": 1.0, "elite": 1},
    },
    "combination": GA_CLASSIC,
}
"""Tuned GA defaults per encoding and scheme (`scripts/tune_defaults.py ga`); the docs' ga page
says why."""

GA_PRESET_SETTINGS: dict[str, dict[str, dict[str, dict[str, Any]]]] = {
    "default": GA_DEFAULTS,
    "classic": {"permutation": GA_CLASSIC, "combination": GA_CLASSIC},
}
"""GA settings by `--preset`: `default` (`GA_DEFAULTS`) and `classic` (`GA_CLASSIC`)."""
GA_PRESETS = tuple(GA_PRESET_SETTINGS)
"""`evolve --preset`: tuned defaults, the classic course GA."""


def ga_preset(name: str, encoding: str = "permutation", scheme: str = "steady") -> dict:
    """Population, tournament, rates and elite of a preset (an unknown encoding or scheme gets the
    classic steady-state values here and is refused by the GA's own check).

    Args:
      name: the preset.
      encoding: "permutation" or "combination".
      scheme: "steady" or "generational".

    Returns:
      The settings, encoding and scheme included, as `jaxqueens.evolve` keywords.
    """
    if name not in GA_PRESET_SETTINGS:
        raise QueensError(f"--preset {name!r}: use one of {', '.join(GA_PRESET_SETTINGS)}")
    table = GA_PRESET_SETTINGS[name].get(encoding, GA_CLASSIC)
    return {"encoding": encoding, "scheme": scheme, **table.get(scheme, GA_CLASSIC["steady"])}


def _ga_elite(setting: Mapping[str, Any]) -> int:
    """The elite of the setting's preset for its encoding, generational scheme."""
    preset = setting.get("preset") or "default"
    return ga_preset(preset, setting.get("encoding") or "permutation", "generational")["elite"]


# --- which options each setting uses ---------------------------------------------------------


def _anneal_default(option: str) -> Callable[[Mapping[str, Any]], Any]:
    """The value of `option` in the setting's preset (`preset`, default "default") for its
    method."""
    return lambda s: ANNEAL_PRESET_SETTINGS[s.get("preset") or "default"][s["method"]][option]


_SA = "SA (--method sa)"
_STEP = "the step neighbour (--neighbour step)"
ANNEAL: dict[str, Use] = {
    "q": Use(_anneal_default("q"), _is("method", "ta"), "TA (--method ta)", ("method",)),
    "init_prob": Use(_anneal_default("init_prob"), _is("method", "sa"), _SA, ("method",)),
    "alpha": Use(_anneal_default("alpha"), _is("method", "sa"), _SA, ("method",)),
    "t_end": Use(_anneal_default("t_end"), _is("method", "sa"), _SA, ("method",)),
    "t0": Use(_anneal_default("t0"), _is("method", "sa"), _SA, ("method",)),
    "step": Use(_anneal_default("step"), _is("neighbour", "step"), _STEP, ("neighbour",)),
    "edge": Use(_anneal_default("edge"), _is("neighbour", "step"), _STEP, ("neighbour",)),
}
"""LS/TA/SA: setting keys `method`, `neighbour` (the one the run uses) and `preset` (where
the defaults come from: `ANNEAL_PRESET_SETTINGS`)."""

GA: dict[str, Use] = {
    "elite": Use(
        lambda s: _ga_elite(s) if s.get("scheme") == "generational" else 0,
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
"""Genetic algorithms: setting keys `scheme`, `mutation` (None: the encoding's default,
swap or reset), `islands`, `migrate_every`, and `preset` and `encoding` (where the elite's
default comes from: `ga_preset`). (`pop`, `tournament`, `cxpb` and `mutpb` are used
by both schemes, with the preset's defaults: `jaxqueens.evolve`.)"""

FLAGS = {"max_steps": "--maxsteps", "seconds": "--time", "n": "-n"}
"""Command-line flags of the parameters whose flag is not `--` and the name with `-` for `_`."""


def flag(param: str) -> str:
    """The command line's flag of a drivers' parameter.

    Args:
      param: the parameter (`max_steps`).

    Returns:
      Its flag (`--maxsteps`).
    """
    return FLAGS.get(param, "--" + param.replace("_", "-"))


def resolve(
    table: Mapping[str, Use],
    setting: Mapping[str, Any],
    given: Mapping[str, Any],
    command: str,
    also: Iterable[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The options of `table` for `setting`: each given one that it uses, else the default.

    Args:
      table: option name -> `Use` (e.g. `ANNEAL`).
      setting: the setting keys that decide use (e.g. `method`, `neighbour`, `preset`).
      given: option values given (None: not given).
      command: the command named in the error (e.g. `"anneal"`).
      also: the run's other settings (`--method all`); an option one of them uses is not
        refused, and each setting gets it only if it uses it itself.

    Returns:
      Every option of `table` with its value for `setting`.

    Raises:
      QueensError: an option is given that no setting of the run uses (named, with who uses it).
    """
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
            shown = " ".join(f"{flag(k)} {setting.get(k)}" for k in use.keys)
            raise QueensError(
                f"{command} {shown} does not use {option} ({flag(option)}): only {use.who} "
                "does; drop it"
            )
    return out


def used(
    table: Mapping[str, Use], setting: Mapping[str, Any], given: Mapping[str, Any]
) -> dict[str, Any]:
    """What a run of several settings (`anneal --method all`) passes on to each.

    Args:
      table: option -> `Use`.
      setting: the setting's keys.
      given: the options given.

    Returns:
      The options given (not None) that `setting` uses, by name.
    """
    return {
        k: v for k, v in given.items() if v is not None and k in table and table[k].when(setting)
    }


# --- LS / TA / SA ---------------------------------------------------------------------------------

T0_RULES = ("worsening", "nmof")
"""SA start-temperature rules; a positive number is taken as T0 itself."""


def t0_rule(value) -> str | float:
    """`--t0` checked: "worsening", "nmof" or a positive finite number (SAopt's `initT`).

    Args:
      value: the value given.

    Returns:
      The rule's name, or the start temperature as a float.
    """
    if isinstance(value, str) and value in T0_RULES:
        return value
    try:
        t0 = float(value)
    except (TypeError, ValueError):
        t0 = float("nan")
    if isinstance(value, bool) or not t0 > 0 or t0 == float("inf"):
        raise QueensError(f"--t0 {value!r}: use worsening, nmof or a positive start temperature")
    return t0


def has_repeated_rows(start) -> bool:
    """Whether a start board uses a row twice (the swap neighbour could never leave it).

    Args:
      start: the start board: any sequence of rows, any shape (bad boards are refused later).

    Returns:
      True when a row is used twice (False for None).
    """
    if start is None:
        return False
    rows = np.asarray(start).reshape(-1)
    return len(np.unique(rows)) < rows.size


def anneal_setting(
    method: str, preset: str | None = "default", neighbour: str | None = None, needs_step=False
) -> dict[str, Any]:
    """The setting keys of `ANNEAL` for a run: its method, preset and neighbour.

    Args:
      method: "ls", "ta" or "sa".
      preset: a name of `ANNEAL_PRESETS` (None: "default").
      neighbour: the neighbour given (None: the preset's).
      needs_step: a swap cannot work (a constrained instance, or a start board with repeated
        rows): a swap preset runs the step neighbour instead.

    Returns:
      `{"method", "preset", "neighbour"}`.
    """
    preset = "default" if preset is None else preset
    arguments.choice(preset, "preset", ANNEAL_PRESETS)
    arguments.choice(method, "method", METHODS)
    if neighbour is None:
        neighbour = ANNEAL_PRESET_SETTINGS[preset][method]["neighbour"]
        neighbour = "step" if needs_step and neighbour == "swap" else neighbour
    arguments.choice(neighbour, "neighbour", NEIGHBOURS)
    return {"method": method, "preset": preset, "neighbour": neighbour}


def anneal_settings(
    method: str,
    preset: str | None = "default",
    *,
    needs_step: bool = False,
    command: str = "anneal",
    also: Iterable[str] = (),
    **given,
) -> dict[str, Any]:
    """The settings an LS/TA/SA run uses (`ANNEAL_SETTINGS`): the preset's, overridden.

    SA cools by `alpha` when given (or when the preset has one and no `t_end` is given), else
    by `t_end ** (1 / (rounds - 1))`, so that the last temperature is `t_end` times the first.

    Args:
      method: "ls", "ta" or "sa".
      preset: a name of `ANNEAL_PRESETS` (None: "default").
      needs_step: as for `anneal_setting`.
      command: the command named in errors.
      also: the run's other methods (`--method all`), whose options are not refused.
      **given: settings given (None: not given); one the method or neighbour does not use
        (`alpha` with "ls", `step` with the swap neighbour) is refused by name.

    Returns:
      Every setting of `ANNEAL_SETTINGS` with its value.
    """
    bad = set(given) - set(ANNEAL_SETTINGS)
    if bad:
        raise TypeError(f"unknown settings: {', '.join(sorted(bad))}")
    setting = anneal_setting(method, preset, given.get("neighbour"), needs_step)
    others = [anneal_setting(m, preset, given.get("neighbour"), needs_step) for m in also]
    if given.get("alpha") is not None and given.get("t_end") is not None:
        raise QueensError(
            "give --alpha (cooling per round) or --t-end (the last temperature "
            "relative to the first), not both"
        )
    out: dict[str, Any] = dict(ANNEAL_PRESET_SETTINGS[setting["preset"]][method])
    out.update({k: v for k, v in given.items() if v is not None and k not in ANNEAL})
    out.update(resolve(ANNEAL, setting, given, command, also=others))
    out["neighbour"] = setting["neighbour"]
    if given.get("t_end") is not None and given.get("alpha") is None:
        out["alpha"] = None
    if out["alpha"] is None:
        t_end = arguments.real(out["t_end"], "t_end", 0.0, 1.0, lo_open=True)
        rounds = arguments.integer(out["rounds"], "rounds", 1)
        out["alpha"] = t_end ** (1.0 / (rounds - 1)) if rounds > 1 else 1.0
    else:
        out["t_end"] = None
    return out


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
    t_end=None,
) -> dict[str, Any]:
    """Every LS/TA/SA setting checked (types, ranges, names), resolved beforehand.

    Args:
      n: board size, at least 4.
      method: "ls", "ta" or "sa"; every other keyword as `jaxqueens.anneal` takes it.
    Returns:
      The settings by name, the numbers as Python values.
    """
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
        "chains": arguments.integer(chains, "chains", 1),
        "steps": arguments.integer(steps, "steps", 1),
        "rounds": arguments.integer(rounds, "rounds", 1),
        "step": arguments.integer(step, "step", None, None),
        "walk": arguments.integer(walk, "walk", 2),
        "seed": arguments.seed(seed, "seed"),
        "batch": arguments.integer(batch, "batch", 1, optional=True),
        "q": arguments.real(q, "q", 0.0, 1.0, lo_open=True),
        "init_prob": arguments.real(init_prob, "init_prob", 0.0, 1.0, lo_open=True, hi_open=True),
        "alpha": arguments.real(alpha, "alpha", 0.0, 1.0, lo_open=True),
        "t0": t0_rule(t0),
        "t_end": arguments.real(t_end, "t_end", 0.0, 1.0, lo_open=True, optional=True),
    }
    if not 1 <= out["step"] <= n - 1:
        raise QueensError(f"--step must lie in 1..n-1 (1..{n - 1}), got {out['step']}")
    if out["steps"] < out["rounds"]:
        raise QueensError(
            f"--steps ({out['steps']}) must be at least --rounds ({out['rounds']}): each round "
            "(threshold or temperature) takes one step at least"
        )
    return out


# --- sizes and budgets of the other commands (their drivers call these too) ----------------------


CONFIDENCE = 0.95
"""The confidence level of reported intervals unless given (compare's, estimate's `--level`)."""
CHECKPOINT_EVERY = 30.0
"""Seconds between a resumable run's checkpoints (`--checkpoint-every`), for every driver."""
