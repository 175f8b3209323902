"""The figure of `jaxqueens estimate`: log Q(n) / n against n (host-only; the house style of
`base`: `matplotlib.figure.Figure`, written atomically)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from jaxqueens.core.oeis import A000170
from jaxqueens.drivers.estimate_result import SIMKIN_ALPHA, Estimate
from jaxqueens.plots.base import figure, save_png


def log_q_plot(results: Sequence[Estimate], path: Path) -> Path:
    """log Q(n) / n against n: exact values (OEIS A000170), the `results` above 0 with error bars of
    z standard errors (their `z`), and Simkin's asymptote `ln n - SIMKIN_ALPHA`. Returns the path
    written."""
    fig, ax = figure()
    ns = [n for n in sorted(A000170) if A000170[n] > 0]
    ax.plot(
        ns,
        [math.log(A000170[n]) / n for n in ns],
        "o",
        color="k",
        ms=4,
        label="exact (OEIS A000170)",
    )
    est = [r for r in results if r.solutions > 0]
    if est:
        n_e = np.array([r.n for r in est], float)
        q = np.array([r.solutions for r in est])
        half = np.array([r.z * r.solutions_se for r in est])  # z standard errors
        y = np.array([math.log(v) for v in q]) / n_e
        lo = np.array([math.log(v) for v in np.maximum(q - half, q * 1e-3)]) / n_e
        hi = np.array([math.log(v) for v in q + half]) / n_e
        ax.errorbar(
            n_e,
            y,
            yerr=[y - lo, hi - y],
            fmt="s",
            color="C3",
            ms=4,
            capsize=3,
            label="Knuth estimate (CI)",
        )
    top = max([r.n for r in results] + ns)
    grid = np.linspace(4, top + 1, 200)
    label = f"Simkin: ln n - {SIMKIN_ALPHA}"
    ax.plot(grid, np.log(grid) - SIMKIN_ALPHA, color="C0", lw=1.2, ls="--", label=label)
    ax.set_xlabel("n")
    ax.set_ylabel("log Q(n) / n")
    ax.set_title("N-Queens solutions: log Q(n) / n")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save_png(fig, path)
