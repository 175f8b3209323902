"""The types and item layout of the constrained exact kernel (`jaxqueens.solvers.complete`).

A lane's search (`State`, the drivers' lanes and the contract's state alike), a call's edge
budget (`Params`), an instance (`Problem`) and its masks' check, what its search reports
(`Result`), and the words of a packed item.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.errors import QueensError
from jaxqueens.solvers import base

COLS, LD, RD, AV, BACK = range(5)  # the words of a stack row
LEVEL, BUDGET, STOP = 4, 5, 6  # item layout: root (cols, ld, rd, av), level, budget, stop flag,
HEAD = 7  # then the allowed masks [n]
UNKNOWN, SAT, UNSAT = 0, 1, 2  # `Result` status


class Params(NamedTuple):
    """Dynamic parameters: a new value never recompiles; `jax.vmap` sweeps them."""

    budget: jax.Array  #: [] int32 in 0..MAX_BUDGET: tree edges a call may take


class State(NamedTuple):
    """The DFS state of one item (`R = n + 1` stack rows, `C = max(cap, 1)`): the drivers'
    lanes and the contract's state alike."""

    #: [] int32 stack row of the current level; -1 once the sub-tree is searched; -2 - r once a
    #: `stop` item found a solution whose last column is stack row r
    d: jax.Array
    level: jax.Array  #: [] int32 board column of stack row 0
    budget: jax.Array  #: [] int32 steps allowed in this call
    stop: jax.Array  #: [] bool stop at the first solution (its path is then read off the stack)
    steps: jax.Array  #: [] int32 steps (tree edges) taken in this call
    lo: jax.Array  #: [] uint32 solutions found, low word
    hi: jax.Array  #: [] uint32 solutions found, high word
    allowed: jax.Array  #: [n + 1] uint32 allowed rows per column (entry n unused, 0)
    stack: jax.Array  #: [R, 5] uint32 (cols, ld, rd, av, back) per level
    sols: jax.Array  #: [C, n + 1] uint32 cols masks along each listed solution's path


class Problem(NamedTuple):
    """One constrained instance (dynamic): `jaxqueens.solvers.complete.problem` builds it from a
    `jaxqueens.core.constraints.Constraints`."""

    allowed: jax.Array | np.ndarray  #: [n] uint32 rows each column may use (column_masks)


class Result(NamedTuple):
    """What one instance's search reports (`C = max(cap, 1)`)."""

    status: jax.Array  #: [] int32 SAT (a solution found), UNSAT (searched, none) or UNKNOWN
    found: jax.Array  #: [2] uint32 solutions found (low, high word); decide: 1 once SAT
    finished: jax.Array  #: [] bool the search is over (count: every solution is counted)
    rows: jax.Array  #: [n] int32 the first solution found (rows[x] = row of column x); -1: none
    boards: jax.Array  #: [C, n] int32 the solutions listed (cap 0: rows); -1 past the count
    steps: jax.Array  #: [] int32 tree edges taken since init


def check_allowed(allowed, n: int) -> jax.Array:
    """An instance's allowed-row masks checked (`Problem.allowed`): a traced mask cannot be read;
    a concrete one with a bit at or above n, or negative, is refused.

    Args:
      allowed: `[n]` integer row masks, one per column.
      n: board size.

    Returns:
      uint32 `[n]`, every bit at or above n dropped.

    Raises:
      QueensError: not an integer array of shape `[n]`, or a mask marking rows off the board.
    """
    try:
        shape, dtype = jnp.shape(allowed), jnp.result_type(allowed)
    except TypeError as err:
        raise QueensError(f"problem.allowed must be an array of [{n}] row masks") from err
    if shape != (n,):
        raise QueensError(
            f"problem.allowed must have shape [{n}] (one mask per column), got {list(shape)}"
        )
    if not jnp.issubdtype(dtype, jnp.integer):
        raise QueensError(f"problem.allowed must hold integer row masks, got {dtype}")
    host = base.concrete(allowed)
    if host is not None and ((host < 0).any() or (host.astype(np.uint64) >> np.uint64(n)).any()):
        bad = int(np.argmax((host < 0) | (host.astype(np.uint64) >> np.uint64(n) != 0)))
        raise QueensError(
            f"problem.allowed[{bad}] = {int(host[bad])} marks rows off the board: a mask of "
            f"n = {n} rows lies in 0..{(1 << n) - 1}"
        )
    return jnp.asarray(allowed).astype(jnp.uint32) & jnp.uint32((1 << n) - 1)
