"""solvers.anneal: acceptance rules, incremental objectives, one-chain kernels with and without
jit."""

import dataclasses
import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import reference
from absl.testing import parameterized
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax

from jaxqueens.core import checker, lines
from jaxqueens.core import constraints as cons
from jaxqueens.solvers import anneal as sls


@pytest.mark.parametrize(
    "delta,level,u,method,want",
    [
        (0, 0.0, 0.0, "ls", True),
        (1, 0.0, 0.0, "ls", False),
        (-2, 0.0, 0.0, "ls", True),
        (2, 2.0, 0.9, "ta", True),
        (3, 2.5, 0.0, "ta", False),
        (1, 0.0, 0.0, "ta", False),
        (-1, 1.0, 0.99, "sa", True),
        (0, 1.0, 0.99, "sa", True),
        (1, 1.0, 0.36, "sa", True),
        (1, 1.0, 0.37, "sa", False),  # exp(-1) = 0.3679
        (2, 4.0, 0.60, "sa", True),
        (2, 4.0, 0.61, "sa", False),  # exp(-0.5) = 0.6065
    ],
)
def test_acceptance_rules(delta, level, u, method, want):
    assert bool(sls.accept(jnp.int32(delta), jnp.float32(level), jnp.float32(u), method)) == want


# A chain's initial state, compiled once per Config (op by op, every operation of init compiled a
# program of its own for each new n); KernelTest runs init without jit.
INIT = jax.jit(sls.init, static_argnums=1)


def _objective(rows, objective):
    return reference.n_attacks(rows) if objective == "attacks" else reference.attacking_pairs(rows)


def _np_counts(rows):
    """The packed line counts [5n - 2] (rows | r + c | r - c + n - 1), in plain Python."""
    return np.concatenate(reference.line_counts([int(r) for r in rows]))


@functools.cache
def _proposals(config, k: int):
    """A chain's initial state and ``k`` successive proposals from it, each taken (the boards
    before and after, the counts and delta of each): one compiled program per Config, where a
    jitted init, a jitted propose and a jitted recount compiled three."""

    def run(key):
        def body(s, _):
            rows, counts, delta = sls.propose(s, config)
            nxt = s._replace(rows=rows, counts=counts, ctr=s.ctr + 1)
            return nxt, (s.rows, rows, counts, delta)

        s0 = sls.init(key, config, None)
        return s0, lax.scan(body, s0, None, length=k)[1]

    return jax.jit(run)


# (n, neighbour, objective, step): every Config compiles its own program, so hypothesis draws
# from these nine (each step length 1..3 with each objective, a step as long as n - 1 allows,
# swaps with both objectives, n from 4 to 24) and spends its examples on the seeds; `step`
# is read by the step neighbour only.
PROPOSAL_CASES = [
    (4, "step", "pairs", 3),
    (5, "step", "attacks", 2),
    (7, "step", "pairs", 1),
    (11, "step", "attacks", 3),
    (16, "step", "attacks", 1),
    (24, "step", "pairs", 2),
    (4, "swap", "attacks", 1),
    (13, "swap", "pairs", 1),
    (24, "swap", "attacks", 1),
]


@settings(max_examples=15, deadline=None)
@given(case=st.sampled_from(PROPOSAL_CASES), seed=st.integers(0, 2**31))
def test_proposal_delta_is_exact(case, seed):
    n, neighbour, objective, step = case
    config = sls.Config(n=n, neighbour=neighbour, objective=objective, step=min(step, n - 1))
    _, walk = jax.device_get(_proposals(config, 5)(jax.random.key(seed)))
    for before, after, counts, delta in zip(*walk, strict=True):
        assert int(delta) == _objective(after, objective) - _objective(before, objective)
        np.testing.assert_array_equal(counts, _np_counts(after))
        moved = np.flatnonzero(before != after)
        if neighbour == "step":
            assert len(moved) <= 1  # one queen moved by 1..step rows (mod n)
            if len(moved):
                shift = (after[moved[0]] - before[moved[0]]) % n
                assert min(shift, n - shift) <= config.step
        else:
            assert sorted(after) == sorted(before)  # a swap keeps the rows


@pytest.mark.parametrize("method", sls.METHODS)
def test_state_stays_consistent(method):
    config = sls.Config(n=12, method=method, objective="pairs", rounds=4, steps_per_round=50)
    params = sls.Params(jnp.asarray([2.0, 1.0, 0.5, 0.0]))
    s = INIT(jax.random.key(5), config, params)
    s = jax.jit(lambda s: lax.fori_loop(0, 150, lambda _, s: sls.step(s, config, params), s))(s)
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
    assert sls.default_params(config).schedule.shape == (4,)


