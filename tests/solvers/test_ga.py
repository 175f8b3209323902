"""The GA kernel: init, one generation (steady and generational), chunks of generations, migration."""

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import reference as ref
from absl.testing import parameterized
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxqueens.core import checker
from jaxqueens.core import constraints as cons
from jaxqueens.solvers import constrained as rules
from jaxqueens.solvers import ga

STEADY = ga.GAConfig(n=6, pop=8, islands=2, migrants=2, tournament=3)
GENERATIONAL = ga.GAConfig(
    n=6,
    pop=8,
    scheme="generational",
    crossover="pmx",
    mutation="swap",
    tournament=3,
    elite=1,
    islands=2,
    migrants=1,
    cx_cap32=16,
    mut_cap32=8,
    eval_cap32=20,
)
COMBINATION = ga.GAConfig(
    n=6, pop=8, encoding="combination", crossover="one_point", mutation="reset", tournament=3
)
CONFIGS = (("steady", STEADY), ("generational", GENERATIONAL))
PARAMS = ga.GAParams(jnp.float32(0.6), jnp.float32(0.3), jnp.float32(0.2), jnp.int32(2))
TRIALS = 2
STEP = jax.jit(ga.step, static_argnums=(3,))
# One function object per kernel and config: jit caches by function, so the reference and the
# with_jit variant compile once between them.
STEPS = {config: (lambda s, p, g, config=config: ga.step(s, p, g, config)) for _, config in CONFIGS}


def _states(config, seed=0, trials=TRIALS):
    return ga.init_trials(jax.random.key(seed), config, trials)[0]


def _steps(states, params, config, gen0, count):
    """``count`` generations one :func:`ga.step` at a time (the reference for ``run_chunk``)."""
    metrics = []
    for g in range(gen0, gen0 + count):
        states, m = STEP(states, params, jnp.int32(g), config)
        metrics.append(m)
    return states, jax.tree.map(lambda *xs: jnp.stack(xs), *metrics)


