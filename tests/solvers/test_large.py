"""The large-n kernels (jaxqueens.solvers.large): QS4 initialisation and swap repair, against
plain NumPy counts."""

import chex
import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import checker
from jaxqueens.solvers import large


def test_qs4_init_is_a_permutation_with_exact_counts():
    n = 5000
    config = large.Config(n=n)
    s = large.new_state(jnp.uint32(3), n)
    for start in range(0, n, 1300):  # in chunks, as the driver calls it
        s = large.init_columns(s, config, start, min(n, start + 1300))
    rows = np.asarray(s.rows)
    assert sorted(rows) == list(range(n))
    c = np.arange(n)
    np.testing.assert_array_equal(s.diag, np.bincount(rows + c, minlength=2 * n - 1))
    np.testing.assert_array_equal(s.anti, np.bincount(rows - c + n - 1, minlength=2 * n - 1))
    # QS4 leaves few conflicts: far below a random permutation's ~n/2 conflicted queens.
    assert int(np.asarray(large.conflicted(s)).sum()) < 100


def test_repair_keeps_counts_exact_and_never_worsens():
    n = 3000
    config = large.Config(n=n, tries=2)  # a poor init leaves work for the repair
    s = large.new_state(jnp.uint32(9), n)
    s = large.init_columns(s, config, 0, n)
    pairs = int(large.pairs_of(s, config))
    s, stats = large.repair_round(s, config, 500, False)
    rows = np.asarray(s.rows)
    assert sorted(rows) == list(range(n))
    assert int(stats.pairs) == int(large.pairs_of(s, config)) == checker.attacking_pairs(rows)
    assert int(stats.pairs) <= pairs
    trace = np.asarray(stats.trace)
    trace = trace[trace >= 0]
    assert np.all(np.diff(trace) <= 0)  # only improving swaps without sideways


def _np_pairs(rows) -> int:
    n = len(rows)
    c = np.arange(n)
    d = np.bincount(rows + c, minlength=2 * n - 1)
    a = np.bincount(rows - c + n - 1, minlength=2 * n - 1)
    return int((d * (d - 1) // 2).sum() + (a * (a - 1) // 2).sum())


class KernelVariantsTest(chex.TestCase):
    """init_columns, repair_round and the board figures with and without jit."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_init_and_repair(self):
        n = 200
        config = large.Config(n=n, tries=3, trace_size=64)
        init = self.variant(large.init_columns.__wrapped__, static_argnums=(1,))
        s = init(large.new_state(jnp.uint32(5), n), config, 0, n)
        chex.assert_shape(s.rows, (n,))
        chex.assert_shape([s.diag, s.anti], (2 * n - 1,))
        rows = np.asarray(s.rows)
        assert sorted(rows) == list(range(n))
        mask = self.variant(large.conflicted)(s)
        chex.assert_shape(mask, (n,))
        pairs = _np_pairs(rows)
        repair = self.variant(large.repair_round.__wrapped__, static_argnums=(1,))
        s, stats = repair(s, config, 300, True)
        chex.assert_shape(stats.trace, (64,))
        rows = np.asarray(s.rows)
        assert int(stats.pairs) == _np_pairs(rows) == checker.attacking_pairs(rows) <= pairs


def test_kernels_trace_once():
    """New seeds and column ranges reuse the compiled kernels (no retracing)."""
    chex.clear_trace_counter()
    n = 300
    config = large.Config(n=n)
    init = jax.jit(chex.assert_max_traces(large.init_columns.__wrapped__, n=1), static_argnums=(1,))
    repair = jax.jit(
        chex.assert_max_traces(large.repair_round.__wrapped__, n=1), static_argnums=(1,)
    )
    for seed in range(3):
        s = large.new_state(jnp.uint32(seed), n)
        s = init(s, config, 0, 100)
        s = init(s, config, 100, n)
        s, _ = repair(s, config, 50 + seed, seed % 2 == 1)
