"""jaxqueens.solve (jaxqueens.drivers.minconflicts): determinism, start boards, errors,
traces."""

import time

import jax
import numpy as np
import pytest

import jaxqueens
from jaxqueens.core import checker
from jaxqueens.core import constraints as cons
from jaxqueens.drivers import minconflicts as mcsolve
from jaxqueens.drivers import solve_setup
from jaxqueens.errors import QueensError
from jaxqueens.solvers import minconflicts as mc
from jaxqueens.solvers import variants

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
@pytest.mark.parametrize("tabu", [0, 2])
def test_every_init_and_tabu_solves(init, tabu):
    res = jaxqueens.solve(12, chains=40, init=init, tabu=tabu)
    assert res.summary["solved"] == 40 and checker.are_solutions(res.solutions).all()


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
    res = jaxqueens.solve(8, chains=6, start=near, batch=6, trace_steps=50)  # the program above
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
    cfg = mc.Config(n=10)
    key = jax.random.key(3)
    run = mcsolve.compile_runner(key, cfg, mc.default_params(cfg, max_steps=60), 8)
    whole = jax.device_get(run(0, 8))
    assert whole.rows.shape == (8, 10) and whole.solved.dtype == bool
    tail = jax.device_get(run(4, 4))  # a short chunk compiles its own size, same chains
    for a, b in zip(whole, tail, strict=True):
        np.testing.assert_array_equal(a[4:], b)


def test_trace_chain_is_cut_at_the_solution():
    cfg = mc.Config(n=12)
    prm = mc.default_params(cfg, max_steps=500)
    m = mcsolve.trace_chain(jax.random.key(0), cfg, prm, 400)
    assert isinstance(m.conflicted, np.ndarray) and m.conflicted.shape == m.pairs.shape
    assert m.conflicted[-1] == 0 and (m.conflicted[:-1] > 0).all()
    assert m.pairs[-1] == 0 and (np.diff(m.pairs) <= 0).all()
    short = mcsolve.trace_chain(jax.random.key(0), cfg, prm, 3)
    assert short.pairs.shape == (3,)
    np.testing.assert_array_equal(short.pairs, m.pairs[:3])


def test_default_chunk_and_check_n():
    d = jax.local_device_count()
    for n, chains in ((8, None), (8, 10), (1000, 3), (40_000, None)):
        chunk = mcsolve.default_chunk(n, chains)
        assert chunk % d == 0 and chunk >= 1
        assert chunk <= max(d, 8192)
    assert mcsolve.default_chunk(8, 10) >= 10  # one call for a small job
    mcsolve.check_n(variants.MAX_BATCHED_N)
    with pytest.raises(QueensError, match="--mode large"):
        mcsolve.check_n(variants.MAX_BATCHED_N + 1)


def _no_kernel(monkeypatch):
    """Fail the test if the solver compiles anything (a refused budget must cost no work)."""

    def refuse(*args, **kwargs):
        raise AssertionError("compiled: the budget should have been refused up front")

    monkeypatch.setattr(mcsolve, "compile_runner", refuse)


def test_defect_3_more_solutions_than_exist_are_refused_up_front(monkeypatch, capsys):
    from jaxqueens.cli.main import main

    _no_kernel(monkeypatch)
    with pytest.raises(QueensError, match="--solutions 100: n = 8 has only 92 distinct solutions"):
        jaxqueens.solve(8, chains=None, solutions=100)
    assert main(["solve", "-n", "4", "--solutions", "3"]) == 2
    err = capsys.readouterr().err
    assert "--solutions 3: n = 4 has only 2 distinct solutions" in err and err.count("\n") == 1
    monkeypatch.undo()
    assert jaxqueens.solve(4, chains=None, solutions=2, batch=8).summary["distinct_solutions"] == 2


def test_defect_6_a_checkpoint_resumes_only_under_its_command(tmp_path, monkeypatch, capsys):
    from jaxqueens.cli.main import main

    real, calls = mcsolve.compile_runner, []

    def interrupting(*args, **kwargs):
        run = real(*args, **kwargs)

        def run_chunk(offset, count, *rest):
            calls.append(offset)
            if len(calls) == 3:
                raise KeyboardInterrupt
            return run(offset, count, *rest)

        return run_chunk

    monkeypatch.setattr(mcsolve, "compile_runner", interrupting)
    out = tmp_path / "run"
    argv = ["-n", "8", "--chains", "40", "--batch", "8", "--quiet"]
    assert main(["solve", *argv, "--out", str(out)]) == 130
    monkeypatch.undo()
    capsys.readouterr()
    assert main(["stats", *argv, "--resume", str(out)]) == 2
    err = capsys.readouterr().err
    assert "command differ" in err and err.count("\n") == 1
    assert main(["solve", *argv[:2], "--solutions", "5", "--batch", "8", "--resume", str(out)]) == 2
    assert "chains, solutions differ" in capsys.readouterr().err
    assert main(["solve", *argv, "--resume", str(out)]) == 0  # the same command and options resume


