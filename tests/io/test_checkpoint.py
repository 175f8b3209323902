"""io.checkpoint: the one checkpoint format (npz + a fingerprint of the settings)."""

import json
import re
from typing import NamedTuple

import numpy as np
import pytest

from jaxqueens.errors import QueensError
from jaxqueens.io import checkpoint
from jaxqueens.parallel import gather

SCHEMA = {"rows": checkpoint.Spec(np.integer, (None, 3)), "done": checkpoint.Spec(np.integer)}


def test_round_trip_and_refusal_of_other_settings(tmp_path):
    path = tmp_path / checkpoint.FILENAME
    checkpoint.save(path, {"rows": np.arange(6).reshape(2, 3), "done": 4}, {"n": 8, "seed": 1})
    z = checkpoint.load(path, {"seed": 1, "n": 8}, SCHEMA)
    np.testing.assert_array_equal(z["rows"], np.arange(6).reshape(2, 3))
    assert int(z["done"]) == 4
    with pytest.raises(QueensError, match="seed differ"):
        checkpoint.load(path, {"n": 8, "seed": 2}, SCHEMA)


class Part(NamedTuple):
    rows: np.ndarray  # [C, n]
    solved: np.ndarray  # [C] bool
    best: np.ndarray | None = None  # [C]


def test_a_tree_of_dicts_and_named_tuples_round_trips_exactly(tmp_path):
    """Nested dicts and NamedTuples flatten to entries named by their path; None leaves are left
    out and load as None where the schema allows them; dtypes and values come back exactly."""
    path = tmp_path / "c.npz"
    part = Part(np.arange(12, dtype=np.int8).reshape(4, 3), np.array([1, 0, 1, 1], bool))
    big = [3, 2**70, -5]
    tree = {"done": part, "tallies": {"big": np.array([str(v) for v in big])}, "wall": 1.5}
    checkpoint.save(path, tree, {"k": 1})
    with np.load(path) as z:
        assert set(z.files) == {"done.rows", "done.solved", "tallies.big", "wall", "header"}
    schema = {
        "done": {
            "rows": checkpoint.Spec(np.integer, ("chains", 3)),
            "solved": checkpoint.Spec(np.bool_, ("chains",)),
            "best": checkpoint.Spec(np.integer, ("chains",), optional=True),
        },
        "tallies": {"big": checkpoint.Spec(np.str_, (3,))},
        "wall": checkpoint.Spec(np.floating),
    }
    got = checkpoint.load(path, {"k": 1}, schema)
    back = Part(**got["done"])
    assert back.rows.dtype == np.int8 and back.best is None
    np.testing.assert_array_equal(back.rows, part.rows)
    np.testing.assert_array_equal(back.solved, part.solved)
    assert [int(v) for v in got["tallies"]["big"]] == big and float(got["wall"]) == 1.5


def test_like_makes_the_schema_a_template_fits(tmp_path):
    path = tmp_path / "c.npz"
    state = Part(np.zeros((2, 5), np.int16), np.ones(2, bool))
    checkpoint.save(path, {"state": state}, {})
    assert checkpoint.like(state) == {
        "rows": checkpoint.Spec(np.dtype(np.int16), (2, 5)),
        "solved": checkpoint.Spec(np.dtype(bool), (2,)),
    }
    got = checkpoint.load(path, {}, {"state": checkpoint.like(state)})
    assert got["state"]["rows"].shape == (2, 5)
    wider = Part(np.zeros((2, 5), np.int32), np.ones(2, bool))
    with pytest.raises(QueensError, match=r"state\.rows has dtype int16, expected int32"):
        checkpoint.load(path, {}, {"state": checkpoint.like(wider)})


