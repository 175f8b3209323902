"""parallel/scheduler.py: kernel calls over streams, cross-checked against a plain serial map:
every item run exactly once, results in item order (ordered) or as calls end, resume skipping
the items already done, at most ``depth`` calls in flight per stream."""

import collections
import threading
import time

import numpy as np
import pytest

from jaxqueens.parallel.scheduler import Finished, Launch, Scheduler
from jaxqueens.parallel.streams import Stream

TWO = [Stream(None, 1, 4), Stream(None, 1, 4)]  # two host streams (no device_put: NumPy in, out)


class Kernel:
    """A stand-in kernel: squares a batch after a delay chosen per item; counts its calls."""

    def __init__(self, delays=None):
        self.delays = delays or {}
        self.calls: collections.Counter = collections.Counter()
        self.lock = threading.Lock()

    def __call__(self, batch, shards):
        item = int(batch[0])
        with self.lock:
            self.calls[item] += 1
        time.sleep(self.delays.get(item, 0.0))
        return (np.asarray(batch) ** 2, np.asarray([shards]))


def run(scheduler, kernel, items, done=()):
    """A driver's loop: the items not ``done`` queued in order, one per call; returns the
    finished calls in the order the scheduler handed them back."""
    queue = [i for i in items if i not in set(done)]
    out = []

    def take(stream):
        if not queue:
            return None
        item = queue.pop(0)
        return Launch(item, kernel, np.full(4, item, np.int64))

    with scheduler:
        scheduler.fill(take)
        while len(scheduler):
            for k in range(len(scheduler.streams)):
                assert scheduler.in_flight(k) <= scheduler.depth
            out.append(scheduler.next())
            scheduler.fill(take)
    return out


def reference(items, done=()):
    """The plain serial map the scheduler must agree with."""
    return {i: np.full(4, i, np.int64) ** 2 for i in items if i not in set(done)}


@pytest.mark.parametrize("ordered", [True, False])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_every_item_runs_once_with_the_reference_results(ordered, depth):
    rng = np.random.default_rng(depth)
    items = list(range(23))
    kernel = Kernel({i: float(rng.uniform(0, 0.004)) for i in items})
    got = run(Scheduler(TWO, depth=depth, ordered=ordered, name="t"), kernel, items)
    assert sorted(kernel.calls) == items and set(kernel.calls.values()) == {1}
    assert sorted(f.job for f in got) == items  # each handed back once
    want = reference(items)
    for f in got:
        assert isinstance(f, Finished) and f.end >= f.start and f.stream in (0, 1)
        np.testing.assert_array_equal(f.outputs[0], want[f.job])
        assert f.outputs[1].tolist() == [1]  # the stream's shards
    if ordered:  # the oldest call first: item order, whichever stream was faster
        assert [f.job for f in got] == items


def test_resume_skips_the_items_already_done():
    items, done = list(range(15)), {0, 3, 4, 9, 14}
    kernel = Kernel()
    got = run(Scheduler(TWO, depth=2, ordered=True, name="t"), kernel, items, done)
    assert sorted(kernel.calls) == sorted(set(items) - done)
    assert [f.job for f in got] == [i for i in items if i not in done]
    want = reference(items, done)
    assert all((f.outputs[0] == want[f.job]).all() for f in got)


def test_unordered_hands_back_the_first_call_to_end():
    """A slow call on stream 0 does not hold back stream 1's calls."""
    kernel = Kernel({0: 0.5})
    got = run(Scheduler(TWO, depth=1, ordered=False, name="t"), kernel, [0, 1, 2, 3])
    assert [f.job for f in got][-1] == 0 and {f.stream for f in got if f.job} == {1}
    slow = Kernel({0: 0.3})
    got = run(Scheduler(TWO, depth=1, ordered=True, name="t"), slow, [0, 1, 2, 3])
    assert [f.job for f in got] == [0, 1, 2, 3]  # ordered: waits for the oldest


def test_fill_keeps_depth_calls_per_stream_and_stops_when_take_has_none():
    kernel = Kernel(dict.fromkeys(range(10), 0.05))
    calls = Scheduler(TWO, depth=2, ordered=True, name="t")
    items = iter(range(10))

    def take(stream):
        item = next(items, None)
        return None if item is None else Launch(item, kernel, np.full(4, item))

    with calls:
        assert calls.fill(take) == 4 and len(calls) == 4
        assert [calls.in_flight(k) for k in (0, 1)] == [2, 2] and calls.jobs() == [0, 1, 2, 3]
        assert calls.fill(take) == 0  # every stream full
        first = calls.next()
        assert first.job == 0 and calls.jobs() == [1, 2, 3]
        assert calls.fill(lambda stream: None) == 0  # nothing to take: the stream rests
        while len(calls):
            calls.next()
    with pytest.raises(LookupError):
        calls.next()
    with pytest.raises(ValueError, match="depth"):
        Scheduler(TWO, depth=0, ordered=True, name="t")


def test_wait_hands_back_every_call_that_has_ended_in_launch_order():
    kernel = Kernel({0: 0.6})
    with Scheduler(TWO, depth=2, ordered=False, name="t") as calls:
        items = iter(range(4))
        calls.fill(
            lambda k: (
                Launch(i, kernel, np.full(4, i)) if (i := next(items, None)) is not None else None
            )
        )
        assert calls.jobs() == [0, 1, 2, 3] and [calls.in_flight(k) for k in (0, 1)] == [2, 2]
        while sum(kernel.calls.values()) < 3:  # items 0 (stream 0), 2 and 3 (stream 1) ran
            time.sleep(0.001)
        time.sleep(0.1)  # stream 1's calls have ended; stream 0 is still on item 0
        first = calls.wait()
        assert [f.job for f in first] == [2, 3] and calls.jobs() == [0, 1]
        rest = []
        while len(calls):
            rest += [f.job for f in calls.wait()]
        assert rest == [0, 1]
    with Scheduler(TWO, depth=2, ordered=True, name="t") as calls:  # ordered: the oldest only
        items = iter(range(4))
        calls.fill(
            lambda k: (
                Launch(i, kernel, np.full(4, i)) if (i := next(items, None)) is not None else None
            )
        )
        assert [[f.job for f in calls.wait()] for _ in range(4)] == [[0], [1], [2], [3]]


def test_a_kernel_error_is_raised_by_next():
    def broken(batch, shards):
        raise RuntimeError("kernel failed")

    with Scheduler(TWO[:1], depth=1, ordered=False, name="t") as calls:
        calls.fill(lambda k: Launch("x", broken, np.zeros(4)) if not len(calls) else None)
        with pytest.raises(RuntimeError, match="kernel failed"):
            calls.next()


def test_leaving_cancels_the_calls_not_started():
    kernel = Kernel(dict.fromkeys(range(6), 0.1))
    with Scheduler(TWO[:1], depth=6, ordered=True, name="t") as calls:
        items = iter(range(6))
        calls.fill(
            lambda k: (
                Launch(i, kernel, np.full(4, i)) if (i := next(items, None)) is not None else None
            )
        )
        while not kernel.calls:  # the first call is running (it takes 0.1 s)
            time.sleep(0.001)
    time.sleep(0.3)
    assert sum(kernel.calls.values()) < 6 and kernel.calls[0] == 1