CONFIG = sls.Config(
    n=8, method="ta", neighbour="swap", objective="pairs", rounds=4, steps_per_round=100
)
SCHEDULE = sls.Params(jnp.asarray([2.0, 1.0, 1.0, 0.0], jnp.float32))
SEEDS = [jax.random.key(s) for s in (3, 11, 2024)]


# `step` and `done` of one Config, compiled once for every seed, schedule and instance (a new
# `jax.jit(lambda ...)` per reference run compiled the step anew each time; `done` op by op
# dispatched several operations per step); KernelTest's with_jit variant of step shares STEP.
STEP = jax.jit(sls.step, static_argnums=1)
DONE = jax.jit(sls.done, static_argnums=1)


def _stepped(key, config, params, problem=None):
    """Reference run: `step` in a Python loop until `done` (the kernel's own contract)."""
    s = INIT(key, config, params, problem)
    while not bool(DONE(s, config, params)):
        s = STEP(s, config, params, problem)
    return sls.result(s, config, params)


@functools.cache
def _stepped_seed(i: int, config):
    """`_stepped` of `SEEDS[i]` with the test schedule of `config`, once for both variants of a
    test (one dispatch per step)."""
    return _stepped(SEEDS[i], config, SCHEDULES[config])


RUN = jax.jit(sls.run, static_argnums=1)  # a reference run, compiled once per Config


def _op_by_op(variant) -> bool:
    """The without_jit variant: there every call compiles the kernel's loops anew, so it runs
    the fewest seeds and steps that take the paths the jitted variant's take."""
    return variant.type is chex.ChexVariantType.WITHOUT_JIT


