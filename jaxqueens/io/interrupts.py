"""The one signal policy: SIGINT (Ctrl-C) and SIGTERM (`kill`, `timeout`, batch schedulers) stop a
run the same way.

Inside a safe region (`SafePoints`: a driver's chunked loop, a command's final write) the first
signal only records a request, which the region's owner acts on where its state is whole; a
second signal, or one outside a safe region, raises `KeyboardInterrupt` at once, and one the
main thread cannot take (it waits in an XLA computation) ends the process `GRACE` seconds later.
The command exits `128 + signal number` (`exit_code`). Importing the package installs nothing:
the `jaxqueens` command calls `install` once; a library caller still gets Ctrl-C at chunk
boundaries, while a `SafePoints` region lasts.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from typing import Any

from jaxqueens import _process

SIGNALS = (signal.SIGINT, signal.SIGTERM)
# seconds a second signal waits for the main thread to take it (and stop the command its usual
# way, with the resume line) before the watcher ends the process
GRACE = 1.0


def _handler(signum, frame) -> None:
    _process.signals.last = signum
    _process.signals.handled += 1
    regions = _process.signals.regions
    if regions and not regions[-1].requested:
        regions[-1].requested = signum  # acted on at the region's next safe point
        return
    raise KeyboardInterrupt  # a second signal, or one outside a safe region: at once


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed or broken stream: nothing more to keep
            stream.flush()


class _Watcher:
    """The thread of one `install`: reads the signal numbers the C-level handler writes to
    the wakeup pipe the moment a signal arrives, and ends the process on a second signal the
    main thread has not taken `GRACE` seconds later."""

    def __init__(self, fd: int):
        self.fd = fd
        self.received = 0  # signals of the policy seen in the pipe
        self.handled_before = _process.signals.handled  # the handler's count when the watch began
        self.stopped = False  # set by uninstall: bytes still in the pipe are not acted on
        threading.Thread(target=self.run, name="jaxqueens-signals", daemon=True).start()

    def run(self) -> None:
        with open(self.fd, "rb", buffering=0) as pipe:
            while not self.stopped:
                try:
                    data = pipe.read(512)
                except OSError:
                    return
                if not data:  # uninstall closed the write end
                    return
                for signum in data:
                    if signum in SIGNALS and not self.stopped:
                        self.received += 1
                        if self.received >= 2:
                            self.stop_if_stuck(signum)

    def stop_if_stuck(self, signum: int) -> None:
        """Give the main thread `GRACE` seconds to take the signals seen; if it has not
        (a blocking call holds it), end the process now."""
        time.sleep(GRACE)
        if self.stopped or _process.signals.handled - self.handled_before >= self.received:
            return  # the main thread took it: KeyboardInterrupt stops the command its usual way
        name = _name(signum)
        flusher = threading.Thread(target=_flush, daemon=True)  # never wait on a stuck stream
        flusher.start()
        flusher.join(0.2)
        os.write(
            2,
            f"\njaxqueens: second {name} during a blocking computation: stopped at once (files "
            "already written are whole; the work since the last checkpoint is lost)\n".encode(),
        )
        os._exit(128 + signum)


def install() -> None:
    """Handle SIGINT and SIGTERM by this policy for the rest of the process.

    The command line calls it once; a no-op outside the main thread, where handlers cannot be
    set. Also starts the watcher thread that ends the process on a second signal the main
    thread cannot take.
    """
    if _process.signals.installed or threading.current_thread() is not threading.main_thread():
        return
    for sig in SIGNALS:
        _process.signals.installed[sig] = signal.signal(sig, _handler)
    read, write = os.pipe()
    os.set_blocking(write, False)  # the C handler must never block on a full pipe
    previous = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
    _process.signals.wakeup = (write, previous, _Watcher(read))


def uninstall() -> None:
    """Put back the handlers `install` replaced and stop the watcher (tests; the process
    is otherwise ending)."""
    for sig, previous in _process.signals.installed.items():
        signal.signal(sig, previous)
    _process.signals.installed = {}
    if _process.signals.wakeup is not None:
        write, previous_fd, watcher = _process.signals.wakeup
        watcher.stopped = True
        signal.set_wakeup_fd(previous_fd)
        os.close(write)  # the watcher reads the end of the pipe and stops
        _process.signals.wakeup = None


def installed() -> bool:
    """Whether `install` is in effect (between `install` and `uninstall`)."""
    return bool(_process.signals.installed)


def exit_code() -> int:
    """The exit code of an interrupted command: 128 + the last signal's number; 130 when none
    was seen (a `KeyboardInterrupt` raised by other means)."""
    last = _process.signals.last
    return 128 + int(last if last is not None else signal.SIGINT)


def is_interrupt(code: int) -> bool:
    """Whether a command's exit code says a signal of the policy stopped it: 130 (SIGINT) or 143
    (SIGTERM)."""
    return code in {128 + int(sig) for sig in SIGNALS}


def _name(signum: int | None) -> str:
    return "Ctrl-C" if signum in (None, signal.SIGINT) else signal.Signals(signum).name


def signal_name() -> str:
    """The last signal's name, for messages: "Ctrl-C" for SIGINT or when none was seen, else
    the signal's name ("SIGTERM")."""
    return _name(_process.signals.last)


def reset() -> None:
    """Forget the last signal (tests; a command starts with none)."""
    _process.signals.last = None


class SafePoints:
    """A safe region: a signal takes effect at the next `check`.

    Inside `with SafePoints() as sp:` the first SIGINT (or SIGTERM, when the command line
    installed the policy) only records a request; the loop calls `sp.check()` where its state
    is consistent (after a whole chunk is recorded), which then raises KeyboardInterrupt. A
    second signal raises at once. A region opened inside one that holds a request starts with
    it (a command's final write, deferring a stop, is followed by more work: that work stops at
    its first safe point). Outside the main thread (where signal handlers cannot be set)
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
        regions = _process.signals.regions
        if not installed() and not regions:  # library use: SIGINT for this region only
            self._previous = signal.signal(signal.SIGINT, _handler)
        if regions:  # a stop the enclosing region holds is acted on here first
            self.requested = regions[-1].requested
        regions.append(self)
        self._entered = True
        return self

    def check(self) -> None:
        """Stop here if a stop was asked since the region began.

        Raises:
          KeyboardInterrupt: a signal asked for a stop.
        """
        if self.requested:
            self._answered = True
            raise KeyboardInterrupt

    def __exit__(self, exc_type, exc, tb) -> None:
        if not self._entered:
            return
        _process.signals.regions.remove(self)
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)
        if self.requested and not self._answered and exc_type is None:
            # never dropped: the enclosing region acts on it, or it stops the caller here
            if _process.signals.regions:
                _process.signals.regions[-1].requested = self.requested
            else:
                raise KeyboardInterrupt
