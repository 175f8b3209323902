"""solvers.anneal: acceptance rules, incremental objectives, one-chain kernels with and without jit."""

import dataclasses

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from absl.testing import parameterized
from hypothesis import given, settings
from hypothesis import strategies as st

import reference
from jaxqueens.core import checker, lines
from jaxqueens.solvers import anneal as sls


@pytest.mark.parametrize("delta,level,u,method,want", [
    (0, 0.0, 0.0, "ls", True), (1, 0.0, 0.0, "ls", False), (-2, 0.0, 0.0, "ls", True),
    (2, 2.0, 0.9, "ta", True), (3, 2.5, 0.0, "ta", False), (1, 0.0, 0.0, "ta", False),
    (-1, 1.0, 0.99, "sa", True), (0, 1.0, 0.99, "sa", True),
    (1, 1.0, 0.36, "sa", True), (1, 1.0, 0.37, "sa", False),  # exp(-1) = 0.3679
    (2, 4.0, 0.60, "sa", True), (2, 4.0, 0.61, "sa", False),  # exp(-0.5) = 0.6065
])
def test_acceptance_rules(delta, level, u, method, want):
    assert bool(sls.accept(jnp.int32(delta), jnp.float32(level), jnp.float32(u), method)) == want


def _objective(rows, objective):
    return reference.n_attacks(rows) if objective == "attacks" else reference.attacking_pairs(rows)


@settings(max_examples=15, deadline=None)
@given(n=st.integers(4, 24), seed=st.integers(0, 2**31), neighbour=st.sampled_from(sls.NEIGHBOURS),
       objective=st.sampled_from(sls.OBJECTIVES), step=st.integers(1, 3))
def test_proposal_delta_is_exact(n, seed, neighbour, objective, step):
    config = sls.Config(n=n, neighbour=neighbour, objective=objective, step=min(step, n - 1))
    s = sls.init(jnp.uint32(seed), config, None)
    propose = jax.jit(lambda s: sls.propose(s, config))
    for _ in range(5):
        rows, counts, delta = propose(s)
        before, after = np.asarray(s.rows), np.asarray(rows)
        assert int(delta) == _objective(after, objective) - _objective(before, objective)
        np.testing.assert_array_equal(counts, lines.counts_of(rows, n))
        moved = np.flatnonzero(before != after)
        if neighbour == "step":
            assert len(moved) <= 1  # one queen moved by 1..step rows (mod n)
            if len(moved):
                shift = (after[moved[0]] - before[moved[0]]) % n
                assert min(shift, n - shift) <= config.step
        else:
            assert sorted(after) == sorted(before)  # a swap keeps the rows
        s = s._replace(rows=rows, counts=counts, ctr=s.ctr + 1)


@pytest.mark.parametrize("method", sls.METHODS)
def test_state_stays_consistent(method):
    config = sls.Config(n=12, method=method, objective="pairs", rounds=4, steps_per_round=50)
    schedule = jnp.asarray([2.0, 1.0, 0.5, 0.0])
    s = sls.init(jnp.uint32(5), config, schedule)
    s = jax.jit(lambda s: jax.lax.fori_loop(0, 150, lambda _, s: sls.step(s, config, schedule), s))(s)
    np.testing.assert_array_equal(s.counts, lines.counts_of(s.rows, 12))
    assert int(s.f) == reference.attacking_pairs(np.asarray(s.rows))
    assert int(s.best) <= int(s.f)


@pytest.mark.parametrize("objective", sls.OBJECTIVES)
def test_objective_of_matches_reference(objective):
    rng = np.random.default_rng(7)
    for n in (4, 9, 17):
        rows = rng.integers(0, n, n).astype(np.int32)
        got = sls.objective_of(lines.counts_of(jnp.asarray(rows), n), objective)
        assert int(got) == _objective(rows, objective)


def test_config_is_static_and_checked():
    config = sls.Config(n=8, method="sa", rounds=4, steps_per_round=25)
    assert hash(config) == hash(sls.Config(n=8, method="sa", rounds=4, steps_per_round=25))
    assert config.total_steps == 100
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.n = 9
    with pytest.raises(ValueError, match="neighbour"):
        sls.Config(n=8, neighbour="jump")
    assert sls.Kernel(config) == sls.Kernel(config)  # a jit-static argument compares by value


