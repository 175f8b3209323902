"""What `solve --mode large` writes (jaxqueens.io.large): the files of every solve run."""

import json
import types

import numpy as np

from jaxqueens.io import large as large_out
from jaxqueens.io import schema


def _chain(rows, **summary):
    return types.SimpleNamespace(rows=np.array(rows, np.int32), summary=summary)


def test_writes_the_solve_contract_and_the_text_board(tmp_path):
    res = _chain([1, 3, 0, 2], n=4, chain=0, solved=True, steps=3, pairs=0, total_s=0.5)
    files = large_out.write_outputs([res], tmp_path / "new", {"n": 4, "chains": 1})
    names = ["solutions.npy", "runs.csv", "summary.json", "solution.txt"]
    assert [f.name for f in files] == names
    np.testing.assert_array_equal(np.load(files[0]), [[1, 3, 0, 2]])
    assert files[1].read_text().splitlines() == [
        ",".join(schema.CORE),
        "large,0,1,3,3,0,5.000e-01,0",
    ]
    assert json.loads(files[2].read_text()) == {"n": 4, "chains": 1}
    assert files[3].read_text().split() == ["1", "3", "0", "2"]


def test_unsolved_chains_write_their_best_boards(tmp_path):
    solved = _chain([1, 3, 0, 2], chain=0, solved=True, steps=3, pairs=0)
    stuck = _chain([0, 1, 2, 3], chain=1, solved=False, steps=9, pairs=6)
    files = large_out.write_outputs([solved, stuck], tmp_path, {"n": 4})
    assert [f.name for f in files] == [
        "solutions.npy",
        "runs.csv",
        "summary.json",
        "best_boards.npy",
        "best_boards.csv",
        "solution.txt",
    ]
    np.testing.assert_array_equal(np.load(tmp_path / "solutions.npy"), [[1, 3, 0, 2]])
    np.testing.assert_array_equal(np.load(tmp_path / "best_boards.npy"), [[0, 1, 2, 3]])
    assert (tmp_path / "best_boards.csv").read_text().splitlines()[1] == "1,6,9,0"


def test_no_solved_chain_writes_an_empty_solutions_file(tmp_path):
    files = large_out.write_outputs([_chain([0, 1, 2, 3], solved=False, pairs=6)], tmp_path, {})
    assert np.load(tmp_path / "solutions.npy").shape == (0, 4)
    assert "solution.txt" not in [f.name for f in files]
