"""The settings of `jaxqueens estimate` (Knuth's estimator), JAX-free: the fewest probes in all
and per stratum for an interval that holds its level, and the checks of n, probes, level, depth.
"""

from __future__ import annotations

import math

from jaxqueens.core import arguments
from jaxqueens.errors import QueensError
from jaxqueens.solvers.variants import ESTIMATE_MAX_N

ESTIMATE_MIN_PROBES = 1024
"""The fewest probes Knuth's estimator takes: fewer, and its interval covers Q(n) less often than
its level says (the probes' weights are heavy-tailed)."""
ESTIMATE_MIN_PER_STRATUM = 4
"""The fewest probes per stratum (partial board of `--depth` queens) the estimator takes: with
fewer, each stratum's variance and skewness are too rough for the interval to hold its level."""


def check_estimate(n, probes, level, seed) -> tuple:
    """The settings of Knuth's estimator, checked.

    Args:
      n: board size, in 1..ESTIMATE_MAX_N.
      probes: probes, at least `ESTIMATE_MIN_PROBES` (a float such as 1e7 is taken whole), or
        None.
      level: the interval's confidence, in (0, 1).
      seed: random seed.

    Returns:
      `(n, probes or None, level, seed)`.
    """
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