class KernelVariantsTest(chex.TestCase):
    """Each kernel gives the same result with and without jit."""

    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.named_parameters(("permutation", STEADY), ("combination", COMBINATION))
    def test_init(self, config):
        state = self.variant(lambda key: ga.init(key, config, TRIALS))(jax.random.key(3))
        chex.assert_shape(state.genes, (TRIALS, config.islands, config.pop, config.n))
        chex.assert_shape(state.fit, (TRIALS, config.islands, config.pop))
        chex.assert_shape(state.seed, (TRIALS, config.islands))
        assert state.genes.dtype == jnp.int8
        genes = np.asarray(state.genes).reshape(-1, config.n)
        if config.encoding == "permutation":
            assert (np.sort(genes, axis=1) == np.arange(config.n)).all()
        else:
            assert (
                genes.min() >= 0
                and genes.max() < config.n
                and (np.diff(np.sort(genes), axis=1) == 0).any()
            )
        assert (np.asarray(state.fit).ravel() == checker.attacking_pairs(genes)).all()
        chex.assert_trees_all_equal(state, ga.init_trials(jax.random.key(3), config, TRIALS)[0])

    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.named_parameters(*CONFIGS)
    def test_step(self, config):
        states = _states(config)
        new, m = self.variant(STEPS[config])(states, PARAMS, jnp.int32(0))
        want = jax.jit(STEPS[config])(states, PARAMS, jnp.int32(0))
        chex.assert_trees_all_equal((new, m), want)
        chex.assert_trees_all_equal_shapes(new, states)
        k = config.sols_per_gen
        chex.assert_shape([m.best, m.avg, m.worst, m.nevals], (TRIALS,))
        chex.assert_shape(m.sols, (TRIALS, config.islands, k, config.n))
        chex.assert_shape(m.sols_ok, (TRIALS, config.islands, k))
        genes = np.asarray(new.genes).reshape(-1, config.n)
        assert (np.sort(genes, axis=1) == np.arange(config.n)).all()
        assert (np.asarray(new.fit).ravel() == checker.attacking_pairs(genes)).all()
        assert (np.asarray(m.best) == np.asarray(new.fit).min(axis=(1, 2))).all()
        assert (np.asarray(new.seed) == np.asarray(states.seed)).all()  # island seeds are fixed
        if config.scheme == "steady":
            assert (np.asarray(m.nevals) == 2 * config.islands).all()  # two children per island
            assert (np.asarray(m.best) <= np.asarray(states.fit).min(axis=(1, 2))).all()

    @chex.variants(with_jit=True, without_jit=True)
    def test_run_chunk_is_a_scan_of_steps(self):
        config = GENERATIONAL  # the scan does not depend on the scheme; step is tested with both
        states = _states(config, seed=1)
        run = self.variant(lambda s, p, g0, stop: ga.run_chunk(s, p, g0, stop, config, 4))
        got_states, got = run(states, PARAMS, jnp.int32(3), jnp.int32(5))
        want_states, want = _steps(states, PARAMS, config, 3, 2)  # generations 4 and 5 only
        chex.assert_trees_all_equal(got_states, want_states)
        chex.assert_trees_all_equal(jax.tree.map(lambda x: x[:2], got), want)
        for x in jax.tree.leaves(jax.tree.map(lambda x: x[2:], got)):  # past stop_gen: skipped
            assert not np.asarray(x).any()

    @chex.variants(with_jit=True, without_jit=True)
    def test_migrate(self):
        config = STEADY
        genes = jnp.asarray(_states(config, seed=2).genes[0])
        fit = jnp.asarray(
            np.random.default_rng(0).permutation(2 * config.pop).reshape(2, -1), jnp.int32
        )
        g2, f2 = self.variant(lambda g, f: ga.migrate(g, f, config))(genes, fit)
        for src, dst in ((0, 1), (1, 0)):  # a ring: island i's best replace island i+1's worst
            best = np.argsort(np.asarray(fit[src]), kind="stable")[:2]
            worst = np.argsort(-np.asarray(fit[dst]), kind="stable")[:2]
            assert (np.asarray(g2[dst])[worst] == np.asarray(genes[src])[best]).all()
            assert (np.asarray(f2[dst])[worst] == np.asarray(fit[src])[best]).all()
            rest = np.setdiff1d(np.arange(config.pop), worst)
            assert (np.asarray(g2[dst])[rest] == np.asarray(genes[dst])[rest]).all()


class KernelTracesTest(chex.TestCase):
    """New keys, generations and rates reuse the compiled kernels (one trace per shape)."""

    def setUp(self):
        super().setUp()
        chex.clear_trace_counter()

    def test_init_trials_traces_once(self):
        init = jax.jit(chex.assert_max_traces(ga.init, n=1), static_argnums=(1, 2))
        a = init(jax.random.key(0), STEADY, TRIALS, 0)
        b = init(jax.random.key(1), STEADY, TRIALS, 5)  # another key and first trial: no retrace
        assert not (np.asarray(a.genes) == np.asarray(b.genes)).all()

    def test_run_chunk_traces_once(self):
        run = jax.jit(chex.assert_max_traces(ga.run_chunk, n=1), static_argnums=(4, 5))
        states = _states(GENERATIONAL)
        states, _ = run(states, PARAMS, jnp.int32(0), jnp.int32(10), GENERATIONAL, 3)
        other = ga.GAParams(jnp.float32(0.9), jnp.float32(0.05), jnp.float32(0.0), jnp.int32(0))
        run(states, other, jnp.int32(3), jnp.int32(4), GENERATIONAL, 3)  # swept rates are dynamic


def test_trials_do_not_depend_on_their_neighbours():
    """Trial t draws from fold_in(key, t) only: the same trial in a smaller or shifted batch
    (the driver tests check that whole runs agree too)."""
    key = jax.random.key(7)
    five = ga.init_trials(key, STEADY, 5)
    two = ga.init_trials(key, STEADY, 2, 3)
    chex.assert_trees_all_equal(jax.tree.map(lambda x: x[3:], five), two)


