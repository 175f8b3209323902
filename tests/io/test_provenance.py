"""io.provenance: the run record of every summary.json (and of report.html)."""

import json

from jaxqueens.io import provenance, tables


def test_record_is_none_without_a_run_and_summary_json_unchanged(tmp_path):
    provenance.end()
    assert provenance.record() is None
    path = tables.write_json(tmp_path / "summary.json", {"n": 8})
    assert json.loads(path.read_text()) == {"n": 8}


def test_summary_json_carries_the_run_record(tmp_path):
    provenance.begin(
        "solve", ["jaxqueens", "solve", "-n", "8"], {"n": 8, "seed": None, "init": None}, {"n": 8}
    )
    try:
        provenance.settle(seed=0)
        tables.write_json(tmp_path / "summary.json", {"n": 8, "init": "permutation"})
        tables.write_json(tmp_path / "other.json", {"n": 8})
    finally:
        provenance.end()
    run = json.loads((tmp_path / "summary.json").read_text())["run"]
    assert run["command_line"] == "jaxqueens solve -n 8" and run["command"] == "solve"
    assert {"jaxqueens", "python", "jax", "jaxlib", "numpy"} <= set(run["versions"])
    assert run["platform"] and run["seed"] == 0
    # every option, with the value the command settled or put in its summary
    assert run["settings"] == {"n": 8, "seed": 0, "init": "permutation"}
    assert "run" not in json.loads((tmp_path / "other.json").read_text())
