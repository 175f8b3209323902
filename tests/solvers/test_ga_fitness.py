"""jaxqueens.solvers.ga_fitness: every fitness against a plain reference, the report's score, the
torus and the forbidden-square penalty."""

import itertools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import reference as ref

from jaxqueens.core import checker
from jaxqueens.core import constraints as cons
from jaxqueens.solvers import constrained as rules
from jaxqueens.solvers import ga_fitness
from tests.solvers.test_ga_genomes import perms


@pytest.mark.parametrize("n", [4, 8, 20, 33, 64])
def test_fitness_matches_reference(n):
    rng = np.random.default_rng(n)
    boards = np.concatenate([rng.integers(0, n, (300, n)), perms(rng, 100, n, np.int64)]).astype(
        np.int8
    )
    got = np.asarray(jax.jit(jax.vmap(ga_fitness.fitness))(boards))
    assert (got == checker.attacking_pairs(boards)).all()
    assert ((got == 0) == checker.are_solutions(boards)).all()


def test_fitness_counts_row_conflicts():
    fitness = jax.jit(ga_fitness.fitness)  # one compile for both boards
    assert int(fitness(jnp.array([1, 3, 0, 2], jnp.int8))) == 0
    assert int(fitness(jnp.array([1, 3, 1, 3], jnp.int8))) > 0  # rows repeat: not a solution


def test_excess_fitness_is_deaps():
    """DEAP's fitness: sum over lines of (queens - 1); 0 exactly for solutions."""
    rng = np.random.default_rng(8)
    boards = perms(rng, 200, 12)
    got = np.asarray(jax.jit(jax.vmap(ga_fitness.excess))(boards))
    want = []
    for b in boards.astype(int):
        total = 0
        for keys in (b + np.arange(12), b - np.arange(12)):
            _, counts = np.unique(keys, return_counts=True)
            total += int(np.sum(counts[counts > 1] - 1))
        want.append(total)
    assert (got == np.array(want)).all()
    assert ((got == 0) == checker.are_solutions(boards)).all()


# ---------------------------------------------------------------------------- the GA report's score
def ref_diagonal_pairs(rows) -> int:
    """Plain reference of the report's score: pairs on a common diagonal, rows ignored."""
    rows = [int(r) for r in rows]
    return sum(
        abs(rows[i] - rows[j]) == j - i for i in range(len(rows)) for j in range(i + 1, len(rows))
    )


@pytest.mark.parametrize("n", [4, 8, 33, 40])  # both forms: shifted slices (n <= 32), line counts
def test_report_score_counts_diagonal_pairs_only(n):
    rng = np.random.default_rng(100 + n)
    boards = np.concatenate(
        [rng.integers(0, n, (40, n)), perms(rng, 20, n, np.int64), np.zeros((1, n), np.int64)]
    ).astype(np.int8)
    got = np.asarray(jax.jit(jax.vmap(ga_fitness.report_diagonals_only))(boards))
    assert got.tolist() == [ref_diagonal_pairs(b) for b in boards]
    np.testing.assert_array_equal(
        got[40:60], checker.attacking_pairs(boards[40:60])
    )  # permutations
    assert got[-1] == 0 and not checker.are_solutions(boards[-1:])[0]  # one row: the report's "0"
    assert ga_fitness.FITNESS[ga_fitness.REPORT_FITNESS] is ga_fitness.report_diagonals_only


# ----------------------------------------------------------------------------- constrained boards
def _excess_torus(rows) -> int:
    return ref.torus_objective(rows, "attacks")  # queens minus lines occupied = sum(k - 1)


@pytest.mark.parametrize("n", [5, 7, 8, 40])  # shifted slices (n <= 32) and line counts
def test_toroidal_fitness_matches_reference(n):
    rng = np.random.default_rng(n)
    boards = np.concatenate([perms(rng, 30, n), rng.integers(0, n, (30, n)).astype(np.int8)])
    pairs = np.asarray(jax.jit(jax.vmap(ga_fitness.toroidal_fitness))(boards))
    excess = np.asarray(jax.jit(jax.vmap(ga_fitness.toroidal_excess))(boards))
    assert pairs.tolist() == [ref.torus_objective(b) for b in boards]
    assert excess.tolist() == [_excess_torus(b) for b in boards]
    torus = cons.Constraints(n, toroidal=True)
    assert pairs.tolist() == [checker.check_constrained(b, torus).attacking_pairs for b in boards]


def test_toroidal_solutions_score_zero():
    # n = 5: the 10 toroidal solutions (OEIS A051906) are exactly the permutations scoring 0
    boards = np.array(list(itertools.permutations(range(5))), np.int8)
    zero = np.asarray(jax.jit(jax.vmap(ga_fitness.toroidal_fitness))(boards)) == 0  # 1 compile
    assert zero.sum() == 10
    assert all(
        checker.check_constrained(b, cons.Constraints(5, toroidal=True)).ok for b in boards[zero]
    )


class ToroidalVariantsTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_toroidal_fitness_hand_built(self):
        # n = 4: [0, 2, 0, 2] has 2 row pairs; (r + c) mod 4 = 0, 3, 2, 1 and
        # (r - c) mod 4 = 0, 1, 2, 3 are all distinct: 2 pairs, excess 2. [0, 1, 2, 3]: one
        # (r - c) diagonal holding all four queens (6 pairs, excess 3), and
        # (r + c) mod 4 = 0, 2, 0, 2 (2 pairs, excess 2).
        boards = jnp.asarray(np.array([[0, 2, 0, 2], [0, 1, 2, 3]], np.int8))
        pairs = self.variant(jax.vmap(ga_fitness.toroidal_fitness))(boards)
        excess = self.variant(jax.vmap(ga_fitness.toroidal_excess))(boards)
        chex.assert_shape(pairs, (2,))
        assert np.asarray(pairs).tolist() == [2, 8] and np.asarray(excess).tolist() == [2, 5]


class ForbiddenTest(chex.TestCase):
    MODEL = cons.Constraints(6, fixed=((1, 4), (4, 0), (5, 2)), blocked=((0, 0), (2, 3)))

    @chex.variants(with_jit=True, without_jit=True)
    def test_forbidden_counts_forbidden_squares(self):
        mask = rules.mask_for(self.MODEL)
        boards = np.array([[1, 4, 2, 5, 0, 2], [0, 4, 3, 5, 1, 2], [0, 0, 0, 0, 0, 0]], np.int8)
        got = np.asarray(
            self.variant(jax.vmap(rules.stranded, in_axes=(0, None)))(jnp.asarray(boards), mask)
        )
        fixed = dict(self.MODEL.fixed)

        def closed(x, y):  # blocked, a fixed column's other rows, a square a fixed queen attacks
            if x in fixed:
                return fixed[x] != y
            return (x, y) in self.MODEL.blocked or any(
                y == fy or abs(y - fy) == abs(x - fx) for fx, fy in fixed.items()
            )

        want = [sum(closed(x, y) for x, y in enumerate(b)) for b in boards.tolist()]
        assert got.tolist() == want == [1, 3, 5]
