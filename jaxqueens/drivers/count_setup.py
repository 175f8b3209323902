"""The settings of `jaxqueens count`, JAX-free: the board sizes counting and enumeration take."""

from __future__ import annotations

from jaxqueens.core import arguments
from jaxqueens.errors import QueensError
from jaxqueens.solvers.variants import COUNT_MAX_N

COUNT_ENUMERATE_MAX_N = 14  # largest board `count --enumerate` lists (n = 14: 365,596 solutions)


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
