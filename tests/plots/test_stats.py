"""Figures of ``jaxqueens stats`` (:mod:`jaxqueens.plots.stats`): arrays in, files out."""

import types

import numpy as np
import pytest

from jaxqueens.plots import stats as figures


def test_write_plots_from_arrays(tmp_path):
    """The figures draw from the result's host arrays alone (a duck-typed `StatsResult`)."""
    chains = np.arange(1, 7)
    coverage = {
        "chains": chains,
        "distinct": np.array([1, 1, 2, 2, 3, 3]),
        "fundamental": np.ones(6, int),
        "expected": np.linspace(1, 3.2, 6),
        "expected_fundamental": None,
    }
    samples = types.SimpleNamespace(
        n=6,
        name="anneal (ta)",
        chains=6,
        rows=np.zeros((5, 6), np.int32),
        solved=np.array([True, False, True, True, True, True]),
        steps=np.array([3, 50, 7, 1, 9, 2]),
        step_unit="steps",
    )
    res = types.SimpleNamespace(
        samples=samples,
        coverage=coverage,
        all_counts=np.array([2, 0, 2, 1]),
        counts=np.array([2, 2, 1]),
        success=(np.array([0, 1, 3, 9]), np.array([0, 1, 3, 5]) / 6),
    )
    files = figures.write_plots(res, tmp_path)
    assert [f.name for f in files] == [
        "coverage.png",
        "frequency_hist.png",
        "steps_hist.png",
        "steps_ecdf.png",
        "success_rate.png",
    ]
    for f in files:
        assert f.stat().st_size > 1000, f.name


def test_success_rate_plot_shows_its_wilson_interval(monkeypatch, tmp_path):
    """The success rate had no confidence interval: with the chains known it shades its 95%
    Wilson interval, in the solver's style of every figure, and the axis says so."""
    from jaxqueens.core.statistics import wilson_interval
    from jaxqueens.plots import base

    drawn = []
    monkeypatch.setattr(figures, "finish", lambda fig, ax, *a, **k: drawn.append((ax, a)))
    budgets, rate = np.array([0, 1, 3, 9]), np.array([0, 1, 3, 5]) / 6
    figures.success_rate_plot(
        budgets, rate, tmp_path / "s.png", "t", chains=6, solver="anneal (ls)"
    )
    (ax, args), *_ = drawn
    (band,) = ax.collections
    lo, hi = wilson_interval(np.array([0, 5]), 6)
    ys = band.get_paths()[0].vertices[:, 1]
    assert ys.min() == pytest.approx(lo[0]) and ys.max() == pytest.approx(hi[1])
    assert "95% Wilson CI" in args[-1]
    assert ax.lines[0].get_color() == base.solver_style("ls")["color"]
