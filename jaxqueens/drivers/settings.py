"""The settings of the solvers' families: their defaults and presets, which options each method,
scheme and solver uses, and the checks of settings that need no JAX.

The one source of the defaults of LS/TA/SA and of the GA: the presets (`ANNEAL_DEFAULTS`,
`GA_DEFAULTS`) and the classic settings (`ANNEAL_CLASSIC`, `GA_CLASSIC`). One table per family
says, for every option that only some settings use, its default and which settings use it
(`Use`); `resolve` refuses an option given to a setting that does not use it, by name, and
fills in the defaults of the others. The drivers and the command line resolve their arguments
here, before JAX is imported.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from jaxqueens.core import arguments
from jaxqueens.errors import QueensError
from jaxqueens.solvers.variants import (
    COUNT_MAX_N,
    EDGES,
    ESTIMATE_MAX_N,
    MAX_BATCHED_N,
    METHODS,
    NEIGHBOURS,
    OBJECTIVES,
    default_max_steps,
)


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
"""The classic LS/TA/SA settings (`--preset classic`): NMOF's TAopt/SAopt settings (10 rounds,
q 0.5, initProb 0.4, alpha 0.9) with the vignette's step neighbour (one queen by 1..3 rows,
wrapping)."""

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
"""Tuned LS/TA/SA defaults per method (`scripts/tune_defaults.py anneal`; results in
`benchmarks/results/tune-anneal-cpu.json`): the swap neighbour and the attacks objective for
every method, SA cooled to `t_end` of its start temperature, TA's thresholds from the quantile
level `q`. The docs' anneal page says why."""

ANNEAL_PRESET_SETTINGS: dict[str, dict[str, dict[str, Any]]] = {
    "default": ANNEAL_DEFAULTS,
    "classic": {m: dict(ANNEAL_CLASSIC) for m in METHODS},
    "nmof": {m: {**ANNEAL_CLASSIC, "edge": "nmof", "t0": "nmof"} for m in METHODS},
}
"""LS/TA/SA settings by `--preset`: `default` (tuned, `ANNEAL_DEFAULTS`),
`classic` (NMOF's TAopt/SAopt settings, `ANNEAL_CLASSIC`) and `nmof` (classic with the
vignette's far-end edge and SAopt's start-temperature rule)."""
ANNEAL_PRESETS = tuple(ANNEAL_PRESET_SETTINGS)
"""`anneal --preset`: tuned defaults, the classic (NMOF TAopt/SAopt) ones, NMOF's vignette."""
ANNEAL_SETTINGS = tuple(ANNEAL_CLASSIC)
"""The settings of an LS/TA/SA run that a preset gives (and a user may override)."""

GA_CLASSIC: dict[str, dict[str, Any]] = {
    "steady": {"pop": 100, "tournament": 5, "cxpb": 1.0, "mutpb": 1.0, "elite": 0},
    "generational": {"pop": 100, "tournament": 3, "cxpb": 0.5, "mutpb": 0.2, "elite": 1},
}
"""The classic GA settings (`--preset classic`): the classic course GA (steady state,
population 100, a tournament of 5, crossover and mutation always) and DEAP's eaSimple rates
(generational: tournament 3, cxpb 0.5, mutpb 0.2, one elite)."""

GA_DEFAULTS: dict[str, dict[str, dict[str, Any]]] = {
    "permutation": {
        "steady": {"pop": 10, "tournament": 4, "cxpb": 0.2, "mutpb": 1.0, "elite": 0},
        "generational": {"pop": 20, "tournament": 3, "cxpb": 0.2, "mutpb": 1.0, "elite": 1},
    },
    "combination": GA_CLASSIC,
}
"""Tuned GA defaults per encoding and scheme (`scripts/tune_defaults.py ga`; results in
`benchmarks/results/tune-ga-cpu.json`): on permutations a small population bred mostly by
mutation; on combinations the classic setting. The docs' ga page says why."""

