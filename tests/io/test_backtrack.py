"""What `solve --method backtrack` writes (jaxqueens.io.backtrack): the files of every solve
run."""

import json

import numpy as np

from jaxqueens.io import backtrack as backtrack_out
from jaxqueens.io import schema


def test_writes_the_solve_contract_and_the_text_board(tmp_path):
    rows = np.array([1, 3, 0, 2], np.int32)
    summary = {
        "n": 4,
        "method": "backtrack",
        "rows": rows.tolist(),
        "placements": 6,
        "backtracks": 2,
        "seconds": 0.5,
    }
    files = backtrack_out.write_outputs(tmp_path / "bt", rows, summary)
    assert [f.name for f in files] == ["solutions.npy", "runs.csv", "summary.json", "solution.txt"]
    np.testing.assert_array_equal(np.load(files[0]), [[1, 3, 0, 2]])
    assert files[1].read_text().splitlines() == [
        ",".join(schema.CORE),
        "backtrack,0,1,6,6,0,5.000e-01,0",
    ]
    assert json.loads(files[2].read_text()) == summary
    assert files[2].read_text() == json.dumps(summary, indent=2) + "\n"
    assert files[3].read_text().split() == ["1", "3", "0", "2"]


def test_backtrack_runs_csv_gives_its_solution_zero_attacking_pairs(tmp_path):
    """The schema's best_attacking_pairs is 0 for a solved run, as solve's other methods write
    it (the cell was empty)."""
    import csv

    rows = np.array([2, 0, 3, 1], np.int32)
    backtrack_out.write_outputs(tmp_path, rows, {"n": 4, "placements": 5, "seconds": 0.1})
    with open(tmp_path / "runs.csv", newline="") as f:
        (row,) = csv.DictReader(f)
    assert row["best_attacking_pairs"] == "0" and row["restarts"] == "0"
