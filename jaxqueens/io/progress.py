"""A small progress line for long runs (count, rate and time left, on stderr), and JSON logs.

Quiet when stderr is not a terminal (CI, pipes) or when asked; the driver calls
`update` once per chunk, so this never runs inside a kernel. The line is cut to the terminal's
width (`shutil.get_terminal_size`, `$COLUMNS` first) at every redraw, so it never wraps: the
count, rate and time left come first, then the driver's note; the bar narrows to the room left.
With `--log-json` (`enable`) every event is one JSON object per line on stderr: `start`
(command and arguments), `progress` (from every progress line, at most once a second: done,
total, rate, seconds left), `summary` (a command's summary) and `end` (exit code and seconds).
Off by default; the human-readable output is unchanged either way.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time

from jaxqueens import _process

BAR = 24  # characters of the bar, on a terminal with room for it
MIN_BAR = 8  # the narrowest bar drawn; with less room the line has none


def enable(stream=None) -> None:
    """Turn structured logging on, its events to `stream` (default: stderr)."""
    _process.logs.enabled, _process.logs.stream = True, stream or sys.stderr


def disable() -> None:
    _process.logs.enabled = False


def enabled() -> bool:
    """Whether structured logging (`--log-json`) is on."""
    return _process.logs.enabled


def log(event: str, **fields) -> None:
    """Write one event and its fields as a JSON line (values that JSON cannot hold as strings;
    a no-op unless enabled)."""
    if not _process.logs.enabled:
        return
    record = {"time": round(time.time(), 3), "event": event, **fields}
    _process.logs.stream.write(json.dumps(record, default=str) + "\n")
    _process.logs.stream.flush()


def _columns(stream) -> int:
    """The width of the terminal `stream` draws on: `$COLUMNS`, else the terminal's, else 80."""
    try:
        own = os.get_terminal_size(stream.fileno())
    except (AttributeError, ValueError, OSError):  # not a file, or not a terminal
        own = os.terminal_size((80, 24))
    return shutil.get_terminal_size(own).columns


class Progress:
    """A progress line on a terminal (and `--log-json` events); call `update(done)` then `close()`.

    `total` units in all (None: unknown); `quiet` shows nothing (default: unless `stream`,
    default stderr, is a terminal).
    """

    def __init__(self, total: int | None, unit: str, quiet: bool | None = None, stream=None):
        self.total, self.unit = total, unit
        self.stream = stream or sys.stderr
        self.quiet = (not self.stream.isatty()) if quiet is None else quiet
        self.start = time.perf_counter()
        self._shown = False
        self._logged = -1.0

    def update(self, done: int, extra: str = "") -> None:
        """Redraw the line, cut to the terminal's width, and log a `--log-json` event; `extra` is
        a free-form note shown after the count, rate and time left (cut first)."""
        elapsed = time.perf_counter() - self.start
        rate = done / elapsed if elapsed > 0 else 0.0
        if enabled() and (elapsed - self._logged >= 1.0 or (self.total and done >= self.total)):
            self._logged = elapsed
            left = (self.total - done) / rate if self.total and rate > 0 else None
            log(
                "progress",
                unit=self.unit,
                done=done,
                total=self.total,
                rate=rate,
                seconds_left=left,
                note=extra or None,
            )
        if self.quiet:
            return
        if self.total:
            left = (self.total - done) / rate if rate > 0 and done < self.total else 0.0
            text = f"{done}/{self.total} {self.unit} {rate:,.0f}/s, {left:,.0f} s left"
        else:
            text = f"{done} {self.unit} {rate:,.0f}/s, {elapsed:,.0f} s"
        text += f"  {extra}" if extra else ""
        room = _columns(self.stream) - 1  # a full row would wrap on some terminals
        width = min(BAR, room - len(text) - 3)
        if self.total and width >= MIN_BAR:
            text = f"[{'#' * int(width * min(1.0, done / self.total)):<{width}}] {text}"
        self.stream.write("\r" + text[: max(room, 1)] + "\033[K")
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        """End the line (if one was drawn)."""
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()
