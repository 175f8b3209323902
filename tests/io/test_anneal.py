"""io.anneal: where ``anneal --out`` puts each method's outputs, and what a method's run writes."""

import json
from types import SimpleNamespace

import numpy as np

from jaxqueens.drivers.chains_types import ChainRun
from jaxqueens.io import anneal as anneal_io
from jaxqueens.io import checkpoint


def test_one_method_writes_into_out_several_into_subfolders(tmp_path):
    assert anneal_io.folders(tmp_path, ["ta"]) == {"ta": tmp_path}
    assert anneal_io.folders(str(tmp_path), ["ls", "sa"]) == {
        "ls": tmp_path / "ls",
        "sa": tmp_path / "sa",
    }
    assert anneal_io.folders(None, ["ta"]) == {}
    assert anneal_io.TRACES == "traces.png"


def test_a_method_is_finished_once_its_summary_exists(tmp_path):
    assert anneal_io.method_state(tmp_path) == "not started"
    (tmp_path / checkpoint.FILENAME).write_bytes(b"")
    assert anneal_io.method_state(tmp_path) == "saved"
    (tmp_path / "summary.json").write_text("{}\n")
    assert anneal_io.method_state(tmp_path) == "finished"


def _result(best_boards=None, best_chains=None, best_pairs=None):
    """A finished method's result as `drivers.anneal` builds it: chains 3 and 7 of four unsolved
    (their best objective in NMOF's attacks), 0 and 5 solved."""
    solved = np.array([True, False, True, False])
    run = ChainRun(
        n=4,
        chain_id=np.array([0, 3, 5, 7]),
        rows=np.array([[1, 3, 0, 2], [0, 0, 0, 0], [2, 0, 3, 1], [1, 3, 0, 0]], np.int32),
        solved=solved,
        steps=np.array([5, 100, 9, 100]),
        restarts=np.zeros(4, np.int64),
        wall_share=np.full(4, 1e-3),
        best=np.array([0, 3, 0, 1]),
        wall_s=1.0,
        compile_s=0.0,
        stopped_by="max_chains",
        best_step=np.array([5, 0, 9, 42]),
        solver="ta",
        best_unit="nmof_attacks",
    )
    summary = {"n": 4, "chains": 4, "solved": 2}
    return SimpleNamespace(
        run=run,
        summary=summary,
        best_chains=best_chains,
        best_boards=best_boards,
        best_pairs=best_pairs,
    )


def test_write_best_boards_and_their_table(tmp_path):
    boards = np.array([[0, 0, 0, 0], [1, 3, 0, 0]], np.int32)
    res = _result(boards, np.array([3, 7]), np.array([6, 1]))
    paths = anneal_io.write(tmp_path / "m", res, None)
    assert [p.name for p in paths] == [anneal_io.BEST_BOARDS, anneal_io.BEST_TABLE]
    np.testing.assert_array_equal(np.load(paths[0]), boards)
    assert paths[1].read_text().splitlines() == [
        "run,best_attacking_pairs,best_nmof_attacks,best_step",
        "3,6,3,0",
        "7,1,1,42",
    ]
    runs = (tmp_path / "m" / "runs.csv").read_text().splitlines()
    assert runs[0].endswith(",best_nmof_attacks,best_step")
    assert [line.split(",")[:3] for line in runs[1:]] == [
        ["ta", "0", "1"],
        ["ta", "3", "0"],
        ["ta", "5", "1"],
        ["ta", "7", "0"],
    ]
    np.testing.assert_array_equal(np.load(tmp_path / "m" / "solutions.npy"), res.run.solutions)
    assert json.loads((tmp_path / "m" / "summary.json").read_text())["solved"] == 2
    assert anneal_io.method_state(tmp_path / "m") == "finished"


def test_without_best_boards_only_the_chain_outputs_are_written(tmp_path):
    assert anneal_io.write(tmp_path, _result(), None) == []
    assert not (tmp_path / anneal_io.BEST_BOARDS).exists()
    assert {p.name for p in tmp_path.iterdir()} == {"runs.csv", "solutions.npy", "summary.json"}


def test_an_unfinished_folder_is_incomplete(tmp_path):
    (tmp_path / anneal_io.BEST_BOARDS).write_bytes(b"")
    assert anneal_io.method_state(tmp_path) == "incomplete"  # no summary, no checkpoint


def test_summary_with_repeated_key_counts_no_chains_solved_before(tmp_path):
    (tmp_path / anneal_io.SUMMARY).write_text('{"solved": 3}')
    assert anneal_io.solved_before(tmp_path) == 3
    (tmp_path / anneal_io.SUMMARY).write_text('{"solved": 0, "solved": 3}')
    assert anneal_io.solved_before(tmp_path) == 0
