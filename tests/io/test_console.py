"""io.console: standard output that a closed pipe (``| head``) cannot break."""

import io
import os
import subprocess
import sys

import pytest

from jaxqueens.io import console


class _ClosedPipe(io.StringIO):
    """A stdout whose reader has gone: every write and flush raises BrokenPipeError."""

    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self):
        raise BrokenPipeError(32, "Broken pipe")


def test_writes_pass_through_until_the_pipe_closes(monkeypatch):
    sink = io.StringIO()
    monkeypatch.setattr(sys, "stdout", sink)
    with console.pipe_safe_stdout() as out:
        print("one")
        assert sys.stdout is out and not out.broken
    assert sys.stdout is sink and sink.getvalue() == "one\n"


def test_a_closed_pipe_silences_stdout_instead_of_raising(monkeypatch):
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    with console.pipe_safe_stdout() as out:
        print("first")  # would raise BrokenPipeError
        print("second")
        sys.stdout.flush()
    assert out.broken


@pytest.mark.parametrize("buffered", [False, True])
def test_defect_16_output_piped_into_head_still_writes_out(tmp_path, buffered):
    """`jaxqueens solve ... --out DIR | head -0`: the reader is gone before the first line; the
    outputs are written all the same, and the exit code is 0 with no traceback."""
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"  # every print reaches the pipe at once
    read, write = os.pipe()
    os.close(read)  # the reader exits before anything is printed
    try:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "jaxqueens.cli.main",
                "solve",
                "-n",
                "6",
                "--chains",
                "3",
                "--quiet",
                "--out",
                str(out),
            ],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=120,
        )
    finally:
        os.close(write)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr
    assert {"solutions.npy", "runs.csv", "summary.json"} <= {p.name for p in out.iterdir()}
