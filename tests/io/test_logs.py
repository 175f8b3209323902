"""--log-json events and the progress line's quiet rules."""

import io
import json

from jaxqueens.cli.main import main
from jaxqueens.io import logs
from jaxqueens.io.progress import Progress


def test_log_json_events(capsys):
    try:
        assert main(["solve", "-n", "9", "--chains", "20", "--quiet", "--log-json"]) == 0
    finally:
        logs.disable()
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
        logs.disable()
    events = [
        json.loads(line) for line in capsys.readouterr().err.splitlines() if line.startswith("{")
    ]
    assert (
        events[-1]["event"] == "end"
        and events[-1]["code"] == 2
        and "no solution" in events[-1]["error"]
    )


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_progress_quiet_off_terminal_and_on_request():
    pipe = io.StringIO()
    bar = Progress(10, "things", stream=pipe)
    bar.update(5)
    bar.close()
    assert pipe.getvalue() == ""  # not a terminal: silent
    tty = Tty()
    bar = Progress(10, "things", stream=tty)
    bar.update(5)
    bar.close()
    assert "5/10 things" in tty.getvalue() and "s left" in tty.getvalue()
    tty = Tty()
    bar = Progress(10, "things", quiet=True, stream=tty)
    bar.update(5)
    assert tty.getvalue() == ""
