"""core.inplace: scalar reads and writes agree with plain NumPy indexing, with and without jit."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
from absl.testing import parameterized

from jaxqueens.core import inplace


class InplaceTest(parameterized.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.parameters((0, 4), (3, 3), (7, 0))
    def test_against_numpy(self, i, j):
        a = np.arange(8, dtype=np.int32) * 3
        get = self.variant(inplace.get)
        put = self.variant(inplace.put)
        add = self.variant(inplace.add)
        swap = self.variant(inplace.swap)
        assert int(get(jnp.asarray(a), i)) == a[i]
        want = a.copy()
        want[i] = 99
        np.testing.assert_array_equal(np.asarray(put(jnp.asarray(a), i, 99)), want)
        want = a.copy()
        want[i] += 5
        np.testing.assert_array_equal(np.asarray(add(jnp.asarray(a), i, 5)), want)
        out, ai, aj = swap(jnp.asarray(a), i, j)
        want = a.copy()
        want[i], want[j] = a[j], a[i]
        np.testing.assert_array_equal(np.asarray(out), want)
        assert (int(ai), int(aj)) == (a[i], a[j])

    def test_one_trace_for_any_index(self):
        swap = jax.jit(chex.assert_max_traces(inplace.swap, n=1))
        a = jnp.arange(6, dtype=jnp.int32)
        for i, j in ((0, 1), (2, 5), (4, 4)):
            swap(a, jnp.int32(i), jnp.int32(j))
