"""Tests for board files: round trips, every error message, atomic writes, the fast text path."""

import io
import json
import os
import time
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxqueens.errors import BoardFileError, QueensError
from jaxqueens.io import boards as boardio
from jaxqueens.io import boards_text
from jaxqueens.io.boards import (
    load_boards,
    read_board,
    read_boards_npy,
    read_jsonl,
    write_board,
    write_boards_npy,
    write_jsonl,
)

SOLUTION_8 = np.array([0, 4, 7, 5, 2, 6, 1, 3], dtype=np.int32)


def make(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def error_of(func, path, *args, **kwargs):
    """Call `func(path, ...)`; return its BoardFileError message after checking it is one line
    naming the file."""
    with pytest.raises(BoardFileError) as info:
        func(path, *args, **kwargs)
    message = str(info.value)
    assert "\n" not in message and "\r" not in message
    assert message.startswith(f"{path}:"), message
    return message


# ---------------------------------------------------------------- round trips


@pytest.mark.parametrize("one_based", [False, True])
def test_text_round_trip(tmp_path, one_based):
    path = tmp_path / "board.txt"
    write_board(path, SOLUTION_8, one_based=one_based)
    lines = path.read_text().splitlines()
    assert lines == [str(r + one_based) for r in SOLUTION_8]
    board = read_board(path, one_based=one_based)
    assert board.dtype == np.int32 and board.tolist() == SOLUTION_8.tolist()
    assert load_boards(path, one_based=one_based).tolist() == [SOLUTION_8.tolist()]


@pytest.mark.parametrize(
    "content",
    [
        "0\n4\n7\n5\n2\n6\n1\n3",  # no final newline
        "0\n4\n7\n5\n2\n6\n1\n3\n\n\n \n",  # trailing blank lines
        "  0 \n\t4\n7  \n5\n2\n6\n1\n3\n",  # whitespace around values
        "0\r\n4\r\n7\r\n5\r\n2\r\n6\r\n1\r\n3\r\n",  # Windows line ends
        "\ufeff0\n4\n7\n5\n2\n6\n1\n3\n",  # UTF-8 byte order mark
        "0\n+4\n7\n5\n2\n6\n1\n3\n",  # an explicit sign (the careful path)
        "0\n4\n7\n5\n2\n6\n1\n3\u00a0\n",  # a Unicode space (the careful path)
    ],
)
def test_text_tolerates_surrounding_whitespace(tmp_path, content):
    assert read_board(make(tmp_path, "b.txt", content)).tolist() == SOLUTION_8.tolist()


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int64])
def test_npy_round_trip(tmp_path, dtype):
    boards = np.stack([SOLUTION_8, SOLUTION_8[::-1]])
    path = tmp_path / "boards.npy"
    write_boards_npy(path, boards, dtype=dtype)
    assert np.load(path).dtype == dtype
    back = read_boards_npy(path)
    assert back.dtype == np.int32 and back.tolist() == boards.tolist()
    assert load_boards(path).tolist() == boards.tolist()
    np.save(path, SOLUTION_8)  # one board [n]
    assert read_boards_npy(path).shape == (1, 8)
    np.save(path, np.zeros((0, 8), np.int32))  # no boards
    assert read_boards_npy(path).shape == (0, 8)


