"""jaxqueens.solvers.ga_genomes: random genomes, the per-genome gather and scatter under
vmap; the helpers that draw the test genomes of every GA operator test."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.solvers import ga_genomes


def perms(rng, batch, n, dtype=np.int8):
    return np.argsort(rng.random((batch, n)), axis=1).astype(dtype)


def seeds(rng, batch):
    return jnp.asarray(rng.integers(0, 2**32, batch, dtype=np.uint64).astype(np.uint32))


def assert_perms(x, n):
    x = np.asarray(x)
    assert x.dtype == np.int8
    assert (np.sort(x, axis=1) == np.arange(n)).all()


def test_fisher_yates_uniform():
    p = np.asarray(
        jax.jit(jax.vmap(lambda s: ga_genomes.fisher_yates(s, 4)))(
            jnp.arange(48000, dtype=jnp.uint32)
        )
    )
    _, counts = np.unique(p, axis=0, return_counts=True)
    assert len(counts) == 24 and counts.min() > 1700 and counts.max() < 2300  # ~2000 each


def test_gather1d_scatter1d_batching_matches_indexing():
    rng = np.random.default_rng(6)
    x = jnp.asarray(rng.integers(0, 100, (3, 4, 10)).astype(np.int32))
    i = jnp.asarray(rng.integers(0, 10, (3, 4, 6)).astype(np.int32))
    got = jax.vmap(jax.vmap(ga_genomes.gather1d))(x, i)
    assert (got == jnp.take_along_axis(x, i, axis=2)).all()
    idx = jnp.asarray(
        np.stack([rng.permutation(10)[:3] for _ in range(12)]).reshape(3, 4, 3).astype(np.int32)
    )
    idx = idx.at[0, 0, 0].set(10)  # out of range: dropped
    v = jnp.full((3, 4, 3), -1, jnp.int32)
    got = np.asarray(jax.vmap(jax.vmap(ga_genomes.scatter1d))(x, idx, v))
    want = np.asarray(x).copy()
    for a in range(3):
        for b in range(4):
            for k in range(3):
                if idx[a, b, k] < 10:
                    want[a, b, idx[a, b, k]] = -1
    assert (got == want).all()
