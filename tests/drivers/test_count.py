"""The exact-count driver (drivers/count.py): totals, budgets, enumeration, checkpoint/resume
and processes (the plan and chunk loop: test_count_chunks.py; count --plan: test_count_plan.py;
the files: tests/io/test_count.py)."""

import itertools
import json

import chex
import numpy as np
import pytest

from jaxqueens.core import checker, symmetry
from jaxqueens.core.oeis import A000170, A002562
from jaxqueens.core.prefixes import expand_mirror
from jaxqueens.drivers import count, count_chunks, count_setup
from jaxqueens.drivers.loop import RunControl
from jaxqueens.errors import QueensError
from jaxqueens.io import checkpoint as ckpt
from jaxqueens.parallel import gather, streams
from jaxqueens.solvers import count as solver

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
    part = count.count_solutions(
        11, unique=True, control=RunControl(checkpoint=ck), chunk=256, on_chunk=_stop_at(3)
    )
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
        11,
        unique=True,
        control=RunControl(checkpoint=ck),
        chunk=256,
        on_chunk=lambda d, t: seen.append(d),
    )
    assert (r.total, r.unique) == (A000170[11], A002562[11])
    assert (r.stopped_by, r.done_chunks) == ("finished", r.chunks)
    assert r.resumed_chunks == 3 and r.chunks > 3 and seen[0] == 4  # completed chunks not recounted
    assert len(saved(ck)["done"]) == r.chunks
    assert {k: saved(ck)["done"][k] for k in first["done"]} == first["done"]
    # resuming a finished count recounts nothing
    again = count.count_solutions(11, unique=True, control=RunControl(checkpoint=ck), chunk=256)
    assert again.total == A000170[11] and again.resumed_chunks == again.chunks
    # resume=False starts afresh and overwrites it
    fresh = count.count_solutions(
        11, unique=True, control=RunControl(checkpoint=ck, resume=False), chunk=256
    )
    assert fresh.resumed_chunks == 0 and fresh.total == A000170[11]


def test_checkpoint_of_another_count_is_refused(tmp_path):
    ck = tmp_path / "checkpoint.npz"
    count.count_solutions(9, control=RunControl(checkpoint=ck))
    with pytest.raises(QueensError, match=r"other settings.*n.*differ"):
        count.count_solutions(10, control=RunControl(checkpoint=ck))
    with pytest.raises(QueensError, match="unique"):
        count.count_solutions(9, unique=True, control=RunControl(checkpoint=ck))
    ck.write_text("not json")
    with pytest.raises(QueensError, match="not a readable checkpoint"):
        count.count_solutions(9, control=RunControl(checkpoint=ck))
    with pytest.raises(QueensError, match="not a readable checkpoint"):
        count.count_solutions(
            9, control=RunControl(checkpoint=tmp_path / "missing.npz", resume=True)
        )


@pytest.mark.parametrize("extra", [1, -1])
def test_defect_8_checkpoint_with_an_out_of_range_chunk(tmp_path, extra):
    """A count checkpoint whose arrays do not match its plan (a chunk past the last one, or
    fewer chunks) is a one-line QueensError, never an IndexError."""
    ck = tmp_path / "checkpoint.npz"
    count.count_solutions(10, control=RunControl(checkpoint=ck), chunk=16)
    with np.load(ck) as z:
        arrays = dict(z)
    chunks = len(arrays["done"])
    size = chunks + extra
    done = np.ones(size, bool)
    words = np.resize(arrays["words"], (size, 2, 4))
    with open(ck, "wb") as f:  # altered arrays under the header of the whole file
        np.savez(f, done=done, words=words, header=arrays[ckpt.HEADER])
    with pytest.raises(QueensError, match="not a readable checkpoint") as err:
        count.count_solutions(10, control=RunControl(checkpoint=ck, resume=True), chunk=16)
    assert "\n" not in str(err.value)
    fingerprint = json.loads(str(arrays[ckpt.HEADER]))["settings"]
    ckpt.save(ck, {"done": done, "words": words}, fingerprint)  # the same, written whole
    with pytest.raises(QueensError, match=r"not a readable checkpoint \(done has shape") as err:
        count.count_solutions(10, control=RunControl(checkpoint=ck, resume=True), chunk=16)
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
    assert count_setup.CountSettings(unique=True).unique
    assert count_setup.check_count_n(18) == 18 and count_setup.check_count_n(32) == 32


