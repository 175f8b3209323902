"""Planning an exact count without running it (drivers/count_plan.py): Knuth probes for the
tree's size, bounded kernel calls for the speed."""

import numpy as np
import pytest

from jaxqueens.core.oeis import A000170
from jaxqueens.drivers import count, count_chunks, count_plan
from jaxqueens.solvers import count as solver
from jaxqueens.solvers import variants


def _spy_on_call_budgets(monkeypatch) -> list[int]:
    """The edge budget of every kernel call with work (not a compiling call), as the streams
    call the compiled count_items (`count_chunks.Plan.call`)."""
    budgets = []
    call = count_chunks.Plan.call

    def spy(plan, batch, *rest):
        if (np.asarray(batch)[:, 0] != solver.DONE).any():
            budgets.append(int(plan.budget))
        return call(plan, batch, *rest)

    monkeypatch.setattr(count_chunks.Plan, "call", spy)
    return budgets


def test_plan_count_predicts_from_knuth_probes_and_bounded_calls(monkeypatch):
    """The plan's tree size is Knuth's estimate (within a few standard errors of the edges the
    count walks, and of Q(n)), its speed timed on calls of at most PLAN_CALL_EDGES edges."""
    budgets = _spy_on_call_budgets(monkeypatch)
    plan = count_plan.plan_count(12, budget=0.5, chunk=512)
    monkeypatch.undo()
    real = count.count_solutions(12, chunk=512)
    assert (plan.tasks, plan.depth, plan.chunks) == (real.prefixes, real.depth, real.chunks)
    assert plan.constellations == real.constellations
    assert budgets and max(budgets) <= count_plan.PLAN_CALL_EDGES
    assert plan.sampled >= count_plan.PLAN_PROBES and 0 < plan.edges_error < 0.05 * plan.edges
    assert abs(plan.edges - real.edges) <= 5 * plan.edges_error, (plan.edges, real.edges)
    assert abs(plan.solutions - A000170[12]) <= 5 * plan.solutions_error + 1
    assert plan.edge_rate > 0 and plan.timed_edges > 0
    assert plan.low_seconds <= plan.estimate_seconds <= plan.high_seconds
    assert plan.estimate_seconds == pytest.approx(plan.edges / plan.edge_rate)
    tiny = count_plan.plan_count(3)
    assert tiny.tasks == 0 and tiny.estimate_seconds == 0 and tiny.solutions == 0


def test_plan_count_answers_at_the_largest_n_without_whole_tasks(monkeypatch):
    """Issue 28 item 2: the old plan counted whole tasks (56 s at n = 21; at n = 27 and beyond
    it never returned). Every call is bounded now, so the plan of the largest n returns."""
    budgets = _spy_on_call_budgets(monkeypatch)
    plan = count_plan.plan_count(variants.COUNT_MAX_N, budget=0.2)
    assert max(budgets) <= count_plan.PLAN_CALL_EDGES
    assert plan.tasks > 10**6 and plan.edges > 1e20 and plan.estimate_seconds > 86400 * 365
    assert plan.sampled >= count_plan.PLAN_PROBES and plan.edges_error < 0.2 * plan.edges
