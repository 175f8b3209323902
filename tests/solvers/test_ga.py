"""The GA kernel for one trial: init, one generation (steady and generational), migration,
step / run under jit, vmap (keys and Params) and scan, dynamic counts, user operators.

Batches of trials (lockstep, chunks, devices) are tested in tests/parallel/test_trials.py, and
the driver's records in tests/drivers/test_ga.py."""

import ast
import dataclasses
import functools
import re
from pathlib import Path

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import reference as ref
from absl.testing import parameterized
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax

from jaxqueens.core import checker
from jaxqueens.core import constraints as cons
from jaxqueens.errors import QueensError
from jaxqueens.parallel import trials
from jaxqueens.solvers import constrained as rules
from jaxqueens.solvers import ga, ga_fitness, ga_mutation, ga_selection

STEADY = ga.Config(n=6, pop=8, islands=2, migrants=2, tournament=3)
GENERATIONAL = ga.Config(
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
COMBINATION = ga.Config(
    n=6, pop=8, encoding="combination", crossover="one_point", mutation="reset", tournament=3
)
CONFIGS = (("steady", STEADY), ("generational", GENERATIONAL))


def _params(config, **kw):
    return ga.default_params(
        config, **{"cxpb": 0.6, "mutpb": 0.3, "indpb": 0.2, "migrate_every": 2, **kw}
    )


# One function object per kernel: jit caches by function, so the reference and the with_jit
# variant compile once between them, and every test of a Config shares one compile. A whole run
# called outside jit compiles its while loop anew on every call and its initialisation op by op:
# the tests compare against these compiled references (KernelVariantsTest runs without jit), and
# its with_jit variants jit the same functions, so they reuse these programs.
GENERATION = jax.jit(ga.generation, static_argnums=1)
INIT = jax.jit(ga.init, static_argnums=1)
STEP = jax.jit(ga.step, static_argnums=1)
RUN = jax.jit(ga.run, static_argnums=1)
FINISH = jax.jit(ga.finish, static_argnums=1)
DONE = jax.jit(ga.done, static_argnums=1)


def _state(config, seed=0, **kw):
    return INIT(jax.random.key(seed), config, _params(config, **kw))


def _np(x):
    return np.asarray(x)


def _lane(tree, i):
    """Entry `i` of every leaf's leading axis, indexed on the host (no op-by-op compiles)."""
    return jax.tree.map(lambda x: np.asarray(x)[i], tree)


class KernelVariantsTest(chex.TestCase):
    """Each kernel gives the same result with and without jit."""

    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.named_parameters(("permutation", STEADY), ("combination", COMBINATION))
    def test_init(self, config):
        params = _params(config)
        state = self.variant(ga.init, static_argnums=1)(jax.random.key(3), config, params)
        chex.assert_shape(state.genes, (config.islands, config.pop, config.n))
        chex.assert_shape(state.fit, (config.islands, config.pop))
        chex.assert_shape(state.seed, (config.islands, 2))
        chex.assert_shape([state.gen, state.best_fit], ())
        chex.assert_shape(state.best_rows, (config.n,))
        assert state.genes.dtype == jnp.int8 and int(state.gen) == 0
        genes = _np(state.genes).reshape(-1, config.n)
        if config.encoding == "permutation":
            assert (np.sort(genes, axis=1) == np.arange(config.n)).all()
        else:
            assert (
                genes.min() >= 0
                and genes.max() < config.n
                and (np.diff(np.sort(genes), axis=1) == 0).any()
            )
        assert (_np(state.fit).ravel() == checker.attacking_pairs(genes)).all()
        assert int(state.best_fit) == _np(state.fit).min()
        assert checker.attacking_pairs(_np(state.best_rows)[None])[0] == int(state.best_fit)
        chex.assert_trees_all_equal(state, INIT(jax.random.key(3), config, params))

    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.named_parameters(*CONFIGS)
    def test_generation(self, config):
        state, params = _state(config), _params(config)
        new, m = self.variant(ga.generation, static_argnums=1)(state, config, params)
        chex.assert_trees_all_equal((new, m), GENERATION(state, config, params))
        chex.assert_trees_all_equal_shapes(new, state)
        k = config.sols_per_gen
        chex.assert_shape([m.best, m.avg, m.worst, m.nevals], ())
        chex.assert_shape(m.sols, (config.islands, k, config.n))
        chex.assert_shape(m.sols_ok, (config.islands, k))
        genes = _np(new.genes).reshape(-1, config.n)
        assert (np.sort(genes, axis=1) == np.arange(config.n)).all()
        assert (_np(new.fit).ravel() == checker.attacking_pairs(genes)).all()
        assert int(m.best) == _np(new.fit).min() and int(m.worst) == _np(new.fit).max()
        assert np.isclose(float(m.avg), _np(new.fit).mean())
        assert (_np(new.seed) == _np(state.seed)).all()  # island seeds are fixed
        assert int(new.gen) == 1
        assert int(new.best_fit) == min(int(state.best_fit), _np(new.fit).min())
        if config.scheme == "steady":
            assert int(m.nevals) == 2 * config.islands  # two children per island
            assert int(m.best) <= _np(state.fit).min()

    @chex.variants(with_jit=True, without_jit=True)
    def test_migrate(self):
        config = STEADY
        genes = _state(config, seed=2).genes
        fit = jnp.asarray(
            np.random.default_rng(0).permutation(2 * config.pop).reshape(2, -1), jnp.int32
        )
        g2, f2 = self.variant(lambda g, f: ga.migrate(g, f, config))(genes, fit)
        for src, dst in ((0, 1), (1, 0)):  # a ring: island i's best replace island i+1's worst
            best = np.argsort(_np(fit[src]), kind="stable")[:2]
            worst = np.argsort(-_np(fit[dst]), kind="stable")[:2]
            assert (_np(g2[dst])[worst] == _np(genes[src])[best]).all()
            assert (_np(f2[dst])[worst] == _np(fit[src])[best]).all()
            rest = np.setdiff1d(np.arange(config.pop), worst)
            assert (_np(g2[dst])[rest] == _np(genes[dst])[rest]).all()
        one = self.variant(lambda g, f, m: ga.migrate(g, f, config, m))(genes, fit, 1)
        want = ga.migrate(genes, fit, ga.Config(n=6, pop=8, islands=2, migrants=1, tournament=3))
        chex.assert_trees_all_equal(one, want)  # one migrant under a capacity of two

    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.named_parameters(*CONFIGS)
    def test_step_and_run(self, config):
        params = _params(config, generations=12)
        key = jax.random.key(5)
        result = self.variant(ga.run, static_argnums=1)(key, config, params)
        chex.assert_shape([result.solved, result.steps, result.best], ())
        chex.assert_shape(result.rows, (config.n,))
        assert result.rows.dtype == jnp.int32
        s0 = INIT(key, config, params)  # the same trial, step by step to done
        s = s0
        while not bool(DONE(s, config, params)):
            s = STEP(s, config, params)
        chex.assert_trees_all_equal(result, ga.result(s, config, params))
        assert int(result.steps) <= 12
        assert bool(result.solved) == (int(result.best) == 0)
        assert bool(result.solved) or int(result.steps) == 12
        assert checker.attacking_pairs(_np(result.rows)[None])[0] == int(result.best)
        step = self.variant(ga.step, static_argnums=1)
        chex.assert_trees_all_equal(step(s, config, params), s)  # a no-op once done
        chex.assert_trees_all_equal(step(s0, config, params), STEP(s0, config, params))


def test_run_stops_at_the_first_solved_generation():
    config = ga.Config(n=8, pop=30, tournament=3)
    params = ga.default_params(config, generations=2000)
    result = RUN(jax.random.key(1), config, params)
    assert bool(result.solved) and int(result.best) == 0
    assert checker.are_solutions(_np(result.rows)[None])[0]
    s, best = INIT(jax.random.key(1), config, params), []
    for _ in range(int(result.steps)):
        s, m = GENERATION(s, config, params)
        best.append(int(m.best))
    assert best[-1] == 0 and all(b > 0 for b in best[:-1])  # no earlier generation solved
    assert (_np(s.best_rows) == _np(result.rows)).all()


def test_scan_of_steps_and_of_generations():
    """``lax.scan`` of :func:`ga.step` stops changing the state once done; of
    :func:`ga.generation` keeps going and records per-generation metrics."""
    config, params = STEADY, _params(STEADY, generations=5)
    s0 = _state(config)

    @jax.jit
    def scans(s0, params):
        stepped, _ = lax.scan(lambda s, _: (ga.step(s, config, params), None), s0, None, length=9)
        gens, ms = lax.scan(lambda s, _: ga.generation(s, config, params), s0, None, length=9)
        return stepped, gens, ms

    stepped, gens, ms = scans(s0, params)
    states = [s0]
    for g in range(9):
        s, m = GENERATION(states[-1], config, params)
        chex.assert_trees_all_equal(m, _lane(ms, g))
        states.append(s)
    chex.assert_trees_all_equal(gens, states[-1])
    stop = next(g for g, s in enumerate(states) if g == 5 or int(s.best_fit) == 0)
    chex.assert_trees_all_equal(stepped, states[stop])  # solved, or the budget of 5
    assert int(gens.gen) == 9


class KernelTracesTest(chex.TestCase):
    """New keys and Params reuse the compiled kernels; a sweep over Params is one compile."""

    def setUp(self):
        super().setUp()
        chex.clear_trace_counter()

    def test_init_and_run_trace_once(self):
        init = jax.jit(chex.assert_max_traces(ga.init, n=1), static_argnums=1)
        a = init(jax.random.key(0), STEADY, _params(STEADY))
        b = init(jax.random.key(1), STEADY, _params(STEADY, cxpb=0.9))  # no retrace
        assert not (_np(a.genes) == _np(b.genes)).all()
        run = jax.jit(chex.assert_max_traces(ga.run, n=1), static_argnums=1)
        run(jax.random.key(0), GENERATIONAL, _params(GENERATIONAL, generations=3))
        other = ga.default_params(
            GENERATIONAL, cxpb=0.9, mutpb=0.05, tournament=2, elite=0, generations=4
        )
        run(jax.random.key(2), GENERATIONAL, other)  # swept numbers are dynamic

    def test_vmap_over_params_compiles_once(self):
        """8 mutation rates x a population of 1000, one jit, one compile (the issue's sweep)."""
        config = ga.Config(
            n=8,
            pop=1000,
            scheme="generational",
            crossover="pmx",
            tournament=3,
            cx_cap32=16,
            mut_cap32=8,
        )
        base = ga.default_params(config, generations=3)

        def sweep(key, config, rates):
            params = jax.vmap(lambda r: base._replace(mutpb=r))(rates)
            keys = jax.random.split(key, rates.shape[0])
            return jax.vmap(ga.run, in_axes=(0, None, 0))(keys, config, params)

        sweep = jax.jit(chex.assert_max_traces(sweep, n=1), static_argnums=1)
        rates = jnp.linspace(0.05, 0.4, 8, dtype=jnp.float32)
        out = sweep(jax.random.key(0), config, rates)
        chex.assert_shape(out.rows, (8, 8))
        jax.block_until_ready(sweep(jax.random.key(1), config, rates[::-1]))  # no retrace
        keys = jax.random.split(jax.random.key(0), 8)
        for i in (0, 5):  # each lane is the run of its own rate
            one = RUN(keys[i], config, base._replace(mutpb=rates[i]))
            chex.assert_trees_all_equal(one, _lane(out, i))


def test_vmap_over_keys_is_per_trial_and_over_params_per_lane():
    """vmap over keys gives each trial's own run; a generation vmapped over stacked Params
    equals each Params alone (masked_apply's batching rule reads each lane's rate)."""
    config = GENERATIONAL
    keys = jax.random.split(jax.random.key(9), 3)
    params = _params(config, generations=6)
    batch = jax.jit(jax.vmap(ga.run, in_axes=(0, None, None)), static_argnums=1)(
        keys, config, params
    )
    for i in range(3):
        one = RUN(keys[i], config, params)
        chex.assert_trees_all_equal(one, _lane(batch, i))
    sweep = [_params(config, mutpb=m, indpb=q) for m, q in ((0.1, 0.0), (0.9, 0.5), (0.5, 1.0))]
    stacked = jax.tree.map(lambda *x: jnp.stack(x), *sweep)
    s = _state(config, seed=4)
    many = jax.jit(jax.vmap(ga.generation, in_axes=(None, None, 0)), static_argnums=1)(
        s, config, stacked
    )
    for i, p in enumerate(sweep):
        chex.assert_trees_all_equal(GENERATION(s, config, p), _lane(many, i))


def test_counts_below_their_capacity_equal_a_static_count():
    """Params.tournament, elite and migrants below the Config's capacity give exactly the
    generations of a config with that static count (prefix draws, masked ranks). The small
    configs are GENERATIONAL and test_run_stops_...'s, whose programs are compiled there."""
    small = GENERATIONAL  # tournament 3, elite 1, migrants 1
    large = dataclasses.replace(GENERATIONAL, tournament=5, elite=3, migrants=2)
    kw = {"migrate_every": 1}
    p_small = ga.default_params(small, **kw)
    p_large = ga.default_params(large, tournament=3, elite=1, migrants=1, **kw)
    s_small, s_large = _state(small, seed=3, **kw), _state(large, seed=3, **kw)
    chex.assert_trees_all_equal(s_small, s_large)
    for _ in range(3):
        s_small, m_small = GENERATION(s_small, small, p_small)
        s_large, m_large = GENERATION(s_large, large, p_large)
        chex.assert_trees_all_equal((s_small, m_small), (s_large, m_large))
    steady_small = ga.Config(n=8, pop=30, tournament=3)
    steady_large = ga.Config(n=8, pop=30, tournament=6)
    a = RUN(jax.random.key(4), steady_small, ga.default_params(steady_small, generations=30))
    b = RUN(
        jax.random.key(4),
        steady_large,
        ga.default_params(steady_large, tournament=3, generations=30),
    )
    chex.assert_trees_all_equal(a, b)


def test_the_module_keeps_the_kernel_contract():
    for name in ("Config", "Params", "default_params", "State", "Result", "init", "step", "run"):
        assert hasattr(ga, name), name
    for name in ("done", "result", "finish", "generation", "Problem", "Metrics"):
        assert hasattr(ga, name), name
    assert ga.Config.__dataclass_params__.frozen
    for cls in (ga.Params, ga.State, ga.Result, ga.Metrics, ga.Problem):
        assert issubclass(cls, tuple) and hasattr(cls, "_fields")  # NamedTuples: pytrees
    params = _params(STEADY, generations=7)
    s = INIT(jax.random.key(8), STEADY, params)
    for _ in range(3):
        s = STEP(s, STEADY, params)
    chex.assert_trees_all_equal(  # finish from generation 3 is run's end
        FINISH(s, STEADY, params), RUN(jax.random.key(8), STEADY, params)
    )


def test_initial_metrics():
    state = _state(STEADY, seed=4)
    m = ga.initial_metrics(state, STEADY, _params(STEADY))
    fit = _np(state.fit)
    assert int(m.best) == fit.min() and int(m.worst) == fit.max()
    assert np.isclose(float(m.avg), fit.mean())
    assert int(m.nevals) == STEADY.islands * STEADY.pop  # the initial population
    chex.assert_shape(m.sols, (STEADY.islands, STEADY.sols_per_gen, STEADY.n))
    best = _np(m.sols)[:, 0]
    assert (checker.attacking_pairs(best) == fit.min(axis=1)).all()


def test_typed_and_legacy_keys_agree_and_bad_keys_are_refused():
    params = _params(STEADY)
    chex.assert_trees_all_equal(
        ga.init(jax.random.PRNGKey(3), STEADY, params),
        ga.init(jax.random.wrap_key_data(jax.random.PRNGKey(3)), STEADY, params),
    )
    with pytest.raises(QueensError, match=r"jax\.random\.key"):
        ga.init(3, STEADY, params)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"n": 3}, "n = 3"),
        ({"encoding": "bits"}, "encoding"),
        ({"scheme": "annealing"}, "scheme"),
        ({"tournament": 1}, "tournament = 1"),
        ({"tournament": 30}, "tournament = 30"),
        ({"elite": 2}, "elite applies"),
        ({"crossover": "pmx", "encoding": "combination"}, "crossover 'pmx'"),
        ({"mutation": "nope"}, "mutation 'nope'"),
        ({"selection": "roulette"}, "selection 'roulette'"),
        ({"fitness": "report-diagonals-only", "toroidal": True}, "toroidal"),
        ({"pop": 10.5}, "pop must be a whole number, got 10.5"),
    ],
)
def test_config_errors_are_one_line(kwargs, words):
    with pytest.raises(QueensError, match=words) as e:
        ga.Config(**{"n": 8, "pop": 20, **kwargs})
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"cxpb": 1.5}, "cxpb"),
        ({"tournament": 6}, "tournament"),
        ({"migrants": 2}, "migrants"),
        ({"generations": -1}, "generations"),
    ],
)
def test_params_errors(kwargs, words):
    with pytest.raises(QueensError, match=words):
        ga.default_params(ga.Config(n=8, pop=20), **kwargs)