class KernelTest(parameterized.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_init(self):
        s = self.variant(sls.init, static_argnums=1)(SEEDS[0], CONFIG, SCHEDULE)
        chex.assert_shape([s.rows, s.counts, s.f, s.steps], [(8,), (lines.size(8),), (), ()])
        assert sorted(np.asarray(s.rows)) == list(range(8))  # a permutation
        assert int(s.f) == int(s.best) == reference.attacking_pairs(np.asarray(s.rows))

    @chex.variants(with_jit=True, without_jit=True)
    def test_step(self):
        step = self.variant(sls.step, static_argnums=1)
        s = INIT(SEEDS[1], CONFIG, SCHEDULE)
        steps = 3 if _op_by_op(self.variant) else 20  # 3: two accepted moves, then a rejected one
        for _ in range(steps):
            s = step(s, CONFIG, SCHEDULE, None)
        chex.assert_shape(s.rows, (8,))
        np.testing.assert_array_equal(s.counts, lines.counts_of(s.rows, 8))
        assert int(s.f) == reference.attacking_pairs(np.asarray(s.rows))
        assert int(s.ctr) == steps + 1

    @chex.variants(with_jit=True, without_jit=True)
    def test_solve_chain_equals_stepping(self):
        solve = self.variant(sls.run, static_argnums=1)
        for i, seed in enumerate(SEEDS[:1] if _op_by_op(self.variant) else SEEDS):  # all solve
            got, want = solve(seed, CONFIG, SCHEDULE), _stepped_seed(i, CONFIG)
            chex.assert_shape(got.rows, (8,))
            chex.assert_trees_all_equal(got, want)
            if bool(got.solved):
                assert (
                    checker.are_solutions(np.asarray(got.rows)[None]).all() and int(got.best) == 0
                )

    @chex.variants(with_jit=True, without_jit=True)
    def test_trace_ends_at_the_chains_best(self):
        trace = self.variant(lambda key, params: sls.trace(key, CONFIG, params, 4))
        for seed in SEEDS[:1] if _op_by_op(self.variant) else SEEDS:
            best = np.asarray(trace(seed, SCHEDULE))
            chex.assert_shape(best, (CONFIG.total_steps // 4,))
            assert np.all(np.diff(best) <= 0)
            assert best[-1] == int(RUN(seed, CONFIG, SCHEDULE).best)

    @chex.variants(with_jit=True, without_jit=True)
    def test_random_walk_deltas_follow_the_walk(self):
        walk = self.variant(lambda key: sls.random_walk_deltas(key, CONFIG, 30))
        deltas = np.asarray(walk(SEEDS[2]))
        chex.assert_shape(deltas, (30,))
        _, (_, _, _, want) = _proposals(CONFIG, 30)(SEEDS[2])  # the walk accepts every proposal
        np.testing.assert_array_equal(deltas, want)

    def test_kernels_trace_once(self):
        """New keys and schedules reuse the compiled kernels (the schedule is dynamic)."""
        fns = {
            "run": lambda key, p: sls.run(key, CONFIG, p),
            "step": lambda key, p: sls.step(sls.init(key, CONFIG, p), CONFIG, p),
            "trace": lambda key, p: sls.trace(key, CONFIG, p, 8),
            "random_walk_deltas": lambda key, p: sls.random_walk_deltas(key, CONFIG, 16),
        }
        for fn in fns.values():
            jitted = jax.jit(chex.assert_max_traces(fn, n=1))
            for k, key in enumerate(SEEDS):
                jitted(key, sls.Params(SCHEDULE.schedule * (k + 1)))


# ---------------------------------------------------------------- NMOF's vignette (issue 14)
def nmof_neighbour_row(r: int, shift: int, n: int) -> int:
    """Plain reference of the vignette's edge rule (0-based): `p[i] + shift`, then past the last
    row to the first and before the first to the last (`p[i] <- 1` / `p[i] <- N`)."""
    r = r + shift
    return 0 if r > n - 1 else n - 1 if r < 0 else r


@pytest.mark.parametrize(
    "n,step,objective", [(7, 3, "attacks"), (10, 2, "pairs"), (13, 1, "attacks")]
)
def test_nmof_edge_moves_past_the_edge_to_the_far_end(n, step, objective):
    """Same draws as the default move; only the edge differs, as the reference says. Any start
    board (rows repeat here) keeps exact deltas and counts. Seeds and boards are dynamic, so
    each setting compiles once."""
    wrap = sls.Config(n=n, neighbour="step", step=step, objective=objective)
    nmof = dataclasses.replace(wrap, edge="nmof")
    propose = jax.jit(lambda s, c: sls.propose(s, c), static_argnums=1)
    init = jax.jit(lambda key, b: sls.init(key, nmof, None, sls.Problem(start=b)))
    counts_of = jax.jit(lambda rows: lines.counts_of(rows, n))
    rng = np.random.default_rng(n)
    for _ in range(4):
        start = rng.integers(0, n, n)
        start[: n // 2] = np.where(start[: n // 2] % 2, 0, n - 1)  # many queens at the edges
        s = init(jax.random.key(rng.integers(2**31)), jnp.asarray(start, jnp.int32))
        for _ in range(6):
            (rows_w, _, _), (rows, counts, delta) = propose(s, wrap), propose(s, nmof)
            before, after, wrapped = np.asarray(s.rows), np.asarray(rows), np.asarray(rows_w)
            col = np.flatnonzero(
                before != wrapped
            )  # the wrapped move always moves (0 < |shift| < n)
            assert len(col) == 1 and np.flatnonzero(before != after).tolist() in ([], col.tolist())
            c = int(col[0])
            shift = [d for d in range(-step, step + 1) if d and (before[c] + d) % n == wrapped[c]]
            assert len(shift) == 1  # n > 2 * step: the wrapped row gives the shift back
            assert after[c] == nmof_neighbour_row(int(before[c]), shift[0], n)
            assert int(delta) == _objective(after, objective) - _objective(before, objective)
            np.testing.assert_array_equal(counts, counts_of(rows))
            s = s._replace(rows=rows, counts=counts, ctr=s.ctr + 1)


ONE_ROW = jnp.zeros(8, jnp.int32)  # the vignette's p0 = rep(1, N): every queen on one line
NMOF = sls.Config(n=8, method="ls", neighbour="step", edge="nmof", rounds=2, steps_per_round=150)
NMOF_SCHEDULE = sls.Params(jnp.zeros(2, jnp.float32))


def one_row(b):
    return sls.Problem(start=b)


class StartAndReplayTest(parameterized.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_init_from_a_board_with_repeated_rows(self):
        init = self.variant(lambda key, b: sls.init(key, NMOF, NMOF_SCHEDULE, one_row(b)))
        s = init(SEEDS[0], ONE_ROW)
        chex.assert_shape([s.rows, s.counts], [(8,), (lines.size(8),)])
        np.testing.assert_array_equal(s.rows, np.zeros(8))
        np.testing.assert_array_equal(s.counts, lines.counts_of(ONE_ROW, 8))
        assert int(s.f) == int(s.best) == reference.n_attacks(np.zeros(8, int)) == 7
        assert int(s.ctr) == 1 and int(s.steps) == 0

    @chex.variants(with_jit=True, without_jit=True)
    def test_replay_to_the_best_step_gives_the_best_board(self):
        solve = self.variant(lambda key, b: sls.run(key, NMOF, NMOF_SCHEDULE, one_row(b)))
        replay = self.variant(lambda key, u, b: sls.replay(key, NMOF, NMOF_SCHEDULE, u, one_row(b)))
        for seed in SEEDS[:2] if _op_by_op(self.variant) else SEEDS:  # one solved, one not
            res = solve(seed, ONE_ROW)
            s = replay(seed, res.best_step, ONE_ROW)
            chex.assert_shape(s.rows, (8,))
            assert int(s.steps) == int(res.best_step) and int(s.f) == int(res.best)
            # steps counts every step spent: the solution's step, or the whole budget
            spent = int(res.best_step) if bool(res.solved) else NMOF.total_steps
            assert int(res.steps) == spent
            assert reference.n_attacks(np.asarray(s.rows)) == int(res.best)
            if bool(res.solved):
                np.testing.assert_array_equal(s.rows, res.rows)

    def test_the_chain_takes_its_start_from_the_problem(self):
        run = jax.jit(lambda key, problem: sls.run(key, NMOF, NMOF_SCHEDULE, problem))
        init = jax.jit(lambda key: sls.init(key, NMOF, NMOF_SCHEDULE))
        for key in SEEDS:
            chex.assert_trees_all_equal(
                run(key, one_row(ONE_ROW)), _stepped(key, NMOF, NMOF_SCHEDULE, one_row(ONE_ROW))
            )
            s = init(key)  # no problem: a random permutation
            assert sorted(np.asarray(s.rows)) == list(range(8))

    def test_new_boards_and_targets_do_not_retrace(self):
        fns = {
            "replay": lambda key, u, b: sls.replay(key, NMOF, NMOF_SCHEDULE, u, one_row(b)),
            "walk": lambda key, u, b: sls.random_walk_deltas(key, NMOF, 16, one_row(b)),
        }
        for fn in fns.values():
            jitted = jax.jit(chex.assert_max_traces(fn, n=1))
            for k, key in enumerate(SEEDS):
                jitted(key, jnp.int32(10 * k), (ONE_ROW + k) % 8)


# ---------------------------------------------------------------- constrained boards (issue 16)
# (n, neighbour, objective): each neighbour with each objective once, odd and even n from 4 to
# 11 (one compiled program per Config; hypothesis spends its examples on the seeds).
TORUS_CASES = [
    (4, "step", "attacks"),
    (7, "swap", "pairs"),
    (8, "step", "pairs"),
    (11, "swap", "attacks"),
]


@settings(max_examples=6, deadline=None)
@given(case=st.sampled_from(TORUS_CASES), seed=st.integers(0, 2**31))
def test_toroidal_proposal_delta_is_exact(case, seed):
    n, neighbour, objective = case
    config = sls.Config(n=n, neighbour=neighbour, objective=objective, toroidal=True)
    s, walk = jax.device_get(_proposals(config, 5)(jax.random.key(seed)))
    np.testing.assert_array_equal(s.counts, reference.torus_counts(s.rows))
    assert int(s.f) == reference.torus_objective(s.rows, objective)
    for before, after, counts, delta in zip(*walk, strict=True):
        assert int(delta) == (
            reference.torus_objective(after, objective)
            - reference.torus_objective(before, objective)
        )
        np.testing.assert_array_equal(counts, reference.torus_counts(after))


@functools.cache
def _walker(config, steps):
    """init and a walk of `steps` in one program, compiled once per Config for any instance
    (the mask and params are arguments)."""

    def walk(key, params, mask):
        problem = sls.Problem(mask=mask)

        def body(s, _):
            s = sls.step(s, config, params, problem)
            return s, s.rows

        s0 = sls.init(key, config, params, problem)
        return s0.rows, *lax.scan(body, s0, None, length=steps)

    return jax.jit(walk)


def _walk(config, params, mask, key, steps):
    """Every board [steps + 1, n] a constrained chain holds, and its last state."""
    first, s, rows = _walker(config, steps)(key, params, mask)
    return np.concatenate([np.asarray(first)[None], np.asarray(rows)]), s


# (n, method, objective, toroidal): every pair of method, objective and torus appears, n from 5
# to 8 (one compiled walk per Config; hypothesis spends its examples on instances and seeds).
FIXED_CASES = [
    (5, "ls", "attacks", False),
    (6, "ls", "pairs", True),
    (7, "ta", "attacks", True),
    (8, "ta", "pairs", False),
    (6, "sa", "attacks", False),
    (5, "sa", "pairs", True),
]


@settings(max_examples=8, deadline=None)
@given(data=st.data(), case=st.sampled_from(FIXED_CASES), seed=st.integers(0, 2**31))
def test_fixed_queens_never_move_and_no_forbidden_square_is_used(data, case, seed):
    n, method, objective, toroidal = case
    model, _ = reference.random_instance(data, n, sat=data.draw(st.booleans()))
    model = model.with_toroidal(toroidal)
    allowed = cons.allowed_squares(model)
    mask = sls.mask_of(allowed, cons.fixed_rows(model))
    config = sls.Config(
        n=n,
        method=method,
        neighbour="step",
        objective=objective,
        rounds=2,
        steps_per_round=100,
        toroidal=toroidal,
        constrained=True,
        step=min(3, n - 1),
    )
    params = sls.Params(jnp.asarray([1.0, 0.0]))
    boards, s = _walk(config, params, mask, jax.random.key(seed), 200)
    empty = ~allowed.any(axis=1)
    for x, y in model.fixed:
        assert (boards[:, x] == y).all()  # a fixed queen never moves
    on = allowed[np.arange(n)[None, :], boards]
    assert (on | empty[None, :]).all()  # no forbidden square, outside columns that have none
    assert (boards == boards[:1])[:, empty].all()  # a stranded queen stays where it started
    rows = np.asarray(s.rows)
    ref = reference.torus_objective(rows, objective) if toroidal else _objective(rows, objective)
    assert int(s.f) == ref + int(empty.sum())  # the objective counts stranded queens
    if bool(s.best == 0):
        assert checker.check_constrained(rows, model).ok


def test_allowed_start_is_allowed_and_uniform():
    """Reference: each column's start row is one of its allowed rows, uniformly (loose chi-square),
    row 0 in a column without one."""
    allowed = np.zeros((6, 6), bool)
    allowed[0, [1, 3, 4]] = True
    allowed[1, 5] = True
    allowed[2:5] = True
    mask = sls.mask_of(allowed, np.array([-1, 5, -1, -1, -1, 2]))  # column 5: stranded, fixed
    starts = np.asarray(
        jax.jit(jax.vmap(lambda s: sls.allowed_start(jnp.stack([s, s ^ 0x5EED]), mask)))(
            jnp.arange(3000, dtype=jnp.uint32)
        )
    )
    chex.assert_shape(starts, (3000, 6))
    assert (starts[:, 1] == 5).all() and (starts[:, 5] == 2).all()
    assert allowed[np.arange(5)[None, :], starts[:, :5]].all()
    for col, rows in ((0, [1, 3, 4]), (2, range(6))):
        counts = np.array([(starts[:, col] == r).sum() for r in rows])
        expected = 3000 / len(rows)
        assert ((counts - expected) ** 2 / expected).sum() < 25  # chi-square, <= 5 dof


SMALL = cons.Constraints(8, fixed=((0, 2), (3, 1)), blocked=((1, 4), (2, 0)), sums=(9,))
SMALL_MASK = sls.mask_of(cons.allowed_squares(SMALL), cons.fixed_rows(SMALL))
CONSTRAINED = sls.Config(
    n=8, method="sa", neighbour="step", rounds=2, steps_per_round=300, constrained=True
)
TORUS = sls.Config(n=7, method="sa", rounds=2, steps_per_round=300, toroidal=True)
TWO = sls.Params(jnp.asarray([1.0, 0.5], jnp.float32))
SCHEDULES = {CONFIG: SCHEDULE, TORUS: TWO}  # the schedule of the reference runs of each Config


def masked(m):
    return sls.Problem(mask=m)


class ConstrainedKernelTest(parameterized.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_init_and_step(self):
        init = self.variant(lambda key, m: sls.init(key, CONSTRAINED, TWO, masked(m)))
        step = self.variant(lambda s, m: sls.step(s, CONSTRAINED, TWO, masked(m)))
        s = init(SEEDS[0], SMALL_MASK)
        chex.assert_shape([s.rows, s.counts, s.f], [(8,), (lines.size(8),), ()])
        for _ in range(10):
            s = step(s, SMALL_MASK)
        rows = np.asarray(s.rows)
        assert (
            rows[0] == 2 and rows[3] == 1 and cons.allowed_squares(SMALL)[np.arange(8), rows].all()
        )
        np.testing.assert_array_equal(s.counts, lines.counts_of(s.rows, 8))
        assert int(s.f) == reference.n_attacks(rows)

    @chex.variants(with_jit=True, without_jit=True)
    def test_toroidal_solve_chain_equals_stepping(self):
        solve = self.variant(sls.run, static_argnums=1)
        for i, seed in enumerate(SEEDS[: 1 if _op_by_op(self.variant) else 2]):  # both solve
            got, want = solve(seed, TORUS, TWO), _stepped_seed(i, TORUS)
            chex.assert_shape(got.rows, (7,))
            chex.assert_trees_all_equal(got, want)
            if bool(got.solved):
                assert checker.check_constrained(
                    np.asarray(got.rows), cons.Constraints(7, toroidal=True)
                ).ok

    def test_new_instances_do_not_retrace(self):
        other = cons.Constraints(8, fixed=((5, 5),), diffs=(3, 4))
        masks = [SMALL_MASK, sls.mask_of(cons.allowed_squares(other), cons.fixed_rows(other))]
        fns = {
            "run": lambda key, m: sls.run(key, CONSTRAINED, TWO, masked(m)),
            "replay": lambda key, m: sls.replay(key, CONSTRAINED, TWO, jnp.int32(40), masked(m)),
            "walk": lambda key, m: sls.random_walk_deltas(key, CONSTRAINED, 16, masked(m)),
        }
        for fn in fns.values():
            jitted = jax.jit(chex.assert_max_traces(fn, n=1))
            for seed, m in zip(SEEDS, masks, strict=False):  # two masks, the first two seeds
                jitted(seed, m)

    def test_constrained_needs_the_step_neighbour(self):
        with pytest.raises(ValueError, match="step neighbour"):
            sls.Config(n=8, neighbour="swap", constrained=True)


# ----------------------------------------------------------------------------- checked inputs


def test_defect_anneal_took_off_board_float_and_short_starts():
    """An out-of-range start ran and said solved, a float start ran, a length-5 start gave a
    5-row result; a traced off-board row is replaced, never reported."""
    from jaxqueens.errors import QueensError

    config = sls.Config(n=8, method="sa", neighbour="swap", rounds=10, steps_per_round=400)
    params = sls.default_params(config)
    key = jax.random.key(0)
    for start, needle in (
        ([0, 4, 7, 5, 2, 6, 1, 11], "off the board"),
        (np.arange(8.0), "whole row numbers"),
        (np.arange(5), r"shape \[8\]"),
    ):
        with pytest.raises(QueensError, match=needle):
            sls.run(key, config, params, sls.Problem(start=jnp.asarray(start)))
    run = jax.jit(lambda st: sls.run(key, config, params, sls.Problem(start=st)))
    out = jax.device_get(run(jnp.asarray([0, 4, 7, 5, 2, 6, 1, 11], jnp.int32)))
    assert ((out.rows >= 0) & (out.rows < 8)).all()
    assert not bool(out.solved) or checker.is_solution(out.rows)


def test_defect_anneal_params_took_nan_negative_and_wrong_schedules():
    """t0=nan, t0=-1 and alpha=2 were accepted, and a schedule of the wrong length or dtype."""
    from jaxqueens.errors import QueensError

    config = sls.Config(n=8, method="sa", rounds=10)
    for kw in ({"t0": float("nan")}, {"t0": -1.0}, {"alpha": 2.0}, {"alpha": 0.0}):
        with pytest.raises(QueensError, match=r"t0|alpha"):
            sls.default_params(config, **kw)
    key = jax.random.key(0)
    for schedule in (jnp.ones(3), jnp.ones(10, jnp.int32)):
        with pytest.raises(QueensError, match=r"params\.schedule"):
            sls.run(key, config, sls.Params(schedule))
    with pytest.raises(QueensError, match=r"params\.schedule must hold finite"):
        sls.run(key, config, sls.Params(jnp.full(10, jnp.nan)))


def test_defect_the_kernel_config_defaults_were_not_the_commands_measured_preset():
    """`Config` defaulted to the step neighbour while `anneal` runs its measured preset (the
    swap neighbour): the sweeps guide's SA, on the kernel's defaults, solved almost nothing."""
    from jaxqueens.drivers import settings

    config = sls.Config(n=16)
    preset = settings.ANNEAL_DEFAULTS[config.method]
    for name in ("neighbour", "step", "edge", "objective", "rounds"):
        assert getattr(config, name) == preset[name], name
