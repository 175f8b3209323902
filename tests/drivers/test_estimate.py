"""Knuth's estimator: kernel pieces against Python, exactness when enumerated, unbiasedness."""

import argparse
import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxqueens  # noqa: F401
from jaxqueens.drivers import estimate as E
from jaxqueens.core import rng
from jaxqueens.core.oeis import A000170
from jaxqueens.errors import QueensError


def ref_levels(n):
    """Nodes per level of the backtrack tree (plain recursion)."""
    counts = [0] * (n + 1)

    def go(col, cols, ld, rd):
        counts[col] += 1
        if col == n:
            return
        av = ((1 << n) - 1) & ~(cols | ld | rd)
        while av:
            bit = av & -av
            av ^= bit
            go(col + 1, cols | bit, ((ld | bit) << 1) & ((1 << n) - 1), (rd | bit) >> 1)

    go(0, 0, 0, 0)
    return counts


def ref_walk(n, depth_masks, u_of_level, depth):
    """The same walk in Python ints, given the hash stream's draw per level."""
    cols, ld, rd = depth_masks
    full = (1 << n) - 1
    w, nodes = 1, 0
    for level in range(depth, n):
        free = full & ~(cols | ld | rd)
        d = bin(free).count("1")
        if d == 0:
            return 0, nodes
        k = (int(u_of_level[level]) * d) >> 32
        row = [r for r in range(n) if free >> r & 1][k]
        bit = 1 << row
        cols, ld, rd = cols | bit, ((ld | bit) << 1) & full, (rd | bit) >> 1
        w *= d
        nodes += w
    return w, nodes


def test_kth_bit_and_below():
    r = np.random.default_rng(0)
    xs = r.integers(1, 2**32, 500, dtype=np.uint64).astype(np.uint32)
    ks = np.array([r.integers(0, bin(int(x)).count("1")) for x in xs], np.int32)
    got = np.asarray(E._kth_bit(jnp.asarray(xs), jnp.asarray(ks)))
    want = [[i for i in range(32) if int(x) >> i & 1][k] for x, k in zip(xs, ks)]
    np.testing.assert_array_equal(got, want)
    u = r.integers(0, 2**32, 500, dtype=np.uint64).astype(np.uint32)
    d = r.integers(1, 129, 500).astype(np.int32)
    got = np.asarray(E._below(jnp.asarray(u), jnp.asarray(d)))
    np.testing.assert_array_equal(got, (u.astype(object) * d.astype(object)) >> 32)


@pytest.mark.parametrize("n,depth", [(6, 0), (12, 2), (31, 3), (33, 1), (40, 2), (64, 1)])
def test_walk_matches_python_reference(n, depth):
    masks64, _ = E.expand(n, depth)
    masks64 = masks64[:3]
    cfg = E.Config(n=n, depth=depth, strata=1, per_call=1, group=1)
    words = jnp.asarray(E._words(masks64, cfg.words))
    seed, lanes = 12345, jnp.arange(20, dtype=jnp.uint32)
    walk = jax.jit(jax.vmap(jax.vmap(lambda mk, ln: E.walk(mk, jnp.uint32(seed), ln, cfg), (None, 0)),
                            (0, None)))
    m, e, nodes, alive = (np.asarray(x) for x in walk(words, lanes))
    u = np.asarray(rng.hash_bits(jnp.uint32(seed), jnp.arange(n)[:, None], lanes[None, :]))  # [n, L]
    for s in range(len(masks64)):
        for lane in range(len(lanes)):
            w_ref, nodes_ref = ref_walk(n, [int(x) for x in masks64[s]], u[:, lane], depth)
            w = float(m[s, lane]) * 2.0 ** int(e[s, lane]) if alive[s, lane] else 0.0
            assert w == pytest.approx(float(w_ref), rel=1e-6)
            assert float(nodes[s, lane]) * 2.0 ** int(e[s, lane]) == pytest.approx(float(nodes_ref), rel=1e-6)


@pytest.mark.parametrize("n", [4, 6, 8, 10])
def test_expand_counts_levels_exactly(n):
    _, counts = E.expand(n, n)
    assert counts == ref_levels(n)


@pytest.mark.parametrize("n", range(1, 11))
def test_exact_when_every_walk_is_enumerated(n):
    r = E.estimate(n, 1000, depth=n)
    assert r.exhaustive and r.solutions == A000170[n] and r.solutions_se == 0
    assert r.nodes == sum(ref_levels(n))


@pytest.mark.parametrize("n,depth", [(8, 0), (9, 0), (10, 1), (11, 2), (12, None)])
def test_unbiased_exact_count_inside_99_percent_interval(n, depth):
    r = E.estimate(n, 1 << 18, depth=depth, seed=n)
    lo, hi = r.ci
    assert lo <= A000170[n] <= hi, (r.solutions, r.solutions_se)
    assert r.solutions_se / r.solutions < 0.02
    nodes = sum(ref_levels(n))
    nlo, nhi = r.nodes_ci
    assert nlo <= nodes <= nhi
    assert not r.exhaustive and r.probes >= 1 << 18


def test_many_seeds_average_to_the_exact_value():
    q = np.array([E.estimate(8, 20_000, depth=0, seed=s).solutions for s in range(20)])
    se = q.std(ddof=1) / np.sqrt(len(q))
    assert abs(q.mean() - 92) < 3.5 * se


def test_same_seed_same_result_and_seeds_differ():
    a, b, c = (E.estimate(10, 50_000, depth=1, seed=s) for s in (3, 3, 4))
    assert a.solutions == b.solutions and a.nodes == b.nodes
    assert a.solutions != c.solutions


def test_large_n_does_not_overflow():
    r = E.estimate(64, 20_000, depth=1)
    assert np.isfinite(r.solutions) and 1e55 < r.solutions < 1e70
    assert np.isfinite(r.nodes) and r.nodes > r.solutions


def test_choose_depth_and_errors():
    assert E.choose_depth(8, 10**9) == 8
    assert E.choose_depth(27, 10**7) == 3
    assert E.choose_depth(27, 10) == 0
    for kwargs in ({"n": 65}, {"n": 0}, {"n": 8, "probes": 0}, {"n": 8, "depth": 9}, {"n": 8, "level": 1.0}):
        with pytest.raises(QueensError):
            E.estimate(**kwargs)
    assert E.parse_sizes("8,12,20-22") == [8, 12, 20, 21, 22]
    with pytest.raises(QueensError):
        E.parse_sizes("x")


def test_estimate_command_writes_table_and_plot(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    E.add_command(parser.add_subparsers())
    args = parser.parse_args(["estimate", "-n", "8-9,33", "--probes", "2e4", "--quiet", "--depth", "1",
                              "--out", str(tmp_path)])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "n = 8: Q(n) ~" in out and "exact 92" in out and "n = 33" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [e["n"] for e in summary["estimates"]] == [8, 9, 33]
    assert (tmp_path / "estimates.csv").read_text().count("\n") == 4
    assert (tmp_path / "log_q_over_n.png").stat().st_size > 1000
