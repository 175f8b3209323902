"""The one signal policy: SIGINT (Ctrl-C) and SIGTERM (``kill``, ``timeout``, batch schedulers)
stop a run the same way.

- Inside a safe region (:class:`SafePoints`: a driver's chunked loop, a command's final write) the
  first signal only records a request; the region's owner acts on it where its state is whole
  (:meth:`SafePoints.check`: after a recorded chunk), saves, and the command prints the resume line.
- A second signal, or a first one outside a safe region, raises ``KeyboardInterrupt`` at once.
- The command exits ``128 + signal number`` (:func:`exit_code`): 130 after SIGINT, 143 after
  SIGTERM, as shells and schedulers expect.

Importing the package installs nothing: the ``jaxqueens`` command calls :func:`install` once for
its whole process. A library caller that never installs it still gets Ctrl-C at chunk boundaries:
a :class:`SafePoints` region then handles SIGINT itself (and only while it lasts); SIGTERM keeps
the caller's own handling.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals the policy covers when installed by the command line."""

_state: dict = {
    "installed": {},  # signal number -> the handler it replaced (empty: not installed)
    "regions": [],  # the open SafePoints, innermost last (the main thread's)
    "last": None,  # the number of the last signal received (for the exit code)
}


def _handler(signum, frame) -> None:
    _state["last"] = signum
    regions = _state["regions"]
    if regions and not regions[-1].requested:
        regions[-1].requested = signum  # acted on at the region's next safe point
        return
    raise KeyboardInterrupt  # a second signal, or one outside a safe region: at once


def install() -> None:
    """Handle SIGINT and SIGTERM by this policy for the rest of the process (the command line
    calls it; a no-op outside the main thread, where handlers cannot be set)."""
    if _state["installed"] or threading.current_thread() is not threading.main_thread():
        return
    for sig in SIGNALS:
        _state["installed"][sig] = signal.signal(sig, _handler)


def uninstall() -> None:
    """Put back the handlers :func:`install` replaced (tests; the process is otherwise ending)."""
    for sig, previous in _state["installed"].items():
        signal.signal(sig, previous)
    _state["installed"] = {}


def installed() -> bool:
    """Whether :func:`install` is in effect."""
    return bool(_state["installed"])


def exit_code() -> int:
    """The exit code of an interrupted command: 128 + the last signal (130 when none was seen:
    a ``KeyboardInterrupt`` raised by other means)."""
    last = _state["last"]
    return 128 + int(last if last is not None else signal.SIGINT)


def is_interrupt(code: int) -> bool:
    """Whether a command's exit code says a signal of the policy stopped it (130, 143)."""
    return code in {128 + int(sig) for sig in SIGNALS}


def signal_name() -> str:
    """The last signal's name for messages ("Ctrl-C" for SIGINT or none)."""
    last = _state["last"]
    return "Ctrl-C" if last in (None, signal.SIGINT) else signal.Signals(last).name


def reset() -> None:
    """Forget the last signal (tests; a command starts with none)."""
    _state["last"] = None


class SafePoints:
    """A safe region: a signal takes effect at the next :meth:`check`.

    Inside ``with SafePoints() as sp:`` the first SIGINT (or SIGTERM, when the command line
    installed the policy) only records a request; the loop calls ``sp.check()`` where its state
    is consistent (after a whole chunk is recorded), which then raises KeyboardInterrupt. A
    second signal raises at once. Outside the main thread (where signal handlers cannot be set)
    signals behave as usual.
    """

    def __init__(self) -> None:
        self.requested: int | None = None  # the signal asked for a stop (None: none yet)
        self._previous: Any = None  # the SIGINT handler this region replaced (library use)
        self._entered = False
        self._answered = False  # a check raised for the request

    def __enter__(self) -> SafePoints:
        if threading.current_thread() is not threading.main_thread():
            return self
        if not installed() and not _state["regions"]:  # library use: SIGINT for this region only
            self._previous = signal.signal(signal.SIGINT, _handler)
        _state["regions"].append(self)
        self._entered = True
        return self

    def check(self) -> None:
        """Raise KeyboardInterrupt here if a stop was asked since the region began."""
        if self.requested:
            self._answered = True
            raise KeyboardInterrupt

    def __exit__(self, exc_type, exc, tb) -> None:
        if not self._entered:
            return
        _state["regions"].remove(self)
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
        if self.requested and not self._answered and exc_type is None:
            # never dropped: the enclosing region acts on it, or it stops the caller here
            if _state["regions"]:
                _state["regions"][-1].requested = self.requested
            else:
                raise KeyboardInterrupt