def test_config_is_hashable_and_defaults_are_resolved():
    config = ga.Config(n=8, pop=20, encoding="combination", scheme="generational")
    assert (config.selection, config.crossover, config.mutation) == (
        "tournament",
        "one_point",
        "reset",
    )
    assert hash(config) == hash(ga.Config(**vars(config))) and config == ga.Config(**vars(config))


REPORT = ga.Config(
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
    score itself runs with and without jit in test_ga_operators' OperatorVariantsTest, as every
    entry of ga_fitness.FITNESS does; init and step run the same code for every fitness)."""
    params = _params(REPORT)
    state = _state(REPORT, seed=4)
    chex.assert_shape(state.fit, (1, REPORT.pop))
    np.testing.assert_array_equal(_np(state.fit).ravel(), _diagonal_pairs(state.genes))
    for _ in range(3):
        state, m = GENERATION(state, REPORT, params)
        np.testing.assert_array_equal(_np(state.fit).ravel(), _diagonal_pairs(state.genes))
        chex.assert_shape(m.sols, (1, 2, REPORT.n))
        np.testing.assert_array_equal(_np(m.sols_ok).ravel(), _diagonal_pairs(m.sols) == 0)


# ------------------------------------------------------------- bring your own operator (issue 24)
def weighted(x):
    """The module docstring's example: diagonal conflicts weighted by column (permutations)."""
    n = x.shape[0]
    c = jnp.arange(n)
    same = (jnp.abs(x[:, None] - x[None, :]) == jnp.abs(c[:, None] - c[None, :])) & (
        c[:, None] != c[None, :]
    )
    return jnp.sum(jnp.where(same, 1 + c[None, :], 0), dtype=jnp.int32)


