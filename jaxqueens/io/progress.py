"""A small progress line for long runs: count, rate and time left, on stderr.

Quiet when stderr is not a terminal (CI, pipes) or when asked; the driver calls
``update`` once per chunk, so this never runs inside a kernel.
"""

from __future__ import annotations

import sys
import time

from jaxqueens.io import logs


class Progress:
    """``Progress(total, unit)``; call ``update(done)`` then ``close()``."""

    def __init__(self, total: int | None, unit: str, quiet: bool | None = None, stream=None):
        self.total, self.unit = total, unit
        self.stream = stream or sys.stderr
        self.quiet = (not self.stream.isatty()) if quiet is None else quiet
        self.start = time.perf_counter()
        self._shown = False
        self._logged = -1.0

    def update(self, done: int, extra: str = "") -> None:
        """Redraw the line: ``done`` units so far, plus a free-form ``extra``."""
        elapsed = time.perf_counter() - self.start
        rate = done / elapsed if elapsed > 0 else 0.0
        if logs.enabled() and (
            elapsed - self._logged >= 1.0 or (self.total and done >= self.total)
        ):
            self._logged = elapsed
            left = (self.total - done) / rate if self.total and rate > 0 else None
            logs.log(
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
            frac = min(1.0, done / self.total)
            bar = "#" * int(24 * frac)
            left = (self.total - done) / rate if rate > 0 and done < self.total else 0.0
            text = f"[{bar:<24}] {done}/{self.total} {self.unit} {rate:,.0f}/s, {left:,.0f} s left"
        else:
            text = f"{done} {self.unit} {rate:,.0f}/s, {elapsed:,.0f} s"
        self.stream.write("\r" + text + (f"  {extra}" if extra else "") + "\033[K")
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        """End the line (if one was drawn)."""
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()
