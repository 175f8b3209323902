"""Fitness functions of the GA kernels, each for ONE genome `[n]`, minimised: 0 is a solution.

`fitness` counts attacking pairs and `excess` the queens beyond the first on each line (DEAP's
N-Queens fitness); both are 0 exactly for solutions. `report_diagonals_only` is the score of the
University of Idaho report's GA: pairs on a diagonal only, so a score of 0 is NOT always a
solution, and callers check every such board. `TOROIDAL_FITNESS` and `forbidden_weight` (per
queen that `jaxqueens.solvers.constrained.stranded` counts) serve constrained boards; `Fitness`
is the signature a user's fitness keeps.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from jaxqueens.core.board import PAIRWISE_MAX_N, attacking_pairs_one, n_attacks_one

I32 = jnp.int32


SHIFT_MAX_N = PAIRWISE_MAX_N
"""Largest n whose fitness uses the shifted-slice pairwise form (faster than `board`'s dense
form on small boards; `board`'s O(n) line counts win on large ones)."""


def excess(x: jax.Array) -> jax.Array:
    """Queens beyond the first on each row, diagonal and anti-diagonal, `sum(k - 1)`: DEAP's
    N-Queens fitness (its example counts diagonals only; permutations have no row excess).
    0 exactly for solutions, like `fitness`. int32 scalar.

    Args:
      x: [n] one genome (rows of its queens).

    Returns:
      [] int32.
    """
    return n_attacks_one(x.astype(I32)).astype(I32)


def _shifted(x: jax.Array, hits, large=None) -> jax.Array:
    """[] int32 sum over k = 1..n-1 of `hits(d, k)`, d: row differences `k` columns apart;
    `large(x)` instead when n > `SHIFT_MAX_N` and `large` is given."""
    x = x.astype(I32)
    if large is not None and x.shape[-1] > SHIFT_MAX_N:
        return large(x)
    total = jnp.zeros((), I32)
    for k in range(1, x.shape[-1]):
        total += jnp.sum(hits(x[k:] - x[:-k], k), dtype=I32)
    return total


def fitness(x: jax.Array) -> jax.Array:
    """Attacking pairs of one genome `[n]` (rows, diagonals, anti-diagonals): int32 scalar.

    Small n: every pair once, as shift k compares `x[k:]` with `x[:-k]` (static slices, no
    gathers, n (n - 1) / 2 pairs instead of the dense n^2); larger n: `board`'s kernel.

    Args:
      x: [n] one genome (rows of its queens).

    Returns:
      [] int32.
    """
    hits = lambda d, k: (d == 0) | (d == k) | (d == -k)
    return _shifted(x, hits, lambda x: attacking_pairs_one(x).astype(I32))


def report_diagonals_only(x: jax.Array) -> jax.Array:
    """The GA report's score of one genome `[n]`: pairs of queens on a common diagonal or
    anti-diagonal, rows IGNORED (the report's fitness checks diagonals only, so in the
    combination encoding, where rows may repeat, a genome can score 0 and not be a solution).
    int32 scalar; equals `fitness` on permutations.

    Args:
      x: [n] one genome (rows of its queens).

    Returns:
      [] int32.
    """
    x = x.astype(I32)
    n = x.shape[-1]
    if n > SHIFT_MAX_N:  # O(n) line counts
        c = jnp.arange(n, dtype=I32)
        total = jnp.zeros((), I32)
        for idx in (x - c + n - 1, x + c):
            line = jnp.zeros(2 * n - 1, I32).at[idx].add(1)
            total += jnp.sum(line * (line - 1) // 2, dtype=I32)
        return total
    return _shifted(x, lambda d, k: (d == k) | (d == -k))


def _torus_lines(x: jax.Array, per_line) -> jax.Array:
    """[] int32 sum of `per_line(k)` over the counts `k` of queens per row and per modular
    diagonal `(x + c) mod n` and `(x - c) mod n`."""
    n = x.shape[-1]
    c = jnp.arange(n, dtype=I32)
    lines = tuple(jnp.zeros(n, I32).at[idx].add(1) for idx in (x, (x + c) % n, (x - c) % n))
    r, a, b = (jnp.sum(per_line(k), dtype=I32) for k in lines)
    return r + a + b


def toroidal_fitness(x: jax.Array) -> jax.Array:
    """Attacking pairs of one genome `[n]` on the torus (diagonals taken modulo n): int32.

    Pairs are counted per line, as the checker counts them (for even n a pair k = n / 2 columns
    apart can share both modular diagonals: two). Small n: shift k compares `x[k:]` with
    `x[:-k]`; the row difference d of a pair on the `(r - c)` diagonal is `k` modulo n
    (`k` or `k - n`, as |d| < n), on the `(r + c)` diagonal `-k` modulo n (`-k` or
    `n - k`); larger n: line counts.

    Args:
      x: [n] one genome (rows of its queens).

    Returns:
      [] int32.
    """
    n = x.shape[-1]
    # even n, k = n / 2: both diagonals, counted per line (checker)
    hits = lambda d, k: (
        (d == 0).astype(I32) + ((d == k) | (d == k - n)) + ((d == -k) | (d == n - k))
    )
    return _shifted(x, hits, lambda x: _torus_lines(x, lambda k: k * (k - 1) // 2))


def toroidal_excess(x: jax.Array) -> jax.Array:
    """`excess` on the torus: queens beyond the first on each row and modular diagonal.

    Args:
      x: [n] one genome (rows of its queens).

    Returns:
      [] int32.
    """
    return _torus_lines(x.astype(I32), lambda k: jnp.maximum(k - 1, 0))


TOROIDAL_FITNESS = {"pairs": toroidal_fitness, "excess": toroidal_excess}
"""The honest fitnesses on the torus (0 exactly for toroidal solutions)."""


def forbidden_weight(n: int) -> int:
    """What one queen on a forbidden square adds to the fitness: `n (n - 1) / 2 + 1`, more than
    all attacking pairs of a board together, so a board that uses a forbidden square always scores
    worse than any board that does not, and never 0.

    Args:
      n: board size.

    Returns:
      The penalty per queen on a forbidden square.
    """
    return n * (n - 1) // 2 + 1


Fitness = Callable[[jax.Array], jax.Array]
"""`fitness(x [n] int32) -> []` int or float, minimised (0: solved)."""


REPORT_FITNESS = "report-diagonals-only"
"""The GA report's score (`report_diagonals_only`): 0 does not mean solved."""


FITNESS = {"pairs": fitness, "excess": excess, REPORT_FITNESS: report_diagonals_only}
