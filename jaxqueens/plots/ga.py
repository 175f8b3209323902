"""Figures for GA runs (host-only; matplotlib imported lazily, files written atomically).

Arrays in, files out: the caller passes the per-generation records, never a result object. Same
house pattern as :mod:`jaxqueens.plots.base`: one ``Figure`` per file, no pyplot state.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxqueens.plots.base import figure, finish, save_png

MAX_TRIAL_LINES = 200
"""Trials drawn as faint lines (evenly spaced subset beyond this); the median uses every trial."""


def fitness_plot(values: np.ndarray, path: Path, ylabel: str, title: str) -> Path:
    """One quantity per generation: every trial a faint line, the median over trials bold.

    Args:
      values: ``[G+1, T]`` (generation 0 is the initial population).
      path: PNG to write.
      ylabel: y-axis label.
      title: figure title.
    """
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


def solved_plot(curve: np.ndarray, path: Path, title: str) -> Path:
    """Fraction of trials that have found a solution by generation g (``curve [G+1]``)."""
    fig, ax = figure()
    ax.step(np.arange(len(curve)), curve, where="post", lw=1.8, color="tab:green")
    return finish(fig, ax, path, title, "generation", "fraction of trials solved", ylim=(0, 1.02))


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
    """best.png, avg.png, worst.png and success.png of one GA run.

    Args:
      out: folder to write into.
      best, avg, worst: ``[G+1, T]`` per generation and trial, as reported (see ``score``).
      solved: ``[G+1]`` fraction of trials solved by generation g.
      what: the run in words, for the titles (e.g. "permutation, steady, n = 8, pop 100").
      score: "attacking" (attacking pairs or excess, by ``fitness``) or "nonattacking".
      fitness: the GA's fitness, "pairs", "excess" or "report-diagonals-only" (labels the y axis;
        ``solved`` counts verified solutions under every fitness).
    """
    label = (
        "non-attacking pairs"
        if score == "nonattacking"
        else "attacking pairs (0 = solution)"
        if fitness == "pairs"
        else "excess queens on lines (0 = solution)"
        if fitness == "excess"
        else "diagonal pairs, rows ignored (report's score; 0 is not always a solution)"
    )
    files = []
    for name, values in zip(("best", "avg", "worst"), (best, avg, worst), strict=True):
        files.append(
            fitness_plot(
                values, Path(out) / f"{name}.png", f"{name} {label}", f"{name} fitness: {what}"
            )
        )
    files.append(
        solved_plot(
            solved, Path(out) / "success.png", f"trials solved: {what}, {np.shape(best)[1]} trials"
        )
    )
    return files
