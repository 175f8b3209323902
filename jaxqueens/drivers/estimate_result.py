"""The settings and the result of Knuth's estimator, JAX-free: `EstimateSettings` (checked once,
`depth` against the board by `estimate_settings`), the probe floors an interval needs, `Estimate`,
the stratified mean with its standard error and skewness, and Hall's (1992, "On the removal of
skewness by transformation", JRSS B 54) skewness-corrected interval.
"""

from __future__ import annotations

import dataclasses
import math
import statistics

import numpy as np

from jaxqueens.core import arguments
from jaxqueens.drivers.settings import CONFIDENCE, flag
from jaxqueens.errors import QueensError
from jaxqueens.solvers.variants import ESTIMATE_MAX_N

SIMKIN_ALPHA = 1.942  # Simkin's (2021) asymptote: log Q(n) / n ~ ln n - alpha
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
    """Refuse `probes` that leave fewer than `ESTIMATE_MIN_PER_STRATUM` to each of the `strata`
    (partial boards of `depth` queens, each walked below) of an n-board, naming --depth, the
    strata, the probes each would get and the two fixes."""
    need = ESTIMATE_MIN_PER_STRATUM * strata
    if 0 < depth < n and probes < need:
        raise QueensError(
            f"--depth {depth} (n = {n}: {strata:,} strata) leaves {probes / strata:.2g} probes a "
            f"stratum; an interval that holds its level needs at least "
            f"{ESTIMATE_MIN_PER_STRATUM}: give --probes {need} or more, or a smaller --depth "
            "(or leave --depth out)"
        )


@dataclasses.dataclass
class Estimate:
    """Result of `estimate` (host floats; the exact value where OEIS knows it)."""

    n: int  #: board size.
    probes: int  #: probes walked in all
    depth: int  #: levels enumerated exactly (strata = nodes at that level)
    strata: int  #: strata (the partial boards of `depth` queens).
    solutions: float  #: estimate of Q(n)
    solutions_se: float  #: standard error
    nodes: float  #: estimate of the backtrack tree's node count (root included)
    nodes_se: float  #: its standard error.
    level: float  #: confidence level of the intervals
    hit_rate: float  #: share of probes that reached depth n
    seconds: float  #: kernel time, compilation excluded
    compile_s: float  #: compilation seconds.
    exact: int | None  #: A000170(n) where known
    top_nodes: list  #: exact N_0 .. N_depth
    stopped_by: str = "finished"  #: or "interrupted": from the calls finished before Ctrl-C
    solutions_skew: float = 0.0  #: skewness of the estimate (its third cumulant / se^3)
    nodes_skew: float = 0.0  #: skewness of the node estimate.

    @property
    def z(self) -> float:
        return statistics.NormalDist().inv_cdf(0.5 + self.level / 2)

    @property
    def ci(self) -> tuple[float, float]:
        """Skewness-corrected confidence interval for Q(n) at `level` (`interval`), cut
        at 0 below (Q(n) is a count: the cut interval covers it at least as often)."""
        lo, hi = interval(self.solutions, self.solutions_se, self.solutions_skew, self.z)
        return max(0.0, lo), hi

    @property
    def nodes_ci(self) -> tuple[float, float]:
        """The same for the backtrack tree's nodes, cut below at the nodes of the levels counted
        exactly (the tree holds at least those)."""
        known = float(sum(int(v) for v in self.top_nodes))
        lo, hi = interval(self.nodes, self.nodes_se, self.nodes_skew, self.z)
        return max(known, lo), hi

    @property
    def rel_error(self) -> float | None:
        """(estimate - exact) / exact, where the exact value is known."""
        return None if not self.exact else (self.solutions - self.exact) / self.exact

    @property
    def probes_per_s(self) -> float | None:
        """Probes per second of search; None when no time was measured (every walk enumerated)."""
        return self.probes / self.seconds if self.seconds > 0 else None

    @property
    def exhaustive(self) -> bool:
        """Every walk enumerated (depth n): the values are exact."""
        return self.depth == self.n

    def as_dict(self) -> dict:
        """The size's row of `summary.json`'s `estimates` (and of `estimates.csv`)."""
        lo, hi = self.ci
        nlo, nhi = self.nodes_ci
        return {
            "n": self.n,
            "solutions": self.solutions,
            "solutions_se": self.solutions_se,
            "ci_low": lo,
            "ci_high": hi,
            "level": self.level,
            "log_q_over_n": math.log(self.solutions) / self.n if self.solutions > 0 else None,
            "exact": self.exact,
            "rel_error": self.rel_error,
            "nodes": self.nodes,
            "nodes_se": self.nodes_se,
            "nodes_ci_low": nlo,
            "nodes_ci_high": nhi,
            "probes": self.probes,
            "depth": self.depth,
            "strata": self.strata,
            "exhaustive": self.exhaustive,
            "hit_rate": self.hit_rate,
            "seconds": self.seconds,
            "compile_s": self.compile_s,
            "probes_per_s": self.probes_per_s,
            "top_nodes": self.top_nodes,
        }


def stratified(
    s1: np.ndarray, s2: np.ndarray, s3: np.ndarray, m: int
) -> tuple[float, float, float]:
    """Sum of stratum means, its standard error and its skewness from the `[S]` per-stratum sums of
    x, x^2 and x^3 over each stratum's `m` probes.

    The skewness is the estimate's third cumulant (from the strata's unbiased third central moments)
    over the cubed standard error, 0 when it cannot be estimated (m < 3 or no spread). NaN when `m`
    is 0."""
    if m == 0:  # interrupted before the first call ended
        return math.nan, math.nan, math.nan
    mean = s1 / m
    var = np.maximum(s2 / m - mean**2, 0.0) * m / max(m - 1, 1)
    total = float(var.sum() / m)
    se = math.sqrt(total) if m > 1 else math.nan
    skew = 0.0
    if m > 2 and total > 0:
        central3 = s3 / m - 3 * mean * (s2 / m) + 2 * mean**3
        k3 = central3 * m * m / ((m - 1) * (m - 2))  # unbiased third central moment
        skew = float((k3 / (m * m)).sum() / total**1.5)
    return float(mean.sum()), se, skew


def interval(estimate: float, se: float, skew: float, z: float) -> tuple[float, float]:
    """Hall's (1992) skewness-corrected interval `(low, high)` for a mean `estimate` with standard
    error `se` and skewness `skew` (`stratified`) at the two-sided normal quantile `z`.

    The studentized mean `T` has a skewed distribution; Hall's monotone transformation `g(t) = t + a
    t^2 + a^2 t^3 / 3 + b`, with `a = skew / 3` and `b = skew / 6`, makes it nearly normal, so `-z
    <= g(T) <= z` holds with the normal's probability. Its inverse is closed-form: `g^-1(x) = ((1 +
    3a (x - b))^(1/3) - 1) / a`. The interval is `estimate - se g^-1(z) .. estimate - se g^-1(-z)`;
    `estimate +- z se` at no skewness."""
    a, b = skew / 3, skew / 6
    if not math.isfinite(a) or abs(a) < 1e-12:
        return estimate - z * se, estimate + z * se

    def inverse(x: float) -> float:
        return (math.cbrt(1 + 3 * a * (x - b)) - 1) / a

    return estimate - se * inverse(z), estimate - se * inverse(-z)
