"""io/files.py: the one opener of input files (issue 28: named pipes, unreadable inputs)."""

import os
import threading

import pytest

from jaxqueens.errors import BoardFileError, QueensError
from jaxqueens.io import files


def _error(fn, *args, **kwargs):
    box = []

    def run():
        try:
            fn(*args, **kwargs)
            box.append(None)
        except QueensError as err:
            box.append(str(err))

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(20)
    assert box, "the call blocked"
    return box[0]


def test_defect_28_msg_named_pipe_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "in.txt"
    os.mkfifo(fifo)
    err = _error(files.read_input, fifo)
    assert err.startswith(f"{fifo}: is a named pipe (FIFO), not a regular file"), err


def test_devices_and_folders_are_refused(tmp_path):
    assert "is a character device" in _error(files.read_input, "/dev/null")
    assert "is a directory" in _error(files.read_input, tmp_path)
    assert "no such file" in _error(files.read_input, tmp_path / "missing")


def test_defect_28_msg_every_os_failure_names_the_file(tmp_path, monkeypatch):
    path = tmp_path / "a.txt"
    path.write_text("0\n")

    def failing(*args, **kwargs):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(files.os, "open", failing)
    err = _error(files.read_input, path)
    assert err == f"{path}: cannot open (Input/output error); check the path"


def test_reads_regular_files_with_a_size_limit(tmp_path):
    path = tmp_path / "a.txt"
    path.write_bytes(b"x" * 10)
    assert files.read_input(path) == b"x" * 10
    with pytest.raises(BoardFileError, match="10 bytes is too large"):
        files.read_input(path, max_bytes=5, too_large="too large")
    with pytest.raises(QueensError) as err:
        files.read_input(tmp_path / "nope", QueensError)
    assert type(err.value) is QueensError
