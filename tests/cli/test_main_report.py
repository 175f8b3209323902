"""The report hook of :mod:`jaxqueens.cli.main`: every command that writes --out leaves one
``report.html`` there (:mod:`jaxqueens.io.report`), and only then."""

import errno
import html
import json

import pytest

from jaxqueens.cli.main import main
from jaxqueens.io import report

COMMANDS = {
    "solve": ["-n", "6", "--chains", "4", "--quiet"],
    "anneal": ["-n", "6", "--chains", "2", "--steps", "100", "--quiet"],
    "evolve": ["-n", "6", "--pop", "10", "--generations", "3", "--quiet"],
    "count": ["-n", "6"],
    "stats": ["-n", "6", "--chains", "20", "--quiet", "--no-plots"],
    "compare": ["-n", "6", "--chains", "4", "--steps", "100", "--solvers", "mc-qs4", "--quiet"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_out_folder_gets_a_report(command, tmp_path, capsys):
    out = tmp_path / "out"
    argv = [command, *COMMANDS[command], "--out", str(out)]
    assert main(argv) in (0, 1)
    page = out / report.FILENAME
    printed = capsys.readouterr().out
    assert f"report: {page}" in printed
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and "jaxqueens " + " ".join(argv) in text
    # the result first, as printed (progress lines left out); then the settings given, never the
    # parser's internals
    first = html.escape(next(ln for ln in printed.splitlines() if not report.PROGRESS.match(ln)))
    assert text.index("<h2>result</h2>") < text.index(first) < text.index("<h2>settings</h2>")
    settings = text[text.index("<h2>settings</h2>") : text.index("<h2>environment")]
    for internal in ("n_pos", "n_default", "n_required", "capped", "func", "uses_jax"):
        assert f">{internal}<" not in settings, internal
    assert (">out<" in settings and ">quiet<" in settings) or command == "count"
    assert "backend" in text and "cpu" in text  # the devices JAX ran on
    if command != "count":
        assert "summary.json" in text


def test_no_report_without_out_or_on_failure(tmp_path, capsys):
    assert main(["count", "-n", "6"]) == 0
    assert "report:" not in capsys.readouterr().out
    out = tmp_path / "out"
    assert main(["solve", "-n", "3", "--out", str(out)]) == 2  # refused: nothing written
    assert not (out / report.FILENAME).exists()


def test_a_report_that_cannot_be_written_is_a_warning(tmp_path, capsys, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(report, "write_report", full)
    assert main(["count", "-n", "6", "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "warning:" in err and "report.html not written (No space left on device)" in err
    assert any(tmp_path.iterdir()) and not (tmp_path / report.FILENAME).exists()


def test_a_folder_holds_this_runs_outputs_alone(tmp_path, capsys):
    """A second run into a finished run's folder is refused (one line, exit 2); with --force
    the earlier run's files go first, so neither the folder nor the page holds a stale file."""
    out = tmp_path / "out"
    solve = ["solve", *COMMANDS["solve"], "--out", str(out)]
    assert main(solve) == 0
    assert (out / "runs.csv").exists() and (out / report.MANIFEST).exists()
    mine = out / "notes.txt"  # the user's own file, not the run's
    mine.write_text("keep me")
    capsys.readouterr()
    count = ["count", *COMMANDS["count"], "--out", str(out)]
    assert main(count) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "earlier `solve` run" in err and "--force" in err
    assert (out / "runs.csv").exists()  # refused: nothing touched
    assert main([*count, "--force"]) == 0
    for stale in ("runs.csv", "solutions.npy", "solution.png"):
        assert not (out / stale).exists(), stale
    assert mine.read_text() == "keep me"
    listed = json.loads((out / report.MANIFEST).read_text())
    assert listed["command"] == "count" and "runs.csv" not in {f["path"] for f in listed["files"]}
    page = (out / report.FILENAME).read_text(encoding="utf-8")
    assert "runs.csv" not in page and "solution.png" not in page
    # --resume continues the folder's own run: never refused as an earlier one
    assert main(["count", "-n", "6", "--resume", str(out)]) in (0, 2)
    assert "earlier" not in capsys.readouterr().err


def test_the_page_is_built_from_what_the_run_wrote_not_read_back(tmp_path, monkeypatch):
    """The tables, summary and figures on the page are the bytes the command wrote, kept in
    memory (io.atomic.recording): files changed on disk after the write do not reach it."""
    out = tmp_path / "out"
    real = report.write_report

    def tamper_then_write(folder, **kwargs):
        for name in ("runs.csv", "summary.json", "solution.png"):
            (out / name).write_text("tampered after the run")
        return real(folder, **kwargs)

    monkeypatch.setattr(report, "write_report", tamper_then_write)
    assert main(["solve", *COMMANDS["solve"], "--out", str(out)]) == 0
    page = (out / report.FILENAME).read_text(encoding="utf-8")
    assert "tampered" not in page
    assert "data:image/png;base64," in page and "<h3>runs.csv</h3>" in page
