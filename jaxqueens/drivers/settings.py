"""The settings of the solvers' families, JAX-free: the one source of the LS/TA/SA and GA
defaults and presets, and which options each method and scheme uses.

LS/TA/SA: one frozen class per method (`LSSettings`, `TASettings`, `SASettings`), made from a
preset by `anneal_settings` and checked once; an option a method does not use is not its field.
GA: a table says, for every option that only some settings use, its default and which settings
use it (`Use`); `resolve` refuses one given to a setting that does not use it, by name. Each
command's own settings live beside its driver (`compare_setup`, `stats_setup`, `solve_setup`,
`count_setup`, `estimate_setup`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

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

_TUNED: dict[str, dict[str, Any]] = {  # what the tuned defaults change, on swaps
    "ls": {},
    "ta": {"q": 0.4},
    "sa": {"rounds": 100, "init_prob": 0.1, "alpha": None, "t_end": 0.001},
}
ANNEAL_DEFAULTS = {m: {**ANNEAL_CLASSIC, "neighbour": "swap", **t} for m, t in _TUNED.items()}
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
) -> dict[str, Any]:
    """The options of `table` for `setting`: each given one that it uses, else the default.

    Args:
      table: option name -> `Use` (e.g. `GA`).
      setting: the setting keys that decide use (e.g. `scheme`, `islands`, `preset`).
      given: option values given (None: not given).
      command: the command named in the error (e.g. `"evolve"`).

    Returns:
      Every option of `table` with its value for `setting`.

    Raises:
      QueensError: an option is given that the setting does not use (named, with who uses it).
    """
    out = {}
    for option, use in table.items():
        value = given.get(option)
        if value is None:
            out[option] = use.default_for(setting)
        elif use.when(setting):
            out[option] = value
        else:
            shown = " ".join(f"{flag(k)} {setting.get(k)}" for k in use.keys)
            raise QueensError(
                f"{command} {shown} does not use {option} ({flag(option)}): only {use.who} "
                "does; drop it"
            )
    return out


# --- LS / TA / SA ---------------------------------------------------------------------------------


def t0_rule(value) -> str | float:
    """`--t0` checked: "worsening", "nmof" or a positive finite number (SAopt's `initT`).

    Args:
      value: the value given.

    Returns:
      The rule's name, or the start temperature as a float.
    """
    if isinstance(value, str) and value in ("worsening", "nmof"):
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


@dataclasses.dataclass(frozen=True, kw_only=True)
class LSSettings:
    """The settings of an LS run, which TA and SA share, checked once (frozen; the checked
    values replace those given). `anneal_settings` makes them from a preset. `step` and `edge`
    are the step neighbour's: given with the swap neighbour they are refused there, and keep the
    preset's values, unused, which the kernel's `Config` and the summary record."""

    method: ClassVar[str] = "ls"
    who: ClassVar[str] = "LS (--method ls)"  # the method, as messages name it
    preset: str  # the preset the values not given come from (`ANNEAL_PRESETS`)
    neighbour: str  # "swap" (two queens exchange rows) or "step" (one moves in its column)
    step: int  # the step neighbour's largest move (1..step rows)
    edge: str  # the step neighbour past the edge: "wrap" (row mod n) or "nmof" (the far end)
    objective: str  # "attacks" (queens minus lines occupied, NMOF's) or "pairs"
    rounds: int  # thresholds or temperatures the steps are split into

    def __post_init__(self) -> None:
        arguments.choice(self.neighbour, "neighbour", NEIGHBOURS)
        arguments.choice(self.objective, "objective", OBJECTIVES)
        arguments.choice(self.edge, "edge", EDGES)
        object.__setattr__(self, "rounds", arguments.integer(self.rounds, "rounds", 1))
        object.__setattr__(self, "step", arguments.integer(self.step, "step", None, None))

    def values(self) -> dict[str, Any]:
        """Every setting of `ANNEAL_SETTINGS`: this method's, and the preset's of the others
        (what the summaries record).

        Returns:
          The settings by name.
        """
        own = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {**ANNEAL_PRESET_SETTINGS[own.pop("preset")][self.method], **own}


@dataclasses.dataclass(frozen=True, kw_only=True)
class TASettings(LSSettings):
    """The settings of a TA run: LS's and its first threshold's quantile."""

    method: ClassVar[str] = "ta"
    who: ClassVar[str] = "TA (--method ta)"
    q: float  # the quantile of the calibration walk's |delta| that is the first threshold

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "q", arguments.real(self.q, "q", 0.0, 1.0, lo_open=True))


@dataclasses.dataclass(frozen=True, kw_only=True)
class SASettings(LSSettings):
    """The settings of an SA run: LS's, its start temperature and its cooling, by `alpha` or
    `t_end` (one of them; the other None): `alpha = t_end ** (1 / (rounds - 1))`, so that the
    last temperature is `t_end` times the first."""

    method: ClassVar[str] = "sa"
    who: ClassVar[str] = "SA (--method sa)"
    init_prob: float  # the share of worsening moves accepted at the start (`t0` "worsening")
    alpha: float | None  # the cooling factor per round (None: from `t_end`)
    t_end: float | None  # the last temperature relative to the first (None: `alpha` given)
    t0: str | float  # the start temperature: "worsening", "nmof" or T0 itself (`t0_rule`)

    def __post_init__(self) -> None:
        super().__post_init__()
        p = arguments.real(self.init_prob, "init_prob", 0.0, 1.0, lo_open=True, hi_open=True)
        if (self.alpha is None) == (self.t_end is None):
            raise QueensError(
                "give --alpha (cooling per round) or --t-end (the last temperature relative to "
                "the first), not both"
            )
        alpha = self.alpha
        if alpha is None:  # (`t_end` is kept as given: the summary records it so)
            t_end = arguments.real(self.t_end, "t_end", 0.0, 1.0, lo_open=True)
            alpha = t_end ** (1.0 / (self.rounds - 1)) if self.rounds > 1 else 1.0
        object.__setattr__(self, "alpha", arguments.real(alpha, "alpha", 0.0, 1.0, lo_open=True))
        object.__setattr__(self, "init_prob", p)
        object.__setattr__(self, "t0", t0_rule(self.t0))


ANNEAL_METHODS = {c.method: c for c in (LSSettings, TASettings, SASettings)}
ANNEAL_OPTIONAL = ("q", "init_prob", "alpha", "t_end", "t0", "step", "edge")  # some methods' own


def anneal_neighbour(method, preset, given, *, needs_step=False, command="anneal", also=()) -> str:
    """The neighbour of a run (the one given, else its preset's); an option given that no
    method of the run uses with it is refused by name (`anneal_settings`).

    Args:
      method: "ls", "ta" or "sa".
      preset: a name of `ANNEAL_PRESETS` (None: "default").
      given: the settings given, by name (None: not given).
      needs_step: a swap cannot work (a constrained instance, or a start board with repeated
        rows): a swap preset runs the step neighbour instead.
      command: the command named in the message (e.g. `"anneal"`).
      also: the run's other methods (`--method all`), whose options are not refused.

    Returns:
      "swap" or "step".
    """
    preset = arguments.choice("default" if preset is None else preset, "preset", ANNEAL_PRESETS)
    classes = [ANNEAL_METHODS[arguments.choice(m, "method", METHODS)] for m in (method, *also)]
    neighbour = given.get("neighbour")
    if neighbour is None:
        neighbour = ANNEAL_PRESET_SETTINGS[preset][method]["neighbour"]
        neighbour = "step" if needs_step and neighbour == "swap" else neighbour
    arguments.choice(neighbour, "neighbour", NEIGHBOURS)
    for option in (o for o in ANNEAL_OPTIONAL if given.get(o) is not None):
        if option in ("step", "edge") and neighbour != "step":
            shown, who = f"--neighbour {neighbour}", "the step neighbour (--neighbour step)"
        elif option in ("step", "edge") or any(option in c.__dataclass_fields__ for c in classes):
            continue
        else:
            owner = next(c for c in ANNEAL_METHODS.values() if option in c.__dataclass_fields__)
            shown, who = f"--method {method}", owner.who
        raise QueensError(
            f"{command} {shown} does not use {option} ({flag(option)}): only {who} does; drop it"
        )
    return neighbour


def anneal_settings(
    method, preset="default", *, needs_step=False, command="anneal", also=(), **given
) -> LSSettings:
    """The settings an LS/TA/SA run uses: the preset's, overridden by those given.

    Args:
      method: "ls", "ta" or "sa".
      preset: a name of `ANNEAL_PRESETS` (None: "default").
      needs_step: as for `anneal_neighbour`.
      command: as for `anneal_neighbour`.
      also: as for `anneal_neighbour`.
      **given: settings of `ANNEAL_SETTINGS` (None: not given); one the method or neighbour
        does not use (`alpha` with "ls", `step` with the swap neighbour) is refused by name.

    Returns:
      The method's `LSSettings`, `TASettings` or `SASettings`, checked.
    """
    bad = set(given) - set(ANNEAL_SETTINGS)
    if bad:
        raise TypeError(f"unknown settings: {', '.join(sorted(bad))}")
    neighbour = anneal_neighbour(
        method, preset, given, needs_step=needs_step, command=command, also=also
    )
    preset = "default" if preset is None else preset
    values = dict(ANNEAL_PRESET_SETTINGS[preset][method])
    if given.get("alpha") is not None or given.get("t_end") is not None:  # SA: one of them
        values.update(alpha=None, t_end=None)
    values.update({k: v for k, v in given.items() if v is not None}, neighbour=neighbour)
    cls = ANNEAL_METHODS[method]
    return cls(preset=preset, **{k: v for k, v in values.items() if k in cls.__dataclass_fields__})


def check_anneal(settings: LSSettings, *, n, chains, steps, walk, seed, batch) -> dict[str, Any]:
    """The numbers of an LS/TA/SA run checked with its settings (the step within the board).

    Args:
      settings: the run's settings.
      n: board size (>= 4).
      chains: chains to run.
      steps: steps per chain (>= the rounds).
      walk: steps of the calibration walk.
      seed: the run's seed.
      batch: chains per kernel call (None: automatic).

    Returns:
      The numbers by name, as Python values.
    """
    n = arguments.integer(n, "n", 1)
    if n < 4:
        raise QueensError(
            f"n = {n}: local search needs n >= 4 (n = 1 is trivial, 2 and 3 have no solution)"
        )
    out = {
        "n": n,
        "chains": arguments.integer(chains, "chains", 1),
        "steps": arguments.integer(steps, "steps", 1),
        "walk": arguments.integer(walk, "walk", 2),
        "seed": arguments.seed(seed, "seed"),
        "batch": arguments.integer(batch, "batch", 1, optional=True),
    }
    if not 1 <= settings.step <= n - 1:
        raise QueensError(f"--step must lie in 1..n-1 (1..{n - 1}), got {settings.step}")
    if out["steps"] < settings.rounds:
        raise QueensError(
            f"--steps ({out['steps']}) must be at least --rounds ({settings.rounds}): each round "
            "(threshold or temperature) takes one step at least"
        )
    return out


# --- sizes and budgets of the other commands (their drivers call these too) ----------------------


CONFIDENCE = 0.95
"""The confidence level of reported intervals unless given (compare's, estimate's `--level`)."""
CHECKPOINT_EVERY = 30.0
"""Seconds between a resumable run's checkpoints (`--checkpoint-every`), for every driver."""
