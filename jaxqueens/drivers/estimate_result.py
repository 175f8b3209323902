"""The result of Knuth's estimator and its statistics: `Estimate`, the per-stratum sums the host
keeps, the stratified mean with its standard error and skewness, and Hall's (1992, "On the
removal of skewness by transformation", JRSS B 54) skewness-corrected interval.
"""

from __future__ import annotations

import dataclasses
import math
import statistics

import numpy as np

from jaxqueens.solvers.estimate import GroupSums


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


SUMS = ("w", "w2", "nodes", "nodes2", "hits", "w3", "nodes3")
"""The host's float64 sums per stratum, in this order (rows of `stratum_sums`)."""


def stratum_sums(sums: GroupSums, rows: int, copies: int, strata: int) -> np.ndarray:
    """A call's group sums (`[padded, G]` each, the first `rows` = `strata * copies` real) as
    float64 sums per stratum, `[len(SUMS), strata]` named by `SUMS`: the `copies` of a stratum and
    its groups added up, the scaling undone."""
    top, *parts = (np.asarray(x)[:rows].reshape(copies, strata, -1) for x in sums)
    e = top.astype(np.int64)
    power = {"w": 1, "w2": 2, "nodes": 1, "nodes2": 2, "hits": 0, "w3": 3, "nodes3": 3}
    named = dict(zip(GroupSums._fields[1:], parts, strict=True))
    return np.stack([np.ldexp(named[k].astype(np.float64), power[k] * e).sum((0, 2)) for k in SUMS])


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
