"""The thread kernel of `complete` and the torus (parallel/threads_complete.py), run on the CPU
with `interpret=True`: toroidal counts against OEIS A051906, prob079 instances decided and
counted against the XLA kernel (solvers/complete), an unfinished item's frontier, split as
the driver splits it, searched to the same count, and the complete driver's choice of kernel
per backend."""

from __future__ import annotations

import functools
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxqueens.core import checker
from jaxqueens.core.constraints import Constraints, column_masks
from jaxqueens.core.oeis import A051906
from jaxqueens.drivers import complete as completing
from jaxqueens.errors import QueensError
from jaxqueens.io import instances as instio
from jaxqueens.parallel import threads_complete as tc
from jaxqueens.solvers import complete as solver

PROB079 = Path(__file__).resolve().parents[2] / "instances" / "prob079"  # shipped (CC BY 4.0)
FOREVER = solver.MAX_BUDGET


def _items(models, *, budget=FOREVER, stop=0) -> np.ndarray:
    """Every instance's root as an item (orientation as given)."""
    rows = []
    for m in models:
        mk = column_masks(m).astype(np.uint32)
        rows.append([0, 0, 0, mk[0], 0, budget, stop, *mk])
    return np.array(rows, np.uint32)


@functools.cache
def _xla_run(config: solver.Config):
    """The vmapped XLA kernel of a config, jitted once (a new lambda would compile again)."""
    return jax.jit(jax.vmap(lambda it: solver.readout(solver.search(it, config), config)[0]))


def _xla(batch, config: solver.Config):
    """Each item searched to its end by the XLA kernel: (found, status)."""
    head = np.asarray(_xla_run(config)(jnp.asarray(batch))).astype(np.int64)
    return head[:, 2] + (head[:, 3] << 32)


def _threads(batch, config: solver.Config, programs: int = 1, unroll: int = 1):
    """One step per loop check unless asked (interpreted, the body compiles ~4x faster)."""
    out = tc.search_chunk(
        jnp.asarray(batch), config, programs=programs, unroll=unroll, interpret=True
    )
    return tuple(np.asarray(a) for a in out)


def _split_count(batch, head, stacks, config: solver.Config) -> np.ndarray:
    """Each item's solutions: those found, plus its frontier's (the untried rows of its stack
    rows 0..d as items, as the driver's `_split` queues them) counted by the XLA kernel."""
    rest, owner = [], []
    for i, (h, st) in enumerate(zip(head, stacks, strict=True)):
        for k in range(int(h[0]) + 1 if h[0] != 0xFFFFFFFF else 0):
            if st[k, solver.AV]:
                level = int(batch[i, solver.LEVEL]) + k
                rest.append([*st[k, :4], level, FOREVER, 0, *batch[i, solver.HEAD :]])
                owner.append(i)
    found = head[:, 2].astype(np.int64) + (head[:, 3].astype(np.int64) << 32)
    if not rest:
        return found
    more = _xla(np.array(rest, np.uint32), config)
    return found + np.bincount(owner, more, minlength=len(batch)).astype(np.int64)


@pytest.mark.parametrize("n", [7])
def test_toroidal_counts_match_oeis(n):
    """The whole torus in one item, and again in one stopped early and split."""
    config = solver.Config(n, True)
    batch = np.concatenate(
        [_items([Constraints(n, toroidal=True)], budget=b) for b in (FOREVER, 40)]
    )
    head, stacks, _ = _threads(batch, config)
    assert head[0, 0] == 0xFFFFFFFF and head[1, 0] != 0xFFFFFFFF  # searched to its end; not
    assert _split_count(batch, head, stacks, config).tolist() == [A051906[n]] * 2


@pytest.fixture(scope="module")
def prob079():
    """Eight diag-10 instances (d = 8), SAT and UNSAT alike, as in the contract tests."""
    loaded = instio.load_instances([str(PROB079 / "diag-10.tar.gz")], diags=8).instances
    return [i.model for i in loaded[::97][:8]]


@pytest.fixture(scope="module")
def prob079_counts(prob079):
    """Their counts by the XLA kernel (the reference of every prob079 test)."""
    return _xla(_items(prob079), solver.Config(10))


def _board(path_words: np.ndarray) -> np.ndarray:
    """A root item's solution path (cols masks from column 0) as rows, one per column."""
    bits = path_words[1:].astype(np.uint64) ^ path_words[:-1].astype(np.uint64)
    return np.log2(bits.astype(np.float64)).astype(np.int64)


