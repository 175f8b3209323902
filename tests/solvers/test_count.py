"""Exact counting, fundamental counts, enumeration, checkpoint/resume and the ``count`` command."""

import argparse
import itertools
import json

import chex
import jax.numpy as jnp
import numpy as np
import pytest

import jaxqueens  # noqa: F401
from jaxqueens.core import checker, symmetry
from jaxqueens.drivers import count
from jaxqueens.solvers import count as count_kernel
from jaxqueens.solvers.count import KernelConfig
from jaxqueens.core.oeis import A000170, A002562
from jaxqueens.errors import QueensError

A000170_1_12 = [1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200]
A002562_1_12 = [1, 0, 0, 1, 2, 1, 6, 12, 46, 92, 341, 1787]


def ref_count(n, cols=0, ld=0, rd=0, placed=0):
    """Plain recursive bitmask counter (completions of a partial board)."""
    if placed == n:
        return 1
    full, total = (1 << n) - 1, 0
    av = full & ~(cols | ld | rd)
    while av:
        bit = av & -av
        av ^= bit
        total += ref_count(n, cols | bit, ((ld | bit) << 1) & full, (rd | bit) >> 1, placed + 1)
    return total


def brute_force(n):
    return {p for p in itertools.permutations(range(n))
            if all(abs(p[i] - p[j]) != j - i for i in range(n) for j in range(i + 1, n))}


def test_data_tables():
    assert [A000170[n] for n in range(1, 13)] == A000170_1_12
    assert [A002562[n] for n in range(1, 13)] == A002562_1_12
    assert set(A000170) == set(A002562) == set(range(1, 28))
    assert A000170[27] == 234907967154122528 and A002562[27] == 29363495934315694
    for n in A000170:  # a class holds 1..8 solutions
        assert A002562[n] <= A000170[n] <= 8 * A002562[n]


@pytest.mark.parametrize("n", range(1, 13))
def test_counts_match_oeis(n):
    r = count.count_solutions(n, unique=True)
    assert isinstance(r.total, int) and isinstance(r.unique, int)
    assert (r.total, r.unique) == (A000170_1_12[n - 1], A002562_1_12[n - 1])


def test_prefix_expansion_covers_half_the_tree():
    for n, depth in [(6, 2), (8, 3), (9, 2), (9, 4), (10, 1)]:
        masks, queens = count.expand_prefixes(n, depth)
        assert queens.shape == (len(masks), depth) and masks.dtype == np.uint32
        assert queens[:, 0].max() <= n // 2  # mirror restriction
        sub = sum(ref_count(n, int(c), int(l), int(r), depth) for c, l, r, _ in masks)
        assert 2 * sub == A000170[n]


@pytest.mark.parametrize("n,depth", [(8, 2), (9, 3), (10, 3)])
def test_kernel_counts_each_prefix_like_the_reference(n, depth):
    masks, _ = count.expand_prefixes(n, depth)
    cfg = KernelConfig(n, depth)
    got = np.asarray(count_kernel.count_mapped(masks, cfg, 1))
    want = [ref_count(n, int(c), int(l), int(r), depth) for c, l, r, _ in masks]
    assert got[:, 1].sum() == 0 and got[:, 0].tolist() == want
    # the accelerator strategy (lockstep lanes with refilling) gives the same, whatever the lanes
    for lanes in (1, 7, 64):
        assert (np.asarray(count_kernel.count_lockstep(masks, cfg, lanes)) == got).all()


class KernelTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_count_prefix(self):
        masks, _ = count.expand_prefixes(7, 2)
        cfg = KernelConfig(7, 2)
        fn = self.variant(lambda p: count_kernel.count_prefix(p, cfg))
        words = [fn(jnp.asarray(m)) for m in masks]
        chex.assert_shape(words[0], (2,))
        assert 2 * sum(int(w[0]) for w in words) == 40


