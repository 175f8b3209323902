"""Knuth's estimator (`jaxqueens.drivers.estimate`): exactness when enumerated, unbiasedness,
seeds, large n, the automatic depth, the intervals' coverage and the argument checks (the kernel
calls: one trace per shape, the same sums on any number of devices or blocks, a call's probes the
kernel's walks of its stream; the settings and the result: test_estimate_result.py)."""

import dataclasses
import math
import time

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxqueens.core import prefixes
from jaxqueens.core.oeis import A000170
from jaxqueens.drivers import estimate as E
from jaxqueens.drivers import estimate_result as ER
from jaxqueens.errors import QueensError
from jaxqueens.parallel import memory
from jaxqueens.solvers import estimate as kernel


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


@pytest.mark.parametrize("n", [4, 6, 8, 10])
def test_expand_counts_levels_exactly(n):
    _, counts = prefixes.expand(n, n)
    assert counts == ref_levels(n)


@pytest.mark.parametrize("n", range(1, 11))
def test_exact_when_every_walk_is_enumerated(n):
    r = E.estimate(n, 1024, depth=n)
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


def test_default_depth_and_errors():
    assert E.default_depth(8, 10**9) == 8
    assert E.default_depth(27, 10**7) == 3
    assert E.default_depth(27, 10) == 0
    for kwargs in (
        {"n": 65},
        {"n": 0},
        {"n": 8, "probes": 0},
        {"n": 8, "depth": 9},
        {"n": 8, "level": 1.0},
    ):
        with pytest.raises(QueensError):
            E.estimate(**kwargs)


def test_estimate_equals_the_kernels_probes_on_the_same_seed(monkeypatch):
    """estimate(n, probes, depth, seed) is the mean of the kernel's walks of its calls' streams
    (4 calls of 128 probes per stratum, lanes=1024 over 8 strata: 8 copies of each, 16 probes a
    copy; row ``copy * 8 + stratum`` walks lanes ``row * 16 + j``)."""
    monkeypatch.setattr(jax, "local_device_count", lambda: 1)
    n, depth, seed = 8, 1, 11
    r = E.estimate(n, 4096, depth=depth, seed=seed, lanes=1024)
    assert r.strata == 8 and r.probes == 4096
    plan, copies, _, _, calls = E.call_plan(n, depth, 8, 4096, 1024, 1)
    assert (copies, plan.per_call, calls) == (8, 16, 4)
    masks64, _ = prefixes.expand(n, depth)
    config = kernel.Config(n=n, depth=depth)
    params = kernel.default_params(config)
    row = jnp.arange(8, dtype=jnp.uint32)[:, None] + 8 * jnp.arange(8, dtype=jnp.uint32)
    lanes = (row[:, :, None] * 16 + jnp.arange(16, dtype=jnp.uint32)).reshape(8, 128)
    words = jnp.asarray(kernel.words_of(masks64, 1))
    probe = jax.jit(
        jax.vmap(
            jax.vmap(
                lambda sd, mk, ln: kernel.walk(sd, ln, config, params, kernel.Problem(mk)),
                (None, None, 0),
            ),
            (None, 0, 0),
        )
    )
    calls = [jax.device_get(probe(E.call_seed(seed, c), words, lanes)) for c in range(4)]
    w = np.concatenate(
        [np.where(x.solved, np.ldexp(x.m.astype(np.float64), x.e), 0.0) for x in calls], 1
    )
    v = np.concatenate([np.ldexp(x.nodes.astype(np.float64), x.e) for x in calls], 1)
    assert r.solutions == pytest.approx(w.mean(1).sum(), rel=1e-6)
    assert r.nodes == pytest.approx(sum(r.top_nodes) + v.mean(1).sum(), rel=1e-6)
    assert r.hit_rate == np.mean([x.solved for x in calls])
    se = np.sqrt((w.var(1, ddof=1) / w.shape[1]).sum())
    assert r.solutions_se == pytest.approx(se, rel=1e-4)


@pytest.mark.parametrize("n,depth", [(14, 14), (18, 18), (20, 12)])
def test_defect_7_depth_checked_against_memory_before_enumerating(n, depth, monkeypatch):
    """`--depth` enumerates every partial board of that many queens: refused when it cannot fit."""
    monkeypatch.setattr(memory, "available_memory", lambda: 4 * 2**20)
    t0 = time.perf_counter()
    with pytest.raises(QueensError, match=rf"--depth {depth} .*needs about .* of memory") as err:
        E.estimate(n, 1024, depth=depth)
    assert time.perf_counter() - t0 < 5 and "\n" not in str(err.value)
    monkeypatch.setattr(memory, "available_memory", lambda: 2**40)
    assert E.estimate(8, 1024, depth=8).solutions == A000170[8]  # what fits still runs


def test_defect_28_16_estimate_argument_types():
    with pytest.raises(QueensError, match=r"^seed must be an integer"):
        E.estimate(8, 1024, seed=1.5)
    with pytest.raises(QueensError, match=r"^seed must be at most"):
        E.estimate(8, 1024, seed=2**40)


