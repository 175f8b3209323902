"""Host memory: what is available now, and the one check made before every large allocation.

Every allocation whose size follows from a user's options (a board file read whole, the
estimator's enumerated strata, a kernel call's batch of chains, the large-n state) is checked
here first, so a short argument never exhausts memory: `check_memory` refuses it with one
line naming the option, the memory it would need and what is available. Drivers (and io's
readers) call it; it lives in `jaxqueens.parallel`, the layer that knows the machine, so
both can.
"""

from __future__ import annotations

import os

from jaxqueens.errors import QueensError

HEADROOM = 0.9
"""Share of the available memory a single run may plan to use."""


def available_memory() -> int | None:
    """The bytes of memory available now (Linux `MemAvailable`, else `sysconf`).

    Returns:
      Bytes, or None where neither can be read.
    """
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def format_bytes(nbytes: float) -> str:
    """A byte count for a message: `12.3 GiB`, `4.0 MiB`, `512 bytes`.

    Args:
      nbytes: the count.

    Returns:
      The text.
    """
    for unit, scale in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:,.1f} {unit}"
    return f"{nbytes:.0f} bytes"


def check_memory(need: float, what: str, fix: str, available: int | None = None) -> None:
    """Refuse (QueensError) to allocate `need` bytes when they do not fit in memory.

    Args:
      need: bytes the allocation (and what is built from it) will use at peak.
      what: what asks for it, naming the option, e.g. `"--depth 18 (n = 18)"`.
      fix: how to ask for less, e.g. `"use a smaller --depth"`.
      available: bytes available (default: `available_memory`; unknown: no check).
    """
    available = available_memory() if available is None else available
    if available is not None and need > HEADROOM * available:
        raise QueensError(
            f"{what} needs about {format_bytes(need)} of memory but only "
            f"{format_bytes(available)} is available; {fix}"
        )
