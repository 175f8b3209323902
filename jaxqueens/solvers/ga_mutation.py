"""Mutations of the GA kernels, each for ONE genome `[n]`.

Permutation encoding: `mut_swap` (DEAP's `mutShuffleIndexes` for `indpb > 0`, else one
swap), `mut_inversion`, `mut_scramble`; combination encoding: `mut_reset`
(DEAP's `mutUniformInt` for `indpb > 0`, else one gene reset). `MUTATIONS` names them
per encoding; `Mutation` is the signature a user's mutation keeps.

The only data-dependent loop of the GA operators is in `mut_swap`: one iteration per swap,
lowest gene first, as many as the most-mutated genome of a batch needs.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens.solvers.ga_genomes import bits, gather1d, randint, scatter1d, two_cuts, uniform

I32 = jnp.int32


def _coins(seed, n: int, indpb) -> jax.Array:
    """Genes to mutate: each with probability `indpb`; exactly one (uniform) if `indpb <= 0`."""
    per_gene = uniform(seed, 31, n) < indpb
    one = jnp.arange(n, dtype=I32) == randint(seed, 32, 1, n)[0]
    return jnp.where(indpb > 0, per_gene, one)


def _pack(mask: jax.Array) -> jax.Array:
    """bool `[n]` -> uint32 words `[ceil(n / 32)]`, gene k at bit k % 32 of word k // 32."""
    n = mask.shape[-1]
    w = -(-n // 32)
    m = jnp.pad(mask, (0, 32 * w - n)).reshape(w, 32).astype(jnp.uint32)
    return jnp.sum(m << jnp.arange(32, dtype=jnp.uint32), axis=1, dtype=jnp.uint32)


def _first_bit(words: jax.Array) -> jax.Array:
    """Index of the lowest set bit of packed words; 0 when none is set."""
    if words.shape[0] == 1:
        word, x = I32(0), words[0]
    else:
        word = jnp.argmax(words != 0).astype(I32)
        x = gather1d(words, word)
    low = 31 - lax.clz(x & (~x + jnp.uint32(1))).astype(I32)
    return word * 32 + jnp.maximum(low, 0)


def mut_swap(seed, x: jax.Array, indpb) -> jax.Array:
    """Swap mutation. `indpb > 0`: DEAP's `mutShuffleIndexes` (for each gene i in order, with
    probability indpb, swap it with a uniform other position); `indpb <= 0`: one such swap.

    The genes to swap are packed in a bit mask and visited lowest first (count-trailing-zeros),
    so the loop runs once per swap: as many iterations as the most-mutated genome of a batch.

    Args:
      seed: [] uint32 hash seed (consumed).
      x: [n] the genome.
      indpb: [] float32 per-gene rate; <= 0: one swap.

    Returns:
      [n] the mutated genome.
    """
    n = x.shape[-1]
    ar = jnp.arange(n, dtype=I32)
    other = randint(seed, 33, n, max(n - 1, 1))
    other = jnp.where(other >= ar, other + 1, other)  # partner of gene i: uniform over j != i

    def body(carry):
        words, y = carry
        i = _first_bit(words)
        ij = jnp.stack([i, gather1d(other, i)])
        if n <= 32:  # one word: clear its lowest set bit
            words = words & (words - jnp.uint32(1))
        else:
            bit = jnp.uint32(1) << (i % 32).astype(jnp.uint32)
            words = scatter1d(words, (i // 32)[None], (gather1d(words, i // 32) & ~bit)[None])
        return words, scatter1d(y, ij, gather1d(y, ij[::-1]))

    words = _pack(_coins(seed, n, indpb))
    return lax.while_loop(lambda c: jnp.any(c[0] != 0), body, (words, x))[1]


def mut_inversion(seed, x: jax.Array, indpb=None) -> jax.Array:
    """Inversion: reverse a random segment `[lo, hi)` (DEAP's cut points; `indpb` unused).

    Args:
      seed: [] uint32 hash seed (consumed).
      x: [n] the genome.
      indpb: [] float32 per-gene rate (unused).

    Returns:
      [n] the mutated genome.
    """
    del indpb
    n = x.shape[-1]
    lo, hi = two_cuts(seed, 34, n)
    ar = jnp.arange(n, dtype=I32)
    src = jnp.where((ar >= lo) & (ar < hi), lo + hi - 1 - ar, ar)
    return gather1d(x, src)


def mut_scramble(seed, x: jax.Array, indpb=None) -> jax.Array:
    """Scramble: shuffle a random segment `[lo, hi)` (`indpb` unused).

    Args:
      seed: [] uint32 hash seed (consumed).
      x: [n] the genome.
      indpb: [] float32 per-gene rate (unused).

    Returns:
      [n] the mutated genome.
    """
    del indpb
    n = x.shape[-1]
    lo, hi = two_cuts(seed, 35, n)
    ar = jnp.arange(n, dtype=I32)
    inside = (ar >= lo) & (ar < hi)
    # Sort key: position outside the segment, lo plus a random fraction inside it.
    key = jnp.where(inside, lo * 65536 + (bits(seed, 36, n) >> 16).astype(I32), ar * 65536)
    return gather1d(x, jnp.argsort(key).astype(I32))


def mut_reset(seed, x: jax.Array, indpb) -> jax.Array:
    """Random reset. `indpb > 0`: each gene replaced by a uniform row with probability indpb
    (DEAP's `mutUniformInt`); `indpb <= 0`: exactly one gene reset.

    Args:
      seed: [] uint32 hash seed (consumed).
      x: [n] the genome.
      indpb: [] float32 per-gene rate; <= 0: one gene reset.

    Returns:
      [n] the mutated genome.
    """
    n = x.shape[-1]
    return jnp.where(_coins(seed, n, indpb), randint(seed, 37, n, n).astype(x.dtype), x)


Mutation = Callable[[jax.Array, jax.Array, jax.Array], jax.Array]
"""`mutation(seed [] uint32, x [n], indpb [] float32) -> [n]`."""


MUTATIONS: dict[str, dict[str, Mutation]] = {
    "permutation": {"swap": mut_swap, "inversion": mut_inversion, "scramble": mut_scramble},
    "combination": {"reset": mut_reset},
}


DEFAULT_MUTATION = {"permutation": "swap", "combination": "reset"}