CONFIG = sls.Config(n=8, method="ta", neighbour="swap", objective="pairs", rounds=4, steps_per_round=100)
SCHEDULE = jnp.asarray([2.0, 1.0, 1.0, 0.0], jnp.float32)
SEEDS = jnp.asarray([3, 11, 2024], jnp.uint32)


def _stepped(seed, config, schedule):
    """Reference run: ``step`` in a Python loop until ``done`` (the kernel's own contract)."""
    s = sls.init(seed, config, schedule)
    step = jax.jit(lambda s: sls.step(s, config, schedule))
    while not bool(sls.done(s, config)):
        s = step(s)
    return sls.result(s)


class KernelTest(parameterized.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_init(self):
        s = self.variant(lambda seed: sls.init(seed, CONFIG, SCHEDULE))(SEEDS[0])
        chex.assert_shape([s.rows, s.counts, s.f, s.steps], [(8,), (lines.size(8),), (), ()])
        assert sorted(np.asarray(s.rows)) == list(range(8))  # a permutation
        assert int(s.f) == int(s.best) == reference.attacking_pairs(np.asarray(s.rows))

    @chex.variants(with_jit=True, without_jit=True)
    def test_step(self):
        step = self.variant(lambda s, schedule: sls.step(s, CONFIG, schedule))
        s = sls.init(SEEDS[1], CONFIG, SCHEDULE)
        for _ in range(20):
            s = step(s, SCHEDULE)
        chex.assert_shape(s.rows, (8,))
        np.testing.assert_array_equal(s.counts, lines.counts_of(s.rows, 8))
        assert int(s.f) == reference.attacking_pairs(np.asarray(s.rows)) and int(s.ctr) == 21

    @chex.variants(with_jit=True, without_jit=True)
    def test_solve_chain_equals_stepping(self):
        solve = self.variant(lambda seed, schedule: sls.solve_chain(seed, CONFIG, schedule))
        for seed in SEEDS:
            got, want = solve(seed, SCHEDULE), _stepped(seed, CONFIG, SCHEDULE)
            chex.assert_shape(got.rows, (8,))
            chex.assert_trees_all_equal(got, want)
            if bool(got.solved):
                assert checker.are_solutions(np.asarray(got.rows)[None]).all() and int(got.best) == 0

    @chex.variants(with_jit=True, without_jit=True)
    def test_trace_ends_at_the_chains_best(self):
        trace = self.variant(lambda seed, schedule: sls.trace(seed, CONFIG, schedule, 4))
        for seed in SEEDS:
            best = np.asarray(trace(seed, SCHEDULE))
            chex.assert_shape(best, (CONFIG.total_steps // 4,))
            assert np.all(np.diff(best) <= 0)
            assert best[-1] == int(sls.solve_chain(seed, CONFIG, SCHEDULE).best)

    @chex.variants(with_jit=True, without_jit=True)
    def test_random_walk_deltas_follow_the_walk(self):
        walk = self.variant(lambda seed: sls.random_walk_deltas(seed, CONFIG, 30))
        deltas = np.asarray(walk(SEEDS[2]))
        chex.assert_shape(deltas, (30,))
        s = sls.init(SEEDS[2], CONFIG, None)
        for d in deltas:  # the walk accepts every proposal
            rows, counts, delta = sls.propose(s, CONFIG)
            assert int(delta) == d
            s = s._replace(rows=rows, counts=counts, ctr=s.ctr + 1)

    def test_kernels_trace_once(self):
        """New seeds and schedules reuse the compiled kernels (the schedule is dynamic)."""
        fns = {
            "solve_chain": lambda seed, sch: sls.solve_chain(seed, CONFIG, sch),
            "step": lambda seed, sch: sls.step(sls.init(seed, CONFIG, sch), CONFIG, sch),
            "trace": lambda seed, sch: sls.trace(seed, CONFIG, sch, 8),
            "random_walk_deltas": lambda seed, sch: sls.random_walk_deltas(seed, CONFIG, 16),
        }
        for name, fn in fns.items():
            jitted = jax.jit(chex.assert_max_traces(fn, n=1))
            for k, seed in enumerate(SEEDS):
                jitted(seed, SCHEDULE * (k + 1))
