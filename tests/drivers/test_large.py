"""The large-n driver (jaxqueens.drivers.large): solve, verify, seeds, memory check, errors."""

import jax
import numpy as np
import pytest

from jaxqueens.core import checker
from jaxqueens.drivers import large as large_solve
from jaxqueens.errors import QueensError
from jaxqueens.solvers import large


@pytest.mark.parametrize("n", [4, 5, 10, 100, 10_000, 100_000])
def test_solves_and_verifies(n):
    res = large_solve.solve_large(n, seed=1)
    assert res.rows.shape == (n,) and checker.is_solution(res.rows)
    s = res.summary
    assert s["verified"] and s["steps"] >= s["moves"] >= 0 and s["init_s"] >= 0
    assert s["conflicted_after_init"] >= 0 and s["pairs_after_init"] >= 0


def test_same_seed_same_solution():
    a = large_solve.solve_large(10_000, seed=5)  # test_solves_and_verifies' size: its programs
    b = large_solve.solve_large(10_000, seed=5)
    c = large_solve.solve_large(10_000, seed=6)
    np.testing.assert_array_equal(a.rows, b.rows)
    assert not np.array_equal(a.rows, c.rows)


def test_errors():
    for n in (0, -5, 2, 3):
        with pytest.raises(QueensError, match="no solution"):
            large_solve.solve_large(n)
    with pytest.raises(QueensError, match=r"needs about .* GiB .* available"):
        large_solve.check_memory(10**9, available=8 * 2**30)
    large_solve.check_memory(10**6, available=8 * 2**30)  # fits


def test_progress_columns_in_calls(monkeypatch):
    """QS4 runs in calls of INIT_CALL_COLUMNS columns; the result does not depend on it."""
    whole = large_solve.solve_large(3000, seed=4)
    monkeypatch.setattr(large_solve, "INIT_CALL_COLUMNS", 700)
    parts = large_solve.solve_large(3000, seed=4)
    np.testing.assert_array_equal(whole.rows, parts.rows)
    assert whole.summary["steps"] == parts.summary["steps"]


def test_trivial_board():
    res = large_solve.solve_large(1)
    assert res.rows.tolist() == [0] and res.summary["verified"]


def test_defect_step_limit_and_init_are_honoured():
    res = large_solve.solve_large(3000, seed=2, init="permutation", max_steps=50, give_up=True)
    s = res.summary
    assert not s["solved"] and s["steps"] <= 50 and s["init"] == "permutation" and s["tries"] == 1
    assert s["pairs"] == checker.attacking_pairs(res.rows) > 0
    with pytest.raises(QueensError, match="no solution within"):
        large_solve.solve_large(3000, seed=2, init="permutation", max_steps=50)
    ok = large_solve.solve_large(3000, seed=2, init="permutation")
    assert ok.summary["solved"] and checker.is_solution(ok.rows)
    with pytest.raises(QueensError, match="--init greedy is not available on the large-n path"):
        large_solve.solve_large(100, init="greedy")


@pytest.mark.parametrize(
    "n,seed,chain,kw",
    [
        (6, 3, 0, {}),  # many restarts
        (7, 1, 2, {}),
        (3000, 2, 1, {"init": "permutation"}),
        (3000, 2, 0, {"init": "permutation", "max_steps": 50, "give_up": True}),
        (5000, 0, 0, {"tries": 3, "free_tail": 100}),
    ],
)
def test_the_driver_runs_the_kernel_chain_of_its_key(n, seed, chain, kw):
    """solve_large(n, seed, chain) is the kernel's run keyed fold_in(key(seed), chain)."""
    res = large_solve.solve_large(n, seed=seed, chain=chain, **kw)
    config = large.Config(n=n)
    params = large.default_params(
        config,
        tries=large_solve.INITS[kw.get("init", "qs4")] or kw.get("tries", 100),
        free_tail=kw.get("free_tail", 0),
        max_steps=kw.get("max_steps", large_solve.NO_STEP_LIMIT),
        max_rounds=large_solve.MAX_ROUNDS,
    )
    key = jax.random.fold_in(jax.random.key(seed), chain)
    out = jax.device_get(jax.jit(lambda k: large.run(k, config, params))(key))
    np.testing.assert_array_equal(res.rows, out.rows)
    s = res.summary
    assert (s["solved"], s["steps"], s["moves"], s["rounds"], s["restarts"], s["pairs"]) == (
        out.solved,
        out.steps,
        out.moves,
        out.rounds,
        out.restarts,
        out.pairs,
    )
    assert len(res.round_conflicted) == s["rounds"]
    if n == 6:
        assert s["restarts"] > 0


def test_defect_chains_restart_on_boards_of_their_own():
    """A stalled chain restarts from its own stream (once every chain of a seed restarted from
    the same boards: the restart seed came from the run's key, not the chain's)."""
    config, params = large.Config(n=6), large.default_params(large.Config(n=6))
    s = [large.init(jax.random.fold_in(jax.random.key(0), c), config, params) for c in (0, 1)]
    nxt = [large.restart(x, config, params) for x in s]
    assert not np.array_equal(nxt[0].seed, nxt[1].seed)


def test_maxsteps_beyond_int32_is_refused():
    with pytest.raises(QueensError, match="--maxsteps must lie between 1 and 2,147,483,647"):
        large_solve.solve_large(100, max_steps=2**31)


def test_on_an_accelerator_the_chain_runs_on_the_host_cpu(monkeypatch):
    """Issue 23: the GPU executable of the large path copies its whole state per swap attempt,
    so on an accelerator the chain runs on the host CPU device, with the same result."""
    from jaxqueens.parallel import devices as backend

    want = large_solve.solve_large(3000, seed=3).rows  # the size of the tests above
    monkeypatch.setattr(backend, "is_accelerator", lambda: True)
    got = large_solve.solve_large(3000, seed=3)
    assert (got.rows == want).all() and got.summary["verified"]
