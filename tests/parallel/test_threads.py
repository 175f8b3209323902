"""The thread kernel (one search per GPU thread, Pallas), run on the CPU with ``interpret=True``:
its counts against OEIS and against the XLA kernel task by task, its task plan against the CPU
counter's, and the count driver's choice of kernel per backend."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxqueens.core.oeis import A000170, A002562
from jaxqueens.drivers import count as driver
from jaxqueens.errors import QueensError
from jaxqueens.parallel import threads
from jaxqueens.solvers import count as solver


@pytest.mark.parametrize(("n", "depth"), [(4, 1), (6, 2), (8, 1), (9, 3), (10, 2), (11, 4)])
def test_counts_match_oeis(n, depth):
    # one step per loop check: the kernel's body interpreted compiles 4x faster on the CPU
    assert threads.count(n, depth, unroll=1, interpret=True) == A000170[n]


def test_unrolled_steps_count_the_same():
    """The GPU's setting (several steps per check of the loop condition)."""
    assert threads.count(10, 3, unroll=threads.UNROLL, interpret=True) == A000170[10]


def _span(p: int, tasks: int, programs: int) -> int:
    return ((p + 1) * tasks) // programs - (p * tasks) // programs


def test_each_task_matches_the_xla_kernel():
    """At most one task a lane (lanes >= tasks): each lane's weighted count is its task's count
    by the XLA kernel (solvers.count, the CPU plan's tasks in its order)."""
    n, depth = 10, 2
    plan = threads.tasks(n, depth)
    probs = solver.problems(n, depth)
    params = solver.default_params(probs.config)
    res = jax.jit(jax.vmap(lambda p: solver.run(None, probs.config, params, p)))(probs.tasks)
    want = np.asarray(res.found)[:, 0].astype(np.int64) * probs.weights
    programs = -(-plan.words.shape[1] // threads.BLOCK)
    got = threads.count_tasks(
        jnp.asarray(plan.words), n=n, programs=programs, unroll=1, interpret=True
    )
    t = plan.words.shape[1]  # program p searches tasks p t / P .., its lane i the i-th
    lane = [p * threads.BLOCK + i for p in range(programs) for i in range(_span(p, t, programs))]
    got = np.asarray(got)[0, lane].astype(np.int64)
    np.testing.assert_array_equal(got, want[plan.order])
    assert plan.base == want.sum() - got.sum()  # the tasks with at most one level left
    assert want.sum() == A000170[n]


def test_packed_rows_are_a_stack():
    """The deepest search of n = 27 (23 levels) pushed into the packed words and popped back,
    newest first, across every word boundary; a step that neither pushes nor pops keeps them."""
    rows = np.random.default_rng(0).integers(0, 27, 23).astype(np.uint32)
    words = threads.row_words(27)
    assert words * 32 >= 5 * (27 - 4)
    yes, no = jnp.array([True]), jnp.array([False])
    packed = tuple(jnp.zeros(1, jnp.uint32) for _ in range(words))
    for r in rows:
        packed = threads._stack(packed, jnp.uint32(r), yes, no)
    assert threads._stack(packed, jnp.uint32(5), no, no) == packed
    for r in rows[::-1]:
        assert int(packed[0][0] & 31) == r
        packed = threads._stack(packed, jnp.uint32(0), no, yes)
    assert all(int(p[0]) == 0 for p in packed)


def test_bad_input():
    with pytest.raises(QueensError, match="n = 4"):
        threads.tasks(28, 2)
    with pytest.raises(QueensError, match="uint32"):
        threads.count_tasks(jnp.zeros((3, 32), jnp.uint32), n=8, programs=1, interpret=True)


def test_driver_chooses_the_thread_kernel_on_a_gpu_only():
    assert driver.kernel_route("gpu", 20) == "threads"
    assert driver.kernel_route("cpu", 20) == "items"
    assert driver.kernel_route("tpu", 20) == "items"
    assert driver.kernel_route("gpu", 30) == "items"  # past the thread kernel's two-word masks


def test_driver_thread_route_end_to_end(monkeypatch):
    """The driver's GPU route, interpreted on the CPU: total and fundamental count, taken by
    the backend's choice or asked for by name."""
    monkeypatch.setattr(driver, "kernel_route", lambda platform, n: "threads")
    out = driver.count_solutions(9, unique=True)
    assert (out.total, out.unique) == (A000170[9], A002562[9])
    assert driver.count_solutions(8, kernel="threads").total == A000170[8]
    with pytest.raises(QueensError, match="no checkpoint, depth"):
        driver.count_solutions(8, kernel="threads", budget=100)
    with pytest.raises(QueensError, match="kernel must be"):
        driver.count_solutions(8, kernel="gpu")