GA_PRESET_SETTINGS: dict[str, dict[str, dict[str, dict[str, Any]]]] = {
    "default": GA_DEFAULTS,
    "classic": {"permutation": GA_CLASSIC, "combination": GA_CLASSIC},
}
"""GA settings by `--preset`: `default` (tuned, `GA_DEFAULTS`) and `classic`
(`GA_CLASSIC`)."""
GA_PRESETS = tuple(GA_PRESET_SETTINGS)
"""`evolve --preset`: tuned defaults, the classic course GA."""


def ga_preset(name: str, encoding: str = "permutation", scheme: str = "steady") -> dict:
    """Population, tournament, rates and elite of preset `name` for an encoding and scheme
    (with the encoding and scheme, as `jaxqueens.evolve` keywords; an unknown encoding or
    scheme gets the classic steady-state values here and is refused by the GA's own check)."""
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
"""Command-line spellings of the parameters whose flag is not `--` and the name with `-` for
`_` (the one table the command line reads to name a flag for a parameter)."""


def flag(param: str) -> str:
    """The command line's flag of the drivers' parameter `param` (`max_steps`: `--maxsteps`)."""
    return FLAGS.get(param, "--" + param.replace("_", "-"))


_flag = flag


def resolve(
    table: Mapping[str, Use],
    setting: Mapping[str, Any],
    given: Mapping[str, Any],
    command: str,
    also: Iterable[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The options of `table` for `setting`: each given one (not None) that the setting
    uses, the default of each other one. An option given that the setting does not use is a
    QueensError naming it, the setting and who uses it (`command`: e.g. `"anneal"`).
    `also`: the other settings of the same run (`--method all`): an option one of them uses
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
    """The options of `given` (not None) that `setting` uses: what a run of several settings
    (`anneal --method all`) passes on to each, after `resolve` has refused the rest."""
    return {
        k: v for k, v in given.items() if v is not None and k in table and table[k].when(setting)
    }


# --- LS / TA / SA ---------------------------------------------------------------------------------

T0_RULES = ("worsening", "nmof")
"""SA start-temperature rules; a positive number is taken as T0 itself."""


def t0_rule(value) -> str | float:
    """`--t0`: "worsening", "nmof" or a positive finite number (SAopt's `initT`)."""
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
    """A start board (any sequence of rows, any shape; bad boards are refused later) with a row
    used twice: the swap neighbour could never leave it."""
    if start is None:
        return False
    rows = np.asarray(start).reshape(-1)
    return len(np.unique(rows)) < rows.size


def anneal_setting(
    method: str, preset: str | None = "default", neighbour: str | None = None, needs_step=False
) -> dict[str, Any]:
    """The setting keys of `ANNEAL` for a run: `method`, `preset` and the neighbour the
    run uses: `neighbour` when given, else the preset's, except that a swap preset runs the
    step neighbour where a swap cannot work (`needs_step`: a constrained instance, whose fixed
    queens and forbidden squares a swap cannot honour, or a start board with repeated rows,
    which a swap cannot leave)."""
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
    """The settings an LS/TA/SA run uses (`ANNEAL_SETTINGS`): preset `preset`'s for
    `method`, each overridden by the value given (None: not given).

    An option the method or neighbour does not use (`ANNEAL`: `alpha` with "ls", `q`
    with "sa", `step` with the swap neighbour) is refused by name (`command` names the
    command in the message; `also`: the other methods of the same run, `--method all`, whose
    options are not refused: each method gets only what it uses). `needs_step`: as for
    `anneal_setting`. SA's cooling factor is `alpha` when given (or when the preset has
    one and no `t_end` is given), else `t_end ** (1 / (rounds - 1))`: the last temperature
    is `t_end` times the first."""
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
    """Every LS/TA/SA setting checked (types, ranges, names), options resolved beforehand
    (`anneal_settings`). Returns the numbers as Python values."""
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


# --- solve: how many chains, which path, how large a kernel call ---------------------------------

DEFAULT_CHAIN_WORK = 4e8
"""Default number of chains: `DEFAULT_CHAIN_WORK / n^2` (at most 1000, at least 1), about a
quarter second of batched search; it falls smoothly with n (1000 up to n = 632, 16 at n = 5000,
1 from n = 20,000), so no n doubles or halves the job of its neighbour."""

BATCHED_S_PER_QUEEN2 = 6.1e-10
"""Batched min-conflicts, wall seconds per chain per n^2 on the reference 2-core CPU (2 devices)."""
LARGE_S_PER_CHAIN = 0.02
LARGE_S_PER_QUEEN = 1e-6
"""Large-n path, wall seconds per chain: `LARGE_S_PER_CHAIN + LARGE_S_PER_QUEEN * n`, one chain
after another (on the reference CPU)."""

CALL_WORK = 1 << 30
"""Bound on the queen-steps (steps x n) of one attempt of every chain of a kernel call, per
device (about a second on the reference CPU): `drivers.minconflicts.default_chunk` keeps
`chunk * max_steps * n` under `devices * CALL_WORK`, so the progress line ticks within a second
or two even when no chain has solved yet."""


def default_chains(n: int) -> int:
    """Chains a run solves when no budget is given (`DEFAULT_CHAIN_WORK`)."""
    return int(min(1000, max(1, DEFAULT_CHAIN_WORK // (n * n))))


def predicted_seconds(n: int, chains: int, path: str, devices: int = 2) -> float:
    """Predicted wall seconds of `chains` chains on `path` ("batched" or "large"), from the
    per-chain costs on the reference CPU (compilation, about equal, left out)."""
    if path == "batched":
        return chains * BATCHED_S_PER_QUEEN2 * n * n * 2 / max(1, devices)
    return chains * (LARGE_S_PER_CHAIN + LARGE_S_PER_QUEEN * n)


def auto_path(
    n: int,
    chains: int | None,
    solutions: int | None = None,
    seconds: float | None = None,
    devices: int = 2,
) -> str:
    """The path `--mode auto` takes: "large" when it is predicted faster for `chains` chains
    (default `default_chains`) and the run needs nothing only the batched path has (a
    `solutions` or `seconds` budget), or when n is beyond the batched kernel; else "batched".
    With the reference CPU's costs the large path wins from n ~ 5,900 on."""
    if n > MAX_BATCHED_N:
        return "large"
    if solutions is not None or seconds is not None or n < 4:
        return "batched"
    k = chains if chains is not None else default_chains(n)
    faster = predicted_seconds(n, k, "large", devices) < predicted_seconds(n, k, "batched", devices)
    return "large" if faster else "batched"


# --- solve --instance -----------------------------------------------------------------------------


def check_instance_n(n: int) -> None:
    """Local search on a constrained instance runs on the batched kernel only (the large-n path
    has no masks): an instance beyond its limit is refused in one line, with no advice to switch
    paths (`--mode batched` and `--mode large` both refuse it)."""
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


CONFIDENCE = 0.95
"""The confidence level of the intervals the commands report unless given another (compare's,
estimate's `--level`)."""
CHECKPOINT_EVERY = 30.0
"""Seconds between a resumable run's checkpoints (`--checkpoint-every`), the one default of
every driver that saves them; a checkpoint is also written on Ctrl-C and at the end."""

COUNT_ENUMERATE_MAX_N = 14
"""Largest board `count --enumerate` lists (n = 14: 365,596 solutions)."""


def check_count_n(n) -> int:
    """`count`'s board size: 1..COUNT_MAX_N."""
    n = arguments.integer(n, "n", None)
    if not 1 <= n <= COUNT_MAX_N:
        raise QueensError(f"n = {n} is out of range: counting supports 1 <= n <= {COUNT_MAX_N}")
    return n


def check_enumerate_n(n) -> int:
    """`count --enumerate`'s board size: 1..COUNT_ENUMERATE_MAX_N."""
    n = arguments.integer(n, "n", None)
    if not 1 <= n <= COUNT_ENUMERATE_MAX_N:
        raise QueensError(
            f"enumeration supports 1 <= n <= {COUNT_ENUMERATE_MAX_N} (n = 14 has 365,596 "
            f"solutions), not n = {n}; use 'jaxqueens count -n {n}' to count them"
        )
    return n


ESTIMATE_MIN_PROBES = 1024
"""The fewest probes Knuth's estimator takes: fewer, and its interval covers Q(n) less often than
its level says (the probes' weights are heavy-tailed)."""
ESTIMATE_MIN_PER_STRATUM = 4
"""The fewest probes per stratum (partial board of `--depth` queens) the estimator takes: with
fewer, each stratum's variance and skewness are too rough for the interval to hold its level."""


def check_estimate(n, probes, level, seed) -> tuple:
    """`(n, probes or None, level, seed)` of Knuth's estimator, checked: n in
    1..ESTIMATE_MAX_N, probes a count of at least `ESTIMATE_MIN_PROBES` (a float such as
    1e7 is taken whole), level in (0, 1)."""
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
        if probes < ESTIMATE_MIN_PROBES:
            raise QueensError(
                f"--probes must be at least {ESTIMATE_MIN_PROBES} for an interval that holds its "
                f"level, got {probes:,}; give --probes {ESTIMATE_MIN_PROBES} or more, or leave it "
                "out"
            )
    level = arguments.real(level, "level", 0.0, 1.0, lo_open=True, hi_open=True)
    return n, probes, level, arguments.seed(seed, "seed")


def check_strata(probes: int, strata: int, depth: int, n: int) -> None:
    """Knuth's estimator's probes against the strata its `--depth` makes: at least
    `ESTIMATE_MIN_PER_STRATUM` each, for an interval that holds its level.

    Args:
      probes: the probes in all; strata: partial boards of `depth` queens (each walked below);
      depth: the levels enumerated exactly; n: the board size.

    Raises:
      QueensError: naming --depth, the strata, the probes each would get and the two fixes.
    """
    need = ESTIMATE_MIN_PER_STRATUM * strata
    if 0 < depth < n and probes < need:
        raise QueensError(
            f"--depth {depth} (n = {n}: {strata:,} strata) leaves {probes / strata:.2g} probes a "
            f"stratum; an interval that holds its level needs at least "
            f"{ESTIMATE_MIN_PER_STRATUM}: give --probes {need} or more, or a smaller --depth "
            "(or leave --depth out)"
        )


def check_depth(depth: int, n: int) -> int:
    """Knuth's estimator's `--depth` (levels enumerated exactly), checked against the size.

    Args:
      depth: the levels to enumerate; n: the board size.

    Returns:
      `depth`, an int in `0..n`.

    Raises:
      QueensError: naming --depth, the size and the range to pick from.
    """
    depth = arguments.integer(depth, "depth", 0)
    if depth > n:
        raise QueensError(
            f"--depth {depth} is deeper than the board (n = {n}): give --depth 0 (the plain "
            f"estimator) to {n} (every walk enumerated), or leave it out"
        )
    return depth


# --- solve: min-conflicts (batched, large-n) and backtracking ----------------------------------

SOLVE_DEFAULTS: dict[str, Any] = {
    "init": "permutation",
    "tabu": 0,
    "seed": 0,
    "max_restarts": 1_000_000,
    "move": "minconflicts",
}
"""`solve`: defaults of the options that only some paths use (the parser leaves them None);
`--maxsteps` depends on n and the path (`solve_setting`)."""

INSTANCE_MAX_RESTARTS = 99
"""`--instance`: default restarts per chain (an instance may have no solution: a bounded job)."""
INSTANCE_CHAINS = 100
"""`--instance`: default chains run."""

CISC352_DEFAULTS: dict[str, Any] = {"init": "qs4", "max_restarts": 99}
"""`--move cisc352` defaults: QS4 boards (as the CISC352 program builds them) and a cap of 100
attempts per chain; its step limit is `cisc352_max_steps`."""


def cisc352_max_steps(n: int) -> int:
    """The CISC352 program's size-dependent step limit, `ceil(2 n / log2 n)` (at least 1)."""
    return max(1, math.ceil(2 * n / math.log2(max(n, 2))))


SOLVE_UNUSED: dict[str, tuple[str, ...]] = {
    "large": (
        "resume",
        "solutions",
        "time",
        "tabu",
        "batch",
        "file",
        "max_restarts",
        "move",
        "show_initial",
        "instance",
        "toroidal",
    ),
    "backtrack": (
        "resume",
        "solutions",
        "time",
        "maxsteps",
        "init",
        "tabu",
        "batch",
        "file",
        "chains",
        "seed",
        "plot",
        "max_restarts",
        "move",
        "show_initial",
        "instance",
        "toroidal",
    ),
}
"""`solve`: options a path does not use; given anyway, they are refused (never ignored
silently)."""


def _given(value) -> bool:
    """An option the user gave (0 counts: `--max-restarts 0` is given; None and an unset flag
    are not)."""
    return value is not None and value is not False


def solve_path(n: int, given: Mapping[str, Any]) -> str:
    """Which path `solve` takes: "backtrack" (`method`), "large" (`mode` large, or auto
    when `auto_path` predicts it faster for the chains asked
    for and no option only the batched path has is given) or "batched". `given`: the options
    by their command-line names (`maxsteps`, `max_restarts`, ...), None when not given."""
    if given.get("method") == "backtrack":
        return "backtrack"
    if given.get("instance"):
        check_instance_n(n)  # the batched kernel's limit: no path takes a larger one
    mode = given.get("mode") or "auto"
    if mode != "auto":
        return mode
    batched_only = [name for name in SOLVE_UNUSED["large"] if _given(given.get(name))]
    if batched_only and n <= MAX_BATCHED_N:
        return "batched"
    return auto_path(n, given.get("chains"), given.get("solutions"), given.get("time"))


def solve_setting(n: int, given: Mapping[str, Any], path: str) -> dict[str, Any]:
    """The settings a `solve` run on `path` takes, from the options given (by their
    command-line names; None: not given), before any work: every count in range and no option
    the path would not use (one line naming the option and the fix); then the defaults.

    Returns `given` with `init`, `tabu`, `seed`, `max_restarts`, `move` and
    `maxsteps` filled in for the path (the large path keeps `init` and `maxsteps` None:
    QS4, no step limit), and `capped`: whether chains are run rather than awaited (a bounded
    job: `--max-restarts` given, or an instance, which may have no solution)."""
    for flag, key, low in (
        ("--chains", "chains", 1),
        ("--maxsteps", "maxsteps", 1),
        ("--batch", "batch", 1),
        ("--tabu", "tabu", 0),
        ("--max-restarts", "max_restarts", 0),
    ):
        value = given.get(key)
        if value is not None and value < low:
            raise QueensError(f"{flag} must be at least {low}, got {value}")
    unused = [name for name in SOLVE_UNUSED.get(path, ()) if _given(given.get(name))]
    if unused:
        flag = "--" + unused[0].replace("_", "-")
        if path == "backtrack":
            raise QueensError(
                f"{flag} is not used by --method backtrack (one first solution from "
                f"an empty board); drop {flag}"
            )
        raise QueensError(
            f"{flag} is not used by the large-n path (--mode large, "
            f"or auto beyond the batched limit); drop it or give --mode batched"
        )
    if path == "large" and given.get("init") not in (None, "qs4", "permutation"):
        raise QueensError(
            f"--init {given.get('init')} is not available on the large-n path (it needs a "
            "permutation in O(n)); use --init qs4 or permutation, or --mode batched"
        )
    out = dict(given)
    instance = bool(given.get("instance")) and path == "batched"
    if instance and out.get("max_restarts") is None:
        out["max_restarts"] = INSTANCE_MAX_RESTARTS  # an instance may have no solution: bounded
    out["capped"] = out.get("max_restarts") is not None
    if out.get("move") == "cisc352":
        for name, value in CISC352_DEFAULTS.items():
            if out.get(name) is None:
                out[name] = value
        if out.get("maxsteps") is None:
            out["maxsteps"] = cisc352_max_steps(n)
    if out.get("maxsteps") is None and path == "batched":
        plain = not (given.get("toroidal") or given.get("instance"))
        out["maxsteps"] = default_max_steps(n, plain=plain)
    for name, value in SOLVE_DEFAULTS.items():
        if out.get(name) is None and not (path == "large" and name == "init"):
            out[name] = value
    return out