def test_initial_metrics():
    state, m = ga.init_trials(jax.random.key(4), STEADY, TRIALS)
    fit = np.asarray(state.fit)
    assert (np.asarray(m.best) == fit.min(axis=(1, 2))).all() and (
        np.asarray(m.worst) == fit.max(axis=(1, 2))
    ).all()
    assert np.allclose(np.asarray(m.avg), fit.mean(axis=(1, 2)))
    assert (np.asarray(m.nevals) == STEADY.islands * STEADY.pop).all()  # the initial population
    chex.assert_shape(m.sols, (TRIALS, STEADY.islands, STEADY.sols_per_gen, STEADY.n))
    best = np.asarray(m.sols)[:, :, 0]
    assert (
        checker.attacking_pairs(best.reshape(-1, STEADY.n)).reshape(TRIALS, -1) == fit.min(axis=2)
    ).all()


REPORT = ga.GAConfig(
    n=6,
    pop=8,
    encoding="combination",
    crossover="one_point",
    mutation="reset",
    tournament=3,
    fitness="report-diagonals-only",
)


def _diagonal_pairs(genes):
    """Plain reference of the report's score of each genome [..., n] (rows ignored)."""
    g = np.asarray(genes, np.int64).reshape(-1, genes.shape[-1])
    n = g.shape[1]
    return np.array(
        [sum(abs(b[i] - b[j]) == j - i for i in range(n) for j in range(i + 1, n)) for b in g]
    )


def test_report_fitness_scores_diagonals_only():
    """The GA report's score drives selection exactly as the reference scores the genomes (the
    score itself runs with and without jit in test_ga_ops' OperatorVariantsTest, as every
    entry of ga_ops.FITNESS does; init and step run the same code for every fitness)."""
    state = ga.init_trials(jax.random.key(4), REPORT, TRIALS)[0]
    chex.assert_shape(state.fit, (TRIALS, 1, REPORT.pop))
    np.testing.assert_array_equal(np.asarray(state.fit).ravel(), _diagonal_pairs(state.genes))
    for g in range(3):
        state, m = STEP(state, PARAMS, jnp.int32(g), REPORT)
        np.testing.assert_array_equal(np.asarray(state.fit).ravel(), _diagonal_pairs(state.genes))
        chex.assert_shape(m.sols, (TRIALS, 1, 2, REPORT.n))
        np.testing.assert_array_equal(np.asarray(m.sols_ok).ravel(), _diagonal_pairs(m.sols) == 0)


# ---------------------------------------------------------------- constrained boards (issue 16)
CONSTRAINED = {
    "permutation": ga.GAConfig(n=6, pop=8, islands=2, migrants=1, tournament=3, constrained=True),
    "combination": ga.GAConfig(
        n=6,
        pop=8,
        encoding="combination",
        scheme="generational",
        crossover="uniform",
        mutation="reset",
        tournament=3,
        elite=1,
        constrained=True,
    ),
}
TORUS = ga.GAConfig(
    n=7,
    pop=8,
    scheme="generational",
    crossover="ox1",
    mutation="inversion",
    tournament=3,
    toroidal=True,
)
CPARAMS = ga.GAParams(jnp.float32(0.9), jnp.float32(0.9), jnp.float32(0.3), jnp.int32(2))


@functools.cache
def _constrained_run(config):
    """One jitted init + chunk per config: a new instance of the same n must not recompile."""

    def run(key, mask):
        s0, m0 = ga.init_trials(key, config, TRIALS, 0, mask)
        s1, m = ga.run_chunk(s0, CPARAMS, jnp.int32(0), jnp.int32(6), config, 6, mask)
        return s0, s1, m

    return jax.jit(chex.assert_max_traces(run, n=1))


def _mask(model):
    return rules.mask_of(cons.allowed_squares(model), cons.fixed_rows(model))


