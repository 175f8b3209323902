"""The settings of `jaxqueens estimate` (Knuth's estimator), JAX-free: the fewest probes in all
and per stratum for an interval that holds its level, and `EstimateSettings` (checked against the
board by `estimate_settings`).
"""

from __future__ import annotations

import dataclasses
import math

from jaxqueens.core import arguments
from jaxqueens.drivers.settings import CONFIDENCE, flag
from jaxqueens.errors import QueensError
from jaxqueens.solvers.variants import ESTIMATE_MAX_N

ESTIMATE_MIN_PROBES = 1024
"""The fewest probes Knuth's estimator takes: fewer, and its interval covers Q(n) less often than
its level says (the probes' weights are heavy-tailed)."""
ESTIMATE_MIN_PER_STRATUM = 4
"""The fewest probes per stratum (partial board of `--depth` queens) the estimator takes: with
fewer, each stratum's variance and skewness are too rough for the interval to hold its level."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class EstimateSettings:
    """The settings of Knuth's estimator (`jaxqueens.estimate`), checked once (frozen; the checked
    values replace those given; `estimate_settings`: `depth` against the board too). None: the
    driver's default (`probes`, `lanes`: the backend's; `depth`: `default_depth`)."""

    probes: int | None = flag(  # a float is taken whole
        f"probes per size, at least {ESTIMATE_MIN_PROBES} and {ESTIMATE_MIN_PER_STRATUM} per "
        "stratum of --depth, so that the interval holds its level (default 1e7 on a CPU, 1e8 on "
        "a GPU)",
        default=None,
        type=float,
    )
    level: float = flag(
        f"confidence level of the intervals (default {CONFIDENCE:g}, as compare's)",
        default=CONFIDENCE,
    )
    seed: int = 0  # call c of a run uses the stream `call_seed(seed, c)`
    lanes: int | None = None  # about this many probes per kernel call
    depth: int | None = flag(
        "levels enumerated exactly (default: automatic; 0 = plain Knuth estimator)", default=None
    )

    def __post_init__(self) -> None:
        probes = self.probes
        if probes is not None:
            real = isinstance(probes, (int, float)) and not isinstance(probes, bool)
            real = real or arguments.is_integer(probes)
            if not real or not math.isfinite(float(probes)):
                raise QueensError(f"--probes must be a positive number like 1e7, got {probes!r}")
            probes = int(probes)
            if probes < ESTIMATE_MIN_PROBES:
                raise QueensError(
                    f"--probes must be at least {ESTIMATE_MIN_PROBES} for an interval that holds "
                    f"its level, got {probes:,}; give --probes {ESTIMATE_MIN_PROBES} or more, or "
                    "leave it out"
                )
        level = arguments.real(self.level, "level", 0.0, 1.0, lo_open=True, hi_open=True)
        object.__setattr__(self, "probes", probes)
        object.__setattr__(self, "level", level)
        object.__setattr__(self, "seed", arguments.seed(self.seed, "seed"))
        object.__setattr__(self, "lanes", arguments.integer(self.lanes, "lanes", 1, optional=True))
        object.__setattr__(self, "depth", arguments.integer(self.depth, "depth", 0, optional=True))


def estimate_settings(n: int, **given) -> EstimateSettings:
    """The settings of Knuth's estimator on an n-board (n in 1..ESTIMATE_MAX_N), `given` the
    fields of `EstimateSettings`, checked (`depth` within `0..n`)."""
    n = arguments.integer(n, "n", 1)
    if n > ESTIMATE_MAX_N:
        raise QueensError(
            f"n = {n} is outside 1..{ESTIMATE_MAX_N} (the walks keep two 32-bit words); "
            f"use -n between 1 and {ESTIMATE_MAX_N}"
        )
    settings = EstimateSettings(**given)
    if settings.depth is not None and settings.depth > n:
        raise QueensError(
            f"--depth {settings.depth} is deeper than the board (n = {n}): give --depth 0 (the "
            f"plain estimator) to {n} (every walk enumerated), or leave it out"
        )
    return settings


def check_strata(probes: int, strata: int, depth: int, n: int) -> None:
    """Knuth's estimator's `probes` against the `strata` (partial boards of `depth` queens,
    each walked below) its `--depth` makes on an n-board: at least `ESTIMATE_MIN_PER_STRATUM`
    each, for an interval that holds its level; else a QueensError naming --depth, the strata,
    the probes each would get and the two fixes."""
    need = ESTIMATE_MIN_PER_STRATUM * strata
    if 0 < depth < n and probes < need:
        raise QueensError(
            f"--depth {depth} (n = {n}: {strata:,} strata) leaves {probes / strata:.2g} probes a "
            f"stratum; an interval that holds its level needs at least "
            f"{ESTIMATE_MIN_PER_STRATUM}: give --probes {need} or more, or a smaller --depth "
            "(or leave --depth out)"
        )