def test_jsonl_round_trip(tmp_path):
    boards = np.stack([SOLUTION_8, SOLUTION_8[::-1]])
    path = tmp_path / "sols.jsonl"
    write_jsonl(path, boards, extra=[{"index": np.int64(0)}, {"index": 1, "steps": [1, 2]}])
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0] == {"n": 8, "rows": SOLUTION_8.tolist(), "index": 0}
    assert list(lines[1]) == ["n", "rows", "index", "steps"]
    assert read_jsonl(path).tolist() == boards.tolist()
    assert read_jsonl(path).dtype == np.int32
    ndjson = tmp_path / "sols.NDJSON"
    write_jsonl(ndjson, SOLUTION_8, extra={"solver": "test"})
    assert json.loads(ndjson.read_text()) == {"n": 8, "rows": SOLUTION_8.tolist(), "solver": "test"}
    assert load_boards(ndjson).tolist() == [SOLUTION_8.tolist()]
    write_jsonl(path, np.zeros((0, 8), np.int32))
    assert path.read_text() == "" and read_jsonl(path).shape == (0, 0)
    blanks = make(
        tmp_path, "blank.jsonl", '\n{"rows": [0]}\n\n{"rows": [0], "n": 1, "x": null}\n\n'
    )
    assert read_jsonl(blanks).tolist() == [[0], [0]]


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 300).flatmap(lambda n: st.permutations(range(n))))
def test_text_round_trip_property(rows):
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"jaxqueens-test-{os.getpid()}.txt"
    try:
        write_board(path, rows)
        assert read_board(path).tolist() == list(rows)
    finally:
        path.unlink(missing_ok=True)


# ---------------------------------------------------------- the fast text path


@st.composite
def text_files(draw):
    """Board-like text, mostly valid, sometimes with the defects the reader must catch."""
    n = draw(st.integers(1, 30))
    values = draw(st.lists(st.integers(-3, n + 3), min_size=n, max_size=n))
    pads = st.sampled_from(["", "", " ", "\t", "  ", "\r"])
    lines = [f"{draw(pads)}{v}{draw(pads)}" for v in values]
    defect = draw(st.sampled_from([None, None, "blank", "pair", "word", "long"]))
    at = draw(st.integers(0, n - 1))
    if defect == "blank":
        lines.insert(at, draw(pads))
    elif defect == "pair":
        lines[at] += " 1"
    elif defect == "word":
        lines[at] = "x"
    elif defect == "long":
        lines[at] = "1" * 25
    return ("\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n", "\n \n"]))).encode()


@settings(max_examples=200, deadline=None)
@given(text_files(), st.sampled_from([1, 3, 8, 1 << 22]))
def test_fast_path_agrees_with_line_scan(data, chunk):
    end = len(data.rstrip())
    with mock.patch.object(boards_text, "_CHUNK", chunk):
        fast = boards_text._parse_fast(data, end)
    try:
        slow, huge = boards_text._parse_lines("f.txt", data)
    except BoardFileError:
        assert fast is None
        return
    if fast is not None:
        assert huge is None and fast.tolist() == slow.tolist()


@pytest.mark.parametrize("chunk", [4, 5, 1 << 22])
def test_clean_files_take_the_fast_path(tmp_path, chunk):
    path = make(tmp_path, "b.txt", " 0\r\n4 \n7\n5\n2\n\t6\n1\n3\n\n")
    with (
        mock.patch.object(boards_text, "_CHUNK", chunk),
        mock.patch.object(boards_text, "_parse_lines") as slow,
    ):
        assert read_board(path).tolist() == SOLUTION_8.tolist()
    slow.assert_not_called()


def test_big_file_reads_fast(tmp_path):
    rows = np.random.default_rng(0).permutation(10**6)
    path = tmp_path / "big.txt"
    write_board(path, rows)
    start = time.perf_counter()
    board = read_board(path)
    assert time.perf_counter() - start < 3.0
    assert np.array_equal(board, rows)


# ------------------------------------------------------------ text errors


def test_missing_file(tmp_path):
    assert error_of(read_board, tmp_path / "nope.txt").endswith("no such file; check the path")
    assert "no such file" in error_of(load_boards, tmp_path / "nope.npy")
    assert "no such file" in error_of(load_boards, tmp_path / "nope.jsonl")


def test_directory(tmp_path):
    assert "is a directory" in error_of(read_board, tmp_path)
    assert "is a directory" in error_of(read_boards_npy, tmp_path)


