"""Pearson's chi-square test of uniformity, with its p-value computed here (pure Python/NumPy), and
the Wilson score interval of a success rate (`wilson_interval`).

The p-value is the regularised upper incomplete gamma function, `gamma_q`: a series for
`x < a + 1` and a continued fraction (modified Lentz) otherwise (Press et al., *Numerical
Recipes*, 3rd ed., section 6.2). `uniformity_test` accepts cells that were never observed
as one summed expected count, so a test over all Q solutions needs no list of the unsampled ones.
The test is only meaningful when the expected count per cell is at least ~5
(`MIN_EXPECTED`), which its result states.
"""

from __future__ import annotations

import math

import numpy as np

MIN_EXPECTED = 5.0  # chi-square rule of thumb
Z95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95% interval."""


def gamma_q(a: float, x: float, eps: float = 1e-15, max_iter: int = 1_000_000) -> float:
    """The regularised upper incomplete gamma function Q(a, x) = Gamma(a, x) / Gamma(a).

    Args:
      a: shape, > 0.
      x: point, >= 0.
      eps: relative tolerance of the series or continued fraction.
      max_iter: the most terms evaluated.

    Returns:
      Q(a, x).
    """
    if a <= 0 or x < 0 or math.isnan(x):
        raise ValueError(f"gamma_q needs a > 0 and x >= 0, got a={a}, x={x}")
    if x == 0:
        return 1.0
    log_front = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1:  # series for P(a, x)
        term = total = 1.0 / a
        ap = a
        for _ in range(max_iter):
            ap += 1
            term *= x / ap
            total += term
            if abs(term) < abs(total) * eps:
                break
        return max(0.0, 1.0 - total * math.exp(log_front))
    # continued fraction for Q(a, x) (modified Lentz)
    tiny = 1e-300
    b = x + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for i in range(1, max_iter):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < eps:
            break
    return min(1.0, math.exp(log_front) * h)


def chi2_sf(stat: float, dof: int) -> float:
    """The chi-square distribution's survival function, P(X >= stat).

    Args:
      stat: the statistic.
      dof: degrees of freedom.

    Returns:
      The probability.
    """
    if dof < 1:
        return float("nan")
    return gamma_q(dof / 2, max(stat, 0.0) / 2)


def uniformity_test(
    observed: np.ndarray,
    expected: np.ndarray,
    unseen_expected: float = 0.0,
    cells: int | None = None,
) -> dict:
    """Pearson's chi-square against given expected counts.

    Args:
      observed: `[D]` counts of the cells seen.
      expected: `[D]` their expected counts.
      unseen_expected: the summed expected count of the cells never observed (each adds its
        expected count to the statistic).
      cells: number of cells in all (default D).

    Returns:
      A dict: `statistic`, `dof`, `p_value` (None without a degree of freedom), `cells`,
      `expected_per_cell_mean`, `expected_min`, and `valid` (the mean expected count per cell is
      at least `MIN_EXPECTED`).
    """
    observed = np.asarray(observed, np.float64)
    expected = np.asarray(expected, np.float64)
    cells = len(observed) if cells is None else int(cells)
    stat = float(np.sum((observed - expected) ** 2 / expected) + unseen_expected)
    dof = cells - 1
    per_cell = float((expected.sum() + unseen_expected) / cells) if cells else 0.0
    return {
        "statistic": stat,
        "dof": dof,
        "p_value": chi2_sf(stat, dof) if dof >= 1 else None,
        "cells": cells,
        "expected_per_cell_mean": per_cell,
        "expected_min": float(
            min(
                expected.min(initial=np.inf),
                unseen_expected / max(1, cells - len(observed))
                if cells > len(observed)
                else np.inf,
            )
        ),
        "valid": bool(per_cell >= MIN_EXPECTED),
    }


def wilson_interval(successes, trials, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a binomial success rate (Wilson 1927): unlike the normal
    approximation it stays inside [0, 1] and is not empty at 0 or `trials` successes.

    Args:
      successes: successes `[...]` (counts, not rates); broadcast against `trials`.
      trials: trials `[...]`, each at least 1.
      z: the normal quantile of the interval (default: 95%, two-sided).

    Returns:
      `(low, high)`, float64 arrays of the broadcast shape (0-d for scalars).
    """
    k = np.asarray(successes, np.float64)
    n = np.asarray(trials, np.float64)
    if np.any(n < 1) or np.any(k < 0) or np.any(k > n):
        raise ValueError(
            f"wilson_interval needs 0 <= successes <= trials, trials >= 1, got {k}, {n}"
        )
    p = k / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z / (1 + z2 / n) * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)
