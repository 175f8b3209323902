"""What `solve --mode large` writes (jaxqueens.io.large)."""

import json
import types

import numpy as np

from jaxqueens.io import large as large_out


def test_writes_board_files_and_summary(tmp_path):
    res = types.SimpleNamespace(rows=np.array([1, 3, 0, 2], np.int32), summary={"n": 4, "steps": 3})
    files = large_out.write_outputs(res, tmp_path / "new")
    assert [f.name for f in files] == ["solution.npy", "solution.txt", "summary.json"]
    np.testing.assert_array_equal(np.load(files[0]), [[1, 3, 0, 2]])
    assert files[1].read_text().split() == ["1", "3", "0", "2"]
    assert json.loads(files[2].read_text()) == {"n": 4, "steps": 3}
    assert files[2].read_text().endswith("}\n")


def test_unsolved_result_writes_its_best_board(tmp_path):
    res = types.SimpleNamespace(
        rows=np.array([0, 1, 2, 3], np.int32), summary={"n": 4, "solved": False, "pairs": 3}
    )
    files = large_out.write_outputs(res, tmp_path)
    assert [f.name for f in files] == ["best_board.npy", "best_board.txt", "summary.json"]
    assert not (tmp_path / "solution.npy").exists()
    np.testing.assert_array_equal(np.load(files[0]), [[0, 1, 2, 3]])
