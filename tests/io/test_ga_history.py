"""history.csv of `jaxqueens evolve`: the statistics in either score, the per-trial stream."""

from types import SimpleNamespace

import numpy as np
import pytest

from jaxqueens.errors import QueensError
from jaxqueens.io import ga_history


def test_nonattacking_statistics_equal_those_of_the_flipped_records():
    """Linear percentiles are symmetric: the statistics of n(n-1)/2 - best over trials are those
    the driver's attacking-pairs statistics give, min and max and p10 and p90 swapped."""
    rng = np.random.default_rng(1)
    best = rng.integers(0, 10, (4, 7))
    r = SimpleNamespace(config=SimpleNamespace(n=5))
    r.summary = np.column_stack(
        [best.min(1), *np.percentile(best, (10, 50, 90), axis=1), best.max(1)]
        + [best.mean(1)] * 3
        + [np.ones(4)]
    )
    flipped = ga_history.scored_summary(r, "nonattacking")
    na = 10 - best
    want = [na.min(1), *np.percentile(na, (10, 50, 90), axis=1), na.max(1), na.mean(1)]
    for k, w in zip(ga_history.SUMMARY_STATS[:6], want, strict=True):
        np.testing.assert_allclose(flipped[k], w)


def test_the_history_stream_resumes_where_its_checkpoint_stands(tmp_path):
    """Rows written after the last sync (the checkpoint's length) are cut off on resume; the
    file appears under its name only when committed."""
    s = ga_history.HistoryStream(tmp_path, 5, "pairs")
    s.start()
    best = np.array([[3, 2]])
    s.records(0, best, best + 0.5, best + 1, np.full((1, 2), 4))
    mark = s.sync()
    s.records(1, best, best, best, np.full((1, 2), 2))  # after the checkpoint: lost
    s.close()
    assert not (tmp_path / "history.csv").exists()
    again = ga_history.HistoryStream(tmp_path, 5, "pairs")
    again.resume(mark)
    again.records(1, best - 1, best, best + 1, np.full((1, 2), 2))
    again.commit()
    assert (tmp_path / "history.csv").read_text().splitlines() == [
        "generation,trial,best_attacking_pairs,mean_attacking_pairs,worst_attacking_pairs,"
        "evaluations",
        "0,0,3,3.5000,4,4",
        "0,1,2,2.5000,3,4",
        "1,0,2,3.0000,4,2",
        "1,1,1,2.0000,3,2",
    ]
    assert not list(tmp_path.glob(".*partial"))
    with pytest.raises(QueensError, match="start over without --resume"):
        ga_history.HistoryStream(tmp_path / "none", 5, "pairs").resume(10)
