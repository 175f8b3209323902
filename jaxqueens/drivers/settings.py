"""The settings of the solvers' families, JAX-free: the one source of the LS/TA/SA and GA
defaults and presets, and which options each method and scheme uses.

One frozen class per LS/TA/SA method (`LSSettings`, `TASettings`, `SASettings`) and GA scheme
(`SteadySettings`, `GenerationalSettings`), made from a preset (`anneal_settings`, `ga_settings`)
and checked once; an option a method or scheme does not use is not its field, and one given is
refused by name (`anneal_neighbour`, `ga_unused`). Each command's own settings live beside its
driver (`compare_setup`, `stats_setup`, `solve_setup`, `count_setup`, `estimate_result`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import numpy as np

from jaxqueens.core import arguments
from jaxqueens.errors import QueensError
from jaxqueens.io.ga import FITNESS_NAMES
from jaxqueens.solvers.variants import EDGES, METHODS, NEIGHBOURS, OBJECTIVES


def flag(help: str | None = None, *, default: Any = dataclasses.MISSING, **option: Any) -> Any:
    """A settings field whose command-line option (`jaxqueens.cli.options.add_fields`;
    its flag `jaxqueens.core.arguments.flag_of`) has this help and these `add_argument`
    keywords (`choices`, `metavar`, `type`)."""
    return dataclasses.field(default=default, metadata={"help": help, **option})


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
ANNEAL_SETTINGS = tuple(ANNEAL_CLASSIC)
"""The settings of an LS/TA/SA run that a preset gives (and a user may override)."""

GA_CLASSIC: dict[str, dict[str, Any]] = {
    "steady": {"pop": 100, "tournament": 5, "cxpb": 1.0, "mutpb": 1.0},
    "generational": {"pop": 100, "tournament": 3, "cxpb": 0.5, "mutpb": 0.2, "elite": 1},
}
"""The classic GA settings (`--preset classic`): the classic course GA (steady state) and
DEAP's eaSimple rates (generational)."""

