"""The exact-count driver (drivers/count.py, count_chunks.py): totals, batching strategies,
enumeration, checkpoint/resume, and the chunk loop's asynchronous dispatch."""

import dataclasses
import itertools
import json

import chex
import jax
import numpy as np
import pytest

from jaxqueens.core import checker, symmetry
from jaxqueens.core.oeis import A000170, A002562
from jaxqueens.core.prefixes import expand_mirror
from jaxqueens.drivers import count, count_chunks, count_plan
from jaxqueens.errors import QueensError
from jaxqueens.io import checkpoint as ckpt
from jaxqueens.parallel import count as batched
from jaxqueens.parallel import devices, gather, sizing, streams
from jaxqueens.parallel.shard import pad_rows
from jaxqueens.solvers import count as solver
from jaxqueens.solvers import variants

A000170_1_12 = [1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200]
A002562_1_12 = [1, 0, 0, 1, 2, 1, 6, 12, 46, 92, 341, 1787]


def brute_force(n):
    return {
        p
        for p in itertools.permutations(range(n))
        if all(abs(p[i] - p[j]) != j - i for i in range(n) for j in range(i + 1, n))
    }


def saved(path):
    """A count checkpoint's finished chunks and settings."""
    with np.load(path) as z:
        settings = json.loads(str(z[ckpt.HEADER]))["settings"]
        return {"done": count.countio.unpack_chunks(z["done"], z["words"]), **settings}


@pytest.mark.parametrize("n", range(1, 13))
def test_counts_match_oeis(n):
    r = count.count_solutions(n, unique=True)
    assert isinstance(r.total, int) and isinstance(r.unique, int)
    assert (r.total, r.unique) == (A000170_1_12[n - 1], A002562_1_12[n - 1])


def test_totals_do_not_depend_on_depth_or_chunk():
    whole = count.count_solutions(10, unique=True)
    for depth, chunk in [(1, 2), (3, 8), (5, 1000)]:
        r = count.count_solutions(10, unique=True, depth=depth, chunk=chunk)
        assert (r.total, r.unique, r.depth) == (whole.total, whole.unique, depth)


def test_choose_depth_reaches_the_target():
    for n, target in [(8, 10), (9, 100), (12, 4096)]:
        depth = count.choose_depth(n, target)
        assert len(expand_mirror(n, depth)[0]) >= target or depth == n - 2
        assert depth == (2 if n % 2 else 1) or len(expand_mirror(n, depth - 1)[0]) < target


def test_finished_chunks_pack_exactly():
    done = {0: [2**100 + 7, 3], 4: [0, 2**64], 2: [1, 0]}
    have, words = count.countio.pack_chunks(done, 6)
    assert have.tolist() == [True, False, True, False, True, False] and words.dtype == np.uint32
    assert count.countio.unpack_chunks(have, words) == done


