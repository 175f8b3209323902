"""The exact count's plan and chunk loop (drivers/count_chunks.py): the plan's tasks and items,
their searches over devices, lanes and budgets, and the streams' asynchronous dispatch."""

import dataclasses

import chex
import jax
import numpy as np
import pytest

from jaxqueens.core.oeis import A000170, A002562
from jaxqueens.drivers import count, count_chunks
from jaxqueens.errors import QueensError
from jaxqueens.parallel import count as batched
from jaxqueens.parallel import devices, sizing
from jaxqueens.parallel import streams as parallel_streams
from jaxqueens.parallel.shard import pad_rows
from jaxqueens.solvers import count as solver


def _log_streams(monkeypatch) -> tuple[list, object]:
    """Events in order: ("go", stream) per call submitted, ("read",) per chunk the host records
    (by the `on_chunk` callback returned with them)."""
    events = []
    submit = parallel_streams.Workers.submit

    def logged_submit(self, k, fn, batch):
        events.append(("go", k))
        return submit(self, k, fn, batch)

    monkeypatch.setattr(parallel_streams.Workers, "submit", logged_submit)
    return events, lambda done, total: events.append(("read",))


def _gos_at_reads(events) -> list[int]:
    """Calls submitted before each read, in read order."""
    gos, out = 0, []
    for e in events:
        if e[0] == "go":
            gos += 1
        else:
            out.append(gos)
    return out


def test_every_stream_has_its_next_chunk_before_the_host_reads_one(monkeypatch):
    """Each host device runs its own stream of calls (parallel/streams.py); a finished chunk's
    stream gets the next chunk before the host records the finished one."""
    events, read = _log_streams(monkeypatch)
    r = count.count_solutions(11, chunk=256, on_chunk=read)
    streams = jax.local_device_count()
    assert r.total == 2680 and r.chunks >= streams + 2
    assert {e[1] for e in events[:streams]} == set(range(streams))  # every stream starts at once
    gos_at_reads = _gos_at_reads(events)
    assert all(g >= min(r.chunks, streams + k + 1) for k, g in enumerate(gos_at_reads))
    assert (sum(e[0] == "go" for e in events), len(gos_at_reads)) == (r.chunks, r.chunks)


def test_on_an_accelerator_one_stream_spans_every_device_with_two_calls_in_flight(monkeypatch):
    """The accelerator route of the driver, run on the CPU: lockstep lanes, one stream over every
    local device, the next call queued while the host reads one; the same exact counts."""
    monkeypatch.setattr(devices, "is_accelerator", lambda: True)
    monkeypatch.setattr(
        sizing,
        "sizes",
        lambda: dataclasses.replace(sizing.ACCELERATOR_DEFAULTS, count_prefixes=64, count_lanes=8),
    )
    events, read = _log_streams(monkeypatch)
    plan = count_chunks.make_plan(10, None, 32)
    assert len(plan.streams) == 1 and plan.devices == jax.local_device_count()
    r = count.count_solutions(10, unique=True, chunk=32, on_chunk=read)
    assert (r.total, r.unique) == (A000170[10], A002562[10]) and r.chunks >= 4
    assert {e[1] for e in events if e[0] == "go"} == {0}
    # two in flight, and the next one queued
    assert all(g >= min(r.chunks, k + 3) for k, g in enumerate(_gos_at_reads(events)))


def _drain(plan, batch, budget, shards, sizes):
    """Call :func:`batched.count_items` until every search of ``batch`` is finished, resuming the
    ones a call's budget stopped (as the driver does: only those, padded with finished items):
    (completions per item, calls made)."""
    batch, found, calls = batch.copy(), np.zeros(len(batch), np.int64), 0
    live = np.flatnonzero(batch[:, 0] != solver.DONE)
    while len(live):  # one shape for every call: one compilation
        call = np.concatenate([batch[live], batch[: len(batch) - len(live)]])
        call[len(live) :, 0] = solver.DONE
        states, work = batched.count_items(call, np.int32(budget), plan.config, shards, sizes)
        states, calls = np.asarray(states)[: len(live)], calls + 1
        assert np.asarray(work).shape == (shards,)
        found[live] += states[:, 1]
        batch[live, : plan.config.state_width] = states
        live = live[states[:, 0] != solver.DONE]
    return found, calls


def test_task_searches_agree_over_devices_lanes_strategies_and_budgets(monkeypatch):
    plan = count_chunks.make_plan(9, 2, None)
    batch = plan.items(np.arange(len(plan.tasks)))
    d = jax.local_device_count()
    batch = pad_rows(batch, d)
    batch[len(plan.tasks) :, 0] = solver.DONE
    one, calls = _drain(plan, batch, solver.MAX_BUDGET, 1, sizing.CPU_SIZES)
    real = one[: len(plan.tasks)]
    assert calls == 1 and plan.base + int((real * plan.weights).sum()) == A000170[9]
    for budget in (1, 7, 1000):
        got, calls = _drain(plan, batch, budget, 1, sizing.CPU_SIZES)
        assert (got == one).all() and (calls > 1 or budget == 1000)
    split, _ = _drain(plan, batch, 7, d, sizing.CPU_SIZES)
    assert (split == one).all()
    monkeypatch.setattr(devices, "is_accelerator", lambda: True)
    for lanes, budget in [(1, 1000), (7, 5), (64, solver.MAX_BUDGET)]:
        sizes = dataclasses.replace(sizing.ACCELERATOR_DEFAULTS, count_lanes=lanes)
        got, _ = _drain(plan, batch, budget, d, sizes)
        assert (got == one).all()


def test_task_plan_is_shuffled_the_same_way_every_time():
    a, b = count_chunks.make_plan(10, 3, None), count_chunks.make_plan(10, 3, None)
    assert (a.tasks == b.tasks).all() and (a.weights == b.weights).all()
    assert (a.owner == b.owner).all() and a.base == b.base
    assert a.tasks.shape[1] == 4 and a.tasks.dtype == np.uint32
    chex.assert_shape(a.tables, (a.constellations, a.config.levels * solver.TABLE_WORDS))
    batch = a.items(np.arange(3))
    chex.assert_shape(batch, (3, a.config.width))
    with pytest.raises(QueensError, match="depth"):
        count_chunks.make_plan(10, 9, None)