def test_defect_5_time_budget_holds_when_chains_restart_forever():
    # n = 16 with one step per attempt almost never solves: each chain would restart a million
    # times inside one kernel call (minutes); bounded calls let --time stop the run on time.
    t0 = time.perf_counter()
    res = jaxqueens.solve(16, chains=None, seconds=1.0, max_steps=1, batch=24)
    elapsed = time.perf_counter() - t0 - res.summary["compile_s"]
    assert res.summary["stopped_by"] == "time" and elapsed < 4.0, elapsed
    # Chains still running when the time was up are reported unsolved, and counted as such.
    assert res.summary["unfinished"] == int(res.run.unfinished.sum()) > 0
    assert not res.run.solved[res.run.unfinished].any()


def test_defect_5_bounded_calls_give_the_same_chains(monkeypatch):
    kwargs = {"chains": 24, "max_steps": 20, "batch": 4, "seed": 5}
    whole = jaxqueens.solve(16, **kwargs)
    calls = []
    real = mcsolve.BoundedRunner.__call__

    def counted(self, offset, count):
        calls.append(offset)
        return real(self, offset, count)

    monkeypatch.setattr(mcsolve, "FIRST_CALL_STEPS", 1)  # one attempt per chain and call
    monkeypatch.setattr(mcsolve, "CALL_SECONDS", 1e-9)  # and it never grows
    monkeypatch.setattr(mcsolve.BoundedRunner, "__call__", counted)
    pieces = jaxqueens.solve(16, **kwargs)
    assert len(calls) > len(set(calls)) and whole.run.restarts.max() > 1
    for field in ("rows", "solved", "steps", "restarts", "chain_id"):
        np.testing.assert_array_equal(getattr(pieces.run, field), getattr(whole.run, field))
    assert pieces.summary["unfinished"] == 0


@pytest.mark.parametrize(
    "start,needle",
    [
        ([9] * 8, "row 9 out of range 0..7"),
        ([-1] * 8, "row -1"),
        ([0.5] * 8, "integers"),
        ([0, 1, 2], "3 columns"),
    ],
)
def test_defect_10_start_board_is_range_checked(start, needle):
    """A bad start board is the user's error (QueensError), not a failed solution check (a bug)."""
    with pytest.raises(QueensError, match=needle):
        mcsolve.solve(8, 2, start=start)


def test_defect_10_numpy_integer_size_and_start():
    res = mcsolve.solve(
        np.int64(8), np.int64(6), start=np.array([0, 4, 7, 5, 2, 6, 1, 3], np.uint8)
    )
    assert type(res.summary["n"]) is int and res.summary["n"] == 8 and res.summary["solved"] == 6


# ----------------------------------------------------------------------------- issue 14


def test_defect_restart_period_grows_with_n():
    # min-conflicts needs about 0.47 n steps from a random permutation: with a fixed 4000-step
    # restart period every attempt at n >= ~8500 restarted just before it would solve.
    # The same rule holds for --file starts: here a random permutation given as the start board.
    start = np.random.default_rng(0).permutation(9000)
    res = jaxqueens.solve(9000, chains=1, batch=1, seconds=60.0, start=start)
    s = res.summary
    assert s["solved"] == 1 and res.run.restarts[0] == 0 and res.run.steps[0] > 4000, s
    assert s["max_steps"] == variants.default_max_steps(9000) >= 2 * 9000
    assert checker.are_solutions(res.solutions).all()
    assert variants.default_max_steps(100) == 500  # the measured period (issue 27)
    assert variants.default_max_steps(100, plain=False) == 4000  # toroidal, constrained: classic


def test_defect_budget_and_limits_are_shown_on_the_progress_line(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "240")  # a wide terminal: the line is cut to the terminal's width
    res = jaxqueens.solve(
        10, chains=4, batch=2, max_restarts=7, control=jaxqueens.RunControl(quiet=False)
    )
    err = capsys.readouterr().err
    assert res.summary["solved"] == 4
    assert "budget: 4 chains solved" in err and "at most 8 attempts x 50 steps a chain" in err
    assert err.count("\r") >= 2  # one tick per chunk of 2 chains


