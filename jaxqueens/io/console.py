"""Standard output that a closed pipe cannot break.

`jaxqueens solve ... --out DIR | head -1`: once `head` has read its line and exited, every
later write to stdout raises `BrokenPipeError`. A summary printed before the outputs are
written must not cost the outputs, so inside `pipe_safe_stdout` a write to a closed pipe
silences stdout for the rest of the run (the reader has gone: nothing is lost) and the command
goes on; its exit code is its own.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator

MAX_KEPT = 64 << 10  # characters `PipeSafeStream` keeps (the first: the result lines come first)


class PipeSafeStream:
    """A text stream whose writes pass through until the first `BrokenPipeError`, then are dropped.

    Every other attribute is the wrapped stream's. The first `MAX_KEPT` characters written are
    kept (`text`: what the command printed, for `report.html`).

    Attributes:
      broken: a write or flush met a broken pipe.
    """

    def __init__(self, stream):
        self._stream = stream
        self.broken = False
        self._kept: list[str] = []
        self._room = MAX_KEPT

    def text(self) -> str:
        """The first `MAX_KEPT` characters written through the stream."""
        return "".join(self._kept)

    def write(self, text: str) -> int:
        """Write text, unless the pipe is broken; returns its length either way."""
        if self._room > 0:
            self._kept.append(text[: self._room])
            self._room -= len(self._kept[-1])
        if not self.broken:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._silence()
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if not self.broken:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._silence()

    def _silence(self) -> None:
        """Point the stream's file descriptor at the null device, so that the interpreter's own
        flush at exit (of text still buffered) does not fail either."""
        self.broken = True
        with contextlib.suppress(OSError, ValueError, AttributeError, io.UnsupportedOperation):
            fd = self._stream.fileno()
            null = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(null, fd)
            finally:
                os.close(null)

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextlib.contextmanager
def pipe_safe_stdout() -> Iterator[PipeSafeStream]:
    """Make `sys.stdout` a `PipeSafeStream` inside the block (flushed on the way out)."""
    original = sys.stdout
    safe = PipeSafeStream(original)
    sys.stdout = safe
    try:
        yield safe
    finally:
        safe.flush()
        sys.stdout = original