GA_DEFAULTS: dict[str, dict[str, dict[str, Any]]] = {
    "permutation": {
        "steady": {"pop": 10, "tournament": 4, "cxpb": 0.2, "mutpb": 1.0},
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


# --- LS / TA / SA ---------------------------------------------------------------------------------


def t0_rule(value) -> str | float:
    """`--t0` checked: "worsening" or "nmof" (the rule's name), or a positive finite number
    (SAopt's `initT`, the start temperature, as a float)."""
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
    """Whether a start board (any sequence of rows, any shape: bad boards are refused later;
    None: False) uses a row twice (the swap neighbour could never leave it)."""
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
    preset: str = flag(
        "where the settings not given come from: default (measured for each method at "
        "compare's budget: swap neighbour; TA q 0.4; SA 100 rounds, --init-prob 0.1, "
        "--t-end 0.001), classic (NMOF's TAopt/SAopt settings: step "
        "neighbour 3, 10 rounds, q 0.5, init-prob 0.4, alpha 0.9) or nmof (classic with "
        "--edge nmof and --t0 nmof, the vignette's)",
        choices=ANNEAL_PRESETS,
    )
    rounds: int = flag("thresholds / temperatures (default 10; SA 100)")
    neighbour: str = flag(
        "swap: exchange two rows (default; step on a constrained --instance or a --file "
        "board with repeated rows); step: move one queen by 1..STEP rows within its column "
        "(NMOF; --preset classic, nmof)",
        choices=NEIGHBOURS,
    )
    step: int = flag("largest move of the step neighbour (default 3)")
    edge: str = flag(
        "step neighbour past the board's edge: wrap (row mod n, default) or nmof (to "
        "the far end: past the last row to row 0 and back, as NMOF's vignette)",
        choices=EDGES,
    )
    objective: str = flag(
        "attacks (NMOF: queens minus lines occupied) or pairs (default attacks)",
        choices=OBJECTIVES,
    )

    def __post_init__(self) -> None:
        arguments.choice(self.neighbour, "neighbour", NEIGHBOURS)
        arguments.choice(self.objective, "objective", OBJECTIVES)
        arguments.choice(self.edge, "edge", EDGES)
        object.__setattr__(self, "rounds", arguments.integer(self.rounds, "rounds", 1))
        object.__setattr__(self, "step", arguments.integer(self.step, "step", None, None))

    def values(self) -> dict[str, Any]:
        """Every setting of `ANNEAL_SETTINGS` by name: this method's, and the preset's of the
        others (what the summaries record)."""
        own = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {**ANNEAL_PRESET_SETTINGS[own.pop("preset")][self.method], **own}


@dataclasses.dataclass(frozen=True, kw_only=True)
class TASettings(LSSettings):
    """The settings of a TA run: LS's and its first threshold's quantile."""

    method: ClassVar[str] = "ta"
    who: ClassVar[str] = "TA (--method ta)"
    q: float = flag(  # the quantile of the calibration walk's |delta|
        "TA: first threshold quantile (default 0.2, which on N-Queens makes every "
        "threshold 0: no threshold tried beat LS; classic 0.5)"
    )

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
    init_prob: float = flag(
        "SA: share of worsening moves accepted at the start (default 0.1; classic 0.4)"
    )
    t_end: float | None = flag(  # None: `alpha` given
        "SA: last temperature relative to the first (default 0.001); the cooling factor "
        "is then t-end^(1/(rounds-1)); give this or --alpha"
    )
    alpha: float | None = flag("SA: cooling factor per round (default from --t-end; classic 0.9)")
    t0: str | float = flag(  # checked by `t0_rule`
        "SA start temperature: worsening (default: --init-prob of the calibration "
        "walk's worsening moves accepted), nmof (NMOF's SAopt: mean exp(-|delta|/T0) over "
        "all the walk's moves = --init-prob, T0 in [1e-5, 1]) or a number",
        metavar="RULE",
    )

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
    """The neighbour, "swap" or "step", of a run of `method` ("ls", "ta" or "sa"): the one
    `given` (the settings by name; None: not given), else the `preset`'s (`ANNEAL_PRESETS`;
    None: "default"), where `needs_step` (a constrained instance, or a start board with repeated
    rows: a swap cannot work) makes a swap preset run the step neighbour. An option given that
    no method of the run (`method`, and `also`: `--method all`'s others) uses is refused by
    name, naming `command` (e.g. "anneal")."""
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
        raise arguments.unused(command, shown, option, who)
    return neighbour


def anneal_settings(
    method, preset="default", *, needs_step=False, command="anneal", also=(), **given
) -> LSSettings:
    """The checked `LSSettings`, `TASettings` or `SASettings` an LS/TA/SA run of `method` uses:
    the preset's (None: "default"), overridden by those `given` (settings of `ANNEAL_SETTINGS`,
    None: not given); one the method or neighbour does not use (`alpha` with "ls", `step` with
    the swap neighbour) is refused by name. `needs_step`, `command`, `also`: as for
    `anneal_neighbour`."""
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
    """The numbers of an LS/TA/SA run, by name as Python values, checked with its `settings`:
    n >= 4, `steps` per chain at least the rounds, the step within the board, `walk` (the
    calibration walk's steps) at least 2, `batch` None for automatic."""
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


# --- GA -------------------------------------------------------------------------------------------


def _need(ok, msg: str) -> None:
    if not ok:
        raise QueensError(msg)


@dataclasses.dataclass(frozen=True, kw_only=True)
class SteadySettings:
    """The settings of a steady-state GA run, checked once (frozen); `ga_settings` makes them
    from a preset."""

    scheme: ClassVar[str] = "steady"
    preset: str = flag(
        "where --pop, --tournament, --cxpb, --mutpb and --elite come from when not given: "
        "default (measured at compare's budget: permutation steady state pop 10, tournament "
        "4, cxpb 0.2, mutpb 1; generational pop 20, tournament 3, cxpb 0.2, mutpb 1, elite 1; "
        "combination as classic) or classic (the course GA: pop 100, tournament 5, cxpb 1, "
        "mutpb 1; generational DEAP's tournament 3, cxpb 0.5, mutpb 0.2)",
        choices=GA_PRESETS,
        default="default",
    )
    encoding: str = flag(choices=tuple(GA_DEFAULTS), default="permutation")
    pop: int = flag("individuals per island (default: --preset's)")
    tournament: int = flag("tournament size (default: --preset's)")
    cxpb: float = flag("crossover probability (default: --preset's)")
    mutpb: float = flag("mutation probability per child (default: --preset's)")
    indpb: float = flag(
        "per-gene swap/reset rate as DEAP's indpb; 0 = exactly one gene (default)", default=0.0
    )
    islands: int = flag("islands per trial on a ring (default 1)", default=1)
    migrate_every: int = flag("generations between ring migrations (default 0 = never)", default=0)
    migrants: int = flag("individuals per migration (default 1)", default=1)

    def __post_init__(self) -> None:
        e = self.encoding
        _need(e in GA_DEFAULTS, f"encoding {e!r} is unknown; use one of {', '.join(GA_DEFAULTS)}")
        for name in ("pop", "tournament", "elite", "islands", "migrate_every", "migrants"):
            v = getattr(self, name, 0)  # (steady: no elite)
            _need(arguments.is_integer(v), f"{name} must be an integer, got {v!r}")
        pop, tournament, least = self.pop, self.tournament, 2 if self.scheme == "steady" else 1
        _need(pop >= 2, f"pop = {pop} is too small; a population needs at least 2 individuals")
        _need(tournament >= least, f"tournament = {tournament} is too small; use at least {least}")
        _need(
            pop >= tournament,
            f"pop = {pop} is smaller than the tournament size {tournament}; "
            "raise --pop or lower --tournament",
        )
        for name, v in (("cxpb", self.cxpb), ("mutpb", self.mutpb), ("indpb", self.indpb)):
            _need(isinstance(v, (int, float)) and 0 <= v <= 1, f"{name} = {v!r} must lie in [0, 1]")
        elite, m = getattr(self, "elite", 0), self.migrants
        _need(0 <= elite < pop, f"elite = {elite} must lie in 0..pop-1 ({pop - 1})")
        _need(1 <= m < pop, f"migrants = {m} must lie in 1..pop-1 ({pop - 1})")


@dataclasses.dataclass(frozen=True, kw_only=True)
class GenerationalSettings(SteadySettings):
    """The settings of a generational GA run: the steady state's and the parents kept."""

    scheme: ClassVar[str] = "generational"
    elite: int = flag("generational: best parents kept (default 1)")


GA_SCHEMES = {c.scheme: c for c in (SteadySettings, GenerationalSettings)}


@dataclasses.dataclass(frozen=True, kw_only=True)
class GARun:
    """A GA run's other settings with `jaxqueens.evolve`'s defaults: the board size (without an
    instance), the run's length, scheme, operators (None: the encoding's) and fitness (the
    CLI fills in what is not given with these, `jaxqueens.cli.evolve`)."""

    n: int = 8
    generations: int = flag("generations (default 1000)", default=1000)
    trials: int = flag("independent trials (default 1)", default=1)
    scheme: str = flag(choices=tuple(GA_SCHEMES), default="steady")
    crossover: str | None = flag(
        "permutation: cut (default), pmx, ox1, cycle; combination: one_point (default), uniform",
        default=None,
    )
    mutation: str | None = flag(
        "permutation: swap (default), inversion, scramble; combination: reset", default=None
    )
    fitness: str = flag(
        "minimise attacking pairs (default), DEAP's sum of (k - 1) over lines, or "
        "report-diagonals-only: the Idaho GA report's score (diagonal pairs only, rows "
        "ignored: its 0 is not always a solution; every such board is checked)",
        choices=tuple(FITNESS_NAMES),
        default="pairs",
    )


GA_OPTIONAL = ("elite", "indpb", "migrate_every", "migrants")  # some runs' own (`ga_unused`)


def ga_unused(given, *, scheme, mutation, islands, migrate_every, command="evolve") -> None:
    """Refuse by name an option `given` (None: not given) that the run's scheme, mutation or
    islands do not use: `elite` needs the generational scheme, `indpb` the swap or reset
    mutation (`mutation` None: the encoding's, one of them), `migrate_every` 2+ islands,
    `migrants` ring migration (2+ islands, `migrate_every` 1+); `command` is named in the
    message."""
    for option in (o for o in GA_OPTIONAL if given.get(o) is not None):
        if option == "elite" and scheme != "generational":
            shown, who = f"--scheme {scheme}", "the generational scheme (--scheme generational)"
        elif option == "indpb" and mutation not in (None, "swap", "reset"):
            shown = f"--mutation {mutation}"
            who = "the swap and reset mutations (--mutation swap or reset)"
        elif option == "migrate_every" and not islands > 1:
            shown, who = f"--islands {islands}", "several islands (--islands 2+)"
        elif option == "migrants" and not (islands > 1 and (migrate_every or 0) > 0):
            shown = f"--islands {islands} --migrate-every {migrate_every}"
            who = "ring migration (--islands 2+ with --migrate-every 1+)"
        else:
            continue
        raise arguments.unused(command, shown, option, who)


def ga_settings(
    preset="default", encoding="permutation", scheme="steady", *, mutation=None, **given
) -> SteadySettings:
    """The checked `SteadySettings` or `GenerationalSettings` of a GA run: its preset's for the
    encoding and scheme, overridden by those `given` (fields of `GenerationalSettings`; None:
    not given, the preset's or default); an option the scheme, mutation (None, or a function:
    the swap and reset mutations') or islands do not use is refused (`ga_unused`)."""
    _need(preset in GA_PRESET_SETTINGS, f"--preset {preset!r}: use one of {', '.join(GA_PRESETS)}")
    islands = 1 if given.get("islands") is None else given["islands"]
    mutation = None if callable(mutation) else mutation
    every = given.get("migrate_every")
    ga_unused(given, scheme=scheme, mutation=mutation, islands=islands, migrate_every=every)
    _need(scheme in GA_SCHEMES, f"scheme {scheme!r} is unknown; use one of {', '.join(GA_SCHEMES)}")
    values = GA_PRESET_SETTINGS[preset].get(encoding, GA_CLASSIC)[scheme]  # (unknown: refused)
    values = {**values, **{k: v for k, v in given.items() if v is not None}}
    return GA_SCHEMES[scheme](preset=preset, encoding=encoding, **values)


# --- sizes and budgets of the other commands (their drivers call these too) ----------------------


CONFIDENCE = 0.95
"""The confidence level of reported intervals unless given (compare's, estimate's `--level`)."""
CHECKPOINT_EVERY = 30.0
"""Seconds between a resumable run's checkpoints (`--checkpoint-every`), for every driver."""