def _weighted_reference(board) -> int:
    b = [int(v) for v in board]
    n = len(b)
    return sum(
        1 + j for i in range(n) for j in range(n) if i != j and abs(b[i] - b[j]) == abs(i - j)
    )


def flip_mutation(seed, x, indpb):
    """A user mutation: reverse the whole genome when the seed's low bit is set (keeps a
    permutation; ``indpb`` unused)."""
    del indpb
    return jnp.where((seed & 1) == 1, x[::-1], x)


def test_a_user_fitness_on_permutation_boards_drives_the_ga():
    config = ga.Config(n=8, pop=40, tournament=3, fitness=weighted)
    params = ga.default_params(config, generations=3000)
    state = _state(config, seed=2)
    boards = _np(state.genes).reshape(-1, 8)
    assert _np(state.fit).ravel().tolist() == [_weighted_reference(b) for b in boards]
    result = RUN(jax.random.key(2), config, params)
    assert bool(result.solved) and int(result.best) == 0
    assert checker.are_solutions(_np(result.rows)[None])[0]  # 0 exactly for solutions
    for _ in range(3):
        state, _m = GENERATION(state, config, params)
        boards = _np(state.genes).reshape(-1, 8)
        assert _np(state.fit).ravel().tolist() == [_weighted_reference(b) for b in boards]


