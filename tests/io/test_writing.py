"""io.writing: the final write of every command (its outputs, then its manifest and report, then
the checkpoint's removal) with signals deferred, and the advice on how to continue a run."""

import json
import signal

import pytest

from jaxqueens.cli.main import main
from jaxqueens.drivers import chains as chain_driver
from jaxqueens.io import schema as run_schema


def _signal_after_the_first_chunk(monkeypatch, module):
    """``module.run_chunks`` with SIGINT raised as its first chunk returns: the loop saves its
    checkpoint and stops at the next safe point."""
    real = module.run_chunks

    def run_chunks(chunk, **kwargs):
        def first(*args):
            tick = chunk(*args)
            signal.raise_signal(signal.SIGINT)
            return tick

        return real(first, **kwargs)

    monkeypatch.setattr(module, "run_chunks", run_chunks)


def _signal_in(monkeypatch, module, name, second=False):
    """``module.name`` receives SIGINT as it starts (``second``: a second one, which raises)."""
    real = getattr(module, name)

    def writer(*args, **kwargs):
        signal.raise_signal(signal.SIGINT)
        if second:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, writer)


SOLVE = ["solve", "-n", "6", "--chains", "3", "--quiet"]


@pytest.fixture
def interrupted_solve(tmp_path, monkeypatch, capsys):
    """An ``--out`` folder holding the checkpoint of an interrupted solve."""
    out = tmp_path / "out"
    with monkeypatch.context() as m:
        _signal_after_the_first_chunk(m, chain_driver)
        assert main([*SOLVE, "--out", str(out)]) == 130
    assert (out / "checkpoint.npz").exists()
    capsys.readouterr()
    return out


def test_signal_during_the_final_write_of_a_resumed_run_writes_the_report_first(
    interrupted_solve, monkeypatch, capsys
):
    """The resumed run's first signal in its final write lets the write finish, the manifest and
    the report included: only then does the checkpoint go, and one line says so."""
    out = interrupted_solve
    _signal_in(monkeypatch, run_schema, "write_csv")
    assert main([*SOLVE, "--resume", str(out)]) == 130
    err = capsys.readouterr().err
    assert (out / "manifest.json").exists() and (out / "report.html").exists()
    assert not (out / "checkpoint.npz").exists()
    assert "finished first" in err and "run the command again" not in err, err
    listed = {f["path"] for f in json.loads((out / "manifest.json").read_text())["files"]}
    assert {"runs.csv", "summary.json", "solutions.npy"} <= listed


def test_second_signal_while_the_report_is_written_keeps_a_checkpoint_that_resumes(
    interrupted_solve, monkeypatch, capsys
):
    """The report is part of the final write: two signals there stop it at once, and the
    checkpoint (which went with the outputs before) stays for the resume command printed."""
    from jaxqueens.io import report

    out = interrupted_solve
    with monkeypatch.context() as m:
        _signal_in(m, report, "write_report", second=True)
        assert main([*SOLVE, "--resume", str(out)]) == 130
    err = capsys.readouterr().err
    assert (out / "checkpoint.npz").exists() and not (out / "report.html").exists()
    assert f"resume with the same command and --resume {out}" in err
    assert "finished first" not in err and "run the command again" not in err, err
    assert main([*SOLVE, "--resume", str(out)]) == 0
    assert (out / "report.html").exists() and not (out / "checkpoint.npz").exists()


def test_signal_during_evolves_final_write_writes_the_report_and_keeps_the_advice(
    tmp_path, monkeypatch, capsys
):
    from jaxqueens.drivers import ga
    from jaxqueens.io import ga as ga_io

    argv, out = ["evolve", "-n", "6", "--pop", "8", "--generations", "2", "--quiet"], tmp_path
    with monkeypatch.context() as m:
        _signal_after_the_first_chunk(m, ga)
        assert main([*argv, "--out", str(out)]) == 130
    assert (out / "checkpoint.npz").exists()
    with monkeypatch.context() as m:
        _signal_in(m, ga_io, "write_outputs")
        assert main([*argv, "--resume", str(out)]) == 130
    err = capsys.readouterr().err
    assert (out / "report.html").exists() and not (out / "checkpoint.npz").exists()
    assert "finished first" in err
