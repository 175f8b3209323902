"""Figures for GA runs (host-only; matplotlib imported lazily, files written atomically).

Drawn from a run's per-generation statistics; one `Figure` per file, no pyplot state (`base`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxqueens.io.ga import scored_summary
from jaxqueens.plots.base import RATE_LIMITS, figure, finish, rate_band, save_png, solver_style


def solved_plot(
    curve: np.ndarray, path: Path, title: str, trials: int | None = None, solver: str = "ga"
) -> Path:
    """Fraction of trials that have found a solution by generation g, `curve` `[G+1]`, in `solver`'s
    style; `trials` (None: unknown) shades the 95% Wilson interval. Returns the PNG written."""
    fig, ax = figure()
    gens = np.arange(len(curve))
    style = solver_style(solver)
    if trials:
        rate_band(ax, gens, curve, trials, style["color"])
    ax.step(gens, curve, where="post", **style)
    ylabel = "fraction of trials solved" + (" (95% Wilson CI)" if trials else "")
    return finish(fig, ax, path, title, "generation", ylabel, ylim=RATE_LIMITS)


def band_plot(stats: dict, path: Path, ylabel: str, title: str, trials: int) -> Path:
    """A per-generation statistic over `trials` trials: the 10-90 percentile band, the median, the
    lowest and highest, from `stats`' `best_p10`, `best_p50`, `best_p90`, `best_min` and `best_max`
    `[G+1]` (as the default `history.csv` holds them). Returns the PNG written."""
    fig, ax = figure()
    gens = np.arange(len(stats["best_p50"]))
    ax.fill_between(
        gens,
        stats["best_p10"],
        stats["best_p90"],
        step="post",
        color="tab:blue",
        alpha=0.25,
        label="10th-90th percentile",
    )
    ax.step(gens, stats["best_p50"], where="post", lw=2.0, color="tab:red", label="median")
    ax.step(gens, stats["best_min"], where="post", lw=0.9, ls="--", color="k", label="lowest")
    ax.step(gens, stats["best_max"], where="post", lw=0.9, ls=":", color="k", label="highest")
    ax.set_xlabel("generation")
    ax.set_ylabel(ylabel)
    ax.set_title(f"{title} ({trials} trials)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right")
    return save_png(fig, path)


def write_plots(out: Path, result, score: str = "attacking") -> list[Path]:
    """best.png (percentile band over trials), avg.png and worst.png (means over trials) and
    success.png of a GA result (`EvolveResult`) in folder `out`, from its per-generation statistics
    (`summary`), never from `[G+1, T]` records, in the `score` of the CSV (`io.ga.SCORES`). Returns
    the PNGs written."""
    c, trials = result.config, len(result.first_solved)
    stats, solved = scored_summary(result, score), result.success_curve()
    what = f"{c.encoding}, {c.scheme}, n = {c.n}, pop {c.pop}"
    label = _label(score, c.fitness)
    files = [band_plot(stats, Path(out) / "best.png", f"best {label}", f"best: {what}", trials)]
    for name, key in (("avg", "avg_mean"), ("worst", "worst_mean")):
        fig, ax = figure()
        ax.plot(np.arange(len(stats[key])), stats[key], lw=1.8, color="tab:blue")
        files.append(
            finish(
                fig,
                ax,
                Path(out) / f"{name}.png",
                f"{name} fitness, mean of {trials} trials: {what}",
                "generation",
                f"{name} {label}",
                ylim=(0, None),
            )
        )
    files.append(
        solved_plot(
            solved, Path(out) / "success.png", f"trials solved: {what}, {trials} trials", trials
        )
    )
    return files


def _label(score: str, fitness: str) -> str:
    return (
        "non-attacking pairs"
        if score == "nonattacking"
        else "attacking pairs (0 = solution)"
        if fitness == "pairs"
        else "excess queens on lines (0 = solution)"
        if fitness == "excess"
        else "diagonal pairs, rows ignored (report's score; 0 is not always a solution)"
    )