def test_unreadable(tmp_path, monkeypatch):
    path = make(tmp_path, "b.txt", "0\n")

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    from jaxqueens.io import files

    monkeypatch.setattr(files.os, "open", denied)  # the one opener of input files
    assert "permission denied" in error_of(read_board, path)


@pytest.mark.parametrize(
    "content, expected",
    [
        (b"0\n1\x00\x01\x02\n", "b.txt:2: not UTF-8 text (a binary file?)"),
        (b"0\n\xff\xfe\x00\n", "b.txt:2: not UTF-8 text"),
        (b"\x89PNG\r\n\x1a\n", "b.txt:1: not UTF-8 text"),
        (b"", "b.txt: file is empty"),
        (b"\n  \n\t\n", "b.txt: file has only blank lines"),
        (b"0\n4\nabc\n", "b.txt:3: 'abc' is not an integer (each line must hold one integer"),
        (b"0\n4 5\n", "b.txt:2: '4 5' is not an integer"),
        (b"0\n1.0\n", "b.txt:2: '1.0' is not an integer"),
        (b"0\n4\n\n7\n", "b.txt:3: blank line inside the board; delete it"),
        (b"\n0\n", "b.txt:1: blank line inside the board"),
        (
            b"0\n1\n2\n5\n",
            "b.txt:4: row 5 out of range 0..3 (the file has 4 lines); each line must hold",
        ),
        (b"0\n-1\n", "b.txt:2: row -1 out of range 0..1"),
        (b"0\n" + b"9" * 30 + b"\n", "b.txt:2: row " + "9" * 30 + " out of range 0..1"),
        (
            b"1\n3\n4\n2\n",
            "b.txt:3: row 4 out of range 0..3 (the file has 4 lines); "
            "if the file counts rows from 1, pass --one-based",
        ),
    ],
)
def test_text_errors(tmp_path, content, expected):
    path = make(tmp_path, "b.txt", content)
    message = error_of(read_board, path)
    assert message.startswith(f"{tmp_path}{os.sep}{expected}"), message


def test_long_line_is_quoted_briefly(tmp_path):
    path = make(tmp_path, "b.txt", "0\n" + "x" * 1000 + "\n")
    message = error_of(read_board, path)
    assert message.startswith(f"{path}:2: 'xxxx") and len(message) - len(str(path)) < 160


def test_one_based_errors(tmp_path):
    path = make(tmp_path, "b.txt", "1\n3\n0\n2\n")
    assert error_of(read_board, path, one_based=True).endswith(
        ":3: row 0 out of range 1..4 (the file has 4 lines); "
        "the file counts rows from 0, so drop --one-based"
    )
    path = make(tmp_path, "c.txt", "1\n3\n9\n2\n")
    assert ":3: row 9 out of range 1..4" in error_of(read_board, path, one_based=True)


def test_npy_without_suffix(tmp_path):
    path = tmp_path / "boards.dat"
    with open(path, "wb") as f:
        np.save(f, SOLUTION_8)
    assert "is a NumPy .npy file; give it a .npy suffix" in error_of(load_boards, path)


def test_too_large_for_memory(tmp_path, monkeypatch):
    path = make(tmp_path, "b.txt", "0\n1\n2\n")
    message = error_of(read_board, path, memory_limit=20)
    assert "too large for memory" in message and "6 bytes" in message and "20 bytes" in message
    assert read_board(path, memory_limit=10**6).tolist() == [0, 1, 2]
    monkeypatch.setattr(boardio, "MEMORY_LIMIT", 20)
    assert "too large for memory" in error_of(load_boards, path)
    write_boards_npy(tmp_path / "b.npy", SOLUTION_8)
    assert "too large for memory" in error_of(load_boards, tmp_path / "b.npy")
    monkeypatch.setattr(boardio, "MEMORY_LIMIT", None)
    monkeypatch.setattr(boardio.memory, "available_memory", lambda: 20)
    assert "too large for memory" in error_of(read_board, path)
    monkeypatch.setattr(boardio.memory, "available_memory", lambda: None)  # unknown: no check
    assert read_board(path).tolist() == [0, 1, 2]


