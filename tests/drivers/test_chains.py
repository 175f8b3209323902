"""The chunked driver on a fake solver: budgets, exact cuts, verification, interrupts."""

import numpy as np
import pytest

from jaxqueens.core import constraints as cons
from jaxqueens.drivers import chains as driver
from jaxqueens.drivers import chains_types
from jaxqueens.drivers.loop import RunControl
from jaxqueens.errors import QueensError, SolutionCheckError
from jaxqueens.io import checkpoint

SOLS_6 = np.array([[1, 3, 5, 0, 2, 4], [2, 5, 1, 4, 0, 3], [3, 0, 4, 1, 5, 2], [4, 2, 0, 5, 3, 1]])


def fake_chunk(offset, count):
    """Chain i solves iff i % 3 != 2, with solution i % 4 and i steps."""
    ids = np.arange(offset, offset + count)
    solved = ids % 3 != 2
    rows = SOLS_6[ids % 4].copy()
    rows[~solved] = 0
    return chains_types.ChunkResult(rows, solved, ids, ids // 7)


def interrupt_at_call(k):
    """``fake_chunk`` that raises KeyboardInterrupt (a Ctrl-C) at its k-th call."""
    calls = []

    def interrupted(offset, count):
        calls.append(offset)
        if len(calls) == k:
            raise KeyboardInterrupt
        return fake_chunk(offset, count)

    return interrupted


@pytest.mark.parametrize("chunk", [1, 4, 7, 50])
def test_chain_budget_cut_is_independent_of_chunk(chunk):
    run = driver.run_chains(fake_chunk, 6, chains_types.Budget(chains=10), chunk, "fake")
    # 10 solved chains need chains 0..14 (every third chain fails).
    assert run.stopped_by == "chains"
    np.testing.assert_array_equal(run.chain_id, np.arange(14))
    assert run.solved.sum() == 10 and run.solved[-1]
    np.testing.assert_array_equal(run.steps, np.arange(14))
    assert run.wall_share.shape == (14,)


@pytest.mark.parametrize("chunk", [2, 5, 64])
def test_solution_budget_cut(chunk):
    run = driver.run_chains(fake_chunk, 6, chains_types.Budget(solutions=4), chunk, "fake")
    assert run.stopped_by == "solutions"
    assert len(run.distinct_solutions) == 4
    # Chains 0, 1, 3 give solutions 0, 1, 3; chain 4 gives 0 again; chain 6 gives 2.
    assert run.chain_id[-1] == 6


def test_max_chains_and_time_budgets():
    run = driver.run_chains(
        fake_chunk, 6, chains_types.Budget(chains=10**9, max_chains=9), 4, "fake"
    )
    assert run.stopped_by == "max_chains" and len(run.chain_id) == 9
    run = driver.run_chains(fake_chunk, 6, chains_types.Budget(seconds=1e-9), 4, "fake")
    assert run.stopped_by == "time" and len(run.chain_id) == 4


def test_bad_board_from_solver_is_caught():
    def lying(offset, count):
        res = fake_chunk(offset, count)
        return res._replace(solved=np.ones(count, bool))  # claims unsolved boards are solutions

    with pytest.raises(SolutionCheckError, match="board 2"):
        driver.run_chains(lying, 6, chains_types.Budget(chains=5), 5, "fake")


def test_interrupt_keeps_finished_chunks():
    interrupted = interrupt_at_call(3)

    run = driver.run_chains(interrupted, 6, chains_types.Budget(chains=100), 4, "fake")
    assert run.stopped_by == "interrupted" and len(run.chain_id) == 8


@pytest.mark.parametrize(
    "kwargs,needle",
    [
        ({}, "no budget"),
        ({"chains": 0}, "^chains must be at least 1"),
        ({"solutions": -1}, "^solutions must be at least 1"),
        ({"seconds": 0}, "^seconds = 0 is out of range"),
    ],
)
def test_bad_budgets(kwargs, needle):
    with pytest.raises(QueensError, match=needle):
        chains_types.Budget(**kwargs)


def test_checkpoint_and_resume_equal_an_uninterrupted_run(tmp_path):
    whole = driver.run_chains(fake_chunk, 6, chains_types.Budget(chains=30), 4, "fake")
    ckpt = tmp_path / "checkpoint.npz"
    interrupted = interrupt_at_call(4)

    part = driver.run_chains(
        interrupted,
        6,
        chains_types.Budget(chains=30),
        4,
        "fake",
        control=RunControl(checkpoint=ckpt, checkpoint_every=1e9),
        fingerprint={"k": 1},
    )
    assert part.stopped_by == "interrupted" and len(part.chain_id) == 12 and ckpt.exists()
    resumed = driver.run_chains(
        fake_chunk,
        6,
        chains_types.Budget(chains=30),
        4,
        "fake",
        control=RunControl(checkpoint=ckpt, resume=True),
        fingerprint={"k": 1},
    )
    for field in ("chain_id", "rows", "solved", "steps", "restarts"):
        np.testing.assert_array_equal(getattr(resumed, field), getattr(whole, field))
    assert resumed.stopped_by == "chains"
    with pytest.raises(QueensError, match="k differ"):
        driver.run_chains(
            fake_chunk,
            6,
            chains_types.Budget(chains=30),
            4,
            "fake",
            control=RunControl(checkpoint=ckpt, resume=True),
            fingerprint={"k": 2},
        )


def test_periodic_checkpoints(tmp_path):
    ckpt = tmp_path / "checkpoint.npz"
    run = driver.run_chains(
        fake_chunk,
        6,
        chains_types.Budget(chains=10),
        2,
        "fake",
        control=RunControl(checkpoint=ckpt, checkpoint_every=1e-9),
    )
    assert run.stopped_by == "chains" and ckpt.exists()
    settings = {"n": 6, "chunk": 2, "processes": 1, **chains_types.Budget(chains=10).fingerprint()}
    tree = checkpoint.load(ckpt, settings, driver.checkpoint_schema())
    done, shares, offset, wall = tree["done"], tree["wall_share"], int(tree["offset"]), tree["wall"]
    assert offset == len(done["solved"]) == len(shares) and 0 < offset < 14 and wall >= 0
    np.testing.assert_array_equal(done["steps"], np.arange(offset))


def test_defect_18_progress_never_shows_more_done_than_the_total(capsys):
    # A chunk of 4 chains solves 3 of them; with --chains 1 the line must read 1/1, not 3/1.
    run = driver.run_chains(
        fake_chunk, 6, chains_types.Budget(chains=1), 4, "fake", control=RunControl(quiet=False)
    )
    err = capsys.readouterr().err
    assert run.solved.sum() == 1 and "1/1 chains solved" in err
    assert "3/1" not in err and "2/1" not in err


def _bounded(limit=5):
    """fake_chunk that fails the test (instead of running forever) after ``limit`` calls."""
    calls = []

    def chunk(offset, count):
        calls.append(offset)
        assert len(calls) <= limit, "the driver ran on: the budget should have been refused"
        return fake_chunk(offset, count)

    return chunk, calls


@pytest.mark.parametrize("n,solutions,exist", [(6, 5, 4), (8, 100, 92), (4, 3, 2), (1, 2, 1)])
def test_defect_3_more_solutions_than_exist_are_refused_up_front(n, solutions, exist):
    chunk, calls = _bounded()
    with pytest.raises(QueensError, match=f"--solutions {solutions}: n = {n} has only {exist} "):
        driver.run_chains(chunk, n, chains_types.Budget(solutions=solutions), 4, "fake")
    assert calls == []  # refused before any work
    with pytest.raises(QueensError, match="has only"):
        chains_types.Budget(solutions=solutions).check(n)
    chains_types.Budget(solutions=exist).check(n)  # exactly all of them is allowed
    chains_types.Budget(solutions=10**30).check(28)  # beyond the published table nothing changes


def test_defect_6_checkpoint_fingerprint_covers_the_budget(tmp_path):
    ckpt = tmp_path / "checkpoint.npz"
    interrupted = interrupt_at_call(3)

    part = driver.run_chains(
        interrupted,
        6,
        chains_types.Budget(seconds=60),
        4,
        "fake",
        control=RunControl(checkpoint=ckpt, checkpoint_every=1e9),
        fingerprint={"k": 1},
    )
    assert part.stopped_by == "interrupted" and ckpt.exists()
    with pytest.raises(QueensError, match=r"\(solutions, time differ\)"):
        driver.run_chains(
            fake_chunk,
            6,
            chains_types.Budget(solutions=4),
            4,
            "fake",
            control=RunControl(checkpoint=ckpt, resume=True),
            fingerprint={"k": 1},
        )
    with pytest.raises(QueensError, match=r"\(time differ\)"):
        driver.run_chains(
            fake_chunk,
            6,
            chains_types.Budget(seconds=30),
            4,
            "fake",
            control=RunControl(checkpoint=ckpt, resume=True),
            fingerprint={"k": 1},
        )
    same = {
        "k": 1,
        **chains_types.Budget(seconds=60).fingerprint(),
        "n": 6,
        "chunk": 4,
        "processes": 1,
    }
    assert checkpoint.load(ckpt, same, driver.checkpoint_schema())["offset"] == 8  # resumes


def test_solutions_are_checked_against_the_instance():
    """A plain solution that breaks the instance (issue 16) is caught: here the fixed queen of
    column 0 must stand on row 1, so fake chain 1 (solution 2 5 1 4 0 3) is no solution."""
    model = cons.Constraints(6, fixed=((0, 1),))
    with pytest.raises(SolutionCheckError, match="fixed queen on row 1 moved"):
        driver.run_chains(fake_chunk, 6, chains_types.Budget(chains=5), 5, "fake", model=model)
    run = driver.run_chains(
        lambda o, c: fake_chunk(0, 1)._replace(rows=SOLS_6[[0] * c], solved=np.ones(c, bool)),
        6,
        chains_types.Budget(chains=3),
        3,
        "fake",
        model=model,
    )
    assert run.solved.all()


def test_instance_setup():
    assert driver.instance_setup(8, None, False) == (None, None)
    model, mask = driver.instance_setup(7, None, True)
    assert model == cons.Constraints(7, toroidal=True) and mask is None
    inst = cons.Constraints(6, fixed=((0, 1),), blocked=((2, 2),))
    model, mask = driver.instance_setup(None, inst, True)
    assert model == inst.with_toroidal(True)
    np.testing.assert_array_equal(mask.allowed, cons.allowed_squares(model))
    assert int(mask.nfree) == 5 and list(np.asarray(mask.free)[:5]) == [1, 2, 3, 4, 5]
    with pytest.raises(QueensError, match="instance has n = 6"):
        driver.instance_setup(8, inst, False)


@pytest.mark.parametrize(
    "model, reason",
    [
        (cons.Constraints(8, fixed=((0, 0), (1, 1))), "fixed queens at (0,0) and (1,1) attack"),
        (cons.Constraints(8, fixed=((0, 2), (4, 2))), "fixed queens at (0,2) and (4,2) attack"),
        (cons.Constraints(8, columns=(5,)), "column 5 has no allowed square"),
    ],
)
def test_defect_28_msg_plainly_unsat_instance_is_unsat_before_any_chain(model, reason):
    """Local search said "no solution found after 0 steps ... unknown" for a plainly UNSAT
    instance; it now says UNSAT with the reason, and runs nothing (and says UNSAT for such a
    proof only: an instance without one runs)."""
    from jaxqueens.errors import InstanceUnsat

    with pytest.raises(InstanceUnsat) as err:
        driver.instance_setup(None, model, False)
    assert str(err.value).startswith("UNSAT (") and reason in err.value.reason
    assert driver.instance_setup(None, cons.Constraints(4, fixed=((0, 0),)), False)[1] is not None


def test_issue28_item13_a_run_without_a_chain_bound_keeps_at_most_the_cap(monkeypatch):
    """Chains that never solve under a time budget: the run stops at the cap on kept chains
    (it kept every chain run until the time was up: millions, gigabytes)."""
    monkeypatch.setattr(driver, "KEPT_CHAINS_MAX", 50)

    def never(offset, count):
        return chains_types.ChunkResult(
            np.zeros((count, 6), np.int32), np.zeros(count, bool), np.ones(count), np.zeros(count)
        )

    run = driver.run_chains(never, 6, chains_types.Budget(seconds=30.0), 8, "fake")
    assert run.stopped_by == "kept_chains" and len(run.chain_id) == 50 == len(run.rows)
    # an explicit bound on chains run is the user's: the cap does not apply
    run = driver.run_chains(never, 6, chains_types.Budget(max_chains=60), 8, "fake")
    assert run.stopped_by == "max_chains" and len(run.chain_id) == 60


def test_issue28_item13_the_cap_fits_the_memory_available(monkeypatch):
    # measured (available=None): the machine's memory, or the full cap where it cannot be read
    monkeypatch.setattr(driver.memory, "available_memory", lambda: None)
    assert driver.kept_chains_cap(30) == driver.KEPT_CHAINS_MAX
    monkeypatch.setattr(driver.memory, "available_memory", lambda: 64 << 20)
    assert driver.kept_chains_cap(30) == driver.kept_chains_cap(30, available=64 << 20)
    assert driver.kept_chains_cap(30, available=1 << 40) == driver.KEPT_CHAINS_MAX
    small = driver.kept_chains_cap(30, available=64 << 20)  # 64 MiB: a quarter, 1,232 B a chain
    assert small == (64 << 20) // 4 // (driver.KEPT_BYTES_PER_CHAIN + 24 * 30)
    assert driver.kept_chains_cap(30, available=0) == 1


def test_issue28_the_time_budget_counts_the_host_work_of_each_chunk(monkeypatch):
    """``--time`` bounds the loop's wall time, the verification and bookkeeping of each chunk
    included: before only the kernel calls counted, so a run whose host work is slow overran
    by more the longer its budget (1 s of 8 at n = 16, ``stats --time 6``)."""
    import time

    real = driver.checker.require_solutions

    def slow_check(*args, **kwargs):  # host work of 50 ms a chunk; the fake kernel takes none
        time.sleep(0.05)
        return real(*args, **kwargs)

    monkeypatch.setattr(driver.checker, "require_solutions", slow_check)
    t0 = time.perf_counter()
    run = driver.run_chains(fake_chunk, 6, chains_types.Budget(seconds=0.3), 4, "fake")
    took = time.perf_counter() - t0
    assert run.stopped_by == "time"
    assert len(run.chain_id) <= 4 * 8  # about 6 chunks of 50 ms; without it: thousands
    assert took < 1.5
