"""Every GA operator (jaxqueens.solvers.ga_crossover, ga_mutation, ga_selection, ga_fitness,
ga_genomes, ga_masked) together: permutation operators return permutations (property tests), each
gives the same result with and without jit, and compiles once per shape."""

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxqueens.solvers import (
    ga_crossover,
    ga_fitness,
    ga_genomes,
    ga_masked,
    ga_mutation,
    ga_selection,
)
from tests.solvers.test_ga_genomes import assert_perms, perms, seeds

SIZES = (3, 8, 20, 64)


@functools.cache
def _all_perm_ops(n):
    """One jitted function per n: every permutation operator on a batch of parent pairs."""

    def f(s, a, b, indpb):
        out = {}
        for name, cx in ga_crossover.CROSSOVERS["permutation"].items():
            out[name] = jax.vmap(cx)(s, a, b)
        for name, mut in ga_mutation.MUTATIONS["permutation"].items():
            out[name] = jax.vmap(mut, in_axes=(0, 0, None))(s, a, indpb)
        return out

    return jax.jit(f)


@settings(max_examples=12, deadline=None)
@given(
    n=st.sampled_from(SIZES),
    seed=st.integers(0, 2**31 - 1),
    indpb=st.sampled_from([0.0, 0.1, 0.5, 1.0]),
)
def test_permutation_operators_return_permutations(n, seed, indpb):
    rng = np.random.default_rng(seed)
    a, b = perms(rng, 128, n), perms(rng, 128, n)
    out = _all_perm_ops(n)(seeds(rng, 128), a, b, indpb)
    for res in out.values():
        for child in res if isinstance(res, tuple) else (res,):
            assert_perms(child, n)


# -------------------------------------------------------------------------- jit / no jit, retracing
def _operator_cases(rng, n=5, batch=8):
    """(name, operator batched over a population, its arguments) for every operator (small n:
    without jit every shape of every op compiles on its own)."""
    s = seeds(rng, batch)
    a, b = perms(rng, batch, n), perms(rng, batch, n)
    c = rng.integers(0, n, (batch, n)).astype(np.int8)
    fit = jnp.asarray(rng.permutation(20).astype(np.int32))
    mask = jnp.asarray(rng.random(batch) < 0.4)
    cases = [
        (f"cx_{name}", jax.vmap(cx), (s, a, b))
        for name, cx in ga_crossover.CROSSOVERS["permutation"].items()
    ]
    cases += [
        (f"cx_{name}", jax.vmap(cx), (s, c, c[::-1]))
        for name, cx in ga_crossover.CROSSOVERS["combination"].items()
    ]
    cases += [
        (f"mut_{name}", jax.vmap(mut, in_axes=(0, 0, None)), (s, a, jnp.float32(0.3)))
        for name, mut in ga_mutation.MUTATIONS["permutation"].items()
    ]
    cases += [
        (
            "mut_reset",
            jax.vmap(ga_mutation.mut_reset, in_axes=(0, 0, None)),
            (s, c, jnp.float32(0.3)),
        )
    ]
    cases += [(f"fitness_{name}", jax.vmap(f), (c,)) for name, f in ga_fitness.FITNESS.items()]
    cases += [
        ("fisher_yates", jax.vmap(lambda s: ga_genomes.fisher_yates(s, n)), (s,)),
        (
            "tournament",
            jax.vmap(lambda s, f: ga_selection.tournament(s, f, 3), in_axes=(0, None)),
            (s, fit),
        ),
        (
            "distinct_tournament",
            jax.vmap(
                lambda s, f: ga_selection.select_distinct_tournament(s, f, None, 2, max_size=4),
                in_axes=(0, None),
            ),
            (s, fit),
        ),
        ("best_indices", lambda f: ga_selection.best_indices(f, 3), (fit,)),
        ("worst_indices", lambda f: ga_selection.worst_indices(f, 2), (fit,)),
        (
            "masked_apply",
            lambda m, x: ga_masked.masked_apply(lambda r: r * 3 + 1, m, (x,), x, 8),
            (mask, jnp.asarray(c, jnp.int32)),
        ),
    ]
    return cases


def _traced_once(fn, name="plain"):
    """``(guard, jitted guard)``: ``fn`` behind a guard that fails on a second trace (the guard's
    counter is keyed by source and name: each case gets its own name)."""

    def plain(*args):
        return fn(*args)

    plain.__name__ = name
    guard = chex.assert_max_traces(plain, n=1)
    return guard, jax.jit(guard)


@functools.cache
def _guarded_cases():
    """Every operator case behind its own retrace guard, with a second set of arguments of the
    same shapes; jit caches by function, so each compiles once for all the tests below."""
    chex.clear_trace_counter()
    first = _operator_cases(np.random.default_rng(10))
    second = _operator_cases(np.random.default_rng(11))
    return [
        (name, *_traced_once(fn, f"guarded_{name}"), args, other)
        for (name, fn, args), (_, _, other) in zip(first, second, strict=True)
    ]


class OperatorVariantsTest(chex.TestCase):
    """Every operator gives the same result with and without jit, and compiles once per shape."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_operators_agree_with_the_compiled_reference(self):
        permutation_ops = (
            [f"cx_{k}" for k in ga_crossover.CROSSOVERS["permutation"]]
            + [f"mut_{k}" for k in ga_mutation.MUTATIONS["permutation"]]
            + ["fisher_yates"]
        )
        for name, guard, jitted, args, _ in _guarded_cases():
            want = jitted(*args)
            got = self.variant(guard)(*args)
            chex.assert_trees_all_equal(got, want, custom_message=name)
            if name in permutation_ops:
                for child in got if isinstance(got, tuple) else (got,):
                    chex.assert_shape(child, (8, 5))
                    assert (np.sort(np.asarray(child), axis=1) == np.arange(5)).all(), name

    def test_operators_trace_once(self):
        """New seeds, genomes and rates of the same shapes reuse the compiled operator."""
        for _, _, jitted, args, other in _guarded_cases():
            jitted(*args)
            jitted(*other)  # a second trace would raise AssertionError
        _, mut = _traced_once(
            jax.vmap(ga_mutation.mut_swap, in_axes=(0, 0, None)), "guarded_swap_rates"
        )
        rng = np.random.default_rng(12)
        s, x = seeds(rng, 8), perms(rng, 8, 10)
        for indpb in (0.0, 0.1, 1.0):  # a swept rate is a dynamic argument
            mut(s, x, jnp.float32(indpb))

    def test_the_guard_catches_a_retrace(self):
        _, guarded = _traced_once(jax.vmap(ga_fitness.fitness), "guarded_fitness_shapes")
        guarded(jnp.zeros((4, 6), jnp.int8))
        with pytest.raises(AssertionError, match="traced"):
            guarded(jnp.zeros((4, 7), jnp.int8))  # a new shape traces again
