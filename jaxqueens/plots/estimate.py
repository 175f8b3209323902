"""The figure of `jaxqueens estimate`: log Q(n) / n against n (host-only; the house style of
`base`: `matplotlib.figure.Figure`, written atomically)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from jaxqueens.core.oeis import A000170
from jaxqueens.plots.base import figure, save_png


def log_q_plot(
    estimates: list[tuple[int, float, float, float]], path: Path, alpha: float = 1.942
) -> Path:
    """log Q(n) / n against n: exact values (OEIS A000170), `estimates`
    (`(n, estimate, standard error, z)` per size) with z * SE error bars, and Simkin's asymptote
    `ln n - alpha`. Returns the path written."""
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
    est = [(n, q, se, z) for n, q, se, z in estimates if q > 0]
    if est:
        n_e = np.array([e[0] for e in est], float)
        y = np.array([math.log(e[1]) / e[0] for e in est])
        lo = np.array([math.log(max(e[1] - e[3] * e[2], e[1] * 1e-3)) / e[0] for e in est])
        hi = np.array([math.log(e[1] + e[3] * e[2]) / e[0] for e in est])
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
    top = max([n for n, *_ in estimates] + ns)
    grid = np.linspace(4, top + 1, 200)
    ax.plot(
        grid, np.log(grid) - alpha, color="C0", lw=1.2, ls="--", label=f"Simkin: ln n - {alpha}"
    )
    ax.set_xlabel("n")
    ax.set_ylabel("log Q(n) / n")
    ax.set_title("N-Queens solutions: log Q(n) / n")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save_png(fig, path)
