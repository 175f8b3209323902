"""Tests of the min-conflicts kernel (jaxqueens.solvers.minconflicts) against plain NumPy
references.

Chains run one per ``lax.map`` iteration here (the kernel alone); batching strategies and devices
are tested in tests/parallel/test_chains.py.
"""

import functools
import itertools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import reference
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax

from jaxqueens.core import checker
from jaxqueens.core import constraints as cons
from jaxqueens.core.lines import conflicted_from_counts, counts_of
from jaxqueens.solvers import constrained as rules
from jaxqueens.solvers import minconflicts as mc
from jaxqueens.solvers import minconflicts_moves as moves
from jaxqueens.solvers.base import chain_keys

# ----------------------------------------------------------------------------- references


def brute_is_solution(rows) -> bool:
    """O(n^2) pairwise check, independent of the package."""
    rows = [int(x) for x in rows]
    n = len(rows)
    if any(r < 0 or r >= n for r in rows):
        return False
    for a, b in itertools.combinations(range(n), 2):
        if rows[a] == rows[b] or abs(rows[a] - rows[b]) == b - a:
            return False
    return True


def np_counts(rows) -> np.ndarray:
    rows = np.asarray(rows)
    n = rows.size
    c = np.arange(n)
    out = np.zeros(5 * n - 2, np.int64)
    np.add.at(out, rows, 1)
    np.add.at(out, n + rows + c, 1)
    np.add.at(out, 4 * n - 2 + rows - c, 1)
    return out


def np_conflicts_of(rows, c) -> int:
    """Queens attacking the queen of column c."""
    rows = np.asarray(rows)
    others = np.delete(np.arange(rows.size), c)
    r = rows[c]
    return int(np.sum((rows[others] == r) | (np.abs(rows[others] - r) == np.abs(others - c))))


def np_pairs(rows) -> int:
    n = len(rows)
    return sum(
        rows[a] == rows[b] or abs(int(rows[a]) - int(rows[b])) == b - a
        for a, b in itertools.combinations(range(n), 2)
    )


KEY = jax.random.key(42)
PARAM_FIELDS = ("max_steps", "max_restarts", "tabu_tenure", "qs4_tries")


def kernel_setup(**kw) -> tuple[mc.Config, mc.Params]:
    """(Config, Params) from one set of keywords: the static ones to Config, the rest to Params
    (``tabu_tenure``: Params.tabu, default Config.tabu)."""
    given = {k: kw.pop(k) for k in PARAM_FIELDS if k in kw}
    if "tabu_tenure" in given:
        given["tabu"] = given.pop("tabu_tenure")
    cfg = mc.Config(**kw)
    return cfg, mc.default_params(cfg, **given)


# A chain's initial state and whole run, compiled once per Config (op by op, every operation of
# init compiled a program of its own); KernelVariantsTest runs them without jit. A new jax.jit of
# the same function (chex's with_jit variant) finds the same compiled program.
INIT = jax.jit(mc.init, static_argnums=1)
RUN = jax.jit(mc.run, static_argnums=1)


def key(seed: int) -> jax.Array:
    return jax.random.key(seed)


@functools.cache
def _solver(cfg: mc.Config):
    """The chains of one Config, compiled once for any keys and Params of the same shapes."""
    return jax.jit(lambda ks, prm: lax.map(lambda k: mc.run(k, cfg, prm), ks))


def solve(key, cp: tuple[mc.Config, mc.Params], num: int) -> mc.Result:
    """Chains ``0 .. num-1`` of ``key`` (chain i from ``fold_in(key, i)``), one per lax.map step."""
    cfg, prm = cp
    keys = chain_keys(key, jnp.arange(num))
    return _solver(cfg)(keys, prm)


# ----------------------------------------------------------------------------- solving


@pytest.mark.parametrize("init", mc.INITS)
@pytest.mark.parametrize("n", [8, 29])
def test_solutions_pass_brute_force(n, init):
    res = jax.device_get(solve(KEY, kernel_setup(n=n, max_steps=max(100, 4 * n), init=init), 24))
    assert res.rows.shape == (24, n)
    assert res.solved.all()
    assert all(brute_is_solution(b) for b in res.rows)
    assert checker.are_solutions(res.rows).all()
    assert (res.steps >= 0).all() and (res.restarts >= 0).all()


