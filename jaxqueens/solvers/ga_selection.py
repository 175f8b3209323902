"""Selections of the GA kernels, over one population's fitness `[P]`.

The kernel's selections `SELECTIONS` (`select_tournament`: DEAP's `selTournament`, best of k
drawn with replacement; `select_distinct_tournament`: the best of k *distinct* individuals) take
a dynamic size up to a static capacity, so a swept tournament size never recompiles, and keep the
signature a user's selection has too (`Selection`); `best_indices` / `worst_indices` are the
truncation and elitism helpers.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens.core.rng import hash_bits
from jaxqueens.solvers.ga_genomes import bits, gather1d, randint

I32 = jnp.int32


def tournament(seed, fit: jax.Array, k: int, size=None) -> jax.Array:
    """Index of the best (lowest fitness) of `size` individuals drawn with replacement.

    DEAP's `selTournament` for one slot: ties go to the first aspirant drawn. `k` (static)
    is the most aspirants drawn; `size` (dynamic, 1..k; default k) how many of them compete,
    so a swept tournament size never recompiles and `size == k` gives exactly the draw of a
    static tournament of k.

    Args:
      seed: [] uint32 hash seed (consumed).
      fit: [P] fitness of the population.
      k: the most aspirants drawn (static).
      size: [] int32 aspirants that compete, 1..k (None: k).

    Returns:
      [] int32 index of the winner.
    """
    idx = randint(seed, 11, k, fit.shape[0])
    f = gather1d(fit, idx)
    if size is not None:
        worst = jnp.inf if jnp.issubdtype(f.dtype, jnp.floating) else jnp.iinfo(f.dtype).max
        f = jnp.where(jnp.arange(k) < size, f, worst)  # an aspirant left out scores the worst
    return idx[jnp.argmin(f)]


def distinct_indices(seed, size: int, k: int, count=None) -> jax.Array:
    """`k` distinct indices of `range(size)` (Floyd's algorithm, k unrolled steps).

    With `count` (dynamic, 1..k) only the first `count` are drawn (Floyd's algorithm for
    `count`; the rest of the `[k]` result is unspecified); `count == k` gives the draw of
    a static `k`.

    Args:
      seed: [] uint32 hash seed (consumed).
      size: the range to draw from (static).
      k: the most indices drawn (static).
      count: [] int32 indices drawn, 1..k (None: k).

    Returns:
      [k] int32 indices (past `count`: unspecified).
    """
    r = bits(seed, 12, k)
    top = size - k if count is None else size - jnp.asarray(count, I32)
    chosen: list[jax.Array] = []
    for t in range(k):
        j = top + t
        c = (r[t] % jnp.asarray(j + 1).astype(jnp.uint32)).astype(I32)
        if chosen:
            c = jnp.where(jnp.any(jnp.stack(chosen) == c), j, c).astype(I32)
        chosen.append(c)
    return jnp.minimum(jnp.stack(chosen), size - 1)  # only the unused tail can pass size - 1


def select_tournament(seed, fit: jax.Array, size, count: int, *, max_size: int) -> jax.Array:
    """Selection `[count]`: `count` independent tournaments (DEAP's `selTournament`), slot
    i from the seed `hash_bits(seed, 1, i)`; at most `max_size` (static) aspirants each.

    Args:
      seed: [] uint32 hash seed (consumed).
      fit: [P] fitness of the population.
      size: [] int32 aspirants per tournament, 1..`max_size`.
      count: individuals to select (static).
      max_size: the most aspirants (static).

    Returns:
      [count] int32 indices into the population.
    """
    slots = hash_bits(seed, 1, jnp.arange(count, dtype=jnp.uint32))
    return jax.vmap(lambda s: tournament(s, fit, max_size, size))(slots)


def select_distinct_tournament(
    seed, fit: jax.Array, size, count: int, *, max_size: int
) -> jax.Array:
    """Selection `[count]`: the `count` best of one tournament of `size` distinct random
    individuals, best first (ties: the earlier drawn); the classic steady-state GA takes the
    best two of five.

    Args:
      seed: [] uint32 hash seed (consumed).
      fit: [P] fitness of the population.
      size: [] int32 aspirants per tournament, `count..max_size` (None: `max_size`).
      count: individuals to select (static).
      max_size: the most aspirants (static).

    Returns:
      [count] int32 indices into the population.
    """
    idx = distinct_indices(seed, fit.shape[0], max_size, size)
    score = -gather1d(fit, idx).astype(jnp.float32)
    if size is not None:
        score = jnp.where(jnp.arange(max_size) < size, score, -jnp.inf)
    _, order = lax.top_k(score, count)
    return idx[order]


def best_indices(fit: jax.Array, m: int) -> jax.Array:
    """Indices `[m]` of the `m` lowest fitness values (ties: lower index first).

    Args:
      fit: [P] fitness values.
      m: how many (static).

    Returns:
      [m] int32 indices.
    """
    if m == 1:
        return jnp.argmin(fit)[None].astype(I32)
    return lax.top_k(-fit.astype(jnp.float32), m)[1]


def worst_indices(fit: jax.Array, m: int) -> jax.Array:
    """Indices `[m]` of the `m` highest fitness values (ties: lower index first).

    Args:
      fit: [P] fitness values.
      m: how many (static).

    Returns:
      [m] int32 indices.
    """
    if m == 1:
        return jnp.argmax(fit)[None].astype(I32)
    return lax.top_k(fit.astype(jnp.float32), m)[1]


Selection = Callable[[jax.Array, jax.Array, jax.Array, int], jax.Array]
"""`select(seed [] uint32, fit [P], size [] int32, count: int) -> [count]` int indices."""


SELECTIONS: dict[str, Callable[..., jax.Array]] = {
    "tournament": select_tournament,
    "distinct_tournament": select_distinct_tournament,
}
"""Built-in selections (`max_size`: the static tournament capacity, bound by the kernel)."""


DEFAULT_SELECTION = {"steady": "distinct_tournament", "generational": "tournament"}
