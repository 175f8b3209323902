"""Figures for GA runs (host-only; matplotlib imported lazily, files written atomically).

Arrays in, files out: the caller passes the per-generation records, never a result object. Same
house pattern as `base`: one `Figure` per file, no pyplot state.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxqueens.plots.base import RATE_LIMITS, figure, finish, rate_band, save_png, solver_style

MAX_TRIAL_LINES = 200
"""Trials drawn as faint lines (evenly spaced subset beyond this); the median uses every trial."""


def fitness_plot(values: np.ndarray, path: Path, ylabel: str, title: str) -> Path:
    """One quantity per generation, `values` `[G+1, T]` (generation 0 is the initial population):
    every trial a faint line, the median over trials bold. Returns the PNG written."""
    values = np.asarray(values, dtype=float)
    fig, ax = figure()
    gens = np.arange(values.shape[0])
    shown = np.unique(
        np.linspace(0, values.shape[1] - 1, min(values.shape[1], MAX_TRIAL_LINES)).astype(int)
    )
    for t in shown:
        ax.plot(gens, values[:, t], lw=0.6, alpha=0.25, color="tab:blue")
    ax.plot(
        gens,
        np.median(values, axis=1),
        lw=2.0,
        color="tab:red",
        label=f"median of {values.shape[1]} trials",
    )
    ax.set_xlabel("generation")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right")
    return save_png(fig, path)


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


def write_plots(
    out: Path,
    best: np.ndarray,
    avg: np.ndarray,
    worst: np.ndarray,
    solved: np.ndarray,
    *,
    what: str,
    score: str = "attacking",
    fitness: str = "pairs",
) -> list[Path]:
    """best.png, avg.png, worst.png and success.png of one GA run, in folder `out`.

    Args:
      best: `[G+1, T]` best fitness per generation and trial, as reported (see `score`).
      avg: `[G+1, T]` mean fitness, as `best`.
      worst: `[G+1, T]` worst fitness, as `best`.
      solved: `[G+1]` fraction of trials solved by generation g.
      what: the run in words, for the titles (e.g. "permutation, steady, n = 8, pop 100").
      score: "attacking" (attacking pairs or excess, by `fitness`) or "nonattacking".
      fitness: the GA's fitness, "pairs", "excess" or "report-diagonals-only" (labels the y axis;
        `solved` counts verified solutions under every fitness).

    Returns:
      The PNGs written.
    """
    label = _label(score, fitness)
    files = []
    for name, values in zip(("best", "avg", "worst"), (best, avg, worst), strict=True):
        files.append(
            fitness_plot(
                values, Path(out) / f"{name}.png", f"{name} {label}", f"{name} fitness: {what}"
            )
        )
    trials = np.shape(best)[1]
    files.append(
        solved_plot(
            solved, Path(out) / "success.png", f"trials solved: {what}, {trials} trials", trials
        )
    )
    return files


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


def write_summary_plots(
    out: Path,
    stats: dict,
    solved: np.ndarray,
    *,
    trials: int,
    what: str,
    score: str = "attacking",
    fitness: str = "pairs",
) -> list[Path]:
    """best.png (percentile band over trials), avg.png and worst.png (means over trials) and
    success.png in folder `out`, from a run's per-generation statistics, never from `[G+1, T]`
    records: `stats` `{name: [G+1]}` by the names of the GA history's `SUMMARY_STATS`, `solved`
    `[G+1]` the fraction of trials solved by generation g, `what` the run in words, and `score` and
    `fitness` as `write_plots` takes them. Returns the PNGs written."""
    label = _label(score, fitness)
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
