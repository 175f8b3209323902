"""io.progress: the progress line (drawn on a terminal and cut to its width, quiet elsewhere)
and the `--log-json` events."""

from __future__ import annotations

import io
import json

import pytest

from jaxqueens.cli.main import main
from jaxqueens.io import progress
from jaxqueens.io.progress import Progress


class Terminal(io.StringIO):
    """A stream that says it is a terminal, keeping what was drawn."""

    def isatty(self) -> bool:
        return True

    def lines(self) -> list[str]:
        """Each redraw of the line, without its carriage return and erase-to-end."""
        return [part.replace("\033[K", "").rstrip("\n") for part in self.getvalue().split("\r")[1:]]


NOTE = "12,345 distinct, 1,234,567,890 chains run; min-conflicts, restart period 32 steps, n = 1000"


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("total", [1_000_000, None], ids=["bar", "count"])
def test_progress_line_wrapped_past_the_terminal_width(monkeypatch, columns, total):
    """The line with a long note ran to ~185 characters and wrapped at 80 or 120 columns,
    leaving a wrapped line behind at every redraw; it now fits (one column spare), the count,
    the rate and the time left first."""
    monkeypatch.setenv("COLUMNS", str(columns))
    term = Terminal()
    bar = Progress(total, "chains solved", stream=term)
    for done in (1_000, 250_000, 999_999):
        bar.update(done, NOTE)
    bar.close()
    drawn = term.lines()
    assert len(drawn) == 3 and all(len(line) < columns for line in drawn), drawn
    last = drawn[-1]
    assert "999999" in last and "/s" in last, last
    if total is not None:
        assert f"/{total}" in last and "s left" in last, last
    assert term.getvalue().endswith("\n")


def test_progress_line_keeps_its_note_and_bar_where_they_fit(monkeypatch):
    """A wide terminal shows the whole line: the bar, the counts and the note."""
    monkeypatch.setenv("COLUMNS", "300")
    term = Terminal()
    bar = Progress(10, "tasks", stream=term)
    bar.update(5, "7 solutions so far")
    (line,) = term.lines()
    assert line.startswith("[" + "#" * 12) and "5/10 tasks" in line, line
    assert line.endswith("  7 solutions so far"), line


def test_progress_quiet_off_terminal_and_on_request():
    pipe = io.StringIO()
    bar = Progress(10, "things", stream=pipe)
    bar.update(5)
    bar.close()
    assert pipe.getvalue() == ""  # not a terminal: silent
    tty = Terminal()
    bar = Progress(10, "things", stream=tty)
    bar.update(5)
    bar.close()
    assert "5/10 things" in tty.getvalue() and "s left" in tty.getvalue()
    tty = Terminal()
    bar = Progress(10, "things", quiet=True, stream=tty)
    bar.update(5)
    assert tty.getvalue() == ""


def test_log_json_events(capsys):
    try:
        assert main(["solve", "-n", "9", "--chains", "20", "--quiet", "--log-json"]) == 0
    finally:
        progress.disable()
    err = capsys.readouterr().err
    events = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    kinds = [e["event"] for e in events]
    assert kinds[0] == "start" and kinds[-1] == "end" and "summary" in kinds and "progress" in kinds
    summary = next(e for e in events if e["event"] == "summary")
    assert summary["n"] == 9 and summary["solved"] == 20
    assert events[-1]["code"] == 0


def test_log_json_error_event(capsys):
    try:
        assert main(["--log-json", "solve", "-n", "3"]) == 2
    finally:
        progress.disable()
    events = [
        json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")
    ]
    assert (
        events[-1]["event"] == "end"
        and events[-1]["code"] == 2
        and "no solution" in events[-1]["error"]
    )