def test_a_user_mutation_and_float_fitness_in_the_generational_scheme():
    def float_pairs(x):
        return ga_fitness.fitness(x).astype(jnp.float32) / 2

    config = ga.Config(
        n=8,
        pop=16,
        scheme="generational",
        tournament=3,
        mutation=flip_mutation,
        fitness=float_pairs,
        mut_cap32=8,
    )
    params = ga.default_params(config, mutpb=0.5)
    s0 = _state(config, seed=1, mutpb=0.5)
    assert s0.fit.dtype == jnp.float32
    s1, m = GENERATION(s0, config, params)
    genes = _np(s1.genes).reshape(-1, 8)
    assert (np.sort(genes, axis=1) == np.arange(8)).all()
    assert np.allclose(_np(s1.fit).ravel(), checker.attacking_pairs(genes) / 2)
    assert m.best.dtype == jnp.float32
    # The built-in is one of the same functions: passing it by name or by object is one run
    # (by name: GENERATIONAL, compiled for the tests above).
    by_name = GENERATIONAL
    by_fn = dataclasses.replace(GENERATIONAL, mutation=ga_mutation.mut_swap)
    assert by_name.mutation == "swap"
    chex.assert_trees_all_equal(
        GENERATION(_state(by_name), by_name, _params(by_name)),
        GENERATION(_state(by_fn), by_fn, _params(by_fn)),
    )