@pytest.mark.parametrize("n", range(1, 11))
def test_enumeration(n):
    boards = count.enumerate_solutions(n)
    assert boards.dtype == np.uint8 and boards.shape == (A000170[n], n)
    assert len(np.unique(boards, axis=0)) == len(boards)  # no duplicates
    assert checker.are_solutions(boards).all() if len(boards) else True
    if n <= 8:
        assert {tuple(b) for b in boards.tolist()} == brute_force(n)
    reps = symmetry.fundamental(boards)
    assert len(reps) == A002562[n]
    assert (symmetry.stabilizer_sizes(boards).sum() // 8 if len(boards) else 0) == A002562[n]


def test_enumeration_limits():
    with pytest.raises(QueensError, match="n <= 14"):
        count.enumerate_solutions(15)


def test_symmetry_group():
    boards = count.enumerate_solutions(8)
    images = symmetry.transforms(boards)
    chex.assert_shape(images, (8, 92, 8))
    assert checker.are_solutions(images.reshape(-1, 8)).all()
    # closed under composition: the images of an image are the same 8 boards
    img = symmetry.transforms(images[1])
    for k in range(8):
        assert {tuple(b) for b in img[:, k].tolist()} == {tuple(b) for b in images[:, k].tolist()}
    # canonical forms are fixed points and lie in the orbit
    canon = symmetry.canonical(boards)
    assert (symmetry.canonical(canon) == canon).all()
    assert ((images == canon[None]).all(axis=2).any(axis=0)).all()
    # the 4x4 solutions are one class fixed by the quarter turns
    four = count.enumerate_solutions(4)
    assert (
        symmetry.stabilizer_sizes(four).tolist() == [4, 4] and len(symmetry.fundamental(four)) == 1
    )


def _stop_at(k):
    def stop(done, total):
        if done == k:
            raise KeyboardInterrupt

    return stop


def test_checkpoint_resume_gives_the_same_total(tmp_path):
    ck = tmp_path / "checkpoint.npz"
    part = count.count_solutions(11, unique=True, checkpoint=ck, chunk=256, on_chunk=_stop_at(3))
    # Ctrl-C returns the finished chunks' partial result (as solve does), the checkpoint saved
    assert (part.stopped_by, part.done_chunks, part.unique) == ("interrupted", 3, None)
    assert part.chunks > 3 and 0 < part.total < A000170[11] and part.edges > 0
    first = saved(ck)
    assert len(first["done"]) == 3 and first["n"] == 11
    assert part.total == count_chunks.make_plan(11, None, 256).base + sum(
        v[0] for v in first["done"].values()
    )
    seen = []
    r = count.count_solutions(
        11, unique=True, checkpoint=ck, chunk=256, on_chunk=lambda d, t: seen.append(d)
    )
    assert (r.total, r.unique) == (A000170[11], A002562[11])
    assert (r.stopped_by, r.done_chunks) == ("finished", r.chunks)
    assert r.resumed_chunks == 3 and r.chunks > 3 and seen[0] == 4  # completed chunks not recounted
    assert len(saved(ck)["done"]) == r.chunks
    assert {k: saved(ck)["done"][k] for k in first["done"]} == first["done"]
    # resuming a finished count recounts nothing
    again = count.count_solutions(11, unique=True, checkpoint=ck, chunk=256)
    assert again.total == A000170[11] and again.resumed_chunks == again.chunks
    # resume=False starts afresh and overwrites it
    fresh = count.count_solutions(11, unique=True, checkpoint=ck, chunk=256, resume=False)
    assert fresh.resumed_chunks == 0 and fresh.total == A000170[11]


def test_checkpoint_of_another_count_is_refused(tmp_path):
    ck = tmp_path / "checkpoint.npz"
    count.count_solutions(9, checkpoint=ck)
    with pytest.raises(QueensError, match=r"other settings.*n.*differ"):
        count.count_solutions(10, checkpoint=ck)
    with pytest.raises(QueensError, match="unique"):
        count.count_solutions(9, unique=True, checkpoint=ck)
    ck.write_text("not json")
    with pytest.raises(QueensError, match="not a readable checkpoint"):
        count.count_solutions(9, checkpoint=ck)
    with pytest.raises(QueensError, match="not a readable checkpoint"):
        count.count_solutions(9, checkpoint=tmp_path / "missing.npz", resume=True)


@pytest.mark.parametrize("extra", [1, -1])
def test_defect_8_checkpoint_with_an_out_of_range_chunk(tmp_path, extra):
    """A count checkpoint whose arrays do not match its plan (a chunk past the last one, or
    fewer chunks) is a one-line QueensError, never an IndexError."""
    ck = tmp_path / "checkpoint.npz"
    count.count_solutions(10, checkpoint=ck, chunk=16)
    with np.load(ck) as z:
        arrays = dict(z)
    chunks = len(arrays["done"])
    size = chunks + extra
    done = np.ones(size, bool)
    words = np.resize(arrays["words"], (size, 2, 4))
    with open(ck, "wb") as f:  # altered arrays under the header of the whole file
        np.savez(f, done=done, words=words, header=arrays[ckpt.HEADER])
    with pytest.raises(QueensError, match="not a readable checkpoint") as err:
        count.count_solutions(10, checkpoint=ck, chunk=16, resume=True)
    assert "\n" not in str(err.value)
    fingerprint = json.loads(str(arrays[ckpt.HEADER]))["settings"]
    ckpt.save(ck, {"done": done, "words": words}, fingerprint)  # the same, written whole
    with pytest.raises(QueensError, match=r"not a readable checkpoint \(done has shape") as err:
        count.count_solutions(10, checkpoint=ck, chunk=16, resume=True)
    assert "\n" not in str(err.value)


def test_defect_10_numpy_integer_sizes():
    r = count.count_solutions(np.int64(8))
    assert r.total == 92 and type(r.n) is int
    assert len(count.enumerate_solutions(np.int32(6))) == 4
    with pytest.raises(QueensError, match="integer"):
        count.count_solutions(8.0)


def test_bad_arguments():
    for n in (0, 33):
        with pytest.raises(QueensError, match="out of range"):
            count.count_solutions(n)
    # fundamental counts no longer enumerate: every n the total reaches is accepted
    assert count._check_n(18, True) == 18 and count._check_n(32, True) == 32


def test_progress_line_only_when_asked(capsys):
    count.count_solutions(12)
    assert capsys.readouterr().err == ""
    count.count_solutions(12, quiet=False)
    err = capsys.readouterr().err
    assert "tasks" in err and "solutions so far" in err
    with pytest.raises(TypeError, match="progress"):  # one switch: quiet (the CLI's --progress)
        count.count_solutions(12, progress=True)


def _log_streams(monkeypatch) -> tuple[list, object]:
    """Events in order: ("go", stream) per call submitted, ("read",) per chunk the host records
    (by the `on_chunk` callback returned with them)."""
    events = []
    submit = streams.Workers.submit

    def logged_submit(self, k, fn, batch):
        events.append(("go", k))
        return submit(self, k, fn, batch)

    monkeypatch.setattr(streams.Workers, "submit", logged_submit)
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


def test_each_process_counts_its_own_chunks_and_resumes_them(tmp_path, monkeypatch):
    ck = tmp_path / "checkpoint.npz"
    whole = count.count_solutions(11, checkpoint=ck, chunk=1024)
    everything = saved(ck)["done"]
    assert ckpt.process_path(ck) == ck
    monkeypatch.setattr(gather, "process_count", lambda: 2)
    monkeypatch.setattr(gather, "process_index", lambda: 1)
    own = tmp_path / "checkpoint.process1of2.npz"
    assert ckpt.process_path(ck) == own
    mine = []
    merge = lambda done, chunks: (mine.append(sorted(done)), {**everything, **done})[1]
    monkeypatch.setattr(count.countio, "gather_chunks", merge)
    part = count.count_solutions(11, checkpoint=ck, chunk=1024, on_chunk=_stop_at(2))
    assert (part.stopped_by, part.done_chunks) == ("interrupted", 2) and mine == []
    # process 1 of 2 counts only its own chunks (odd indices); which two finish first depends on
    # which of the two streams' threads runs first, so any two of them may be the ones saved
    got = sorted(saved(own)["done"])
    assert len(got) == 2 and all(i % 2 == 1 for i in got) and saved(own)["processes"] == 2
    r = count.count_solutions(11, checkpoint=ck, chunk=1024)
    assert r.total == whole.total and r.resumed_chunks == 2
    assert mine == [list(range(1, whole.chunks, 2))]  # process 1 of 2: every odd chunk, once
    assert saved(own)["done"] == {i: everything[i] for i in range(1, whole.chunks, 2)}


def test_defect_2_a_checkpoint_that_cannot_be_written_does_not_lose_the_count(
    tmp_path, monkeypatch, capsys
):
    """A full disk at the periodic or the final checkpoint: a warning, and the exact total."""
    import errno

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(count.ckpt, "save", full)
    res = count.count_solutions(
        9, checkpoint=tmp_path / "checkpoint.npz", checkpoint_every=0.0, depth=3, chunk=8
    )
    assert res.total == 352 and not (tmp_path / "checkpoint.npz").exists()
    assert "could not write a checkpoint" in capsys.readouterr().err


# --- constellation tasks ----------------------------------------------------------------------


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


@pytest.mark.parametrize("n,depth", [(8, 1), (9, 2), (10, 3)])
def test_budgets_of_one_seven_and_a_thousand_edges_give_the_unbounded_counts(n, depth):
    """Issue 28: a call stops after its budget of edges and a later call resumes its searches
    from their stacks; the totals never depend on the budget."""
    want = count.count_solutions(n, unique=True, depth=depth, chunk=16)
    assert (want.total, want.unique) == (A000170[n], A002562[n]) and want.chunks > 1
    for budget in (1, 7, 1000, solver.MAX_BUDGET):
        r = count.count_solutions(n, unique=True, depth=depth, chunk=16, budget=budget)
        assert (r.total, r.unique, r.chunks) == (want.total, want.unique, want.chunks)
    with pytest.raises(QueensError, match="budget"):
        count.count_solutions(n, budget=0)


def test_a_stop_between_calls_keeps_only_finished_chunks_and_resumes_exactly(tmp_path, monkeypatch):
    """Ctrl-C lands between two calls (each at most ``budget`` edges), even inside a chunk: the
    checkpoint holds the finished chunks only, and the resumed count is exact."""
    ck = tmp_path / "checkpoint.npz"
    calls = []
    submit = streams.Workers.submit

    def counted(self, k, fn, batch):
        calls.append(k)
        if len(calls) == 40:
            raise KeyboardInterrupt
        return submit(self, k, fn, batch)

    monkeypatch.setattr(streams.Workers, "submit", counted)
    part = count.count_solutions(10, unique=True, checkpoint=ck, depth=2, chunk=64, budget=50)
    assert part.stopped_by == "interrupted" and part.done_chunks < part.chunks
    monkeypatch.setattr(streams.Workers, "submit", submit)
    part = saved(ck)["done"]
    r = count.count_solutions(10, unique=True, checkpoint=ck, depth=2, chunk=64, budget=50)
    assert len(part) < r.chunks and r.resumed_chunks == len(part)
    assert (r.total, r.unique) == (A000170[10], A002562[10])


@pytest.mark.parametrize("n", [8, 11])
def test_totals_and_fundamentals_do_not_depend_on_the_plan(n):
    want = (A000170[n], A002562[n])
    for depth, chunk in [(1, 2), (2, 64), (n - 2, 4096)]:
        r = count.count_solutions(n, unique=True, depth=depth, chunk=chunk)
        assert (r.total, r.unique, r.depth) == (*want, depth)
        assert r.constellations == len(count.constellations.constellations(n)[0])


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


@pytest.mark.parametrize("unique", ["yes", 1, None])
def test_defect_count_solutions_took_unique_that_is_not_a_bool(unique):
    from jaxqueens.errors import QueensError

    with pytest.raises(QueensError, match="unique must be True or False"):
        count.count_solutions(8, unique=unique)