def test_defect_first_call_is_bounded_in_steps_so_progress_ticks_early():
    # -n 4999 ran its 1000 default chains in calls of 334 chains (8 s each before a first tick).
    d = jax.local_device_count()
    for n in (2000, 4999, 9000, 20_000, variants.MAX_BATCHED_N):
        steps = variants.default_max_steps(n)
        chunk = mcsolve.default_chunk(n, 1000)
        # within the bound, give or take the rounding up to a multiple of the devices
        assert (chunk - d) * steps * n < d * solve_setup.CALL_WORK, (n, chunk)
    assert mcsolve.default_chunk(8, 1000) >= 1000  # small boards still run in one call


def test_defect_unsolved_chains_report_their_best_board():
    # max_chains: a bounded job (every chain gives up after 3 attempts of 3 steps)
    res = jaxqueens.solve(16, chains=None, max_chains=8, max_restarts=2, max_steps=3, batch=4)
    run = res.run
    assert res.summary["stopped_by"] == "max_chains" and len(run.chain_id) == 8
    unsolved = ~run.solved
    assert unsolved.sum() >= 6 and (run.restarts[unsolved] == 2).all()
    np.testing.assert_array_equal(run.best, checker.attacking_pairs(run.rows))
    assert (run.best[unsolved] > 0).all() and res.summary["max_restarts"] == 2


def test_defect_best_board_survives_bounded_calls(monkeypatch):
    kwargs = {
        "chains": None,
        "max_chains": 4,
        "max_restarts": 4,
        "max_steps": 2,
        "batch": 4,
        "seed": 3,
    }
    whole = jaxqueens.solve(16, **kwargs)
    monkeypatch.setattr(mcsolve, "FIRST_CALL_STEPS", 1)  # one attempt per chain and call
    monkeypatch.setattr(mcsolve, "CALL_SECONDS", 1e-9)
    pieces = jaxqueens.solve(16, **kwargs)
    for field in ("rows", "solved", "steps", "restarts", "best"):
        np.testing.assert_array_equal(getattr(pieces.run, field), getattr(whole.run, field))


def test_initial_board_is_chain_0s_first_board():
    rows, pairs, gen_s, _compile_s = mcsolve.initial_board(12, init="greedy", seed=4)
    assert rows.shape == (12,) and pairs == checker.attacking_pairs(rows) and gen_s >= 0
    res = jaxqueens.solve(
        12, chains=None, max_chains=1, max_restarts=0, max_steps=1, init="greedy", seed=4, batch=1
    )
    # one step from that board (or none if it was solved): at most one queen differs
    assert (res.run.rows[0] != rows).sum() <= 1


# ---------------------------------------------------------------- constrained boards (issue 16)


@pytest.mark.parametrize("n", [5, 7, 11])
def test_toroidal_solutions_pass_the_toroidal_checker(n):
    res = mcsolve.solve(n, 12, toroidal=True)
    torus = cons.Constraints(n, toroidal=True)
    assert res.summary["status"] == "SAT" and len(res.solutions) == 12
    assert all(checker.check_constrained(b, torus).ok for b in res.solutions)


def test_toroidal_sizes_without_solutions_are_refused():
    with pytest.raises(QueensError, match="no toroidal solution"):
        mcsolve.solve(9, 4, toroidal=True)


SAT = cons.Constraints(8, fixed=((0, 2), (3, 1)), blocked=((1, 0), (2, 2)), sums=(10,), diffs=(2,))
"""One solution, 2 5 3 1 7 4 6 0 (tests/drivers/test_anneal.py)."""


def test_an_instance_is_solved_within_its_constraints():
    res = mcsolve.solve(None, None, max_chains=16, instance=SAT)
    assert res.summary["status"] == "SAT" and res.summary["instance"] == SAT.to_dict()
    assert {tuple(b) for b in res.solutions} == {(2, 5, 3, 1, 7, 4, 6, 0)}
    allowed = cons.allowed_squares(SAT)
    assert all(allowed[np.arange(8), b].all() and b[0] == 2 and b[3] == 1 for b in res.run.rows)


@pytest.mark.parametrize(
    "instance",
    [
        cons.Constraints(8, fixed=((0, 0), (1, 2))),  # every column open, no completion
        cons.Constraints(8, fixed=((0, 0),), blocked=((1, 4), (1, 5), (1, 6))),  # the same
    ],
)
def test_an_unsolvable_instance_is_unknown_never_unsat(instance):
    res = mcsolve.solve(None, None, max_chains=16, max_restarts=2, max_steps=200, instance=instance)
    assert (
        res.summary["status"] == "unknown" and not res.run.solved.any() and len(res.run.rows) == 16
    )
    for x, y in instance.fixed:
        assert (res.run.rows[:, x] == y).all()