def test_progress_line_only_when_asked(capsys):
    count.count_solutions(12)
    assert capsys.readouterr().err == ""
    count.count_solutions(12, control=RunControl(quiet=False))
    err = capsys.readouterr().err
    assert "tasks" in err and "solutions so far" in err
    with pytest.raises(TypeError, match="progress"):  # one switch: quiet (the CLI's --progress)
        count.count_solutions(12, progress=True)


def test_each_process_counts_its_own_chunks_and_resumes_them(tmp_path, monkeypatch):
    ck = tmp_path / "checkpoint.npz"
    whole = count.count_solutions(11, control=RunControl(checkpoint=ck), chunk=1024)
    everything = saved(ck)["done"]
    assert ckpt.process_path(ck) == ck
    monkeypatch.setattr(gather, "process_count", lambda: 2)
    monkeypatch.setattr(gather, "process_index", lambda: 1)
    own = tmp_path / "checkpoint.process1of2.npz"
    assert ckpt.process_path(ck) == own
    mine = []
    merge = lambda done, chunks: (mine.append(sorted(done)), {**everything, **done})[1]
    monkeypatch.setattr(count.countio, "gather_chunks", merge)
    part = count.count_solutions(
        11, control=RunControl(checkpoint=ck), chunk=1024, on_chunk=_stop_at(2)
    )
    assert (part.stopped_by, part.done_chunks) == ("interrupted", 2) and mine == []
    # process 1 of 2 counts only its own chunks (odd indices); which two finish first depends on
    # which of the two streams' threads runs first, so any two of them may be the ones saved
    got = sorted(saved(own)["done"])
    assert len(got) == 2 and all(i % 2 == 1 for i in got) and saved(own)["processes"] == 2
    r = count.count_solutions(11, control=RunControl(checkpoint=ck), chunk=1024)
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
        9,
        control=RunControl(checkpoint=tmp_path / "checkpoint.npz", checkpoint_every=0.0),
        depth=3,
        chunk=8,
    )
    assert res.total == 352 and not (tmp_path / "checkpoint.npz").exists()
    assert "could not write a checkpoint" in capsys.readouterr().err


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
    part = count.count_solutions(
        10, unique=True, control=RunControl(checkpoint=ck), depth=2, chunk=64, budget=50
    )
    assert part.stopped_by == "interrupted" and part.done_chunks < part.chunks
    monkeypatch.setattr(streams.Workers, "submit", submit)
    part = saved(ck)["done"]
    r = count.count_solutions(
        10, unique=True, control=RunControl(checkpoint=ck), depth=2, chunk=64, budget=50
    )
    assert len(part) < r.chunks and r.resumed_chunks == len(part)
    assert (r.total, r.unique) == (A000170[10], A002562[10])


@pytest.mark.parametrize("n", [8, 11])
def test_totals_and_fundamentals_do_not_depend_on_the_plan(n):
    want = (A000170[n], A002562[n])
    for depth, chunk in [(1, 2), (2, 64), (n - 2, 4096)]:
        r = count.count_solutions(n, unique=True, depth=depth, chunk=chunk)
        assert (r.total, r.unique, r.depth) == (*want, depth)
        assert r.constellations == len(count.constellations.constellations(n)[0])


@pytest.mark.parametrize("unique", ["yes", 1, None])
def test_defect_count_solutions_took_unique_that_is_not_a_bool(unique):
    from jaxqueens.errors import QueensError

    with pytest.raises(QueensError, match="unique must be True or False"):
        count.count_solutions(8, unique=unique)