@pytest.mark.parametrize(
    "schema,needle",
    [
        ({"rows": checkpoint.Spec(np.integer, (None, 3))}, "an unexpected array 'done'"),
        ({**SCHEMA, "more": checkpoint.Spec(np.integer)}, "no array 'more'"),
        ({**SCHEMA, "rows": checkpoint.Spec(np.floating, (None, 3))}, "rows has dtype int64"),
        ({**SCHEMA, "rows": checkpoint.Spec(np.integer, (None, 4))}, r"expected \(\?, 4\)"),
        ({**SCHEMA, "rows": checkpoint.Spec(np.integer, (2,))}, r"shape \(2, 3\), expected \(2,\)"),
        ({**SCHEMA, "done": checkpoint.Spec(np.integer, (1,))}, r"shape \(\), expected \(1,\)"),
        (
            {"rows": checkpoint.Spec(np.integer, ("k", "k")), "done": checkpoint.Spec(np.integer)},
            r"rows has k = 3 on shape \(2, 3\), but rows has 2",
        ),
    ],
)
def test_arrays_that_do_not_fit_the_schema_are_refused_in_one_line(tmp_path, schema, needle):
    """Keys, dtypes, shapes and named sizes are all checked: a driver never indexes past what it
    planned, whatever the file holds."""
    path = tmp_path / checkpoint.FILENAME
    checkpoint.save(path, {"rows": np.arange(6).reshape(2, 3), "done": 4}, {"n": 8})
    with pytest.raises(QueensError, match="not a readable checkpoint") as err:
        checkpoint.load(path, {"n": 8}, schema)
    assert re.search(needle, str(err.value)) and "\n" not in str(err.value)
    assert str(err.value).startswith(f"{path}: ") and "--resume" in str(err.value)


def test_named_sizes_must_agree_across_entries(tmp_path):
    path = tmp_path / "c.npz"
    checkpoint.save(path, {"a": np.zeros(3), "b": np.zeros((4, 2))}, {})
    schema = {
        "a": checkpoint.Spec(np.floating, ("m",)),
        "b": checkpoint.Spec(np.floating, ("m", 2)),
    }
    with pytest.raises(QueensError, match=r"b has m = 4 on shape \(4, 2\), but a has 3"):
        checkpoint.load(path, {}, schema)


def test_arrays_altered_after_the_write_are_refused(tmp_path):
    """A checkpoint rewritten with other arrays but its header kept (issue 28 item 15: a valid
    fingerprint, altered arrays) is refused, whatever the arrays hold."""
    path = tmp_path / checkpoint.FILENAME
    checkpoint.save(path, {"rows": np.arange(6).reshape(2, 3), "done": 4}, {"n": 8})
    with np.load(path) as z:
        arrays = dict(z)
    arrays["rows"] = arrays["rows"] + 1  # same keys, dtypes and shapes
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    with pytest.raises(QueensError, match="arrays were changed after it was written") as err:
        checkpoint.load(path, {"n": 8}, SCHEMA)
    assert "\n" not in str(err.value)


def test_a_checkpoint_of_another_format_is_refused_not_misread(tmp_path):
    path = tmp_path / checkpoint.FILENAME
    with open(path, "wb") as f:  # the flat layout of format 1: arrays beside a fingerprint
        np.savez(f, rows=np.zeros((2, 3)), done=4, fingerprint=json.dumps({"n": 8}))
    with pytest.raises(QueensError, match=r"older version of jaxqueens \(format 1") as err:
        checkpoint.load(path, {"n": 8}, SCHEMA)
    assert "delete it to start over" in str(err.value) and "\n" not in str(err.value)
    checkpoint.save(path, {"rows": np.zeros((2, 3), int), "done": 4}, {"n": 8})
    with np.load(path) as z:
        arrays = dict(z)
    header = json.loads(str(arrays["header"]))
    arrays["header"] = json.dumps({**header, "format": checkpoint.FORMAT + 1})
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    with pytest.raises(QueensError, match=f"format {checkpoint.FORMAT + 1}; this version"):
        checkpoint.load(path, {"n": 8}, SCHEMA)


def test_trees_with_bad_keys_or_objects_are_refused_on_save(tmp_path):
    with pytest.raises(TypeError, match="without"):
        checkpoint.save(tmp_path / "c.npz", {"a.b": 1}, {})
    with pytest.raises(TypeError, match="header"):
        checkpoint.save(tmp_path / "c.npz", {"header": 1}, {})
    with pytest.raises(TypeError, match="Python objects"):
        checkpoint.save(tmp_path / "c.npz", {"a": np.array([1, "x", None], object)}, {})
    assert not (tmp_path / "c.npz").exists()


