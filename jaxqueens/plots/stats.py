"""Figures of `jaxqueens stats` (host-only; arrays in, files out; the house style of
`base`: `matplotlib.figure.Figure`, written atomically, the solver's lines
in its style of every figure)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from jaxqueens.core.oeis import A000170, A002562
from jaxqueens.plots.base import RATE_LIMITS, figure, finish, rate_band, solver_style
from jaxqueens.plots.chains import steps_histogram


def coverage_plot(
    cov: dict, path: Path, title: str, total: int | None = None, total_classes: int | None = None
) -> Path:
    """Distinct solutions and classes found vs chains run, from the coverage curves `cov` (`chains`,
    `distinct`, `fundamental`, `expected`, ...); the exact totals `total` and `total_classes` (None:
    unknown) and, dashed, the coupon-collector expectation if every solution were equally likely.
    Returns the PNG written."""
    fig, ax = figure()
    x = cov["chains"]
    ax.plot(x, cov["distinct"], color="C0", lw=1.6, label="distinct solutions found")
    ax.plot(x, cov["fundamental"], color="C1", lw=1.6, label="fundamental classes found")
    if cov["expected"] is not None:
        ax.plot(x, cov["expected"], color="C0", lw=1.0, ls="--", label="expected if uniform")
    if cov.get("expected_fundamental") is not None:
        label = "classes expected if uniform"
        ax.plot(x, cov["expected_fundamental"], color="C1", lw=1.0, ls="--", label=label)
    top = max(1, int(cov["distinct"][-1]) if len(x) else 1)
    if total and total <= 50 * top:
        ax.axhline(total, color="C0", lw=0.8, alpha=0.6, label=f"all solutions ({total:,})")
    if total_classes and total_classes <= 50 * top:
        label = f"all classes ({total_classes:,})"
        ax.axhline(total_classes, color="C1", lw=0.8, alpha=0.6, label=label)
    if len(x) > 100:
        ax.set_xscale("log")
    ax.legend(fontsize=8)
    return finish(fig, ax, path, title, "chains run", "found", ylim=(0, None))


def frequency_histogram(
    counts: np.ndarray, samples: int, path: Path, title: str, total: int | None = None
) -> Path:
    """How often each solution was sampled, `counts` (unsampled ones at 0 where it holds all Q),
    with the binomial expectation Q * Binom(S, 1/Q) of `samples` S if sampling were uniform (`total`
    is Q; None: unknown). Returns the PNG written."""
    fig, ax = figure()
    counts = np.asarray(counts)
    top = int(counts.max(initial=0))
    bins = np.arange(top + 2) - 0.5 if top <= 80 else np.linspace(-0.5, top + 0.5, 60)
    ax.hist(counts, bins=bins, color="tab:purple", alpha=0.75, label="solutions")
    if total and samples:
        k = np.arange(top + 1)
        p = 1.0 / total
        lgamma = np.vectorize(math.lgamma)  # (Python's, element by element)
        log_choose = lgamma(samples + 1) - lgamma(k + 1) - lgamma(samples - k + 1)
        logpmf = log_choose + k * math.log(p) + (samples - k) * math.log1p(-p)
        label = "expected if uniform (binomial)"
        ax.plot(k, total * np.exp(logpmf) * (bins[1] - bins[0]), color="k", lw=1.2, label=label)
    ax.legend(fontsize=8)
    return finish(fig, ax, path, title, "times sampled", "solutions")


def steps_ecdf(
    steps: np.ndarray, path: Path, title: str, unit: str = "steps", solver: str = ""
) -> Path:
    """Empirical CDF of steps to solution `steps` `[S]` over the solved chains, in `solver`'s style;
    `unit` is "steps" or "generations". Returns the PNG written."""
    fig, ax = figure()
    s = np.sort(np.asarray(steps))
    if s.size:
        ax.step(s, np.arange(1, s.size + 1) / s.size, where="post", **solver_style(solver))
        if s.max() > 20 * max(1, np.median(s)):
            ax.set_xscale("symlog", linthresh=1)
    return finish(
        fig, ax, path, title, f"{unit} to solution", "fraction of solved chains", ylim=RATE_LIMITS
    )


def success_rate_plot(
    budgets: np.ndarray,
    rate: np.ndarray,
    path: Path,
    title: str,
    unit: str = "steps",
    *,
    chains: int | None = None,
    solver: str = "",
) -> Path:
    """Share of all chains run that solved within a step budget (`rate` `[K]` within `budgets`
    `[K]`), in `solver`'s style, with its 95% Wilson interval shaded when the number of `chains` is
    given; `unit` is "steps" or "generations". Returns the PNG written."""
    fig, ax = figure()
    style = solver_style(solver)
    if chains:
        rate_band(ax, budgets, rate, chains, style["color"])
    ax.step(budgets, rate, where="post", **style)
    if len(budgets) and budgets.max() > 100:
        ax.set_xscale("symlog", linthresh=1)
    ylabel = "success rate" + (" (95% Wilson CI)" if chains else "")
    return finish(fig, ax, path, title, f"{unit} budget", ylabel, ylim=RATE_LIMITS)


def write_plots(res, out: Path) -> list[Path]:
    """Every figure of a stats result `res` (duck-typed `StatsResult`: its samples, coverage
    curves, counts and success curve) in folder `out`: `coverage.png`, `frequency_hist.png` (over
    every solution where `res` lists them all, else the distinct ones found), `steps_hist.png`,
    `steps_ecdf.png` and `success_rate.png`. Returns the files written."""
    sam, out = res.samples, Path(out)
    n, name, unit, chains = sam.n, sam.name, sam.step_unit, sam.chains
    total, every = A000170.get(n), res.all_counts is not None
    title = lambda what: f"{name}, n = {n}: {what}"
    files = [
        coverage_plot(res.coverage, out / "coverage.png", title("coverage"), total, A002562.get(n))
    ]
    what = "all solutions" if every else "solutions found"
    counts = res.all_counts if every else res.counts
    histogram = title(f"sampling frequency of {what}")
    files.append(
        frequency_histogram(counts, len(sam.rows), out / "frequency_hist.png", histogram, total)
    )
    solved_steps = sam.steps[sam.solved]
    shown = title(f"{unit} to solution ({len(solved_steps):,} chains)")
    files.append(steps_histogram(solved_steps, out / "steps_hist.png", shown))
    files.append(steps_ecdf(solved_steps, out / "steps_ecdf.png", title("ECDF"), unit, name))
    budgets, rate = res.success
    shown = title(f"success rate vs budget ({chains:,} chains, 95% CI)")
    path = out / "success_rate.png"
    files.append(success_rate_plot(budgets, rate, path, shown, unit, chains=chains, solver=name))
    return files
