"""Figures of ``jaxqueens compare``: one line per solver (host-only; arrays in, files out; the
house style of :mod:`jaxqueens.plots.base`: ``matplotlib.figure.Figure``, written atomically).

- ``steps_ecdf.png`` and ``seconds_ecdf.png``: run-time distributions (empirical CDFs over the
  solved chains; Hoos & Stuetzle's RTDs), log x axis (symmetric log for steps, which may be 0);
- ``success.png``: success rate against the step budget (over all chains);
- ``ert.png``: expected seconds per solution per solver (bars, log scale).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxqueens.plots.base import figure, finish

STYLES = {"minconflicts": "-", "anneal": "--", "ga": ":"}
"""Line style per solver family (colours tell the solvers apart)."""


def _lines(
    curves: dict,
    which: str,
    families: dict,
    path: Path,
    title: str,
    xlabel: str,
    ylabel: str,
    drawstyle: str = "steps-post",
) -> Path:
    fig, ax = figure(7.5, 4.5)
    positive = False
    for i, (solver, c) in enumerate(curves.items()):
        x, y = (np.asarray(v) for v in c[which])
        label = solver if x.size else f"{solver} (none solved)"
        ax.plot(
            x,
            y,
            drawstyle=drawstyle,
            color=f"C{i % 10}",
            lw=1.5,
            ls=STYLES.get(families.get(solver, ""), "-"),
            label=label,
        )
        positive |= bool(x.size and (x > 0).any())
    if positive:
        if which == "seconds_ecdf":
            ax.set_xscale("log")
        else:  # steps may be 0 (a chain whose first board is a solution)
            ax.set_xscale("symlog", linthresh=1)
    ax.legend(fontsize=7, ncol=2)
    return finish(fig, ax, path, title, xlabel, ylabel, ylim=(0, 1.02))


def ert_bars(ert: dict, path: Path, title: str) -> Path:
    """Expected seconds per solution per solver (a solver that solved nothing is marked)."""
    fig, ax = figure(7.5, 4.0)
    names = list(ert)
    values = [ert[s] if ert[s] is not None else np.nan for s in names]
    ax.bar(
        range(len(names)),
        [v * 1e3 for v in values],
        color=[f"C{i % 10}" for i in range(len(names))],
    )
    for i, v in enumerate(values):
        if not np.isfinite(v):
            ax.text(i, 0, "none\nsolved", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
    if any(np.isfinite(v) and v > 0 for v in values):
        ax.set_yscale("log")
    return finish(fig, ax, path, title, None, "ms per solution (ERT)")


def write_plots(
    out: Path, *, n: int, budget: int, curves: dict, families: dict, ert: dict
) -> list[Path]:
    """Every figure of a compare run.

    Args:
      n: board size; budget: steps per chain.
      curves: solver -> ``steps_ecdf``, ``seconds_ecdf``, ``success``: ``(x [P], y [P])`` each.
      families: solver -> "minconflicts", "anneal" or "ga" (the line style).
      ert: solver -> expected seconds per solution (None: nothing solved).
    """
    out = Path(out)
    what = f"n = {n}, {budget:,} steps per chain"
    return [
        _lines(
            curves,
            "steps_ecdf",
            families,
            out / "steps_ecdf.png",
            f"run-time distribution in steps ({what})",
            "steps to solution",
            "fraction of solved chains",
        ),
        _lines(
            curves,
            "seconds_ecdf",
            families,
            out / "seconds_ecdf.png",
            f"run-time distribution in seconds ({what})",
            "seconds to solution",
            "fraction of solved chains",
        ),
        _lines(
            curves,
            "success",
            families,
            out / "success.png",
            f"success rate vs step budget ({what})",
            "step budget",
            "success rate",
        ),
        ert_bars(ert, out / "ert.png", f"expected time per solution ({what})"),
    ]
