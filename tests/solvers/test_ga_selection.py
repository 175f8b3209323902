"""jaxqueens.solvers.ga_selection: tournaments, distinct draws, dynamic sizes, best and worst."""

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core.rng import hash_bits
from jaxqueens.solvers import ga_selection
from tests.solvers.test_ga_genomes import seeds


def _best_two(seed, fit, k, size=None):
    """The best two of ``size`` (None: k) distinct aspirants drawn under a capacity of k."""
    return ga_selection.select_distinct_tournament(seed, fit, size, 2, max_size=k)


def test_selection():
    rng = np.random.default_rng(5)
    fit = jnp.asarray(rng.permutation(50).astype(np.int32))
    s = seeds(rng, 2000)
    # compiled: op by op, every operation of a vmapped draw compiled a program of its own
    two = np.asarray(jax.jit(jax.vmap(lambda s: _best_two(s, fit, 5)))(s))
    members = np.asarray(jax.jit(jax.vmap(lambda s: ga_selection.distinct_indices(s, 50, 5)))(s))
    assert all(len(set(m)) == 5 for m in members)
    f = np.asarray(fit)
    for m, t in zip(members, two, strict=True):
        assert list(t) == list(m[np.argsort(f[m])[:2]])
    one = np.asarray(jax.jit(jax.vmap(lambda s: ga_selection.tournament(s, fit, 3)))(s))
    assert np.mean(f[one]) < 20  # best of 3 of uniform 0..49: mean ~12
    assert list(np.asarray(ga_selection.best_indices(fit, 3))) == list(np.argsort(f)[:3])
    assert list(np.asarray(ga_selection.worst_indices(fit, 2))) == list(np.argsort(-f)[:2])


@jax.jit
def _dynamic_and_static_draws(s, fit, sizes):
    """Every draw of the test below in one compiled program (op by op, each of them compiled its
    own small programs): ``sizes`` [5] int32 holds the dynamic sizes 1, 3, 5 (tournament) and
    2, 4 (distinct), passed as arguments so that the compiler cannot fold them into constants;
    the static draws use the same numbers as Python ints."""
    out = {}
    for i, size in enumerate((1, 3, 5)):
        out[f"tournament {size}"] = (
            jax.vmap(lambda s, i=i: ga_selection.tournament(s, fit, 7, sizes[i]))(s),
            jax.vmap(lambda s, size=size: ga_selection.tournament(s, fit, size))(s),
        )
    for i, size in enumerate((2, 4), start=3):
        out[f"best two {size}"] = (
            jax.vmap(lambda s, i=i: _best_two(s, fit, 6, sizes[i]))(s),
            jax.vmap(lambda s, size=size: _best_two(s, fit, size))(s),
        )
        out[f"distinct {size}"] = jax.vmap(
            lambda s, i=i: ga_selection.distinct_indices(s, 40, 6, sizes[i])
        )(s)
    out["select"] = (
        ga_selection.select_tournament(s[0], fit, sizes[1], 40, max_size=5),
        jax.vmap(lambda q: ga_selection.tournament(q, fit, 3))(
            hash_bits(s[0], 1, jnp.arange(40, dtype=jnp.uint32))
        ),
    )
    out["select distinct"] = (
        ga_selection.select_distinct_tournament(s[0], fit, sizes[4], 2, max_size=5),
        _best_two(s[0], fit, 4),
    )
    return out


def test_dynamic_selection_sizes_equal_static_ones():
    """A tournament of ``size`` under a capacity k is exactly the static tournament of ``size``
    (the draws are a prefix of the capacity's), for both selections."""
    rng = np.random.default_rng(14)
    fit = jnp.asarray(rng.integers(0, 10, 40).astype(np.int32))  # ties too
    s = seeds(rng, 500)
    out = _dynamic_and_static_draws(s, fit, jnp.asarray([1, 3, 5, 2, 4], jnp.int32))
    for name in ("tournament 1", "tournament 3", "tournament 5", "best two 2", "best two 4"):
        got, want = out[name]
        chex.assert_trees_all_equal(got, want, custom_message=name)
    for size in (2, 4):
        drawn = np.asarray(out[f"distinct {size}"])
        assert all(len(set(d[:size])) == size for d in drawn)
    chex.assert_trees_all_equal(*out["select"])
    chex.assert_trees_all_equal(*out["select distinct"])
