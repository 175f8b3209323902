"""Knuth's probe kernel's types (`jaxqueens.solvers.estimate`): its static `Config`, checked
when built, its (empty) `Params`, the stratum a probe starts at, a probe's `State` and `Result`,
and the per-group sums the driver adds up on the host.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import numpy as np

from jaxqueens.solvers import base
from jaxqueens.solvers.variants import ESTIMATE_MAX_N as MAX_N


@dataclasses.dataclass(frozen=True)
class Config:
    """Static configuration (hashable, jit-static): what fixes shapes and the compiled loop."""

    n: int  #: board size, 1..64.
    #: the level a probe starts at: the queens of the stratum it walks below (0: the root). Levels
    #: `depth .. n-1` are walked.
    depth: int = 0

    def __post_init__(self):
        base.check_whole("n", self.n, 1, MAX_N)
        base.check_whole("depth", self.depth, 0, self.n)

    @property
    def words(self) -> int:
        return max(1, -(-self.n // 32))


class Params(NamedTuple):
    """Dynamic parameters: none. Knuth's probe has no number to tune (each level's row is
    uniform among the free ones); how many probes, and from which strata, is the caller's
    batch (`estimate`). Kept so that the estimator takes the same
    arguments as every family."""


def default_params(config: Config) -> Params:
    """The (empty) parameters of a probe.

    Args:
      config: the static `Config`.

    Returns:
      The empty `Params`.
    """
    return Params()


class Problem(NamedTuple):
    """Where the probe starts (dynamic)."""

    #: [3, W] uint32 the stratum: rows taken, and rows attacked in column `depth` along each
    #: diagonal (the masks of `expand`); None: the empty board
    masks: jax.Array | None = None


class State(NamedTuple):
    """One probe between two levels (`W = config.words`)."""

    cols: jax.Array  #: [W] uint32 rows taken
    ld: jax.Array  #: [W] uint32 rows attacked in the next column along one diagonal
    rd: jax.Array  #: [W] uint32 rows attacked in the next column along the other diagonal
    m: jax.Array  #: [] float32 weight mantissa in [1, 2)
    e: jax.Array  #: [] int32 weight exponent: the weight is m * 2^e
    nodes: jax.Array  #: [] float32 node sum below the start, relative to 2^e
    alive: jax.Array  #: [] bool: the walk has found a free row at every level so far
    seed: jax.Array  #: [2] uint32, the 64-bit stream seed (low, high word)
    lane: jax.Array  #: [] uint32 the probe's lane in its stream


class Result(NamedTuple):
    """What one probe reports."""

    m: jax.Array  #: [] float32 weight mantissa in [1, 2): the walk's product d_depth ... d_(j-1)
    e: jax.Array  #: [] int32 weight exponent: the weight is m * 2^e
    nodes: jax.Array  #: [] float32 node sum below the start, relative to 2^e
    solved: jax.Array  #: [] bool: reached depth n (a solution); the Q(n) estimate is 0 otherwise
    depth: jax.Array  #: [] int32 queens on the board where the walk ended (n when solved)


class GroupSums(NamedTuple):
    """Probes reduced per group of `group` (`group_sums`), for the host's float64."""

    top: jax.Array  #: [..., G] int32 the group's largest exponent; sums below scaled by 2^-top
    w: jax.Array  #: [..., G] float32 sum of weights
    w2: jax.Array  #: [..., G] float32 sum of squared weights (scaled by 2^-2top)
    nodes: jax.Array  #: [..., G] float32 sum of node sums
    nodes2: jax.Array  #: [..., G] float32 sum of squared node sums (scaled by 2^-2top)
    hits: jax.Array  #: [..., G] int32 probes that reached depth n
    w3: jax.Array  #: [..., G] float32 sum of cubed weights (scaled by 2^-3top)
    nodes3: jax.Array  #: [..., G] float32 sum of cubed node sums (scaled by 2^-3top)


def words_of(masks64: np.ndarray, words: int) -> np.ndarray:
    """The kernel's mask layout: uint64 `[S, 3]` -> uint32 `[S, 3, W]` (host NumPy).

    Args:
      masks64: uint64 [S, 3] strata masks.
      words: W, uint32 words per mask.

    Returns:
      uint32 [S, 3, W].
    """
    return np.stack(
        [
            ((masks64 >> np.uint64(32 * w)) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
            for w in range(words)
        ],
        axis=-1,
    )
