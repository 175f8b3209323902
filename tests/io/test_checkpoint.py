"""io.checkpoint: the one checkpoint format (npz + a fingerprint of the settings)."""

import numpy as np
import pytest

from jaxqueens.errors import QueensError
from jaxqueens.io import checkpoint
from jaxqueens.parallel import gather


def test_round_trip_and_refusal_of_other_settings(tmp_path):
    path = tmp_path / checkpoint.FILENAME
    checkpoint.save(path, {"n": 8, "seed": 1}, rows=np.arange(6).reshape(2, 3), done=4)
    z = checkpoint.load(path, {"seed": 1, "n": 8})
    np.testing.assert_array_equal(z["rows"], np.arange(6).reshape(2, 3))
    assert int(z["done"]) == 4
    with pytest.raises(QueensError, match="seed differ"):
        checkpoint.load(path, {"n": 8, "seed": 2})


def test_unreadable_file_is_a_one_line_error(tmp_path):
    path = tmp_path / "bad.npz"
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(QueensError, match="not a readable checkpoint"):
        checkpoint.load(path, {})


def _saved(tmp_path):
    path = tmp_path / checkpoint.FILENAME
    rng = np.random.default_rng(0)
    checkpoint.save(path, {"n": 8}, rows=rng.integers(0, 8, (300, 8)), done=4)
    return path, path.read_bytes()


@pytest.mark.parametrize("keep", [0.1, 0.3, 0.5, 0.7, 0.9, 0.99])
def test_defect_8_truncated_checkpoint_is_a_one_line_error(tmp_path, keep):
    path, data = _saved(tmp_path)
    path.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(QueensError, match="not a readable checkpoint") as err:
        checkpoint.load(path, {"n": 8})
    assert "\n" not in str(err.value) and "--resume" in str(err.value)


def test_defect_8_damaged_checkpoint_is_a_one_line_error(tmp_path):
    path, data = _saved(tmp_path)
    middle = len(data) // 2
    path.write_bytes(data[:middle] + bytes(64) + data[middle + 64 :])  # zeroed bytes inside
    with pytest.raises(QueensError, match="not a readable checkpoint") as err:
        checkpoint.load(path, {"n": 8})
    assert "\n" not in str(err.value)
    checkpoint.save(path, {"n": 8}, done=4)
    with np.load(path) as z:
        arrays = dict(z)
    with open(path, "wb") as f:
        np.savez(f, done=arrays["done"], fingerprint="[1, 2]")  # a fingerprint that is no dict
    with pytest.raises(QueensError, match="not a readable checkpoint"):
        checkpoint.load(path, {"n": 8})
    (tmp_path / "folder.npz").mkdir()
    with pytest.raises(QueensError, match="not a readable checkpoint"):
        checkpoint.load(tmp_path / "folder.npz", {"n": 8})


def test_defect_8_checkpoint_arrays_are_checked_against_the_expected_shapes(tmp_path):
    path = tmp_path / checkpoint.FILENAME
    checkpoint.save(path, {"n": 8}, done=np.ones(7, bool), words=np.zeros((7, 2, 4), np.uint32))
    z = checkpoint.load(path, {"n": 8}, shapes={"done": (7,), "words": (7, 2, 4)})
    assert z["done"].shape == (7,)
    with pytest.raises(QueensError, match=r"done has shape \(7,\), expected \(5,\)") as err:
        checkpoint.load(path, {"n": 8}, shapes={"done": (5,), "words": (5, 2, 4)})
    assert "\n" not in str(err.value)
    with pytest.raises(QueensError, match="no array 'rows'"):
        checkpoint.load(path, {"n": 8}, shapes={"rows": (None, 8)})


def test_process_path_and_any_saved(tmp_path, monkeypatch):
    """One file per process where each keeps its own (count, complete); any_saved sees either."""
    ck = tmp_path / "checkpoint.npz"
    assert checkpoint.process_path(ck) == ck and not checkpoint.any_saved(ck)
    monkeypatch.setattr(gather, "process_count", lambda: 2)
    monkeypatch.setattr(gather, "process_index", lambda: 1)
    own = checkpoint.process_path(ck)
    assert own == tmp_path / "checkpoint.process1of2.npz"
    own.write_bytes(b"")
    assert checkpoint.any_saved(ck) and not ck.exists()
