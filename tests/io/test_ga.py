"""What `evolve --out` writes: file names, columns and scores, from a duck-typed result."""

import csv
import json
from types import SimpleNamespace

import numpy as np

from jaxqueens.io import ga as ga_io
from jaxqueens.io import ga_history, schema
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
    assert rows[0] == ga_history.summary_columns("attacking_pairs")
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
    best, _avg, worst = ga_history.scored(r, "nonattacking")
    assert (best == 10 - r.best).all() and (worst == 10 - r.worst).all()  # n (n - 1) / 2 = 10
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
