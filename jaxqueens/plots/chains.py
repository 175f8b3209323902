"""Figures of chain runs (`solve` and `anneal`): a traced chain's per-step values, the
steps-to-solution histogram, and best-so-far traces of several methods."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxqueens.plots.base import BAND, figure, finish, percentile_band, save_png, solver_style


def trace_plot(
    values: np.ndarray, path: Path, ylabel: str, title: str, xlabel: str = "step"
) -> Path:
    """One line: a per-step quantity of a traced chain, `values` `[T]` (e.g. conflicting queens per
    step), named `ylabel`. Returns `path`."""
    fig, ax = figure()
    ax.plot(np.arange(len(values)), values, lw=1.0, color="tab:blue")
    return finish(fig, ax, path, title, xlabel, ylabel, ylim=(0, None))


def steps_histogram(steps: np.ndarray, path: Path, title: str) -> Path:
    """Histogram of steps to solution over all solved chains, `steps` `[S]` (log x when the spread
    is wide). Returns `path`."""
    fig, ax = figure()
    steps = np.asarray(steps)
    bins: np.ndarray | int  # edges on a log scale, else a count
    if steps.size and steps.max() > 20 * max(1, np.median(steps)):
        bins = np.logspace(0, np.log10(steps.max() + 1), 50)
        ax.set_xscale("log")
    else:
        bins = min(60, max(1, int(steps.max(initial=0)) + 1))
    ax.hist(steps + (1 if ax.get_xscale() == "log" else 0), bins=bins, color="tab:green", alpha=0.8)
    ax.set_xlabel("steps to solution" + (" (+1, log scale)" if ax.get_xscale() == "log" else ""))
    ax.set_ylabel("chains")
    ax.set_title(title)
    return save_png(fig, path)


BAND_CHAINS = 10
"""Traced chains per method from which `method_traces` draws a percentile band (fewer:
the chains themselves)."""


def method_traces(traces: dict[str, np.ndarray], path: Path, n: int, every: int = 1) -> Path:
    """Best objective so far vs step, per method: the median across the traced chains and their
    10-90% percentile band when every method has `BAND_CHAINS` chains or more; else chain 0 bold and
    the other chains faint. `traces`: method -> `[k, T]` best-so-far objective of chains 0..k-1, a
    point every `every` steps. Returns `path`."""
    fig, ax = figure()
    banded = all(np.shape(tr)[0] >= BAND_CHAINS for tr in traces.values())
    for method, tr in traces.items():
        steps = (np.arange(tr.shape[1]) + 1) * every
        if banded:
            percentile_band(ax, steps, tr, method.upper(), method)
            continue
        style = solver_style(method)
        for k in range(1, tr.shape[0]):
            ax.plot(steps, tr[k], color=style["color"], ls=style["ls"], lw=0.6, alpha=0.35)
        ax.plot(steps, tr[0], label=method.upper(), **style)
    ax.legend(fontsize=8)
    return finish(
        fig,
        ax,
        path,
        f"n = {n}: best-so-far traces"
        + (f" (median, {BAND[0]}-{BAND[1]}% band)" if banded else " (chain 0 bold)"),
        "step",
        "best objective so far",
        ylim=(0, None),
    )
