"""What ``jaxqueens estimate`` writes (:mod:`jaxqueens.io.estimate`): the summary as given,
one CSV row per size."""

import csv
import json

from jaxqueens.drivers import estimate as knuth
from jaxqueens.drivers.estimate_result import SIMKIN_ALPHA
from jaxqueens.io import estimate as outputs


def test_summary_and_table(tmp_path):
    results = [knuth.estimate(n, 1024, depth=n) for n in (5, 6)]  # exhaustive: no kernel
    doc = knuth.run_summary(results, seed=7)
    files = outputs.write_outputs(tmp_path / "out", doc)
    assert [f.name for f in files] == ["summary.json", "estimates.csv"]
    back = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert back["seed"] == 7 and back["simkin_alpha"] == SIMKIN_ALPHA
    assert [e["solutions"] for e in back["estimates"]] == [10.0, 4.0]
    rows = list(csv.reader((tmp_path / "out" / "estimates.csv").open()))
    assert rows[0] == list(outputs.CSV_KEYS) and len(rows) == 3
    assert rows[1][0] == "5" and float(rows[1][1]) == 10.0
    row = dict(zip(rows[0], rows[1], strict=True))
    assert row["rel_error"] == "0.0" and row["solutions_se"] == "0.0"


def test_missing_values_are_empty_cells(tmp_path):
    doc = {"estimates": [{"n": 30, "solutions": 1e18, "exact": None, "rel_error": None}]}
    outputs.write_outputs(tmp_path, doc)
    rows = list(csv.reader((tmp_path / "estimates.csv").open()))
    row = dict(zip(rows[0], rows[1], strict=True))
    assert row["exact_solutions"] == row["rel_error"] == row["probes"] == "" and row["n"] == "30"