def _coverage(n, depth, per_stratum, runs, level, seed=1, nodes=None):
    """How often ``runs`` runs of ``per_stratum`` probes on each stratum of ``depth`` cover the
    exact Q(n) and node count ``nodes`` at ``level``: ``[Q(n)'s rate, the nodes' rate]`` (NaN
    without ``nodes``). The runs are copies of the strata in one call (row
    ``run * strata + stratum``), added up per run."""
    masks64, top = prefixes.expand(n, depth)
    strata = len(masks64)
    masks = jnp.asarray(np.tile(kernel.words_of(masks64, 1), (runs, 1, 1)))
    group = min(per_stratum, E.GROUP)
    plan = E.Plan(kernel.Config(n=n, depth=depth), per_stratum, group, block=4096)
    ids = jnp.arange(runs * strata, dtype=jnp.int32)
    out = E.run_call(masks, ids, E.call_seed(seed, 0), plan, 1)
    sums = E.stratum_sums(out, runs * strata, 1, runs * strata).reshape(len(E.SUMS), runs, strata)
    one = dict(zip(E.SUMS, sums, strict=True))
    covered = []
    for r in range(runs):
        q, q_se, q_skew = ER.stratified(one["w"][r], one["w2"][r], one["w3"][r], per_stratum)
        v, v_se, v_skew = ER.stratified(
            one["nodes"][r], one["nodes2"][r], one["nodes3"][r], per_stratum
        )
        r_ = ER.Estimate(
            n, per_stratum * strata, depth, strata, q, q_se, sum(top) + v, v_se, level, 0.0, 0.0,
            0.0, A000170[n], top, solutions_skew=q_skew, nodes_skew=v_skew,
        )  # fmt: skip
        (lo, hi), (nlo, nhi) = r_.ci, r_.nodes_ci
        covered.append((lo <= A000170[n] <= hi, math.nan if nodes is None else nlo <= nodes <= nhi))
    return np.mean(covered, axis=0)


def test_estimate_interval_covers_at_its_level_at_256_probes():
    """Knuth's weights are heavy-tailed (most walks die, a few carry large products): the normal
    interval under-covered at small probe counts. 400 runs of 256 plain probes at n = 12, each run
    one stratum-row of a single call, against the exact counts: Q(n)'s interval holds its level
    within two binomial standard errors of the 400 runs (the normal one covered ~88%), the node
    count's within three (it is less skewed: ~94% either way)."""
    runs, level = 400, 0.95
    nodes = sum(prefixes.expand(12, 12)[1])
    rate, se = _coverage(12, 0, 256, runs, level, nodes=nodes), np.sqrt(level * (1 - level) / runs)
    assert rate[0] >= level - 2 * se and rate[1] >= level - 3 * se, rate


@pytest.mark.parametrize(
    "n,depth,per_stratum",
    [(27, 0, ER.ESTIMATE_MIN_PROBES), (16, 2, ER.ESTIMATE_MIN_PER_STRATUM)],
)
def test_estimate_interval_covers_at_its_level_at_the_probe_floor(n, depth, per_stratum):
    """At the fewest probes a run takes (plain at the largest exactly known size, where the hit
    rate is lowest; and per stratum below two levels), Q(n)'s interval covers the exact count at
    0.99 within two binomial standard errors of 400 runs (it does not with half the floor)."""
    runs, level = 400, 0.99
    rate = _coverage(n, depth, per_stratum, runs, level, seed=2)
    assert rate[0] >= level - 2 * np.sqrt(level * (1 - level) / runs), rate


def test_estimate_with_fewer_probes_than_its_interval_needs_is_refused():
    """Below the floor the skewness-corrected interval under-covered (plain probes at n = 27, or
    two probes a stratum): fewer probes in all, or per stratum of an explicit --depth, are refused
    in one line naming the floor and the fix, before any walk; the floor itself runs."""
    floor, per = ER.ESTIMATE_MIN_PROBES, ER.ESTIMATE_MIN_PER_STRATUM
    with pytest.raises(QueensError, match=rf"--probes must be at least {floor} .*holds its level"):
        E.estimate(12, floor - 1, depth=0)
    strata = len(prefixes.expand(12, 3)[0])
    with pytest.raises(QueensError, match=rf"--depth 3 .* at least {per}: give --probes") as err:
        E.estimate(12, per * strata - 1, depth=3)
    assert f"--probes {per * strata} or more" in str(err.value) and "\n" not in str(err.value)
    assert E.estimate(12, per * strata, depth=3).probes >= per * strata
    assert E.default_depth(12, floor) < 3  # the automatic depth leaves enough per stratum


