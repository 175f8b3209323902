"""Figures of ``jaxqueens stats`` and ``jaxqueens estimate`` (host-only; the house style of
:mod:`jaxqueens.plots.figures`: ``matplotlib.figure.Figure``, written atomically)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from jaxqueens.core.oeis import A000170, A002562
from jaxqueens.plots.figures import _figure, _save, steps_histogram


def coverage_plot(cov: dict, path: Path, title: str, total: int | None = None,
                  total_classes: int | None = None) -> Path:
    """Distinct solutions and classes found vs chains run; the exact totals and, dashed, the
    coupon-collector expectation if every solution were equally likely."""
    fig, ax = _figure()
    x = cov["chains"]
    ax.plot(x, cov["distinct"], color="C0", lw=1.6, label="distinct solutions found")
    ax.plot(x, cov["fundamental"], color="C1", lw=1.6, label="fundamental classes found")
    if cov["expected"] is not None:
        ax.plot(x, cov["expected"], color="C0", lw=1.0, ls="--", label="expected if uniform")
    if cov.get("expected_fundamental") is not None:
        ax.plot(x, cov["expected_fundamental"], color="C1", lw=1.0, ls="--",
                label="classes expected if uniform")
    top = max(1, int(cov["distinct"][-1]) if len(x) else 1)
    if total and total <= 50 * top:
        ax.axhline(total, color="C0", lw=0.8, alpha=0.6, label=f"all solutions ({total:,})")
    if total_classes and total_classes <= 50 * top:
        ax.axhline(total_classes, color="C1", lw=0.8, alpha=0.6, label=f"all classes ({total_classes:,})")
    if len(x) > 100:
        ax.set_xscale("log")
    ax.set_xlabel("chains run")
    ax.set_ylabel("found")
    ax.set_title(title)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)


def frequency_histogram(counts: np.ndarray, samples: int, path: Path, title: str,
                        total: int | None = None) -> Path:
    """How often each solution was sampled (unsampled ones at 0 where ``counts`` holds all Q),
    with the binomial expectation Q * Binom(S, 1/Q) if sampling were uniform."""
    fig, ax = _figure()
    counts = np.asarray(counts)
    top = int(counts.max(initial=0))
    bins = np.arange(top + 2) - 0.5 if top <= 80 else np.linspace(-0.5, top + 0.5, 60)
    ax.hist(counts, bins=bins, color="tab:purple", alpha=0.75, label="solutions")
    if total and samples:
        k = np.arange(top + 1)
        p = 1.0 / total
        logpmf = np.array([math.lgamma(samples + 1) - math.lgamma(j + 1) - math.lgamma(samples - j + 1)
                           + j * math.log(p) + (samples - j) * math.log1p(-p) for j in k])
        width = bins[1] - bins[0]
        ax.plot(k, total * np.exp(logpmf) * width, color="k", lw=1.2,
                label="expected if uniform (binomial)")
    ax.set_xlabel("times sampled")
    ax.set_ylabel("solutions")
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def steps_ecdf(steps: np.ndarray, path: Path, title: str, unit: str = "steps") -> Path:
    """Empirical CDF of steps to solution over the solved chains."""
    fig, ax = _figure()
    s = np.sort(np.asarray(steps))
    if s.size:
        ax.step(s, np.arange(1, s.size + 1) / s.size, where="post", color="tab:green")
        if s.max() > 20 * max(1, np.median(s)):
            ax.set_xscale("symlog", linthresh=1)
    ax.set_xlabel(f"{unit} to solution")
    ax.set_ylabel("fraction of solved chains")
    ax.set_ylim(0, 1.02)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def success_plot(budgets: np.ndarray, rate: np.ndarray, path: Path, title: str,
                 unit: str = "steps") -> Path:
    """Share of all chains run that solved within a step budget."""
    fig, ax = _figure()
    ax.step(budgets, rate, where="post", color="tab:red")
    if len(budgets) and budgets.max() > 100:
        ax.set_xscale("symlog", linthresh=1)
    ax.set_xlabel(f"{unit} budget")
    ax.set_ylabel("success rate")
    ax.set_ylim(0, 1.02)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    return _save(fig, path)


def write_plots(res, out: Path) -> list[Path]:
    """Every figure of a :class:`jaxqueens.drivers.stats.StatsResult`."""
    from jaxqueens.drivers.stats import success_curve

    sam = res.samples
    n = sam.n
    name = sam.solver + (f" ({sam.options['method']})" if "method" in sam.options else "")
    total = A000170.get(n)
    files = [coverage_plot(res.coverage, out / "coverage.png",
                           f"{name}, n = {n}: coverage", total, A002562.get(n))]
    counts = res.all_counts if res.all_counts is not None else res.counts
    what = "all solutions" if res.all_counts is not None else "solutions found"
    files.append(frequency_histogram(counts, len(sam.rows), out / "frequency_hist.png",
                                     f"{name}, n = {n}: sampling frequency of {what}", total))
    solved = sam.steps[sam.solved]
    files.append(steps_histogram(solved, out / "steps_hist.png",
                                 f"{name}, n = {n}: {sam.step_unit} to solution ({len(solved):,} chains)"))
    files.append(steps_ecdf(solved, out / "steps_ecdf.png", f"{name}, n = {n}: ECDF", sam.step_unit))
    budgets, rate = success_curve(sam)
    files.append(success_plot(budgets, rate, out / "success_rate.png",
                              f"{name}, n = {n}: success rate vs budget ({sam.chains:,} chains)",
                              sam.step_unit))
    return files


def log_q_plot(estimates: list[tuple[int, float, float, float]], path: Path,
               alpha: float = 1.942) -> Path:
    """log Q(n) / n against n: exact values (OEIS A000170), estimates with z * SE error bars, and
    Simkin's asymptote ln n - alpha.

    Args:
      estimates: ``(n, estimate, standard error, z)`` per size.
    """
    fig, ax = _figure()
    ns = [n for n in sorted(A000170) if A000170[n] > 0]
    ax.plot(ns, [math.log(A000170[n]) / n for n in ns], "o", color="k", ms=4,
            label="exact (OEIS A000170)")
    est = [(n, q, se, z) for n, q, se, z in estimates if q > 0]
    if est:
        n_e = np.array([e[0] for e in est], float)
        y = np.array([math.log(e[1]) / e[0] for e in est])
        lo = np.array([math.log(max(e[1] - e[3] * e[2], e[1] * 1e-3)) / e[0] for e in est])
        hi = np.array([math.log(e[1] + e[3] * e[2]) / e[0] for e in est])
        ax.errorbar(n_e, y, yerr=[y - lo, hi - y], fmt="s", color="C3", ms=4, capsize=3,
                    label="Knuth estimate (CI)")
    top = max([n for n, *_ in estimates] + ns)
    grid = np.linspace(4, top + 1, 200)
    ax.plot(grid, np.log(grid) - alpha, color="C0", lw=1.2, ls="--",
            label=f"Simkin: ln n - {alpha}")
    ax.set_xlabel("n")
    ax.set_ylabel("log Q(n) / n")
    ax.set_title("N-Queens solutions: log Q(n) / n")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)
