"""Process-wide state: what one jaxqueens process remembers between calls, in one module.

Each object below holds one concern that no argument can carry: a signal handler or an exit
handler reads it, a cache keeps it for the life of the process, or a command run inside a `run`
sweep finds the sweep's state through it. Each class says which module writes it and why it is
per process. Importing this module creates the objects and nothing else: no signal handler, no
environment variable, no JAX setting.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO


@dataclass(slots=True)
class JaxSetup:
    """Whether `configure` set JAX up (`parallel.devices`: `configure` and
    `local_device_count` write it). Per process because JAX's settings are: the note about a
    run on too few CPU devices is said once a process, and never after `configure`."""

    configured: bool = False  # `configure` was called in this process
    noted: bool = False  # `local_device_count` has considered its few-devices note (said once)


@dataclass(slots=True)
class CompileCache:
    """JAX's persistent compilation cache and the executables kept in memory (`parallel.cache`).

    `configure_cache` writes the folder (JAX's cache setting is per process) and `warn_cache`
    the one warning; `kept` and the executables' keys fill caches that last as long as the
    process (an executable is compiled or loaded once a process, whatever the calls)."""

    folder: Path | None = None  # the cache folder in use; None: the cache is off
    problem: str | None = None  # why the folder asked for is not used, until `warn_cache` says it
    warned: bool = False  # `warn_cache` has said it
    environment: str | None = None  # the part of every executable's key fixed for the process
    # executable key -> executable, least recently used first (`kept`)
    kept: OrderedDict[tuple, Any] = field(default_factory=OrderedDict)
    # guards `kept`: drivers load executables from a background thread too
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(slots=True)
class BatchSizes:
    """Batches `parallel.sizing.choose` found to fit a device, a cache: the next run of the
    same workload on the same device compiles only the chosen batch."""

    # (workload key, target) -> (batch, its bytes)
    chosen: dict[tuple[Hashable, Any], tuple[int, int]] = field(default_factory=dict)


@dataclass(slots=True)
class Signals:
    """The signal policy of `io.interrupts` (`install`, `uninstall`, `SafePoints` and the
    handler write it). Per process because a signal handler runs between any two steps of the
    main thread and takes no arguments: what it acts on must be reachable from here."""

    # signal number -> the handler `install` replaced (empty: not installed)
    installed: dict[int, Any] = field(default_factory=dict)
    # the open `SafePoints`, innermost last (the main thread's)
    regions: list[Any] = field(default_factory=list)
    last: int | None = None  # the number of the last signal received (for the exit code)
    handled: int = 0  # signals the Python handler took (when the main thread ran it), ever
    wakeup: tuple[int, int, Any] | None = None  # (wakeup pipe's write end, fd replaced, watcher)


@dataclass(slots=True)
class Commands:
    """The commands running, for `io.writing` (`ending` and `resumed_by` write it). Per process
    because a `run` sweep runs commands inside itself and a signal's `KeyboardInterrupt` reaches
    the innermost one: its final write, the checkpoints it retires and the resume advice are
    found here by writers that are not given the command."""

    resume_how: str | None = None  # how to continue, while a `run` sweep's setting runs
    # each running command's end (`io.writing`), innermost last; None: a sweep's setting
    endings: list[Any] = field(default_factory=list)


@dataclass(slots=True)
class Locks:
    """The `--out` folder locks this process holds (`io.writing.acquire` writes it). Per
    process because an exit handler (`release_all`) removes them, and a sweep's setting writing
    into the sweep's folder finds the lock it already holds."""

    # lock file -> whether this process made its folder
    held: dict[Path, bool] = field(default_factory=dict)


@dataclass(slots=True)
class Writes:
    """What `io.atomic` keeps across writes: a cache of the folders already swept of stale
    temporary files (once a folder and process), and the open recordings, nested as a sweep's
    report records inside the commands it runs."""

    swept: set[str] = field(default_factory=set)  # folders swept by this process
    # the open `recording`s' kept bytes by path, innermost last
    recordings: list[dict[Path, bytes]] = field(default_factory=list)


@dataclass(slots=True)
class Logs:
    """Whether structured logs are on (`io.progress.enable` and `disable` write it). Per process
    because `--log-json` is given anywhere on the command line and every progress bar of every
    layer logs through it without being given it."""

    enabled: bool = False  # `--log-json`: every event is written
    stream: TextIO = sys.stderr  # where the events go


jax_setup = JaxSetup()
compile_cache = CompileCache()
batch_sizes = BatchSizes()
signals = Signals()
commands = Commands()
locks = Locks()
writes = Writes()
logs = Logs()