@pytest.mark.parametrize("n,depth,lanes", [(12, 0, None), (7, 1, 2048)])
def test_estimate_is_the_same_bit_for_bit_on_any_number_of_devices(n, depth, lanes, monkeypatch):
    """The probes a run walks (copies of few strata, probes per call, groups) depended on the local
    device count, so processes or machines with other device counts walked other probes: the
    layout now depends on the settings alone, the devices only split it."""
    if jax.local_device_count() < 2:
        pytest.skip("needs two host devices")
    kwargs = {"probes": 100_000, "depth": depth, "seed": 3, "lanes": lanes}
    two = E.estimate(n, **kwargs)
    monkeypatch.setattr(E.backend, "local_device_count", lambda: 1)
    one = E.estimate(n, **kwargs)
    assert dataclasses.astuple(one)[:10] == dataclasses.astuple(two)[:10]
    assert (one.solutions_skew, one.nodes_skew) == (two.solutions_skew, two.nodes_skew)


def test_estimate_processes_that_lay_out_other_calls_stop_with_one_line(monkeypatch):
    """Processes whose devices size other calls (an accelerator's) would walk other probes and
    mismatch in their gathers: every process refuses the run alike, before any call."""
    from jaxqueens.parallel import gather

    monkeypatch.setattr(gather, "process_count", lambda: 2)
    monkeypatch.setattr(gather, "allgather", lambda x: np.stack([x, np.asarray(x) * 2]))
    with pytest.raises(QueensError, match=r"process 1 would run .* devices differ") as err:
        E.estimate(8, 4096, depth=1, seed=0, lanes=1024)
    assert "\n" not in str(err.value)


def test_defect_the_accelerator_call_was_lowered_with_a_32_bit_seed():
    """call_builder (what an accelerator sizes and ``make gpu-check`` compiles) gave run_call a
    uint32 [] seed after the streams took 64-bit seeds, which the probe kernel refuses; it lowers
    with the call's uint32 [2] seed, the one the CPU path passes."""
    lowered = E.call_builder(8, 1, 8, 1024)(256)
    assert "tensor<2xui32>" in lowered.as_text()


# --- the kernel calls -----------------------------------------------------------------------------


def _strata(n, depth, per_call, group, block=0):
    masks64, _ = prefixes.expand(n, depth)
    words = kernel.words_of(masks64, 1)
    words = np.concatenate([words, np.full((len(words) % 2, 3, 1), 0xFFFFFFFF, np.uint32)])
    plan = E.Plan(kernel.Config(n=n, depth=depth), per_call=per_call, group=group, block=block)
    return jnp.asarray(words), jnp.arange(len(words), dtype=jnp.int32), plan


def test_run_call_traces_once_per_shape():
    masks, ids, plan = _strata(6, 1, 8, 4)
    call = jax.jit(chex.assert_max_traces(E.run_call.__wrapped__, n=1), static_argnums=(3, 4))
    for seed in range(3):
        call(masks, ids, E.call_seed(seed, 0), plan, 1)


def test_run_call_same_sums_on_one_device_or_two():
    if jax.local_device_count() < 2:
        pytest.skip("needs two host devices")
    masks, ids, plan = _strata(6, 1, 8, 4)  # StrataBlockTest's shapes: its eager primitives
    one = E.run_call(masks, ids, E.call_seed(3, 0), plan, 1)
    two = E.run_call(masks, ids, E.call_seed(3, 0), plan, 2)
    chex.assert_trees_all_equal(one, two)
    chex.assert_trees_all_equal(one, E.strata_block(masks, ids, E.call_seed(3, 0), plan))


class StrataBlockTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_strata_block_lockstep_equals_blocks(self):
        masks, ids, plan = _strata(6, 1, per_call=8, group=4)
        blocked = dataclasses.replace(plan, block=16)
        whole = self.variant(lambda mk, i, s: E.strata_block(mk, i, s, plan))(
            masks, ids, E.call_seed(5, 0)
        )
        parts = self.variant(lambda mk, i, s: E.strata_block(mk, i, s, blocked))(
            masks, ids, E.call_seed(5, 0)
        )
        chex.assert_trees_all_equal(whole, parts)
        chex.assert_shape(list(whole), (len(ids), 8 // 4))
        assert int(np.asarray(whole.hits).sum()) > 0


def test_a_call_is_the_kernels_probes_of_its_stream():
    """A call's sums are the kernel's walks: lane stratum * per_call + j of call_seed(seed, c)."""
    masks, ids, plan = _strata(9, 2, per_call=16, group=8, block=32)
    seed = E.call_seed(7, 3)
    params = kernel.default_params(plan.probe)
    lanes = ids[:, None].astype(jnp.uint32) * 16 + jnp.arange(16, dtype=jnp.uint32)
    walks = jax.jit(
        jax.vmap(
            jax.vmap(
                lambda mk, ln: kernel.walk(seed, ln, plan.probe, params, kernel.Problem(mk)),
                (None, 0),
            )
        )
    )(masks, lanes)
    got = E.run_call(masks, ids, seed, plan, 1)
    chex.assert_trees_all_equal(got, kernel.group_sums(walks, 8))
