"""What `evolve --out` writes: file names, columns and scores, from a duck-typed result; the
statistics of history.csv in either score and its per-trial stream."""

import csv
import json
from types import SimpleNamespace

import numpy as np
import pytest

from jaxqueens.errors import QueensError
from jaxqueens.io import ga as ga_io
from jaxqueens.io import schema
from jaxqueens.solvers import ga_fitness


def _result(n=5):
    best = np.array([[3, 2], [1, 2], [0, 1]], np.int32)  # [G+1, T]
    avg, worst, evals = best + 0.25, best + 2, np.full((3, 2), 4, np.int64)
    first = np.array([2, -1])
    return SimpleNamespace(
        config=SimpleNamespace(n=n, fitness="pairs", pop=4, encoding="permutation"),
        params={"cxpb": 1.0},
        seed=7,
        generations=2,
        summary=np.column_stack(
            [
                best.min(1),
                *np.percentile(best, (10, 50, 90), axis=1),
                best.max(1),
                best.mean(1),
                avg.mean(1),
                worst.mean(1),
                evals.sum(1),
            ]
        ),
        first_met=first,
        first_score_met=first,
        first_solved=first,
        evals_total=evals.sum(0),
        evals_at_first=np.array([12, -1]),
        evaluations_total=24,
        final_best=best[-1],
        success_rate=0.5,
        success_curve=lambda: np.array([0.0, 0.0, 0.5]),
        solutions=np.array([[1, 3, 0, 2, 4]]),
        population=np.zeros((2, 1, 4, n), np.int8),
        fitness=np.ones((2, 1, 4), np.int32),
        wall_s=0.5,
        compile_s=1.0,
        init_s=0.1,
        evals_here=16,
        evals_per_s=32.0,
        sessions=1,
        wall_total_s=0.5,
        evals_per_s_total=32.0,
        best=best,
        avg=avg,
        worst=worst,
    )


def test_write_outputs_files_and_columns(tmp_path):
    r = _result()
    written = ga_io.write_outputs(r, tmp_path / "out", ga_io.summary(r))
    assert [p.name for p in written] == list(ga_io.FILES)
    rows = list(csv.reader((tmp_path / "out" / "history.csv").read_text().splitlines()))
    assert rows[0] == ga_io.summary_columns("attacking_pairs")
    assert rows[0][:3] == ["generation", "best_attacking_pairs_min", "best_attacking_pairs_p10"]
    assert rows[1:] == [
        ["0", "2", "2.1", "2.5", "2.9", "3", "2.5", "2.75", "4.5", "0", "8"],
        ["1", "1", "1.1", "1.5", "1.9", "2", "1.5", "1.75", "3.5", "0", "8"],
        ["2", "0", "0.1", "0.5", "0.9", "1", "0.5", "0.75", "2.5", "0.5", "8"],
    ]
    trials = list(csv.reader((tmp_path / "out" / "runs.csv").read_text().splitlines()))
    assert trials == [
        [*schema.CORE, "generations_spent", "first_solved_generation"],
        # 12 evaluations each (4 a generation); trial 0 solved at the end of generation 2
        ["ga-permutation", "0", "1", "12", "12", "", "3.000e-01", "0", "2", "2"],
        ["ga-permutation", "1", "0", "12", "", "", "3.000e-01", "1", "2", ""],
    ]
    sols = np.load(tmp_path / "out" / "solutions.npy")
    assert sols.dtype == np.int32 and sols.tolist() == [[1, 3, 0, 2, 4]]
    assert np.load(tmp_path / "out" / "population.npy").dtype == np.int8
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["score_in_csv"] == "attacking" and summary["first_solved"] == [2, -1]
    assert (
        summary["solved"] == 1
        and summary["first_solved_median"] == 2.0
        and summary["evaluations"] == 24
        and summary["evaluations_this_process"] == 16
        and summary["history"] == "summary"
    )


def test_nonattacking_score_and_no_solutions(tmp_path):
    r = _result()
    r.solutions = np.zeros((0, 5), np.int8)
    ga_io.write_outputs(r, tmp_path, ga_io.summary(r), "nonattacking")
    rows = list(csv.DictReader((tmp_path / "history.csv").read_text().splitlines()))
    # the statistics of 10 - best: the lowest is 10 - the highest attacking, p10 is 10 - p90
    assert rows[0]["best_nonattacking_pairs_min"] == "7"
    assert rows[0]["best_nonattacking_pairs_max"] == "8"
    assert rows[0]["best_nonattacking_pairs_p10"] == "7.1"
    assert rows[0]["worst_nonattacking_pairs_mean"] == "5.5"
    empty = np.load(tmp_path / "solutions.npy")
    assert empty.shape == (0, 5) and empty.dtype == np.int32
    assert json.loads((tmp_path / "summary.json").read_text())["score_in_csv"] == "nonattacking"


def test_fitness_names_cover_the_kernels_fitnesses():
    """The CLI's --fitness choices come from io (JAX-free); they must name every kernel fitness."""
    assert set(ga_io.FITNESS_NAMES) == set(ga_fitness.FITNESS)
    assert ga_io.REPORT_FITNESS == ga_fitness.REPORT_FITNESS


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
    flipped = ga_io.scored_summary(r, "nonattacking")
    na = 10 - best
    want = [na.min(1), *np.percentile(na, (10, 50, 90), axis=1), na.max(1), na.mean(1)]
    for k, w in zip(ga_io.SUMMARY_STATS[:6], want, strict=True):
        np.testing.assert_allclose(flipped[k], w)


def test_the_history_stream_resumes_where_its_checkpoint_stands(tmp_path):
    """Rows written after the last sync (the checkpoint's length) are cut off on resume; the
    file appears under its name only when committed."""
    s = ga_io.HistoryStream(tmp_path, 5, "pairs")
    s.start()
    best = np.array([[3, 2]])
    s.records(0, best, best + 0.5, best + 1, np.full((1, 2), 4))
    mark = s.sync()
    s.records(1, best, best, best, np.full((1, 2), 2))  # after the checkpoint: lost
    s.close()
    assert not (tmp_path / "history.csv").exists()
    again = ga_io.HistoryStream(tmp_path, 5, "pairs")
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
        ga_io.HistoryStream(tmp_path / "none", 5, "pairs").resume(10)
