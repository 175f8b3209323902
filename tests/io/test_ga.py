"""What ``evolve --out`` writes: file names, columns and scores, from a duck-typed result."""

import csv
import json
from types import SimpleNamespace

import numpy as np

from jaxqueens.io import ga as ga_io
from jaxqueens.io import schema
from jaxqueens.solvers import ga_fitness


def _result(n=5):
    best = np.array([[3, 2], [1, 2], [0, 1]], np.int32)  # [G+1, T]
    return SimpleNamespace(
        config=SimpleNamespace(n=n, fitness="pairs", pop=4),
        params={"cxpb": 1.0},
        seed=7,
        best=best,
        avg=best + 0.25,
        worst=best + 2,
        evaluations=np.full((3, 2), 4, np.int64),
        first_solved=np.array([2, -1]),
        success_rate=0.5,
        solutions=np.array([[1, 3, 0, 2, 4]]),
        population=np.zeros((2, 1, 4, n), np.int8),
        fitness=np.ones((2, 1, 4), np.int32),
        wall_s=0.5,
        compile_s=1.0,
        init_s=0.1,
        evals_per_s=48.0,
    )


def test_write_outputs_files_and_columns(tmp_path):
    r = _result()
    written = ga_io.write_outputs(r, tmp_path / "out", ga_io.summary(r))
    assert [p.name for p in written] == list(ga_io.FILES)
    rows = list(csv.reader(open(tmp_path / "out" / "history.csv")))
    assert rows[0] == ["Trial", "Generation", "Best", "Avg", "Worst"]
    assert rows[1:4] == [
        ["0", "0", "3", "3.2500", "5"],
        ["0", "1", "1", "1.2500", "3"],
        ["0", "2", "0", "0.2500", "2"],
    ]
    assert len(rows) == 1 + 2 * 3
    with open(tmp_path / "out" / "runs.csv", newline="") as f:
        trials = list(csv.reader(f))
    assert trials == [
        [*schema.CORE, "generations_spent", "first_solved_generation"],
        # 12 evaluations each (4 a generation); trial 0 solved at the end of generation 2
        ["ga", "0", "1", "12", "12", "", "3.000e-01", "0", "2", "2"],
        ["ga", "1", "0", "12", "", "", "3.000e-01", "1", "2", ""],
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
    )


def test_nonattacking_score_and_no_solutions(tmp_path):
    r = _result()
    r.solutions = np.zeros((0, 5), np.int8)
    best, avg, worst = ga_io.scored(r, "nonattacking")
    assert (best == 10 - r.best).all() and (worst == 10 - r.worst).all()  # n (n - 1) / 2 = 10
    ga_io.write_outputs(r, tmp_path, ga_io.summary(r), "nonattacking")
    rows = list(csv.DictReader(open(tmp_path / "history.csv")))
    assert rows[0]["Best"] == "7" and rows[0]["Worst"] == "5"
    empty = np.load(tmp_path / "solutions.npy")
    assert empty.shape == (0, 5) and empty.dtype == np.int32
    assert json.loads((tmp_path / "summary.json").read_text())["score_in_csv"] == "nonattacking"


def test_fitness_names_cover_the_kernels_fitnesses():
    """The CLI's --fitness choices come from io (JAX-free); they must name every kernel fitness."""
    assert set(ga_io.FITNESS_NAMES) == set(ga_fitness.FITNESS)
    assert ga_io.REPORT_FITNESS == ga_fitness.REPORT_FITNESS
