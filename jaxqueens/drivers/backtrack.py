"""First solutions by plain backtracking: the classic search and batches of randomised ones.

Kernel in `backtrack` (one search); here the host functions check sizes,
run the jitted searches, read the results once and verify every solution with the independent
checker. `jaxqueens solve --method backtrack` (`solve`) calls
`first_solution`.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import arguments, checker
from jaxqueens.core.board import as_size
from jaxqueens.errors import QueensError
from jaxqueens.parallel import items
from jaxqueens.parallel.devices import local_device_count
from jaxqueens.solvers import backtrack
from jaxqueens.solvers.backtrack import DEFAULT_MAX_STEPS, MAX_N


def _check_n(n: int) -> None:
    if not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_N:
        raise QueensError(f"n = {n} is out of range: backtracking supports 1 <= n <= {MAX_N}")


_classic = jax.jit(backtrack.classic, static_argnums=(0,))


def first_solution(
    n: int, max_steps: int = DEFAULT_MAX_STEPS
) -> tuple[np.ndarray | None, int, int]:
    """The classic first solution: rows tried in increasing order, column by column.

    Args:
      n: board size, 1..32.
      max_steps: the most placements plus backtracks the search may take.

    Returns:
      `(rows, placements, backtracks)`: rows is int32 `[n]` (`rows[c]` = row of column c's
      queen), or None when the board has no solution (n = 2, 3); the counts then describe the
      exhaustive search (n = 2: 2 and 2; n = 3: 5 and 5).

    Raises:
      QueensError: n out of 1..32, or the search needs more than `max_steps` steps.
    """
    n = as_size(n)
    _check_n(n)
    max_steps = arguments.integer(max_steps, "max_steps", 1)
    r = jax.tree.map(np.asarray, _classic(backtrack.Config(int(n), max_steps)))
    placements, backtracks = int(r.placements), int(r.backtracks)
    if not r.solved:
        if placements + backtracks >= max_steps:
            raise QueensError(
                f"backtracking for n = {n} did not finish within {max_steps:,} "
                "steps; raise max_steps or use a randomised search"
            )
        return None, placements, backtracks
    rows = r.rows
    checker.require_solutions(rows[None], what=f"backtracking for n = {n}", n=n)
    return rows, placements, backtracks


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def _random(key, config: backtrack.Config, num: int, num_devices: int) -> backtrack.Result:
    """Searches `0 .. num - 1`, search i from `fold_in(key, i)`; `num` divides by
    `num_devices`."""
    ids = jnp.arange(num, dtype=jnp.int32)
    return items.each(
        lambda i: backtrack.randomised(jax.random.fold_in(key, i), config), ids, num_devices
    )


def random_first_solutions(key, n: int, num: int, max_steps: int = 1_000_000) -> backtrack.Result:
    """`num` independent randomised backtracking searches, batched.

    Search i tries the rows of each column in a random order drawn from `fold_in(key, i)`, so
    its result does not depend on `num` or the device count. Solved rows are verified by the
    checker.

    Args:
      key: a typed `jax.random.key` (or a legacy `uint32[2]` key).
      n: board size, 1..32.
      num: searches to run, at least 1.
      max_steps: the most placements plus backtracks each search may take.

    Returns:
      `Result` of host arrays with leading axis [num].

    Raises:
      QueensError: n out of 1..32, or `num` or `max_steps` not a positive integer.
    """
    n = as_size(n)
    _check_n(n)
    num = arguments.integer(num, "num", 1)
    max_steps = arguments.integer(max_steps, "max_steps", 1)
    d = local_device_count()
    padded = -(-num // d) * d
    r = jax.tree.map(
        lambda x: np.asarray(x)[:num],
        _random(key, backtrack.Config(int(n), int(max_steps)), padded, d),
    )
    if r.solved.any():
        checker.require_solutions(r.rows[r.solved], what=f"randomised backtracking, n = {n}", n=n)
    return r
