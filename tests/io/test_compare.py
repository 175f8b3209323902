"""``jaxqueens.io.compare``: one CSV per measure and summary.json, from a duck-typed result."""

import csv
import json
from types import SimpleNamespace

import numpy as np

from jaxqueens.io import compare as io_compare
from jaxqueens.io import schema


def per_solver(name, family, solved, chains, ert, chi2):
    return {
        "solver": name,
        "family": family,
        "options": {},
        "chains": chains,
        "solved": solved,
        "success_rate": solved / chains,
        "step_budget": 100,
        "steps": {"mean": 12.5, "median": 10.0, "p90": 20.0, "p99": 25.0, "max": 30},
        "seconds": {"mean": 1e-4, "median": 9e-5, "p90": 2e-4},
        "ert_s": ert,
        "solutions_per_s": None if ert is None else 1 / ert,
        "wall_s": 0.5,
        "compile_s": 1.0,
        "distinct_solutions": 3,
        "fundamental_classes": 1,
        "exact_solutions": 4,
        "exact_classes": 1,
        "chi2_solutions": chi2,
        "chi2_classes": None,
    }


def result():
    runs = [
        SimpleNamespace(
            name="mc-qs4",
            solved=np.array([True, True, False]),
            steps=np.array([3, 7, 100]),
            seconds=np.array([1e-4, 2e-4, 3e-3]),
        ),
        SimpleNamespace(
            name="ta", solved=np.zeros(3, bool), steps=np.full(3, 100), seconds=np.full(3, 1e-2)
        ),
    ]
    curves = {
        "mc-qs4": {
            "steps_ecdf": (np.array([3, 7]), np.array([0.5, 1.0])),
            "seconds_ecdf": (np.array([1e-4, 2e-4]), np.array([0.5, 1.0])),
            "success": (np.array([0, 10, 100]), np.array([0.0, 2 / 3, 2 / 3])),
        },
        "ta": {
            "steps_ecdf": (np.zeros(0), np.zeros(0)),
            "seconds_ecdf": (np.zeros(0), np.zeros(0)),
            "success": (np.array([0, 10, 100]), np.zeros(3)),
        },
    }
    chi2 = {"statistic": 2.5, "dof": 3, "p_value": 0.47, "valid": False}
    summary = {
        "n": 6,
        "chains": 3,
        "recommendation": {"solver": "mc-qs4", "line": "recommended: mc-qs4"},
        "per_solver": [
            per_solver("mc-qs4", "minconflicts", 2, 3, 1.65e-3, chi2),
            per_solver("ta", "anneal", 0, 3, None, None),
        ],
    }
    return SimpleNamespace(runs=runs, curves=curves, summary=summary)


def read(path):
    with open(path, newline="") as f:
        return list(csv.reader(f))


def test_write_outputs_one_csv_per_measure(tmp_path):
    files = io_compare.write_outputs(result(), tmp_path)
    names = {f.name for f in files}
    assert names == {
        "summary.json",
        "summary.csv",
        "runs.csv",
        "steps_ecdf.csv",
        "seconds_ecdf.csv",
        "success.csv",
        "solutions.csv",
        "bias.csv",
    }
    assert (
        json.loads((tmp_path / "summary.json").read_text())["recommendation"]["solver"] == "mc-qs4"
    )
    summary = read(tmp_path / "summary.csv")
    assert tuple(summary[0]) == io_compare.SUMMARY_HEADER and len(summary) == 3
    row = dict(zip(summary[0], summary[2]))
    assert row["solver"] == "ta" and row["ert_s"] == "" and row["solved"] == "0"  # None: empty cell
    runs = read(tmp_path / "runs.csv")
    assert runs[0] == list(schema.CORE) and len(runs) == 7
    assert runs[3][:5] == ["mc-qs4", "2", "0", "100", ""]
    ecdf = read(tmp_path / "steps_ecdf.csv")
    assert ecdf == [
        ["solver", "steps", "fraction_of_solved"],
        ["mc-qs4", "3", "0.500000"],
        ["mc-qs4", "7", "1.000000"],
    ]
    success = read(tmp_path / "success.csv")
    assert success[0] == ["solver", "step_budget", "success_rate"] and len(success) == 7
    bias = read(tmp_path / "bias.csv")
    assert bias[1][:6] == ["mc-qs4", "solutions", "2.5", "3", "0.47", "0"]
    assert "exact total unknown" in bias[3][-1]
    sols = read(tmp_path / "solutions.csv")
    assert sols[1] == ["mc-qs4", "2", "3", "1", "4", "1"]
