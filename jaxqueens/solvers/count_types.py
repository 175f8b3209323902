"""The types and stack words of the exact-counting kernel (`jaxqueens.solvers.count`).

`Config` (the static shape), `Params` (a call's edge budget), a task's search as the drivers'
hot loop carries it (`Dfs`) and as the kernel contract does (`State`), a task (`Problem`), every
task of a board (`Problems`), what a search reports (`Result`); and the stack words, root marker,
64-bit add and largest budget that the count, prefix and complete kernels share.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core.constellations import TABLE_WORDS
from jaxqueens.errors import QueensError
from jaxqueens.solvers import base

COLS, LD, RD, BACK, AV = range(5)  # the words of a stack row
WORDS = 5
DONE = 0xFFFFFFFF  # `back` of the root level: returning there ends the search


def add64(lo, hi, x):
    """`(hi, lo) + x` on two uint32 words with carry: exact where a uint32 sum would wrap.

    Args:
      lo: low word, uint32.
      hi: high word, uint32.
      x: uint32 addend.

    Returns:
      `(lo, hi)` of the sum.
    """
    lo2 = lo + x
    return lo2, hi + (lo2 < x).astype(jnp.uint32)


HEAD = 4  # a search item: (d, count, 0, 0), then the stack, then the level table
MAX_BUDGET = 2**31 - 1  # edges one call may take (a count never exceeds the edges taken)


@dataclasses.dataclass(frozen=True)
class Config:
    """Static shape of a constellation search (hashable, jit-static)."""

    n: int  #: board size (uint32 masks: n <= 32).
    #: rows of a level table, a power of two above the most levels any task has (the level index is
    #: masked to it, so no index is ever clamped).
    levels: int

    def __post_init__(self):
        base.check_whole("n", self.n, 1, 32)
        base.check_whole("levels", self.levels, 2, 1 << 12)
        if self.levels & (self.levels - 1):
            raise QueensError(f"levels must be a power of two >= 2, got {self.levels}")

    @property
    def rows(self) -> int:
        """Stack rows: twice the table rows, so the masked row and its child are in range."""
        return 2 * self.levels

    @property
    def state_width(self) -> int:
        """uint32 words of a search's resumable state: `HEAD`, then the stack."""
        return HEAD + WORDS * self.rows

    @property
    def width(self) -> int:
        """uint32 words of a search item: its state, then its level table."""
        return self.state_width + TABLE_WORDS * self.levels


class Params(NamedTuple):
    """Dynamic parameters: a new value never recompiles; `jax.vmap` sweeps them."""

    budget: jax.Array  #: [] int32 in 0..MAX_BUDGET: tree edges a call may take


class Dfs(NamedTuple):
    """One task's search as the drivers' hot loop carries it, resumable (`R` =
    `config.rows`); the contract's `State` adds 64-bit totals around it."""

    d: jax.Array  #: [] int32 stack row (= level) of the current node; -1 once searched
    found: jax.Array  #: [] uint32 completions found since the state was unpacked (<= edges taken)
    stack: jax.Array  #: [5 R] uint32: row r = (cols, ld, rd, back, av) of level r


class Problem(NamedTuple):
    """One task (dynamic): where its search starts and the levels it walks
    (`jaxqueens.solvers.count.problems` builds every task of a board)."""

    prefix: jax.Array  #: [4] uint32 (cols, ld, rd, av) at the task's first level
    table: jax.Array  #: [levels * TABLE_WORDS] uint32 its level table (core.constellations)


class State(NamedTuple):
    """One task's search, resumable (`R` = `config.rows`)."""

    d: jax.Array  #: [] int32 stack row (= level) of the current node; -1 once searched
    stack: jax.Array  #: [5 R] uint32: row r = (cols, ld, rd, back, av) of level r
    found: jax.Array  #: [2] uint32 completions found since init (low, high word: exact < 2^64)
    edges: jax.Array  #: [2] uint32 tree edges taken since init (low, high word)


class Result(NamedTuple):
    """What one task's search reports."""

    found: jax.Array  #: [2] uint32 completions found (low, high word: exact below 2^64)
    finished: jax.Array  #: [] bool the task's tree is searched (found is its completion count)
    edges: jax.Array  #: [2] uint32 tree edges taken (low, high word)


class Problems(NamedTuple):
    """Every task of a board (host NumPy; `jaxqueens.solvers.count.problems`):
    `Q(n) = sum(weights * found)`."""

    config: Config  #: the static shape every task shares
    tasks: Problem  #: prefix [P, 4], table [P, levels * TABLE_WORDS] uint32
    weights: np.ndarray  #: [P] int64 each task's weight (its constellation's class size)
