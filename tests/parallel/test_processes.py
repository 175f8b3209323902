"""parallel.processes: the checked settings and bounded join of a multi-process run (issue 13,
defects 4 and 8)."""

import math
import os
import socket
import subprocess
import sys
import time

import pytest

from jaxqueens.cli.main import main
from jaxqueens.errors import QueensError
from jaxqueens.parallel import processes

# Multi-process settings and the bounded join (issue 13, defects 4 and 8). Subprocesses run with
# one CPU device, a free localhost port where nothing listens (a missing coordinator or peer) and
# a timeout of a few seconds; each must end with one line and exit 2, never JAX's C++ abort.

CLI = [sys.executable, "-m", "jaxqueens.cli.main"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _board(tmp_path):
    path = tmp_path / "board.txt"
    path.write_text("0 4 7 5 2 6 1 3\n")
    return str(path)


def _cli(args, env=None, timeout=40):
    t0 = time.monotonic()
    out = subprocess.run(
        CLI + list(args),
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "JAXQUEENS_CPU_DEVICES": "1", **(env or {})},
    )
    return out, time.monotonic() - t0


def _one_error_line(err: str) -> str:
    """The stderr of a failed join: an optional 'waiting' notice, then exactly one error line."""
    assert "Traceback" not in err and "Check failure" not in err and "F1" not in err, err[-3000:]
    lines = [line for line in err.splitlines() if line.strip() and "waiting" not in line]
    assert len(lines) == 1, err[-3000:]
    return lines[0]


def test_defect_8_process_id_not_an_integer(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("JAX_COORDINATOR_ADDRESS", f"127.0.0.1:{_free_port()}")  # never contacted
    monkeypatch.setenv("JAX_NUM_PROCESSES", "2")
    monkeypatch.setenv("JAX_PROCESS_ID", "one")
    with pytest.raises(QueensError, match="JAX_PROCESS_ID"):
        processes.init_distributed(None, None, None)
    assert main(["show", _board(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "JAX_PROCESS_ID" in err and len(err.strip().splitlines()) == 1
    monkeypatch.setenv("JAX_PROCESS_ID", "1")
    monkeypatch.setenv("JAX_NUM_PROCESSES", "two")
    with pytest.raises(QueensError, match="JAX_NUM_PROCESSES"):
        processes.distributed_settings(None, None, None)


def test_defect_8_coordinator_not_an_address(tmp_path, capsys):
    with pytest.raises(QueensError, match="--coordinator"):
        processes.init_distributed("notanaddress", 2, 1)
    assert (
        main(
            [
                "--coordinator",
                "notanaddress",
                "--num-processes",
                "2",
                "--process-id",
                "1",
                "show",
                _board(tmp_path),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "--coordinator" in err and "HOST:PORT" in err and len(err.strip().splitlines()) == 1
    for bad in (
        "host:",
        ":123",
        "127.0.0.1:0",
        "127.0.0.1:65536",
        "127.0.0.1:http",
        "::1:80",
        "no-such-host.invalid:1234",
    ):
        with pytest.raises(QueensError, match="--coordinator"):
            processes.distributed_settings(bad, 2, 1)
    for good in ("127.0.0.1:12355", "localhost:1", "[::1]:80"):
        assert processes.distributed_settings(good, 2, 1).coordinator == good


def test_defect_8_process_flags_need_a_coordinator(monkeypatch, tmp_path, capsys):
    for var in ("JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID"):
        monkeypatch.delenv(var, raising=False)
    board = _board(tmp_path)
    for flags, named in (
        (["--num-processes", "2"], "--num-processes"),
        (["--process-id", "1"], "--process-id"),
        (["--coordinator-timeout", "5"], "--coordinator-timeout"),
    ):
        assert main([*flags, "show", board]) == 2
        err = capsys.readouterr().err
        assert (
            named in err and "--coordinator HOST:PORT" in err and len(err.strip().splitlines()) == 1
        )
    monkeypatch.setenv("JAX_NUM_PROCESSES", "2")
    with pytest.raises(QueensError, match=r"JAX_NUM_PROCESSES.*JAX_COORDINATOR_ADDRESS"):
        processes.distributed_settings(None, None, None)
    monkeypatch.delenv("JAX_NUM_PROCESSES")
    assert processes.distributed_settings(None, None, None) is None  # a single-process run
    with pytest.raises(SystemExit) as caught:  # argparse's error: one line too
        main(["--num-processes", "two", "show", board])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert "--num-processes" in err and len(err.strip().splitlines()) == 1


def test_defect_8_process_settings_are_checked(monkeypatch):
    for var in ("JAX_NUM_PROCESSES", "JAX_PROCESS_ID", processes.ENV_COORDINATOR_TIMEOUT):
        monkeypatch.delenv(var, raising=False)
    s = processes.distributed_settings("127.0.0.1:9", 2, 1)
    assert (s.num_processes, s.process_id, s.timeout) == (2, 1, processes.COORDINATOR_TIMEOUT)
    for args, named in (
        (("127.0.0.1:9", None, 1), "--num-processes"),
        (("127.0.0.1:9", 0, 0), "--num-processes"),
        (("127.0.0.1:9", 2, 2), "--process-id"),
        (("127.0.0.1:9", 2, -1), "--process-id"),
        (("127.0.0.1:9", 2, 1, 0.0), "--coordinator-timeout"),
        (("127.0.0.1:9", 2, 1, math.nan), "--coordinator-timeout"),
        (("127.0.0.1:9", 2, 1, math.inf), "--coordinator-timeout"),
    ):
        with pytest.raises(QueensError, match=named):
            processes.distributed_settings(*args)
    monkeypatch.setenv(processes.ENV_COORDINATOR_TIMEOUT, "soon")
    with pytest.raises(QueensError, match=processes.ENV_COORDINATOR_TIMEOUT):
        processes.distributed_settings("127.0.0.1:9", 2, 1)
    monkeypatch.setenv(processes.ENV_COORDINATOR_TIMEOUT, "7.5")
    assert processes.distributed_settings("127.0.0.1:9", 2, 1).timeout == 7.5
    assert processes.distributed_settings("127.0.0.1:9", 2, 1, 3.0).timeout == 3.0  # the flag wins


def test_defect_4_no_coordinator_fails_fast_with_one_line(tmp_path):
    address = f"127.0.0.1:{_free_port()}"  # nothing listens there
    out, seconds = _cli(
        [
            "--coordinator",
            address,
            "--num-processes",
            "2",
            "--process-id",
            "1",
            "show",
            _board(tmp_path),
        ],
        {processes.ENV_COORDINATOR_TIMEOUT: "3"},
    )
    assert out.returncode == 2 and seconds < 25, (seconds, out.stderr[-3000:])
    line = _one_error_line(out.stderr)
    assert address in line and "process 0" in line and "--coordinator-timeout" in line
    assert "waiting" in out.stderr  # it said what it was doing while it waited


def test_defect_4_missing_peer_fails_fast_with_one_line(tmp_path):
    address = f"127.0.0.1:{_free_port()}"
    out, seconds = _cli(
        [
            "--coordinator",
            address,
            "--num-processes",
            "3",
            "--process-id",
            "0",
            "--coordinator-timeout",
            "3",
            "show",
            _board(tmp_path),
        ]
    )
    assert out.returncode == 2 and seconds < 25, (seconds, out.stderr[-3000:])
    line = _one_error_line(out.stderr)
    assert address in line and "--process-id 1, 2" in line and "--coordinator-timeout" in line