@pytest.mark.parametrize("tabu", [0, 1, 7])
def test_tabu_on_and_off_both_solve(tabu):
    res = jax.device_get(solve(KEY, kernel_setup(n=30, max_steps=120, tabu=tabu), 40))
    assert res.solved.all() and all(brute_is_solution(b) for b in res.rows)


def test_max_restarts_caps_and_reports_unsolved():
    res = jax.device_get(
        solve(KEY, kernel_setup(n=60, max_steps=1, max_restarts=3, init="random"), 8)
    )
    assert not res.solved.any()
    assert (res.restarts == 3).all()
    assert (res.steps == 4).all()  # one step per attempt


def test_check_boards_rejects_bad_boards():
    good = np.array([1, 3, 0, 2])
    bad = np.array([[0, 1, 2, 3], [1, 3, 0, 0], [1, 3, 0, 4]])
    assert checker.are_solutions(good[None]).all()
    assert not checker.are_solutions(bad).any()


# ----------------------------------------------------------------------------- step invariants


@functools.cache
def _steps(cfg: mc.Config, k: int):
    """``k`` advances of one chain and what each saw, compiled once per Config for every seed
    (a new ``jax.jit(lambda ...)`` per seed compiled the same scan again)."""

    def run(k0, prm):
        def body(s, _):
            s2 = mc.advance(s, cfg, prm)
            return s2, (s.rows, s.counts, s2.rows, s.stop)

        return lax.scan(body, mc.init(k0, cfg, prm), None, length=k)

    return jax.jit(run)


def _run_steps(seed, cp, k):
    cfg, prm = cp
    return _steps(cfg, k)(key(seed), prm)


@pytest.mark.parametrize("init,tabu", [("random", 0), ("permutation", 3), ("greedy", 0)])
def test_counts_match_recount_after_many_steps(init, tabu):
    cp = kernel_setup(n=50, max_steps=10_000, init=init, tabu=tabu)
    for seed in range(3):
        s, (before, counts, _after, _stop) = jax.device_get(_run_steps(seed, cp, 400))
        np.testing.assert_array_equal(s.counts, np_counts(s.rows))
        for t in range(0, 400, 37):
            np.testing.assert_array_equal(counts[t], np_counts(before[t]))


def test_step_never_increases_moved_queen_conflicts():
    cp = kernel_setup(n=24, max_steps=10_000, init="random")
    for seed in range(4):
        _, (before, _, after, _stop) = jax.device_get(_run_steps(seed, cp, 150))
        for t in range(150):
            diff = np.nonzero(before[t] != after[t])[0]
            assert diff.size <= 1
            if diff.size:
                c = diff[0]
                assert np_conflicts_of(after[t], c) <= np_conflicts_of(before[t], c)
                assert np_pairs(after[t]) <= np_pairs(before[t])


def test_trace_pairs_non_increasing_and_consistent():
    cfg, prm = kernel_setup(n=30, max_steps=1000)
    _s, m = jax.device_get(jax.jit(lambda k: mc.trace(k, cfg, prm, 200))(key(3)))
    assert m.conflicted.shape == (200,) and m.pairs.shape == (200,)
    assert (np.diff(m.pairs) <= 0).all()
    assert ((m.pairs == 0) == (m.conflicted == 0)).all()
    s0 = jax.device_get(INIT(key(3), cfg, prm))
    assert m.pairs[0] == np_pairs(s0.rows)


# ----------------------------------------------------------------------------- initial boards