def test_unreadable_file_is_a_one_line_error(tmp_path):
    path = tmp_path / "bad.npz"
    path.write_bytes(b"not a checkpoint")
    with pytest.raises(QueensError, match="not a readable checkpoint"):
        checkpoint.load(path, {}, {})
    with open(path, "wb") as f:  # an .npz of something else
        np.savez(f, boards=np.zeros((2, 8)))
    with pytest.raises(QueensError, match=r"not a readable checkpoint \(no header\)"):
        checkpoint.load(path, {}, {})


def _saved(tmp_path):
    path = tmp_path / checkpoint.FILENAME
    rng = np.random.default_rng(0)
    checkpoint.save(path, {"rows": rng.integers(0, 8, (300, 8)), "done": 4}, {"n": 8})
    return path, path.read_bytes()


SAVED = {"rows": checkpoint.Spec(np.integer, (300, 8)), "done": checkpoint.Spec(np.integer)}


@pytest.mark.parametrize("keep", [0.1, 0.3, 0.5, 0.7, 0.9, 0.99])
def test_defect_8_truncated_checkpoint_is_a_one_line_error(tmp_path, keep):
    path, data = _saved(tmp_path)
    path.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(QueensError, match="not a readable checkpoint") as err:
        checkpoint.load(path, {"n": 8}, SAVED)
    assert "\n" not in str(err.value) and "--resume" in str(err.value)


def test_defect_8_damaged_checkpoint_is_a_one_line_error(tmp_path):
    path, data = _saved(tmp_path)
    middle = len(data) // 2
    path.write_bytes(data[:middle] + bytes(64) + data[middle + 64 :])  # zeroed bytes inside
    with pytest.raises(QueensError, match="not a readable checkpoint") as err:
        checkpoint.load(path, {"n": 8}, SAVED)
    assert "\n" not in str(err.value)
    checkpoint.save(path, {"done": 4}, {"n": 8})
    with np.load(path) as z:
        arrays = dict(z)
    for header in ("[1, 2]", '{"format": 2, "settings": [1]}', "{"):  # headers that are no table
        with open(path, "wb") as f:
            np.savez(f, done=arrays["done"], header=header)
        with pytest.raises(QueensError, match="not a readable checkpoint"):
            checkpoint.load(path, {"n": 8}, {"done": checkpoint.Spec(np.integer)})
    (tmp_path / "folder.npz").mkdir()
    with pytest.raises(QueensError, match="not a readable checkpoint"):
        checkpoint.load(tmp_path / "folder.npz", {"n": 8}, {})


def test_defect_8_checkpoint_arrays_are_checked_against_the_expected_shapes(tmp_path):
    path = tmp_path / checkpoint.FILENAME
    tree = {"done": np.ones(7, bool), "words": np.zeros((7, 2, 4), np.uint32)}
    checkpoint.save(path, tree, {"n": 8})
    schema = lambda c: {
        "done": checkpoint.Spec(np.bool_, (c,)),
        "words": checkpoint.Spec(np.uint32, (c, 2, 4)),
    }
    z = checkpoint.load(path, {"n": 8}, schema(7))
    assert z["done"].shape == (7,)
    with pytest.raises(QueensError, match=r"done has shape \(7,\), expected \(5,\)") as err:
        checkpoint.load(path, {"n": 8}, schema(5))
    assert "\n" not in str(err.value)
    with pytest.raises(QueensError, match="no array 'rows'"):
        checkpoint.load(
            path, {"n": 8}, {**schema(7), "rows": checkpoint.Spec(np.integer, (None, 8))}
        )


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


def test_checkpoint_header_with_repeated_key_is_refused(tmp_path):
    path, schema = tmp_path / checkpoint.FILENAME, {"done": checkpoint.Spec(np.integer)}
    checkpoint.save(path, {"done": 4}, {"n": 8})
    with np.load(path) as z:
        arrays = dict(z)
    header = str(arrays.pop(checkpoint.HEADER))
    assert header.startswith("{")  # the first "settings" would be dropped by json.loads
    with open(path, "wb") as f:
        np.savez(f, **arrays, **{checkpoint.HEADER: '{"settings": {"n": 9}, ' + header[1:]})
    with pytest.raises(QueensError, match=r'not a readable checkpoint .*"settings" is given twice'):
        checkpoint.load(path, {"n": 8}, schema)
