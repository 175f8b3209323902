"""Figures of ``jaxqueens stats`` (:mod:`jaxqueens.plots.stats`): arrays in, files out."""

import numpy as np

from jaxqueens.plots import stats as figures


def test_write_plots_from_arrays(tmp_path):
    chains = np.arange(1, 7)
    coverage = {
        "chains": chains,
        "distinct": np.array([1, 1, 2, 2, 3, 3]),
        "fundamental": np.ones(6, int),
        "expected": np.linspace(1, 3.2, 6),
        "expected_fundamental": None,
    }
    files = figures.write_plots(
        tmp_path,
        name="anneal (ta)",
        n=6,
        coverage=coverage,
        counts=np.array([2, 0, 2, 1]),
        every_solution=True,
        samples=5,
        solved=np.array([True, False, True, True, True, True]),
        steps=np.array([3, 50, 7, 1, 9, 2]),
        step_unit="steps",
        budgets=np.array([0, 1, 3, 9]),
        rate=np.array([0, 1, 3, 5]) / 6,
    )
    assert [f.name for f in files] == [
        "coverage.png",
        "frequency_hist.png",
        "steps_hist.png",
        "steps_ecdf.png",
        "success_rate.png",
    ]
    for f in files:
        assert f.stat().st_size > 1000, f.name
