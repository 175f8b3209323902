"""Knuth's probe of a counting task's tree: what `count --plan` estimates a count's size from.

One random root-to-leaf walk down the tree that `jaxqueens.solvers.count` searches for a task
(Knuth 1975, "Estimating the efficiency of backtrack programs"), every node's rows tried at once;
batching is `jaxqueens.parallel.count`'s choice.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens.core.constellations import COUNT_MASK, TABLE_WORDS
from jaxqueens.core.rng import hash_randint
from jaxqueens.solvers.count import child
from jaxqueens.solvers.count_types import Config, Problem


class Probe(NamedTuple):
    """What one random walk down a task's search tree reports (Knuth 1975): unbiased estimates
    of the whole task's search, exact for a tree with one branch per level."""

    edges: jax.Array  #: [] float32 tree edges the task's search takes (`edge` calls)
    found: jax.Array  #: [] float32 completions it finds


def probe(problem: Problem, seed, lane, config: Config) -> Probe:
    """One Knuth probe of the tree `jaxqueens.solvers.count.run` searches for a task.

    At each node the probe adds `w * popcount(av)` to the edges (one edge per row tried; `w` is
    the product of the branchings above, 1 at the root) and `w` times the rows counted on the row
    before the last level; the children `jaxqueens.solvers.count.edge` would enter
    (`jaxqueens.solvers.count.child`) number `c`; the probe goes down into one of them
    uniformly at random and multiplies `w` by `c` (`c = 0`: it ends, `w = 0`). Every level is one
    `fori_loop` iteration, the rows of a node tried at once (`[32]` words); the random child comes
    from the counter hash of (`seed`, level, `lane`) (`jaxqueens.core.rng`).

    Args:
      problem: the task (its prefix and level table).
      seed: uint32 seed of the counter hash.
      lane: the probe's index (its stream of the hash).
      config: the kernel's static shape.

    Returns:
      `Probe`: the estimated edges and completions.
    """
    rows = jnp.asarray(problem.table, jnp.uint32).reshape(config.levels, TABLE_WORDS)
    cols, ld, rd, av = (jnp.asarray(problem.prefix, jnp.uint32)[i] for i in range(4))
    bits = jnp.uint32(1) << jnp.arange(32, dtype=jnp.uint32)  # [32] every row's bit

    def body(level, carry):
        cols, ld, rd, av, w, edges, found = carry
        t = rows[level]
        bit = av & bits  # [32]
        nc, nl, nr, nav, enter = child(t, cols, ld, rd, bit)
        tried = bit != 0
        push = tried & enter  # [32] children entered
        edges = edges + w * lax.population_count(av).astype(jnp.float32)
        counted = jnp.where(tried, lax.population_count(nav & t[COUNT_MASK]), 0).sum()
        found = found + w * counted.astype(jnp.float32)
        c = push.sum(dtype=jnp.int32)
        pick = hash_randint(seed, level, lane, jnp.maximum(c, 1))
        k = jnp.argmax(jnp.cumsum(push, dtype=jnp.int32) > pick)  # the pick-th child entered
        live = c > 0
        av = jnp.where(live, nav[k], jnp.uint32(0))
        return nc[k], nl[k], nr[k], av, w * c.astype(jnp.float32), edges, found

    zero = jnp.float32(0)
    carry = (cols, ld, rd, av, jnp.float32(1), zero, zero)
    carry = lax.fori_loop(0, config.levels, body, carry)
    return Probe(carry[5], carry[6])