def _penalised(board, model) -> int:
    """The constrained GA's fitness in plain Python: attacking pairs plus n(n-1)/2 + 1 per queen on
    a square the instance closes (blocked, a fixed column's other rows, attacked by a fixed queen)."""
    # random_instance draws fixed queens and blocked squares only
    n, fixed = model.n, dict(model.fixed)

    def closed(x, y):
        if (x, y) in model.blocked:  # a fixed queen's own square may be blocked too (UNSAT)
            return True
        if x in fixed:
            return fixed[x] != y or any(
                a != x and (b == y or abs(b - y) == abs(a - x)) for a, b in fixed.items()
            )
        return any(y == b or abs(y - b) == abs(x - a) for a, b in fixed.items())

    return ref.attacking_pairs(board) + (n * (n - 1) // 2 + 1) * sum(
        closed(x, int(y)) for x, y in enumerate(board)
    )


@settings(max_examples=6, deadline=None)
@given(
    data=st.data(),
    encoding=st.sampled_from(["permutation", "combination"]),
    seed=st.integers(0, 99),
)
def test_fixed_queens_never_move_and_fitness_is_penalised(data, encoding, seed):
    model, _ = ref.random_instance(
        data, 6, sat=encoding == "permutation" or data.draw(st.booleans())
    )
    config = CONSTRAINED[encoding]
    s0, s1, m = _constrained_run(config)(jax.random.key(seed), _mask(model))
    for genes in (s0.genes, s1.genes, m.sols):
        genes = np.asarray(genes)
        for x, y in model.fixed:
            assert (genes[..., x] == y).all(), f"the fixed queen of column {x} moved"
        if encoding == "permutation":
            assert (np.sort(genes, axis=-1) == np.arange(6)).all()
    for st_ in (s0, s1):
        boards = np.asarray(st_.genes).reshape(-1, 6)
        assert np.asarray(st_.fit).ravel().tolist() == [_penalised(b, model) for b in boards]
    ok, sols = np.asarray(m.sols_ok), np.asarray(m.sols)
    for b in sols[ok]:  # fitness 0: no forbidden square, no attack
        assert checker.check_constrained(b, model).ok


def test_a_new_instance_does_not_recompile():
    run = _constrained_run(CONSTRAINED["permutation"])
    first = cons.Constraints(6, fixed=((0, 1),), blocked=((2, 2),))
    second = cons.Constraints(6, fixed=((3, 0), (5, 3)))
    for model in (first, second):  # run is guarded by chex.assert_max_traces(n=1)
        s0, _, _ = run(jax.random.key(1), _mask(model))
        for x, y in model.fixed:
            assert (np.asarray(s0.genes)[..., x] == y).all()


class ConstrainedVariantsTest(chex.TestCase):
    # without_jit runs of a whole generation take ~10 s each (op by op); the changed kernels
    # (repairs, forbidden, toroidal fitness) run both variants in test_ga_ops.py
    @chex.variants(with_jit=True)
    def test_constrained_steady_step(self):
        config = CONSTRAINED["permutation"]
        model = cons.Constraints(6, fixed=((1, 3),), blocked=((0, 0), (4, 4)))
        mask = _mask(model)
        states = ga.init_trials(jax.random.key(2), config, 1, 0, mask)[0]
        new, m = self.variant(lambda s, g, mk: ga.step(s, CPARAMS, g, config, mk))(
            states, jnp.int32(0), mask
        )
        chex.assert_shape(new.genes, (1, 2, 8, 6))
        chex.assert_shape(m.sols, (1, 2, 2, 6))
        assert (np.asarray(new.genes)[..., 1] == 3).all()
        boards = np.asarray(new.genes).reshape(-1, 6)
        assert np.asarray(new.fit).ravel().tolist() == [_penalised(b, model) for b in boards]

    @chex.variants(with_jit=True)
    def test_toroidal_step_scores_on_the_torus(self):
        states = ga.init_trials(jax.random.key(4), TORUS, 1)[0]
        new, _ = self.variant(lambda s, g: ga.step(s, CPARAMS, g, TORUS))(states, jnp.int32(0))
        chex.assert_shape(new.fit, (1, 1, 8))
        boards = np.asarray(new.genes).reshape(-1, 7)
        assert np.asarray(new.fit).ravel().tolist() == [ref.torus_objective(b) for b in boards]
