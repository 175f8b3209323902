"""What `solve --method backtrack` writes (jaxqueens.io.backtrack)."""

import json

import numpy as np

from jaxqueens.io import backtrack as backtrack_out


def test_writes_solution_and_summary(tmp_path):
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
    assert [f.name for f in files] == ["solution.txt", "summary.json"]
    assert files[0].read_text().split() == ["1", "3", "0", "2"]
    assert json.loads(files[1].read_text()) == summary
    assert files[1].read_text() == json.dumps(summary, indent=2) + "\n"
