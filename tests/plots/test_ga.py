"""GA figures: arrays in, PNG files out."""

import numpy as np

from jaxqueens.plots import ga as ga_plots


def test_write_plots_from_arrays(tmp_path):
    rng = np.random.default_rng(0)
    best = np.minimum.accumulate(rng.integers(0, 10, (21, 5)), axis=0)
    solved = np.mean(best == 0, axis=1)
    files = ga_plots.write_plots(
        tmp_path,
        best,
        best + 1.5,
        best + 4,
        solved,
        what="permutation, steady, n = 8, pop 20",
        fitness="excess",
    )
    assert [p.name for p in files] == ["best.png", "avg.png", "worst.png", "success.png"]
    for p in files:
        assert p.stat().st_size > 1000
