"""The repairs of the GA kernels on a constrained instance: after crossover and mutation they put
every fixed queen (`fixed_of`) back on its square, one function per encoding
(`REPAIRS`).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens.solvers.constrained import Mask
from jaxqueens.solvers.ga_genomes import gather1d, scatter1d

I32 = jnp.int32


class Fixed(NamedTuple):
    """The fixed queens of an instance, as the repair reads them (`fixed_of`)."""

    cols: jax.Array  #: [n] int32 fixed columns first, then padding n
    rows: jax.Array  #: [n] int32 the row of each of those fixed queens (padding: 0)
    num: jax.Array  #: [] int32 number of fixed queens
    is_fixed: jax.Array  #: [n] bool column holds a fixed queen
    home: jax.Array  #: [n] int32 row of the fixed queen of each column (free columns: 0)


def fixed_of(mask: Mask) -> Fixed:
    """The fixed queens of `mask`: every column not among `mask.free[:mask.nfree]`.

    Args:
      mask: the instance's `Mask`.

    Returns:
      Its `Fixed` queens.
    """
    n = mask.free.shape[0]
    ar = jnp.arange(n, dtype=I32)
    is_free = jnp.zeros(n, I32).at[mask.free].max((ar < mask.nfree).astype(I32)) > 0
    cols = jnp.nonzero(~is_free, size=n, fill_value=n)[0].astype(I32)
    rows = jnp.where(cols < n, mask.home[jnp.minimum(cols, n - 1)], 0).astype(I32)
    home = jnp.where(is_free, 0, mask.home).astype(I32)
    return Fixed(cols, rows, n - jnp.sum(is_free, dtype=I32), ~is_free, home)


def repair_permutation(x: jax.Array, fixed: Fixed) -> jax.Array:
    """Put every fixed queen of a permutation `x [n]` back on its row by one swap each (the
    gene holding that row moves to where the fixed gene was), so `x` stays a permutation.
    Fixed queens must have distinct rows (the driver checks), so a later swap never moves an
    earlier fixed queen.

    Args:
      x: [n] a permutation genome.
      fixed: the instance's `Fixed` queens (`fixed_of`).

    Returns:
      [n] the repaired permutation.
    """

    def put(i, y):
        c = fixed.cols[i]
        j = jnp.argmax(y == fixed.rows[i].astype(y.dtype)).astype(I32)
        ij = jnp.stack([c, j])
        return scatter1d(y, ij, gather1d(y, ij[::-1]))

    return lax.fori_loop(0, fixed.num, put, x)


def repair_combination(x: jax.Array, fixed: Fixed) -> jax.Array:
    """Set every fixed column of `x [n]` to its fixed row.

    Args:
      x: [n] a combination genome.
      fixed: the instance's `Fixed` queens (`fixed_of`).

    Returns:
      [n] the repaired genome.
    """
    return jnp.where(fixed.is_fixed, fixed.home.astype(x.dtype), x)


REPAIRS = {"permutation": repair_permutation, "combination": repair_combination}
