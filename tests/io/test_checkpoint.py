"""io.checkpoint: the one checkpoint format (npz + a fingerprint of the settings)."""

import numpy as np
import pytest

from jaxqueens.errors import QueensError
from jaxqueens.io import checkpoint


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