def test_add64_carries_instead_of_wrapping():
    lo, hi = count_kernel.add64(jnp.uint32(2**32 - 3), jnp.uint32(7), jnp.uint32(5))
    assert (int(lo), int(hi)) == (2, 8)
    lo, hi = count_kernel.add64(jnp.uint32(2**32 - 1), jnp.uint32(2**32 - 2), jnp.uint32(1))
    assert (int(lo), int(hi)) == (0, 2**32 - 1)
    # the host combines the two words as Python ints, past 2^31 and 2^32
    words = count._words(np.array([[5, 1], [2**32 - 1, 2**31]], np.uint32))
    assert words == [2**32 + 5, 2**63 + 2**32 - 1] and all(isinstance(w, int) for w in words)


def test_host_totals_are_python_ints_beyond_int32():
    # a fake chunk result in the driver's format sums exactly (no int32/uint32 wrap)
    per_prefix = count._words(np.array([[2**32 - 1, 4]] * 3, np.uint32))
    assert 2 * sum(per_prefix) == 2 * 3 * (4 * 2**32 + 2**32 - 1) > 2**33


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
    assert symmetry.stabilizer_sizes(four).tolist() == [4, 4] and len(symmetry.fundamental(four)) == 1


def test_checkpoint_resume_gives_the_same_total(tmp_path):
    ck = tmp_path / "ck.json"
    stop = lambda done, total: (_ for _ in ()).throw(KeyboardInterrupt) if done == 3 else None  # noqa: E731
    with pytest.raises(KeyboardInterrupt):
        count.count_solutions(11, unique=True, checkpoint=ck, chunk=256, on_chunk=stop)
    saved = json.loads(ck.read_text())
    assert len(saved["done"]) == 3 and saved["n"] == 11
    seen = []
    r = count.count_solutions(11, unique=True, checkpoint=ck, chunk=256,
                              on_chunk=lambda d, t: seen.append(d))
    assert (r.total, r.unique) == (A000170[11], A002562[11])
    assert r.resumed_chunks == 3 and r.chunks > 3 and seen[0] == 4  # completed chunks not recounted
    assert len(json.loads(ck.read_text())["done"]) == r.chunks
    # resuming a finished count recounts nothing
    again = count.count_solutions(11, unique=True, checkpoint=ck, chunk=256)
    assert again.total == A000170[11] and again.resumed_chunks == again.chunks


def test_checkpoint_of_another_count_is_refused(tmp_path):
    ck = tmp_path / "ck.json"
    count.count_solutions(9, checkpoint=ck)
    with pytest.raises(QueensError, match="another count"):
        count.count_solutions(10, checkpoint=ck)
    ck.write_text("not json")
    with pytest.raises(QueensError, match="not a jaxqueens count checkpoint"):
        count.count_solutions(9, checkpoint=ck)


def test_bad_arguments():
    for n in (0, 33):
        with pytest.raises(QueensError, match="out of range"):
            count.count_solutions(n)
    with pytest.raises(QueensError, match="--unique"):
        count.count_solutions(18, unique=True)


def _cli(argv):
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    count.add_command(sub)
    args = parser.parse_args(argv)
    return args.func(args)


def test_count_command(tmp_path, capsys):
    assert _cli(["count", "-n", "10", "--unique"]) == 0
    out = capsys.readouterr().out
    assert "724 solutions" in out and "agrees" in out and "92" in out
    f = tmp_path / "sols.npy"
    assert _cli(["count", "-n", "8", "--enumerate", "--out", str(f)]) == 0
    boards = np.load(f)
    reps = np.load(tmp_path / "sols_fundamental.npy")
    assert boards.dtype == np.uint8 and boards.shape == (92, 8) and reps.shape == (12, 8)
    assert checker.are_solutions(reps).all()
    for argv, msg in [(["count", "-n", "8", "--enumerate"], "--out"),
                      (["count", "-n", "8", "--out", str(f)], "--enumerate"),
                      (["count", "-n", "15", "--enumerate", "--out", str(f)], "n <= 14")]:
        with pytest.raises(QueensError, match=msg):
            _cli(argv)