# ------------------------------------------------------------ npy errors


def save_raw(tmp_path, array, name="b.npy", **kwargs):
    path = tmp_path / name
    with open(path, "wb") as f:
        np.save(f, array, **kwargs)
    return path


@pytest.mark.parametrize(
    "array, expected",
    [
        (SOLUTION_8.astype(float), "dtype float64 is not an integer type"),
        (SOLUTION_8.astype(bool), "dtype bool is not an integer type"),
        (np.zeros((2, 2, 2), np.int32), "array of shape (2, 2, 2); expected boards [B, n]"),
        (np.int32(3), "array of shape (); expected boards"),
        (np.zeros((2, 0), np.int32), "array of shape (2, 0)"),
        (np.array([[0, 1], [1, 2]]), "board 1, column 1: row 2 out of range 0..1"),
        (np.array([[0, -1]]), "board 0, column 1: row -1 out of range 0..1"),
    ],
)
def test_npy_errors(tmp_path, array, expected):
    path = save_raw(tmp_path, array)
    assert expected in error_of(read_boards_npy, path)


def test_npy_not_an_array(tmp_path):
    pickled = save_raw(tmp_path, np.array([[0], [1, 2]], dtype=object), allow_pickle=True)
    assert "not a valid .npy array" in error_of(read_boards_npy, pickled)
    text = make(tmp_path, "t.npy", "0\n1\n")
    assert "not a .npy file (no NumPy header)" in error_of(read_boards_npy, text)
    npz = tmp_path / "z.npy"
    with open(npz, "wb") as f:
        np.savez(f, a=SOLUTION_8)
    assert "is a .npz archive" in error_of(read_boards_npy, npz)
    full = save_raw(tmp_path, np.zeros((100, 8), np.int32), "full.npy").read_bytes()
    truncated = make(tmp_path, "cut.npy", full[: len(full) // 2])
    assert "not a valid .npy array" in error_of(read_boards_npy, truncated)


# ------------------------------------------------------------ jsonl errors


@pytest.mark.parametrize(
    "content, expected",
    [
        ('{"rows": [0]}\n{"rows": [0\n', "s.jsonl:2: not valid JSON (Expecting"),
        ('{"rows": [0]}\n[0]\n', "s.jsonl:2: expected a JSON object per line"),
        ('{"n": 1}\n', 's.jsonl:1: no "rows" in'),
        ('{"rows": [0, 1.5]}\n', 's.jsonl:1: "rows" must be a non-empty list of integers'),
        ('{"rows": [true]}\n', 's.jsonl:1: "rows" must be'),
        ('{"rows": []}\n', 's.jsonl:1: "rows" must be'),
        ('{"rows": "0"}\n', 's.jsonl:1: "rows" must be'),
        ('{"n": 3, "rows": [0, 1]}\n', 's.jsonl:1: "n" is 3 but "rows" has 2 entries'),
        (
            '{"rows": [1, 3, 0, 2]}\n\n{"rows": [0]}\n',
            "s.jsonl:3: board has n = 1 but line 1 has n = 4",
        ),
        ('{"rows": [1, 3, 0, 4]}\n', "s.jsonl:1: column 3: row 4 out of range 0..3"),
        (b'{"rows": [0]}\n\xff\n', "s.jsonl:2: not UTF-8 text"),
    ],
)
def test_jsonl_errors(tmp_path, content, expected):
    path = make(tmp_path, "s.jsonl", content)
    message = error_of(read_jsonl, path)
    assert message.startswith(f"{tmp_path}{os.sep}{expected}"), message


def test_one_based_only_for_text(tmp_path):
    write_boards_npy(tmp_path / "b.npy", SOLUTION_8)
    assert "--one-based applies to text board files only" in error_of(
        load_boards, tmp_path / "b.npy", one_based=True
    )


# ------------------------------------------------------------ writing


def test_write_validation(tmp_path):
    with pytest.raises(QueensError, match=r"0\.\.7"):
        write_board(tmp_path / "b.txt", SOLUTION_8 + 1)
    with pytest.raises(QueensError, match="one board"):
        write_board(tmp_path / "b.txt", np.stack([SOLUTION_8, SOLUTION_8]))
    with pytest.raises(QueensError, match="integer boards"):
        write_boards_npy(tmp_path / "b.npy", SOLUTION_8.astype(float))
    with pytest.raises(QueensError, match="uint8 cannot hold rows up to 299"):
        write_boards_npy(tmp_path / "b.npy", np.arange(300), dtype=np.uint8)
    with pytest.raises(QueensError, match="1 extra dicts for 2 boards"):
        write_jsonl(tmp_path / "b.jsonl", np.stack([SOLUTION_8, SOLUTION_8]), extra=[{}])
    with pytest.raises(QueensError, match="must not replace"):
        write_jsonl(tmp_path / "b.jsonl", SOLUTION_8, extra={"n": 9})
    assert sorted(os.listdir(tmp_path)) == []


def test_writes_leave_no_temporary_files(tmp_path):
    write_board(tmp_path / "b.txt", SOLUTION_8)
    write_boards_npy(tmp_path / "b.npy", SOLUTION_8)
    write_jsonl(tmp_path / "b.jsonl", SOLUTION_8)
    write_board(tmp_path / "b.txt", SOLUTION_8[::-1])  # overwrite
    assert sorted(os.listdir(tmp_path)) == ["b.jsonl", "b.npy", "b.txt"]
    assert read_board(tmp_path / "b.txt").tolist() == SOLUTION_8[::-1].tolist()


def test_failed_writes_leave_target_unchanged(tmp_path, monkeypatch):
    targets = {name: tmp_path / name for name in ("b.txt", "b.npy", "b.jsonl")}
    for path in targets.values():
        path.write_text("old")

    def half_then_fail(self, data):
        Path.write_text(self, "half")  # a partial write to the temporary file
        raise OSError("disk full")

    def save_half_then_fail(f, arr, **kwargs):
        f.write(b"\x93NUMPY half")
        raise OSError("disk full")

    monkeypatch.setattr(Path, "write_bytes", half_then_fail)
    monkeypatch.setattr(np, "save", save_half_then_fail)
    with pytest.raises(OSError, match="disk full"):
        write_board(targets["b.txt"], SOLUTION_8)
    with pytest.raises(OSError, match="disk full"):
        write_boards_npy(targets["b.npy"], SOLUTION_8)
    with pytest.raises(OSError, match="disk full"):
        write_jsonl(targets["b.jsonl"], SOLUTION_8)
    assert all(path.read_text() == "old" for path in targets.values())
    assert sorted(os.listdir(tmp_path)) == sorted(targets)


# ------------------------------------------------------------ defect 8: hostile files


def _npy_with_header(tmp_path, shape, dtype="<i4", payload=b"\x00" * 24, name="h.npy"):
    import numpy.lib.format as fmt

    head = io.BytesIO()
    fmt.write_array_header_1_0(head, {"descr": dtype, "fortran_order": False, "shape": shape})
    return make(tmp_path, name, head.getvalue() + payload)


@pytest.mark.parametrize("shape", [(10**12, 3), (2**40, 2**30), (10**6, 8)])
def test_defect_8_npy_header_claiming_a_huge_shape(tmp_path, shape):
    """The header's shape is checked against the bytes in the file before anything is allocated."""
    path = _npy_with_header(tmp_path, shape)
    t0 = time.perf_counter()
    message = error_of(load_boards, path)
    assert time.perf_counter() - t0 < 2
    assert str(shape) in message and "24 bytes" in message and "numpy.save" in message, message


def test_defect_8_npy_header_consistent_files_still_load(tmp_path):
    path = _npy_with_header(
        tmp_path, (2, 3), payload=np.array([[0, 1, 2], [2, 0, 1]], "<i4").tobytes()
    )
    assert load_boards(path).tolist() == [[0, 1, 2], [2, 0, 1]]


@pytest.mark.parametrize(
    "line,needle",
    [
        ("[" * 100_000, "nested too deeply"),
        ('{"rows": [' * 5000 + "]}" * 5000, "nested too deeply"),
        ('{"rows": [' + "9" * 5000 + "]}", "too many digits"),
        ('{"n": ' + "9" * 5000 + ', "rows": [0]}', "too many digits"),
    ],
)
def test_defect_8_hostile_jsonl_is_a_one_line_error(tmp_path, line, needle):
    path = make(tmp_path, "h.jsonl", '{"rows": [0]}\n' + line + "\n")
    message = error_of(load_boards, path)
    assert "h.jsonl:2:" in message and needle in message and len(message) < 300, message[:300]


def test_defect_8_text_board_with_a_5000_digit_row(tmp_path):
    path = make(tmp_path, "h.txt", "0\n" + "9" * 5000 + "\n1\n")
    message = error_of(load_boards, path)
    assert "h.txt:2:" in message and "out of range" in message and len(message) < 300, message[:300]


def test_defect_28_7_board_reader_refuses_instance_lines(tmp_path):
    """An instance line is never read as a board (nor a board with instance keys)."""
    inst = make(tmp_path, "i.jsonl", '{"n": 8, "fixed": [[1, 3]]}\n')
    assert 'i.jsonl:1: is an instance (key "fixed"), not a board' in error_of(read_jsonl, inst)
    mixed = make(tmp_path, "m.jsonl", '{"n": 8, "rows": [0, 4, 7, 5, 2, 6, 1, 3], "sums": [3]}\n')
    assert 'mixes the board key "rows" with the instance key "sums"' in error_of(read_jsonl, mixed)
    with pytest.raises(QueensError, match="'fixed' is an instance key"):
        write_jsonl(tmp_path / "w.jsonl", SOLUTION_8, extra={"fixed": [[0, 0]]})


def test_defect_28_msg_named_pipe_board_file_is_refused_without_blocking(tmp_path):
    import threading

    fifo = tmp_path / "b.txt"
    os.mkfifo(fifo)
    box = []
    t = threading.Thread(target=lambda: box.append(error_of(read_board, fifo)), daemon=True)
    t.start()
    t.join(20)
    assert box and "is a named pipe (FIFO), not a regular file" in box[0], box


def test_jsonl_board_with_repeated_key_is_refused(tmp_path):
    f = tmp_path / "b.jsonl"
    f.write_text('{"n":8,"rows":[1,1,1,1,1,1,1,1],"rows":[0,4,7,5,2,6,1,3]}\n')
    with pytest.raises(BoardFileError, match=r'b\.jsonl:1: the key "rows" is given twice'):
        read_jsonl(f)


def test_jsonl_board_file_starting_with_a_bom_is_read_as_a_text_board_is(tmp_path):
    text, lines = tmp_path / "b.txt", tmp_path / "b.jsonl"
    text.write_bytes(b"\xef\xbb\xbf1\n3\n0\n2\n")
    lines.write_bytes(b'\xef\xbb\xbf{"n": 4, "rows": [1, 3, 0, 2]}\n')
    assert read_board(text).tolist() == read_jsonl(lines)[0].tolist() == [1, 3, 0, 2]
    lines.write_bytes(
        b'{"n": 4, "rows": [1, 3, 0, 2]}\n\xef\xbb\xbf{"n": 4, "rows": [1, 3, 0, 2]}\n'
    )
    with pytest.raises(BoardFileError, match=r"b\.jsonl:2: not valid JSON"):  # only at the start
        read_jsonl(lines)
