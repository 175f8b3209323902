"""Structured logs: with `--log-json` every event is one JSON object per line on stderr.

Events: `start` (command and arguments), `progress` (from every progress bar, at most once a
second: done, total, rate, seconds left), `summary` (a command's summary) and `end` (exit code
and seconds). Off by default; the human-readable output is unchanged either way.
"""

from __future__ import annotations

import json
import sys
import time

from jaxqueens import _process


def enable(stream=None) -> None:
    """Turn structured logging on, its events to `stream` (default: stderr)."""
    _process.logs.enabled, _process.logs.stream = True, stream or sys.stderr


def disable() -> None:
    _process.logs.enabled = False


def enabled() -> bool:
    return _process.logs.enabled


def log(event: str, **fields) -> None:
    """Write one event and its fields as a JSON line (values that JSON cannot hold as strings;
    a no-op unless enabled)."""
    if not _process.logs.enabled:
        return
    record = {"time": round(time.time(), 3), "event": event, **fields}
    _process.logs.stream.write(json.dumps(record, default=str) + "\n")
    _process.logs.stream.flush()