def test_a_user_selection_and_crossover():
    def best_two(seed, fit, size, count):  # truncation: the `count` best, whatever the seed
        return ga_selection.best_indices(fit, count)

    def copy_parents(seed, a, b):
        return a, b

    config = ga.Config(
        n=8, pop=10, scheme="generational", selection=best_two, crossover=copy_parents
    )
    s0 = _state(config)
    s1, _ = GENERATION(s0, config, ga.default_params(config, mutpb=0.0))
    order = np.argsort(_np(s0.fit), axis=1, kind="stable")  # the population, best first
    assert (_np(s1.genes) == np.take_along_axis(_np(s0.genes), order[..., None], 1)).all()
    assert (_np(s1.fit) == np.take_along_axis(_np(s0.fit), order, 1)).all()


@pytest.mark.parametrize(
    "name, fn, words",
    [
        ("fitness", lambda x: x, r"fitness must map x int32\[8\] to a scalar.*int32\[8\]"),
        ("fitness", lambda x: x.sum() > 0, "returned bool"),
        ("crossover", lambda s, a, b: a, r"crossover must map .* two int children \[8\]"),
        ("crossover", lambda s, a, b: (a, b[:4]), r"returned \(int8\[8\], int8\[4\]\)"),
        ("mutation", lambda s, x, p: x.astype(jnp.float32), "returned float32"),
        ("mutation", lambda s, x: x, "mutation failed on .*TypeError"),
        ("selection", lambda s, f, k, c: jnp.zeros(3, jnp.int32), r"int indices \[2\]"),
    ],
)
def test_user_operators_are_checked_once_with_a_clear_error(name, fn, words):
    with pytest.raises(QueensError, match=words) as e:
        ga.Config(n=8, pop=20, **{name: fn})
    assert "\n" not in str(e.value) and f"ga.Config.{name}" in str(e.value)


