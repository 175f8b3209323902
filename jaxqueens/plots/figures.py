"""Figures for solver runs (host-only; matplotlib imported lazily, files written atomically)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxqueens.io.atomic import atomic_path


def _figure(width=7.0, height=4.0):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110)
    return fig, fig.add_subplot(1, 1, 1)


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        fig.savefig(f, format="png")
    return Path(path)


def trace_plot(values: np.ndarray, path: Path, ylabel: str, title: str, xlabel: str = "step") -> Path:
    """One line: a per-step quantity of a traced chain (e.g. conflicting queens per step)."""
    fig, ax = _figure()
    ax.plot(np.arange(len(values)), values, lw=1.0, color="tab:blue")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def steps_histogram(steps: np.ndarray, path: Path, title: str) -> Path:
    """Histogram of steps to solution over all solved chains (log x when the spread is wide)."""
    fig, ax = _figure()
    steps = np.asarray(steps)
    if steps.size and steps.max() > 20 * max(1, np.median(steps)):
        bins = np.logspace(0, np.log10(steps.max() + 1), 50)
        ax.set_xscale("log")
    else:
        bins = min(60, max(1, int(steps.max(initial=0)) + 1))
    ax.hist(steps + (1 if ax.get_xscale() == "log" else 0), bins=bins, color="tab:green", alpha=0.8)
    ax.set_xlabel("steps to solution" + (" (+1, log scale)" if ax.get_xscale() == "log" else ""))
    ax.set_ylabel("chains")
    ax.set_title(title)
    return _save(fig, path)


def method_traces(traces: dict[str, np.ndarray], path: Path, n: int, every: int = 1) -> Path:
    """Best objective so far vs step, one line per method (chain 0 bold, other chains faint)."""
    fig, ax = _figure()
    for i, (method, tr) in enumerate(traces.items()):
        color = f"C{i}"
        steps = (np.arange(tr.shape[1]) + 1) * every
        for k in range(1, tr.shape[0]):
            ax.plot(steps, tr[k], color=color, lw=0.6, alpha=0.35)
        ax.plot(steps, tr[0], color=color, lw=1.6, label=method.upper())
    ax.set_xlabel("step")
    ax.set_ylabel("best objective so far")
    ax.set_title(f"n = {n}: best-so-far traces (chain 0 bold)")
    ax.set_ylim(bottom=0)
    ax.legend()
    ax.grid(alpha=0.3)
    return _save(fig, path)
