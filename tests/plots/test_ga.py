"""GA figures: a result's per-generation statistics in, PNG files out."""

from types import SimpleNamespace

import numpy as np
import pytest

from jaxqueens.plots import ga as ga_plots


def test_write_plots_from_a_result(tmp_path):
    rng = np.random.default_rng(0)
    best = np.minimum.accumulate(rng.integers(0, 10, (21, 5)), axis=0)
    solved = np.mean(best == 0, axis=1)
    p10, p50, p90 = np.percentile(best, (10, 50, 90), axis=1)
    stats = [best.min(1), p10, p50, p90, best.max(1), best.mean(1), best.mean(1) + 1.5]
    result = SimpleNamespace(
        config=SimpleNamespace(
            n=8, pop=20, encoding="permutation", scheme="steady", fitness="excess"
        ),
        summary=np.column_stack([*stats, best.mean(1) + 4, np.full(21, 40)]),
        first_solved=np.full(5, -1),
        success_curve=lambda: solved,
    )
    files = ga_plots.write_plots(tmp_path, result)
    assert [p.name for p in files] == ["best.png", "avg.png", "worst.png", "success.png"]
    for p in files:
        assert p.stat().st_size > 1000


def test_success_plot_shows_its_wilson_interval(monkeypatch, tmp_path):
    """The share of trials solved had no confidence interval: with the trials known it shades
    its 95% Wilson interval, and the axis says so."""
    from jaxqueens.core.statistics import wilson_interval

    drawn = []
    monkeypatch.setattr(ga_plots, "finish", lambda fig, ax, *a, **k: drawn.append((ax, a)))
    ga_plots.solved_plot(np.array([0.0, 0.25, 0.5]), tmp_path / "s.png", "t", trials=4)
    ((ax, args),) = drawn
    (band,) = ax.collections
    lo, hi = wilson_interval(np.array([0, 2]), 4)
    ys = band.get_paths()[0].vertices[:, 1]
    assert ys.min() == pytest.approx(lo[0]) and ys.max() == pytest.approx(hi[1])
    assert "95% Wilson CI" in args[-1]
