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
        "steps_budget": 100,
        "steps": {"mean": 12.5, "median": 10.0, "p90": 20.0, "p99": 25.0, "max": 30},
        "seconds": {"mean": 1e-4, "median": 9e-5, "p90": 2e-4},
        "ert_s": ert,
        "ert_s_ci": None if ert is None else [ert / 2, None],
        "ert_steps": None if ert is None else 50.0,
        "ert_steps_ci": None if ert is None else [40.0, 60.0],
        "ert_note": "not solved (0 of 3 chains within 100 steps)" if ert is None else None,
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
            "rtd_steps": (np.array([0, 3, 7, 100]), np.array([0.0, 1 / 3, 2 / 3, 2 / 3])),
            "rtd_seconds": (np.array([0.0, 1e-4, 2e-4, 3e-3]), np.array([0, 1 / 3, 2 / 3, 2 / 3])),
            "steps_ecdf": (np.array([3, 7]), np.array([0.5, 1.0])),
            "seconds_ecdf": (np.array([1e-4, 2e-4]), np.array([0.5, 1.0])),
            "success": (np.array([0, 10, 100]), np.array([0.0, 2 / 3, 2 / 3])),
        },
        "ta": {
            "rtd_steps": (np.array([0, 100]), np.zeros(2)),
            "rtd_seconds": (np.array([0.0, 1e-2]), np.zeros(2)),
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
        "settings.csv",
        "runs.csv",
        "rtd_steps.csv",
        "rtd_seconds.csv",
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
    row = dict(zip(summary[0], summary[2], strict=True))
    assert row["solver"] == "ta" and row["ert_s"] == "" and row["solved"] == "0"  # None: empty cell
    assert row["ert_note"].startswith("not solved") and row["ert_s_ci_high"] == ""
    mc = dict(zip(summary[0], summary[1], strict=True))
    assert mc["ert_s_ci_low"] == "0.000825" and mc["ert_s_ci_high"] == ""  # no upper bound
    assert (mc["ert_steps"], mc["ert_steps_ci_low"], mc["steps_budget"]) == ("50", "40", "100")
    rtd = read(tmp_path / "rtd_steps.csv")
    assert rtd[0] == ["solver", "steps_budget", "success_rate"]
    assert rtd[1:5] == [
        ["mc-qs4", "0", "0.000000"],
        ["mc-qs4", "3", "0.333333"],
        ["mc-qs4", "7", "0.666667"],
        ["mc-qs4", "100", "0.666667"],
    ]
    assert read(tmp_path / "rtd_seconds.csv")[0] == ["solver", "seconds_budget", "success_rate"]
    runs = read(tmp_path / "runs.csv")
    assert runs[0] == list(schema.CORE) and len(runs) == 7
    assert runs[3][:5] == ["mc-qs4", "2", "0", "100", ""]
    ecdf = read(tmp_path / "steps_ecdf.csv")
    assert ecdf == [
        ["solver", "steps_to_solution", "fraction_of_solved"],
        ["mc-qs4", "3", "0.500000"],
        ["mc-qs4", "7", "1.000000"],
    ]
    success = read(tmp_path / "success.csv")
    assert success[0] == ["solver", "steps_budget", "success_rate"] and len(success) == 7
    bias = read(tmp_path / "bias.csv")
    assert bias[1][:6] == ["mc-qs4", "solutions", "2.5", "3", "0.47", "0"]
    assert "exact total unknown" in bias[3][-1]
    sols = read(tmp_path / "solutions.csv")
    assert sols[1] == ["mc-qs4", "2", "3", "1", "4", "1"]


def test_summary_json_is_strict_and_settings_are_a_table(tmp_path):
    res = result()
    res.summary["per_solver"][0]["options"] = {"rounds": 100, "alpha": None, "preset": "default"}
    io_compare.write_outputs(res, tmp_path)

    def refuse(name):
        raise ValueError(name)

    text = (tmp_path / "summary.json").read_text()
    assert json.loads(text, parse_constant=refuse)["per_solver"][1]["ert_s"] is None
    assert read(tmp_path / "settings.csv") == [
        ["solver", "key", "value"],
        ["mc-qs4", "rounds", "100"],
        ["mc-qs4", "alpha", ""],
        ["mc-qs4", "preset", "default"],
    ]
    res.summary["per_solver"][1]["ert_s"] = float("inf")  # never written as Infinity
    io_compare.write_outputs(res, tmp_path / "again")
    again = json.loads((tmp_path / "again" / "summary.json").read_text(), parse_constant=refuse)
    assert again["per_solver"][1]["ert_s"] is None  # null, with the reason beside it
    assert "infinity" in again["per_solver"][1]["ert_s_null_reason"]