@pytest.mark.parametrize("init", mc.INITS)
@pytest.mark.parametrize("n", [8, 70, 200])
def test_initial_boards(init, n):
    cfg, prm = kernel_setup(n=n, init=init)
    keys = chain_keys(KEY, jnp.arange(6))
    s = jax.device_get(jax.jit(jax.vmap(lambda k: mc.init(k, cfg, prm)))(keys))
    assert s.rows.shape == (6, n)
    assert ((s.rows >= 0) & (s.rows < n)).all()
    for b, cnt in zip(s.rows, s.counts, strict=True):
        np.testing.assert_array_equal(cnt, np_counts(b))
    if init in ("permutation", "qs4"):
        assert all(np.array_equal(np.sort(b), np.arange(n)) for b in s.rows)
    assert len({tuple(b) for b in s.rows}) == 6  # different chains differ
    conflicted = [
        int(np.asarray(conflicted_from_counts(b, c, n)).sum())
        for b, c in zip(s.rows, s.counts, strict=True)
    ]
    if init == "qs4" and n >= 70:
        assert np.mean(conflicted) <= max(12, n // 10)  # a few per board (max varies: ~8% > 12)
    if init == "greedy" and n >= 70:
        assert max(conflicted) <= n // 4
    if init == "permutation" and n >= 70:
        assert min(conflicted) >= n // 5  # a random permutation is far from solved


# ----------------------------------------------------------------------------- reproducibility


def _assert_same(a, b):
    for x, y in zip(jax.device_get(a), jax.device_get(b), strict=True):
        np.testing.assert_array_equal(x, y)


def test_same_key_same_result_and_different_keys_differ():
    cp = kernel_setup(n=16, max_steps=64)
    a = solve(KEY, cp, 12)
    cfg, prm = cp  # b from a second compilation of the same chains: the same result too
    b = jax.jit(lambda ks: lax.map(lambda k: mc.run(k, cfg, prm), ks))(
        chain_keys(KEY, jnp.arange(12))
    )
    _assert_same(a, b)
    c = solve(jax.random.key(7), cp, 12)
    assert not np.array_equal(np.asarray(a.rows), np.asarray(c.rows))


# ----------------------------------------------------------------------------- randomness


def _chi2(counts):
    counts = np.asarray(counts, float)
    e = counts.sum() / counts.size
    return float(((counts - e) ** 2 / e).sum())


def _state_for(rows, seed=0, tabu=0):
    cfg, prm = kernel_setup(n=len(rows), tabu=tabu)
    s = INIT(key(seed), cfg, prm)
    rows = jnp.asarray(rows, jnp.int32)
    return cfg, s._replace(rows=rows, counts=counts_of(rows, cfg.n))


@pytest.mark.parametrize("n", [8, 40])
def test_pick_uniform_over_conflicted_queens(n):
    rows = np.random.default_rng(n).permutation(n)
    cfg, s = _state_for(rows)
    conf = np.asarray(conflicted_from_counts(s.rows, s.counts, n))
    assert 1 < conf.sum() < n
    pick = jax.jit(jax.vmap(lambda ct: moves._pick_conflicted(s._replace(ctr=ct), cfg)))
    c, found = jax.device_get(pick(jnp.arange(40_000, dtype=jnp.uint32)))
    assert found.all() and conf[c].all()
    hist = np.bincount(c, minlength=n)[conf]
    assert _chi2(hist) < conf.sum() + 6 * np.sqrt(2 * conf.sum())


def test_tie_break_uniform_and_min_cost():
    # n = 8, queen of column 0 at row 0 alone; rows with equal least cost must be equally likely
    rows = np.array([0, 2, 4, 6, 1, 3, 5, 7])
    cfg, s = _state_for(rows)
    cost = np.array([np_conflicts_of(np.r_[[r], rows[1:]], 0) for r in range(8)])
    best = np.nonzero(cost == cost.min())[0]
    assert best.size >= 2
    choose = jax.jit(jax.vmap(lambda ct: mc.choose_row(s._replace(ctr=ct), jnp.int32(0), cfg)[0]))
    r1 = np.asarray(choose(jnp.arange(30_000, dtype=jnp.uint32)))
    assert set(np.unique(r1)) == set(best)
    assert _chi2(np.bincount(r1, minlength=8)[best]) < best.size + 6 * np.sqrt(2 * best.size)


def test_tabu_forbids_recent_square():
    rows = np.array([0, 2, 4, 6, 1, 3, 5, 7])
    cfg, s = _state_for(rows, tabu=2)
    cost = np.array([np_conflicts_of(np.r_[[r], rows[1:]], 0) for r in range(8)])
    best = np.nonzero(cost == cost.min())[0]
    s = s._replace(tabu=jnp.array([0 * 8 + int(best[0]), -1], jnp.int32))
    choose = jax.jit(jax.vmap(lambda ct: mc.choose_row(s._replace(ctr=ct), jnp.int32(0), cfg)[0]))
    r1 = np.asarray(choose(jnp.arange(2_000, dtype=jnp.uint32)))
    assert best[0] not in set(r1) and set(r1) <= set(best[1:])


# ----------------------------------------------------------------------------- jit and retracing


def _steps_of(variant, steps: int) -> int:
    """``steps`` with jit; one op by op, where every call of step compiles its move anew (the
    move each of the jitted variant's steps makes)."""
    return 1 if variant.type is chex.ChexVariantType.WITHOUT_JIT else steps


class KernelVariantsTest(chex.TestCase):
    """init, step, solve_chain and trace give the same results with and without jit."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_init_and_step(self):
        cfg, prm = kernel_setup(n=10, tabu=2)
        s = self.variant(lambda k: mc.init(k, cfg, prm))(key(4))
        chex.assert_shape(s.rows, (10,))
        chex.assert_shape(s.counts, (5 * 10 - 2,))
        chex.assert_shape(s.tabu, (2,))
        np.testing.assert_array_equal(s.counts, np_counts(s.rows))
        step = self.variant(lambda s: mc.step(s, cfg, prm))
        for _ in range(_steps_of(self.variant, 2)):
            s = step(s)
        chex.assert_shape(s.rows, (10,))
        np.testing.assert_array_equal(s.counts, np_counts(s.rows))
        assert int(s.total_steps) <= 2

    @chex.variants(with_jit=True, without_jit=True)
    def test_solve_chain_and_trace(self):
        cfg, prm = kernel_setup(n=8, max_steps=50, init="qs4")
        res = self.variant(mc.run, static_argnums=1)(key(1), cfg, prm)
        chex.assert_shape(res.rows, (8,))
        chex.assert_shape([res.solved, res.steps, res.restarts], ())
        assert bool(res.solved) and brute_is_solution(np.asarray(res.rows))
        _assert_same(res, RUN(key(1), cfg, prm))  # the variants agree
        _, m = self.variant(lambda k: mc.trace(k, cfg, prm, 20))(key(1))
        chex.assert_shape([m.conflicted, m.pairs], (20,))


def test_kernels_trace_once():
    """A new key, start board or Params value reuses the compiled kernel (no retracing)."""
    chex.clear_trace_counter()
    cfg = mc.Config(n=9, tabu=3)
    run = jax.jit(
        chex.assert_max_traces(lambda k, p, b: mc.run(k, cfg, p, mc.Problem(start=b)), n=1)
    )
    step = jax.jit(chex.assert_max_traces(lambda s, p: mc.step(s, cfg, p), n=1))
    init = jax.jit(chex.assert_max_traces(lambda k, p: mc.init(k, cfg, p), n=1))
    trace = jax.jit(chex.assert_max_traces(lambda k, p: mc.trace(k, cfg, p, 10), n=1))
    start = jnp.zeros(9, jnp.int32)
    for seed in range(3):
        prm = mc.default_params(cfg, max_steps=40 + seed, max_restarts=10**seed, tabu=seed)
        run(key(seed), prm, start + seed % 2)
        step(init(key(seed), prm), prm)
        trace(key(seed), prm)


def _continue(prev, paused, attempts: int):
    """The next call's input: the paused chains continue for ``attempts`` more attempts, the
    others are skipped."""
    return mc.Resume(
        restarts=np.where(paused, prev.restarts, -1).astype(np.int32),
        total_steps=np.where(paused, prev.steps, 0).astype(np.int32),
        until=np.where(paused, np.asarray(prev.restarts) + attempts, -1).astype(np.int32),
    )


def test_defect_5_a_chain_paused_between_calls_ends_as_if_never_paused():
    cfg, prm = kernel_setup(n=10, max_steps=3, max_restarts=300)
    keys = chain_keys(KEY, jnp.arange(24))
    whole = jax.device_get(jax.jit(lambda ks: lax.map(lambda k: mc.run(k, cfg, prm), ks))(keys))
    assert whole.solved.any() and not whole.solved.all() and not mc.paused(whole, prm).any()

    def from_resume(k, r):
        return mc.finish(mc.resume(k, cfg, prm, None, r), cfg, prm)

    call = jax.jit(lambda ks, r: lax.map(lambda x: from_resume(*x), (ks, r)))
    first = jax.tree.map(lambda x: np.full(24, x), mc.fresh(until=1))  # two attempts per call
    merged = jax.device_get(call(keys, first))
    paused, calls = np.asarray(mc.paused(merged, prm)), 1
    while paused.any():
        out = jax.device_get(call(keys, _continue(merged, paused, 2)))
        merged = mc.Result(
            *(
                np.where(paused.reshape((-1,) + (1,) * (a.ndim - 1)), b, a)
                for a, b in zip(merged, out, strict=True)
            )
        )
        paused, calls = np.asarray(mc.paused(merged, prm)), calls + 1
    assert calls > 10  # a call of this test does at most 2 attempts per chain
    for a, b in zip(whole, merged, strict=True):
        np.testing.assert_array_equal(a, b)


# ----------------------------------------------------------------------------- issue 14


def np_greedy_ok(rows) -> bool:
    """The classic greedy's rule, checked column by column: each queen on a free row (while one
    is left) whose diagonal attacks by the queens before it are the fewest among the free rows
    (counted, as the kernel does, up to 3)."""
    rows = np.asarray(rows)
    n = rows.size
    used = np.zeros(n, bool)
    for c in range(n):
        prev_r, prev_c = rows[:c], np.arange(c)
        attacks = np.array([np.sum(np.abs(prev_r - r) == c - prev_c) for r in range(n)])
        attacks = np.minimum(attacks, 3)
        free = ~used
        if free.any() and (used[rows[c]] or attacks[rows[c]] != attacks[free].min()):
            return False
        used[rows[c]] = True
    return True


def test_greedy_follows_the_classic_rule():
    cfg, prm = kernel_setup(n=40, init="greedy")
    init = jax.jit(lambda s: mc.init_board(s, jnp.uint32(0), cfg, prm))
    boards = [np.asarray(init(jnp.asarray([s, 1], jnp.uint32))) for s in range(4)]
    for b in boards:
        assert sorted(b.tolist()) == list(range(40))  # rows stay distinct: a permutation
        assert np_greedy_ok(b)
    assert len({b.tobytes() for b in boards}) == 4  # random tie-breaks


def test_defect_greedy_init_stays_at_a_handful_of_pairs_at_n_30000():
    # Was 88-150 attacking pairs at n = 3 * 10^4 (ties went to the lowest row); the classic
    # greedy keeps 5-7 at every n.
    cfg, prm = kernel_setup(n=30_000, init="greedy")
    seed = jnp.asarray([7, 1], jnp.uint32)
    board = np.asarray(jax.jit(lambda s: mc.init_board(s, jnp.uint32(0), cfg, prm))(seed))
    assert checker.attacking_pairs(board) <= 20


def test_defect_tabu_does_not_raise_restarts_on_small_boards():
    # Tenure 2 at n = 8 froze chains on plateaus: mean restarts 0.05 -> 0.49 (4000 steps each).
    plain = jax.device_get(solve(KEY, kernel_setup(n=8, max_steps=400), 1000))
    tabu = jax.device_get(solve(KEY, kernel_setup(n=8, max_steps=400, tabu=2), 1000))
    assert plain.solved.all() and tabu.solved.all()
    assert tabu.restarts.mean() <= plain.restarts.mean() + 0.1, (
        tabu.restarts.mean(),
        plain.restarts.mean(),
    )
    assert checker.are_solutions(np.asarray(tabu.rows)).all()


def test_cisc352_move_is_staged():
    """A conflict-free row when there is one, else a row with one conflict when one exists (the
    100 probes miss it only with probability (1 - k/n)^100), else a least-conflicted row."""
    n = 12
    cfg, prm = kernel_setup(n=n, move="cisc352")
    init = jax.jit(lambda k: mc.init(k, cfg, prm))
    choose = jax.jit(lambda s, c: mc.choose_row(s, c, cfg))
    for seed in range(40):
        s = init(key(seed))
        rows = np.asarray(s.rows)
        c = int(np.flatnonzero([np_conflicts_of(rows, k) for k in range(n)])[0])
        r1, _ = choose(s, jnp.int32(c))
        cost = np.array(
            [np_conflicts_of(np.where(np.arange(n) == c, r, rows), c) for r in range(n)]
        )
        want = 0 if cost.min() == 0 else (1 if (cost == 1).any() else cost.min())
        assert cost[int(r1)] == want
    res = jax.device_get(solve(KEY, kernel_setup(n=30, move="cisc352", max_steps=200), 16))
    assert res.solved.all() and all(brute_is_solution(r) for r in res.rows)


def test_keep_best_reports_the_fewest_pairs_board():
    base = {"n": 14, "max_steps": 4, "max_restarts": 5}
    last = jax.device_get(solve(KEY, kernel_setup(**base), 32))
    best = jax.device_get(solve(KEY, kernel_setup(**base, keep_best=True), 32))
    np.testing.assert_array_equal(last.solved, best.solved)  # the same walks
    np.testing.assert_array_equal(last.steps, best.steps)
    assert (~best.solved).sum() > 5
    np.testing.assert_array_equal(best.best, checker.attacking_pairs(np.asarray(best.rows)))
    np.testing.assert_array_equal(last.best, checker.attacking_pairs(np.asarray(last.rows)))
    assert (best.best <= last.best).all() and (best.best < last.best).any()
    assert (best.best[best.solved] == 0).all()


# -------------------------------------------------------------------- constrained boards (issue 16)


def torus_conflicted(rows):
    """Plain reference: queen c shares a row or a modular diagonal with another queen."""
    n = len(rows)
    rows = [int(r) for r in rows]
    return [
        any(
            rows[c] == rows[d]
            or (rows[c] + c - rows[d] - d) % n == 0
            or (rows[c] - c - rows[d] + d) % n == 0
            for d in range(n)
            if d != c
        )
        for c in range(n)
    ]


@settings(max_examples=4, deadline=None)
@given(n=st.integers(4, 11), seed=st.integers(0, 2**31), c=st.integers(0, 10))
def test_toroidal_line_helpers_match_the_reference(n, seed, c):
    rows = np.random.default_rng(seed).integers(0, n, n).astype(np.int32)
    c = c % n

    @jax.jit
    def helpers(rows, c):
        counts = rules.counts_of(rows, n, True)
        return (
            counts,
            rules.conflicted(rows, counts, n, True),
            rules.column_cost(counts, c, rows[c], n, True),
        )

    counts, conflicted, cost = (np.asarray(a) for a in helpers(jnp.asarray(rows), c))
    np.testing.assert_array_equal(counts, reference.torus_counts(rows))
    np.testing.assert_array_equal(conflicted, torus_conflicted(rows))
    for r in range(n):  # conflicts of square (c, r) with the other queens
        others = [(d, int(rows[d])) for d in range(n) if d != c]
        want = sum(
            (r == y) + ((r + c - y - d) % n == 0) + ((r - c - y + d) % n == 0) for d, y in others
        )
        assert cost[r] == want


@functools.cache
def _constrained_walker(cfg: mc.Config, length: int):
    """init and `length` advances (restarting after each failed attempt, as the chain does) in
    one program, compiled once per Config for any instance (the mask and params are arguments)."""

    def walk(k, prm, mask):
        problem = mc.Problem(mask=mask)

        def body(s, _):
            s = mc.advance(s, cfg, prm, problem)
            s = lax.cond(
                s.stop & ~s.solved,
                lambda s: mc.fresh_attempt(s, cfg, prm, mask=mask),
                lambda s: s,
                s,
            )
            return s, s.rows

        s0 = mc.init(k, cfg, prm, problem)
        return s0.rows, lax.scan(body, s0, None, length=length)[1]

    return jax.jit(walk)


# (n, toroidal, tabu, move): every pair of torus, tabu and move appears, n from 5 to 8 (one
# compiled walk per Config; hypothesis spends its examples on instances and seeds).
CONSTRAINED_CASES = [
    (5, False, 0, "minconflicts"),
    (6, False, 2, "cisc352"),
    (7, True, 0, "cisc352"),
    (8, True, 2, "minconflicts"),
]


@settings(max_examples=6, deadline=None)
@given(data=st.data(), case=st.sampled_from(CONSTRAINED_CASES), seed=st.integers(0, 2**31))
def test_constrained_chains_never_move_fixed_queens_nor_use_forbidden_squares(data, case, seed):
    n, toroidal, tabu, move = case
    model, _ = reference.random_instance(data, n)
    model = model.with_toroidal(toroidal)
    allowed = cons.allowed_squares(model)
    if not allowed.any(axis=1).all():
        return  # the driver runs no chain on such an instance (tests/drivers)
    mask = rules.mask_of(allowed, cons.fixed_rows(model))
    cfg, prm = kernel_setup(
        n=n,
        max_steps=15,
        max_restarts=3,
        tabu=tabu,
        move=move,
        toroidal=toroidal,
        constrained=True,
        keep_best=True,
    )
    first, boards = _constrained_walker(cfg, 60)(key(seed), prm, mask)
    boards = np.concatenate([np.asarray(first)[None], np.asarray(boards)])
    for x, y in model.fixed:
        assert (boards[:, x] == y).all()  # a fixed queen never moves, across restarts too
    assert allowed[np.arange(n)[None, :], boards].all()  # no forbidden square, ever
    for rows in boards:
        if not any(torus_conflicted(rows)) if toroidal else brute_is_solution(rows):
            assert checker.check_constrained(rows, model).ok


TORUS7, TORUS7_P = kernel_setup(n=7, max_steps=200, toroidal=True)
NAUCKISH = cons.Constraints(8, fixed=((0, 2), (3, 1)), blocked=((1, 0),))
NAUCKISH_MASK = rules.mask_of(cons.allowed_squares(NAUCKISH), cons.fixed_rows(NAUCKISH))
CONSTRAINED8, CONSTRAINED8_P = kernel_setup(n=8, max_steps=100, constrained=True)


class ConstrainedVariantsTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_toroidal_step_keeps_the_toroidal_counts(self):
        s = self.variant(lambda k: mc.init(k, TORUS7, TORUS7_P))(key(5))
        step = self.variant(lambda s: mc.step(s, TORUS7, TORUS7_P))
        for _ in range(_steps_of(self.variant, 3)):
            s = step(s)
        chex.assert_shape(s.counts, (5 * 7 - 2,))
        np.testing.assert_array_equal(s.counts, reference.torus_counts(np.asarray(s.rows)))

    @chex.variants(with_jit=True, without_jit=True)
    def test_constrained_solve_chain(self):
        res = self.variant(
            lambda k, m: mc.run(k, CONSTRAINED8, CONSTRAINED8_P, mc.Problem(mask=m))
        )(key(2), NAUCKISH_MASK)
        chex.assert_shape(res.rows, (8,))
        assert bool(res.solved) and checker.check_constrained(np.asarray(res.rows), NAUCKISH).ok

    def test_toroidal_chains_solve_on_the_torus(self):
        res = jax.jit(jax.vmap(lambda k: mc.run(k, TORUS7, TORUS7_P)))(
            chain_keys(KEY, jnp.arange(4))
        )
        torus = cons.Constraints(7, toroidal=True)
        assert np.asarray(res.solved).all()
        assert all(checker.check_constrained(r, torus).ok for r in np.asarray(res.rows))


def test_a_new_instance_does_not_retrace():
    """The second instance has no solution: its chain runs every restart it is given (with the
    default 10^6, seconds of work left running after the test, charged to the next one)."""
    other = cons.Constraints(8, fixed=((5, 5),), diffs=(3, 4))
    masks = [NAUCKISH_MASK, rules.mask_of(cons.allowed_squares(other), cons.fixed_rows(other))]
    prm = CONSTRAINED8_P._replace(max_restarts=np.int32(3))  # a Params value: the same program
    solve = jax.jit(
        chex.assert_max_traces(lambda k, m: mc.run(k, CONSTRAINED8, prm, mc.Problem(mask=m)), n=1)
    )
    for seed, m in enumerate(masks):
        jax.block_until_ready(solve(key(seed), m))


def test_toroidal_and_constrained_refuse_the_inits_they_lack():
    for init in ("greedy", "qs4"):
        with pytest.raises(ValueError, match="random or permutation"):
            mc.Config(n=7, init=init, toroidal=True)
        with pytest.raises(ValueError, match="random or permutation"):
            mc.Config(n=7, init=init, constrained=True)


# ----------------------------------------------------------------------------- checked inputs

OFF_BOARD = ([0, 4, 7, 5, 2, 6, 1, 11], [9] * 8, [-1, 4, 7, 5, 2, 6, 1, 3])


@pytest.mark.parametrize("start", OFF_BOARD)
def test_defect_a_start_row_off_the_board_was_reported_solved(start):
    """run(..., Problem(start=[0, 4, 7, 5, 2, 6, 1, 11])) returned solved=True at step 0 with row
    11 on the board. A concrete start is refused; a traced one never places a queen off the
    board, and what the chain calls solved the independent checker accepts."""
    from jaxqueens.errors import QueensError
    from jaxqueens.parallel import chains

    cfg, prm = kernel_setup(n=8)
    with pytest.raises(QueensError, match="off the board"):
        mc.run(KEY, cfg, prm, mc.Problem(start=jnp.asarray(start)))
    traced = mc.Problem(start=jnp.asarray(start, jnp.int32))  # traced under jit: not refused
    out = jax.device_get(RUN(KEY, cfg, prm, traced))
    assert ((out.rows >= 0) & (out.rows < 8)).all()
    assert bool(out.solved) and checker.is_solution(out.rows)
    many = jax.jit(chains.run, static_argnums=(0, 1, 3))  # one compile for the three starts
    batch = jax.device_get(many(mc, cfg, KEY, 4, prm, traced))
    assert all(checker.is_solution(r) for r, ok in zip(batch.rows, batch.solved, strict=True) if ok)
    assert ((batch.rows >= 0) & (batch.rows < 8)).all()


def test_defect_starts_of_another_length_or_dtype_gave_broadcast_errors():
    from jaxqueens.errors import QueensError

    cfg, prm = kernel_setup(n=8)
    with pytest.raises(QueensError, match=r"shape \[8\]"):
        mc.run(KEY, cfg, prm, mc.Problem(start=jnp.arange(5)))
    with pytest.raises(QueensError, match="whole row numbers"):
        mc.run(KEY, cfg, prm, mc.Problem(start=jnp.arange(8.0)))


def test_defect_params_values_were_truncated_or_taken_unchecked():
    """default_params(max_steps=1.5) became 1; Params(max_steps=-3) ran and said solved."""
    from jaxqueens.errors import QueensError

    cfg = mc.Config(n=8)
    with pytest.raises(QueensError, match="max_steps must be a whole number"):
        mc.default_params(cfg, max_steps=1.5)
    bad = mc.default_params(cfg)._replace(max_steps=np.int32(-3))
    with pytest.raises(QueensError, match="max_steps must be in"):
        mc.run(KEY, cfg, bad)
    with pytest.raises(QueensError, match=r"params.max_steps must be integer of shape \[\]"):
        mc.run(KEY, cfg, mc.default_params(cfg)._replace(max_steps=np.float32(10)))
