"""The settings of `jaxqueens count`, JAX-free: `CountSettings` and the board sizes counting and
enumeration take."""

from __future__ import annotations

import dataclasses

from jaxqueens.core import arguments
from jaxqueens.drivers.settings import flag
from jaxqueens.errors import QueensError, clip
from jaxqueens.solvers.variants import COUNT_MAX_N

COUNT_ENUMERATE_MAX_N = 14  # largest board `count --enumerate` lists (n = 14: 365,596 solutions)
SWITCHES = ("unique", "toroidal", "plan", "enumerate")  # the fields that are `count`'s options


def refuse(why: str, **given) -> None:
    """Refuse the options `given` a value (not None or False), in one line: `why`, then the flags
    to drop."""
    shown = [arguments.flag_of(name) for name, value in given.items() if value]
    if shown:
        raise QueensError(f"{why}: drop {' and '.join(shown)}")


@dataclasses.dataclass(frozen=True, kw_only=True)
class CountSettings:
    """What an exact count does, checked once (frozen): the counts asked for (`SWITCHES`, the
    options of `jaxqueens count`) and how the items kernel splits the search (None: the
    driver's default). A count on the torus takes none of the other switches."""

    unique: bool = flag(
        "also count solutions distinct under the 8 symmetries (OEIS A002562)", default=False
    )
    toroidal: bool = flag(
        "count queens on a torus (diagonals taken modulo n; OEIS A051906) with the "
        "constrained search of 'jaxqueens complete' (n <= 32)",
        default=False,
    )
    plan: bool = flag(
        "count nothing: print the number of tasks and the run time predicted from "
        "Knuth probes of the search trees and bounded timed kernel calls (a few seconds "
        "at every n)",
        default=False,
    )
    enumerate: bool = flag(
        f"write every solution to --out (n <= {COUNT_ENUMERATE_MAX_N})", default=False
    )
    depth: int | None = None  #: columns placed on the host (None: `count_chunks.task_depth`)
    chunk: int | None = None  #: tasks per kernel call (None: `count_chunks.make_plan`'s)
    budget: int | None = None  #: tree edges per device and call (None: about a second's)
    kernel: str | None = None  #: "threads", "items" or None: the backend's (`count.kernel_route`)

    def __post_init__(self) -> None:
        for name in SWITCHES:
            object.__setattr__(self, name, arguments.flag(getattr(self, name), name))
        if self.toroidal:
            why = "--toroidal counts all solutions on the torus only"
            refuse(why, unique=self.unique, plan=self.plan, enumerate=self.enumerate)
        for name in ("depth", "chunk", "budget"):  # (a budget is at most 2^31 - 1 edges)
            object.__setattr__(
                self, name, arguments.integer(getattr(self, name), name, 1, optional=True)
            )
        if self.kernel not in (None, "threads", "items"):
            raise QueensError(f"kernel must be 'threads' or 'items', not {clip(repr(self.kernel))}")


def check_count_n(n, listed: bool = False) -> int:
    """`count`'s board size, checked: an int in 1..COUNT_MAX_N, or 1..COUNT_ENUMERATE_MAX_N when the
    solutions are `listed` (`count --enumerate`), not only counted."""
    n = arguments.integer(n, "n", None)
    if listed and not 1 <= n <= COUNT_ENUMERATE_MAX_N:
        raise QueensError(
            f"enumeration supports 1 <= n <= {COUNT_ENUMERATE_MAX_N} (n = 14 has 365,596 "
            f"solutions), not n = {n}; use 'jaxqueens count -n {n}' to count them"
        )
    if not 1 <= n <= COUNT_MAX_N:
        raise QueensError(f"n = {n} is out of range: counting supports 1 <= n <= {COUNT_MAX_N}")
    return n