def test_prob079_counts_and_decisions_match_the_xla_kernel(prob079, prob079_counts):
    n, want = 10, prob079_counts
    assert (want > 0).any() and (want == 0).any()  # both kinds
    # count, every item with its first solution snapshot (the driver asks for one per instance),
    # with the GPU's steps per check: the frontier test's program (budget and stop are data)
    head, _, sols = _threads(
        _items(prob079, stop=1), solver.Config(n), programs=2, unroll=tc.UNROLL
    )
    found = head[:, 2].astype(np.int64) + (head[:, 3].astype(np.int64) << 32)
    np.testing.assert_array_equal(found, want)
    assert (head[:, 0] == 0xFFFFFFFF).all()  # counting does not stop at a solution
    for m, f, s in zip(prob079, found, sols[:, 0], strict=True):
        if f:
            assert checker.check_constrained(_board(s), m).ok
    # decide: SAT exactly where the XLA kernel found solutions, each board a solution
    head, _, sols = _threads(_items(prob079, stop=1), solver.Config(n, decide=True))
    np.testing.assert_array_equal(head[:, 2], (want > 0).astype(np.uint32))
    for m, f, s in zip(prob079, head[:, 2], sols[:, 0], strict=True):
        if f:
            assert checker.check_constrained(_board(s), m).ok


def test_an_unfinished_frontier_splits_to_the_same_count(prob079, prob079_counts):
    """A budget stops the items part way: found so far plus their frontier's items (split from
    the stacks as the driver's `_split` does), searched by the XLA kernel, is the whole count.
    The GPU's steps per check of the budget (a lane halts at the first check past it)."""
    n = 10
    config = solver.Config(n)
    batch = _items(prob079, budget=300)
    head, stacks, _ = _threads(batch, config, programs=2, unroll=tc.UNROLL)
    want = prob079_counts
    stopped = head[:, 0] != 0xFFFFFFFF
    assert stopped.sum() >= 4  # most items stopped by their budget (a few trees are smaller)
    assert (head[stopped, 1] < 300 + tc.UNROLL).all()
    np.testing.assert_array_equal(_split_count(batch, head, stacks, config), want)


def test_bad_input():
    batch = jnp.zeros((4, solver.HEAD + 8), jnp.uint32)
    with pytest.raises(QueensError, match="enumerate on the XLA kernel"):
        tc.search_chunk(batch, solver.Config(8, cap=4), programs=1, interpret=True)
    with pytest.raises(QueensError, match="batch must be uint32"):
        tc.search_chunk(batch[:, :-1], solver.Config(8), programs=1, interpret=True)


def _solution_32() -> list[int]:
    """A 32-queens solution (rows by column): the evens, then the odds with 1 and 3 swapped and
    5 moved to the end (the construction for n = 2 mod 6), 0-based."""
    odds = [3, 1, *range(7, 32, 2), 5]
    return [r - 1 for r in (*range(2, 33, 2), *odds)]


@pytest.mark.parametrize(("n", "toroidal"), [(32, False), (31, True)])
def test_the_largest_boards_count_as_the_xla_kernel(n, toroidal):
    """n = 32 (full 32-bit masks, shifts of 0 and 31) and a torus of 31 (doubled masks across
    both words): the last eight columns left open below a solution's first columns."""
    rows = _solution_32() if n == 32 else [2 * c % n for c in range(n)]
    model = Constraints(n, toroidal=toroidal)
    assert checker.check_constrained(np.array(rows), model).ok
    placed = Constraints(n, fixed=tuple((c, rows[c]) for c in range(n - 8)), toroidal=toroidal)
    config = solver.Config(n, toroidal)
    batch = _items([placed], stop=1)
    head, _, sols = _threads(batch, config)
    want = _xla(batch, config)
    assert want[0] >= 1 and int(head[0, 2]) == want[0]
    assert checker.check_constrained(_board(sols[0, 0]), placed).ok


def test_driver_chooses_the_thread_kernel_on_one_gpu_to_decide_and_count():
    assert completing.kernel_route("gpu", "decide", 1) == "threads"
    assert completing.kernel_route("gpu", "count", 1) == "threads"
    assert completing.kernel_route("gpu", "enumerate", 1) == "items"  # lists on the XLA kernel
    assert completing.kernel_route("gpu", "count", 2) == "items"
    assert completing.kernel_route("cpu", "decide", 1) == "items"
    assert completing.kernel_route("tpu", "count", 1) == "items"


def test_driver_thread_route_end_to_end(monkeypatch, prob079, prob079_counts):
    """The driver's GPU route, interpreted on the CPU: prob079 counts with a budget small
    enough that items come back unfinished and are split (boards checked by the driver), and
    `count --toroidal`'s count."""
    monkeypatch.setattr(completing, "kernel_route", lambda platform, mode, num_devices: "threads")
    want = prob079_counts
    got = completing.solve_instances(prob079, "count", budget=300)
    assert [r.solutions for r in got.instances] == want.tolist()
    assert got.items > len(prob079)  # split frontiers searched too
    for r, m in zip(got.instances, prob079, strict=True):
        assert r.status == ("SAT" if r.solutions else "UNSAT")
        assert all(checker.check_constrained(b, m).ok for b in r.boards)
    assert completing.toroidal_count(7) == A051906[7]