def test_defect_28_msg_plainly_unsat_instance_runs_no_chain():
    """Attacking fixed queens were run as chains that could not start ("no solution found after
    0 steps ... gave up after 100 attempts", unknown); they are UNSAT with the reason."""
    from jaxqueens.errors import InstanceUnsat

    for instance, reason in (
        (cons.Constraints(8, fixed=((0, 0), (1, 1))), "fixed queens at (0,0) and (1,1)"),
        (cons.Constraints(8, fixed=((0, 0), (2, 3), (5, 5))), "fixed queens at (0,0) and (5,5)"),
    ):
        with pytest.raises(InstanceUnsat, match=r"^UNSAT \(") as err:
            mcsolve.solve(None, None, max_chains=3, max_restarts=2, instance=instance)
        assert reason in err.value.reason


def test_instance_errors():
    with pytest.raises(QueensError, match="instance has n = 8"):
        mcsolve.solve(9, 2, instance=SAT)
    with pytest.raises(QueensError, match="drop the start board"):
        mcsolve.solve(None, 2, instance=SAT, start=SOLUTION_8)
    with pytest.raises(QueensError, match="random or permutation"):
        mcsolve.solve(None, 2, instance=SAT, init="greedy")


# ----------------------------------------------------------------------------- issue 27


def test_default_run_uses_the_period_and_explicit_maxsteps_its_own():
    default = jaxqueens.solve(8, chains=40, seed=1)
    assert default.summary["max_steps"] == 32 and default.summary["solved"] == 40
    assert (default.run.steps <= 32 * (default.run.restarts + 1)).all()
    explicit = jaxqueens.solve(8, chains=40, seed=1, max_steps=4000)
    assert explicit.summary["max_steps"] == 4000
    # toroidal boards (not measured) keep the classic period
    torus = jaxqueens.solve(7, chains=12, seed=1, toroidal=True)
    assert torus.summary["max_steps"] == 4000


@pytest.mark.parametrize(
    "n, max_steps, init, tabu, steps, restarts, digest",
    [
        (8, 4000, "permutation", 0, 22703, 5, "bae98f4f79b84208"),
        (12, 50, "random", 2, 4225, 63, "711eb28c1daf8faf"),
        (30, 4000, "greedy", 0, 2182, 0, "7eec1b645e9981c0"),
    ],
)
def test_explicit_maxsteps_reproduces_the_earlier_results(
    n, max_steps, init, tabu, steps, restarts, digest
):
    # Recorded with the code before issue 27 changed the default period: an explicit --maxsteps
    # keeps its meaning (every attempt that many steps) and the same seeds give the same boards.
    # Re-recorded once when the chains' streams took 64-bit seeds (the same settings, other draws).
    import hashlib

    run = jaxqueens.solve(n, chains=40, seed=11, max_steps=max_steps, init=init, tabu=tabu).run
    got = hashlib.sha256(
        np.asarray(run.rows, np.int32).tobytes()
        + np.asarray(run.steps, np.int64).tobytes()
        + np.asarray(run.restarts, np.int64).tobytes()
    ).hexdigest()[:16]
    assert (int(run.steps.sum()), int(run.restarts.sum()), got) == (steps, restarts, digest)


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"chains": 2.5}, "chains must be an integer"),
        ({"seed": 1.5}, "seed must be an integer"),
        ({"seed": -1}, "seed must be at least 0"),
        ({"seed": 2**40}, "seed must be at most 4,294,967,295"),
        ({"seed": True}, "seed must be an integer"),
        ({"max_steps": 10.0}, "max_steps must be an integer"),
        ({"seconds": float("nan")}, "seconds must be a finite number"),
        ({"batch": 2**31}, "batch must be at most"),
        ({"init": "nope"}, "init 'nope' is unknown"),
    ],
)
def test_defect_28_16_solve_checks_argument_types_at_the_boundary(kwargs, needle):
    """Wrong types were JAX or stdlib errors ('float' object cannot be interpreted as an
    integer), and seed=-1 or 2**40 ran as another seed."""
    with pytest.raises(QueensError) as err:
        jaxqueens.solve(8, **{"chains": 2, **kwargs})
    assert needle in str(err.value), str(err.value)