def test_a_new_function_object_compiles_anew_the_same_one_does_not():
    chex.clear_trace_counter()
    run = jax.jit(chex.assert_max_traces(ga.run, n=2), static_argnums=1)
    params = ga.default_params(ga.Config(n=6, pop=8, tournament=3), generations=2)
    one = ga.Config(n=6, pop=8, tournament=3, mutation=flip_mutation)
    run(jax.random.key(0), one, params)
    run(jax.random.key(1), ga.Config(n=6, pop=8, tournament=3, mutation=flip_mutation), params)
    run(jax.random.key(0), ga.Config(n=6, pop=8, tournament=3, mutation=lambda s, x, p: x), params)


# ---------------------------------------------------------------- constrained boards (issue 16)
CONSTRAINED = {
    "permutation": ga.Config(n=6, pop=8, islands=2, migrants=1, tournament=3, constrained=True),
    "combination": ga.Config(
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
TORUS = ga.Config(
    n=7,
    pop=8,
    scheme="generational",
    crossover="ox1",
    mutation="inversion",
    tournament=3,
    toroidal=True,
)


def _cparams(config):
    return ga.default_params(config, cxpb=0.9, mutpb=0.9, indpb=0.3, migrate_every=2)


TRIALS = 2


@functools.cache
def _constrained_run(config):
    """One jitted init + 6 generations of 2 trials per config: a new instance of the same n
    must not recompile."""

    def run(key, mask):
        problem, params = ga.Problem(mask), _cparams(config)
        s0, _ = trials.init(config, key, TRIALS, 0, params, problem)
        s1, m = trials.generations(config, s0, params, problem, jnp.int32(6), 6)
        return s0, s1, m

    return jax.jit(chex.assert_max_traces(run, n=1))


def _penalised(board, model) -> int:
    """The constrained GA's fitness in plain Python: attacking pairs plus n(n-1)/2 + 1 per queen
    on a square the instance closes (blocked, a fixed column's other rows, attacked by a fixed
    queen)."""
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
    s0, s1, m = _constrained_run(config)(jax.random.key(seed), rules.mask_for(model))
    for genes in (s0.genes, s1.genes, m.sols, s1.best_rows):
        genes = _np(genes)
        for x, y in model.fixed:
            assert (genes[..., x] == y).all(), f"the fixed queen of column {x} moved"
        if encoding == "permutation":
            assert (np.sort(genes, axis=-1) == np.arange(6)).all()
    for st_ in (s0, s1):
        boards = _np(st_.genes).reshape(-1, 6)
        assert _np(st_.fit).ravel().tolist() == [_penalised(b, model) for b in boards]
    ok, sols = _np(m.sols_ok), _np(m.sols)
    for b in sols[ok]:  # fitness 0: no forbidden square, no attack
        assert checker.check_constrained(b, model).ok


def test_a_new_instance_does_not_recompile():
    run = _constrained_run(CONSTRAINED["permutation"])
    first = cons.Constraints(6, fixed=((0, 1),), blocked=((2, 2),))
    second = cons.Constraints(6, fixed=((3, 0), (5, 3)))
    for model in (first, second):  # run is guarded by chex.assert_max_traces(n=1)
        s0, _, _ = run(jax.random.key(1), rules.mask_for(model))
        for x, y in model.fixed:
            assert (_np(s0.genes)[..., x] == y).all()


def test_a_constrained_config_needs_its_instance():
    config = CONSTRAINED["permutation"]
    with pytest.raises(QueensError, match=r"problem=ga\.Problem\(mask\)"):
        ga.init(jax.random.key(0), config, _cparams(config))


def test_user_operators_are_repaired_on_an_instance():
    model = cons.Constraints(6, fixed=((1, 3),), blocked=((0, 0), (4, 4)))
    config = ga.Config(n=6, pop=8, tournament=3, constrained=True, mutation=flip_mutation)
    problem = ga.Problem(rules.mask_for(model))
    params = _cparams(config)
    s = INIT(jax.random.key(0), config, params, problem)
    for _ in range(4):
        s, _ = GENERATION(s, config, params, problem)
        assert (_np(s.genes)[..., 1] == 3).all()
    boards = _np(s.genes).reshape(-1, 6)
    assert _np(s.fit).ravel().tolist() == [_penalised(b, model) for b in boards]


class ConstrainedVariantsTest(chex.TestCase):
    # without_jit runs of a whole generation take ~10 s each (op by op); the changed kernels
    # (repairs, forbidden, toroidal fitness) run both variants in test_ga_fitness.py and
    # test_ga_repair.py
    @chex.variants(with_jit=True)
    def test_constrained_steady_generation(self):
        config = CONSTRAINED["permutation"]
        model = cons.Constraints(6, fixed=((1, 3),), blocked=((0, 0), (4, 4)))
        problem, params = ga.Problem(rules.mask_for(model)), _cparams(config)
        state = INIT(jax.random.key(2), config, params, problem)
        new, m = self.variant(lambda s, p, pr: ga.generation(s, config, p, pr))(
            state, params, problem
        )
        chex.assert_shape(new.genes, (2, 8, 6))
        chex.assert_shape(m.sols, (2, 2, 6))
        assert (_np(new.genes)[..., 1] == 3).all()
        boards = _np(new.genes).reshape(-1, 6)
        assert _np(new.fit).ravel().tolist() == [_penalised(b, model) for b in boards]

    @chex.variants(with_jit=True)
    def test_toroidal_generation_scores_on_the_torus(self):
        params = _cparams(TORUS)
        state = INIT(jax.random.key(4), TORUS, params)
        new, _ = self.variant(lambda s, p: ga.generation(s, TORUS, p))(state, params)
        chex.assert_shape(new.fit, (1, 8))
        boards = _np(new.genes).reshape(-1, 7)
        assert _np(new.fit).ravel().tolist() == [ref.torus_objective(b) for b in boards]


def test_the_python_guide_ga_kernel_example_runs():
    """The Python guide's example of the GA kernel (jit, a Params sweep, a user fitness)."""
    guide = (Path(__file__).resolve().parents[2] / "docs" / "guides" / "python.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", guide, re.S) if "solvers.ga" in b)
    scope: dict = {}
    swept = []  # the example's own sweep call and result (called again, it searched anew)
    for stmt in ast.parse(block).body:  # one statement at a time, as the whole block
        code = compile(ast.Module([stmt], []), "docs/guides/python.md", "exec")
        exec(code, scope)
        if getattr(stmt, "name", None) == "sweep":
            fn = scope["sweep"]
            scope["sweep"] = lambda *a, fn=fn: swept.append((a, fn(*a))) or swept[-1][1]
    result, jnp_ = scope["result"], scope["jnp"]
    assert bool(result.solved) and checker.are_solutions(np.asarray(result.rows)[None])[0]
    (((key, rates), out),) = swept  # the example swept once, with the test's former arguments
    assert (jax.random.key_data(key) == jax.random.key_data(jax.random.key(1))).all()
    np.testing.assert_array_equal(rates, jnp_.linspace(0.05, 0.4, 8))
    chex.assert_shape(out.rows, (8, 20))
    mine = scope["mine"]
    assert mine.fitness is scope["diagonal_pairs"]


@pytest.mark.parametrize(
    "kw,needle",
    [
        ({"generations": 2.5}, "generations must be a whole number"),
        ({"target": float("nan")}, "target must be a finite number"),
        ({"tournament": 0}, "tournament must be in"),
        ({"tournament": 10**6}, "tournament must be in"),
        ({"cxpb": 1.5}, "cxpb must be"),
    ],
)
def test_defect_ga_params_took_fractions_nan_and_tournaments_out_of_range(kw, needle):
    config = ga.Config(n=8, pop=10)
    with pytest.raises(QueensError, match=needle):
        ga.default_params(config, **kw)


def test_defect_ga_params_built_by_hand_are_checked_where_concrete():
    config = ga.Config(n=8, pop=10)
    bad = ga.default_params(config)._replace(generations=np.int32(-1))
    with pytest.raises(QueensError, match=r"params\.generations"):
        ga.run(jax.random.key(0), config, bad)
