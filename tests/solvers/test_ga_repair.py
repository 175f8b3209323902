"""jaxqueens.solvers.ga_repair: the repairs put every fixed queen back, with and without jit."""

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import constraints as cons
from jaxqueens.solvers import constrained as rules
from jaxqueens.solvers import ga_repair
from tests.solvers.test_ga_genomes import assert_perms, perms


class RepairTest(chex.TestCase):
    MODEL = cons.Constraints(6, fixed=((1, 4), (4, 0), (5, 2)), blocked=((0, 0), (2, 3)))

    @chex.variants(with_jit=True, without_jit=True)
    def test_repairs_put_fixed_queens_back(self):
        mask = rules.mask_for(self.MODEL)
        rng = np.random.default_rng(0)
        x = perms(rng, 6, 6)
        fix_p, fix_c = (
            self.variant(jax.vmap(lambda x, m, r=r: r(x, ga_repair.fixed_of(m)), in_axes=(0, None)))
            for r in (ga_repair.repair_permutation, ga_repair.repair_combination)
        )
        y = np.asarray(fix_p(jnp.asarray(x), mask))
        chex.assert_shape(y, (6, 6))
        assert_perms(y, 6)
        assert (y[:, [1, 4, 5]] == [4, 0, 2]).all()
        # one swap per fixed queen: at most 2 genes change per fixed queen
        assert ((y != x).sum(axis=1) <= 2 * 3).all()
        assert (np.asarray(fix_p(jnp.asarray(y), mask)) == y).all()  # a repaired genome is kept
        z = rng.integers(0, 6, (6, 6)).astype(np.int8)
        w = np.asarray(fix_c(jnp.asarray(z), mask))
        assert (w[:, [1, 4, 5]] == [4, 0, 2]).all() and (w[:, [0, 2, 3]] == z[:, [0, 2, 3]]).all()
