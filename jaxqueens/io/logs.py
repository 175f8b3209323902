"""Structured logs: with ``--log-json`` every event is one JSON object per line on stderr.

Events: ``start`` (command and arguments), ``progress`` (from every progress bar, at most once a
second: done, total, rate, seconds left), ``summary`` (a command's summary) and ``end`` (exit code
and seconds). Off by default; the human-readable output is unchanged either way.
"""

from __future__ import annotations

import json
import sys
import time

_enabled = False
_stream = sys.stderr


def enable(stream=None) -> None:
    """Turn structured logging on (``stream`` defaults to stderr)."""
    global _enabled, _stream
    _enabled, _stream = True, stream or sys.stderr


def disable() -> None:
    global _enabled
    _enabled = False


def enabled() -> bool:
    return _enabled


def log(event: str, **fields) -> None:
    """Write one event (a no-op unless enabled). Values that JSON cannot hold become strings."""
    if not _enabled:
        return
    record = {"time": round(time.time(), 3), "event": event, **fields}
    _stream.write(json.dumps(record, default=str) + "\n")
    _stream.flush()
