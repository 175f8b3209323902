"""jaxqueens.solve (jaxqueens.drivers.minconflicts): determinism, start boards, errors, traces."""

import jax
import numpy as np
import pytest

import jaxqueens
from jaxqueens.core import checker
from jaxqueens.drivers import minconflicts as mcsolve
from jaxqueens.errors import QueensError
from jaxqueens.solvers import minconflicts as mc

SOLUTION_8 = [0, 4, 7, 5, 2, 6, 1, 3]


def test_results_do_not_depend_on_batch():
    runs = [jaxqueens.solve(16, chains=24, seed=3, batch=b, max_steps=64) for b in (4, 10, 24)]
    for other in runs[1:]:
        np.testing.assert_array_equal(runs[0].run.rows, other.run.rows)
        np.testing.assert_array_equal(runs[0].run.steps, other.run.steps)
        np.testing.assert_array_equal(runs[0].run.restarts, other.run.restarts)
    assert runs[0].run.restarts.sum() > 0  # restarts happened and still agree
    assert checker.are_solutions(runs[0].solutions).all() and len(runs[0].solutions) == 24
    other_seed = jaxqueens.solve(16, chains=24, seed=4, batch=24, max_steps=64)
    assert not np.array_equal(other_seed.run.steps, runs[0].run.steps)


@pytest.mark.parametrize("init", ["random", "permutation", "greedy", "qs4"])
@pytest.mark.parametrize("tabu", [0, 5])
def test_every_init_and_tabu_solves(init, tabu):
    res = jaxqueens.solve(20, chains=8, init=init, tabu=tabu, batch=8)
    assert res.summary["solved"] == 8 and checker.are_solutions(res.solutions).all()


def test_solution_budget_finds_all_of_n6():
    res = jaxqueens.solve(6, chains=None, solutions=4, batch=16)
    assert res.summary["stopped_by"] == "solutions" and res.summary["distinct_solutions"] == 4


def test_start_board():
    # From a solution, every chain is solved in 0 steps and keeps that board.
    res = jaxqueens.solve(8, chains=6, start=SOLUTION_8, batch=6)
    assert (res.run.steps == 0).all()
    np.testing.assert_array_equal(res.solutions, np.tile(SOLUTION_8, (6, 1)))
    # From a board one move away, chains start there: few steps, no restarts needed.
    near = list(SOLUTION_8)
    near[3] = 3
    res = jaxqueens.solve(8, chains=20, start=near, batch=20, trace_steps=50)
    assert res.trace["pairs"][0] == checker.attacking_pairs(np.array(near))
    assert np.median(res.run.steps) <= 10
    with pytest.raises(QueensError, match="columns"):
        jaxqueens.solve(9, chains=2, start=SOLUTION_8)


def test_trivial_and_impossible_sizes():
    res = jaxqueens.solve(1, chains=5)
    assert res.summary["solved"] == 5 and res.solutions.tolist() == [[0]] * 5
    for n in (2, 3):
        with pytest.raises(QueensError, match="no solution"):
            jaxqueens.solve(n)
    with pytest.raises(QueensError, match="positive"):
        jaxqueens.solve(0)


def test_api_is_the_driver():
    assert jaxqueens.solve is mcsolve.solve and jaxqueens.SolveResult is mcsolve.SolveResult


def test_compile_runner_runs_chunks_in_chain_order():
    cfg = mc.Config(n=10, max_steps=60)
    key = jax.random.key(3)
    run = mcsolve.compile_runner(key, cfg, 8)
    whole = jax.device_get(run(0, 8))
    assert whole.rows.shape == (8, 10) and whole.solved.dtype == bool
    tail = jax.device_get(run(4, 4))  # a short chunk compiles its own size, same chains
    for a, b in zip(whole, tail):
        np.testing.assert_array_equal(a[4:], b)


def test_trace_chain_is_cut_at_the_solution():
    cfg = mc.Config(n=12, max_steps=500)
    m = mcsolve.trace_chain(jax.random.key(0), cfg, 400)
    assert isinstance(m.conflicted, np.ndarray) and m.conflicted.shape == m.pairs.shape
    assert m.conflicted[-1] == 0 and (m.conflicted[:-1] > 0).all()
    assert m.pairs[-1] == 0 and (np.diff(m.pairs) <= 0).all()
    short = mcsolve.trace_chain(jax.random.key(0), cfg, 3)
    assert short.pairs.shape == (3,)
    np.testing.assert_array_equal(short.pairs, m.pairs[:3])


def test_default_chunk_and_check_n():
    d = jax.local_device_count()
    for n, chains in ((8, None), (8, 10), (1000, 3), (40_000, None)):
        chunk = mcsolve.default_chunk(n, chains)
        assert chunk % d == 0 and chunk >= 1
        assert chunk <= max(d, 8192)
    assert mcsolve.default_chunk(8, 10) >= 10  # one call for a small job
    mcsolve.check_n(mcsolve.MAX_BATCHED_N)
    with pytest.raises(QueensError, match="--mode large"):
        mcsolve.check_n(mcsolve.MAX_BATCHED_N + 1)
