"""io.anneal: where ``anneal --out`` puts each method's outputs, checkpoint and traces figure."""

from pathlib import Path

import numpy as np

from jaxqueens.io import anneal as anneal_io
from jaxqueens.io import checkpoint


def test_one_method_writes_into_out_several_into_subfolders(tmp_path):
    assert anneal_io.method_folder(tmp_path, "ta", ["ta"]) == tmp_path
    assert anneal_io.method_folder(tmp_path, "sa", ["ls", "sa"]) == tmp_path / "sa"
    assert anneal_io.method_folder(None, "ta", ["ta"]) is None
    assert anneal_io.checkpoint_file(None) is None
    assert anneal_io.checkpoint_file(tmp_path / "sa") == tmp_path / "sa" / checkpoint.FILENAME
    assert anneal_io.traces_file(str(tmp_path)) == Path(tmp_path) / "traces.png"


def test_a_method_is_finished_once_its_summary_exists(tmp_path):
    assert not anneal_io.run_finished(tmp_path)
    (tmp_path / "summary.json").write_text("{}\n")
    assert anneal_io.run_finished(tmp_path)


def test_write_best_boards_and_their_table(tmp_path):
    boards = np.array([[0, 0, 0, 0], [1, 3, 0, 0]], np.int32)
    paths = anneal_io.write_best(
        tmp_path / "m",
        np.array([3, 7]),
        boards,
        np.array([3, 1]),
        np.array([6, 1]),
        np.array([0, 42]),
    )
    assert [p.name for p in paths] == [anneal_io.BEST_BOARDS, anneal_io.BEST_TABLE]
    np.testing.assert_array_equal(np.load(paths[0]), boards)
    assert paths[1].read_text().splitlines() == [
        "run,best_attacking_pairs,best_nmof_attacks,best_step",
        "3,6,3,0",
        "7,1,1,42",
    ]
    assert anneal_io.method_state(tmp_path / "m") == "incomplete"  # no summary, no checkpoint


def test_summary_with_repeated_key_counts_no_chains_solved_before(tmp_path):
    (tmp_path / anneal_io.SUMMARY).write_text('{"solved": 3}')
    assert anneal_io.solved_before(tmp_path) == 3
    (tmp_path / anneal_io.SUMMARY).write_text('{"solved": 0, "solved": 3}')
    assert anneal_io.solved_before(tmp_path) == 0
