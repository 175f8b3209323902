"""parallel.lanes.lockstep: lanes with refill give every item its own result, in item order."""

from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp
import numpy as np
from absl.testing import parameterized

from jaxqueens.parallel.lanes import lockstep


class Walk(NamedTuple):
    x: jax.Array  # [] int32 current Collatz value
    steps: jax.Array  # [] int32 steps so far


def _collatz_steps(x: int) -> int:
    steps = 0
    while x != 1:
        x = x // 2 if x % 2 == 0 else 3 * x + 1
        steps += 1
    return steps


def _run(starts, lanes):
    def advance(s, active):
        move = (s.x != 1) & active
        nxt = jnp.where(s.x % 2 == 0, s.x // 2, 3 * s.x + 1)
        return Walk(jnp.where(move, nxt, s.x), s.steps + move.astype(jnp.int32))

    return lockstep(
        lambda k: Walk(starts[k], jnp.int32(0)),
        advance,
        lambda s: s.x == 1,
        lambda s: s.steps,
        starts.shape[0],
        lanes,
    )


class LockstepTest(parameterized.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    @parameterized.parameters(1, 3, 7, 20)
    def test_matches_a_plain_loop_for_any_lane_count(self, lanes):
        starts = np.array(
            [27, 1, 6, 97, 7, 2, 871, 5, 12, 19, 3, 40, 9, 11, 63, 8, 15, 100, 31, 4], np.int32
        )
        out = self.variant(lambda s: _run(s, lanes))(jnp.asarray(starts))
        chex.assert_shape(out, (len(starts),))
        np.testing.assert_array_equal(np.asarray(out), [_collatz_steps(int(x)) for x in starts])

    def test_compiles_once_per_shape(self):
        fn = jax.jit(chex.assert_max_traces(lambda s: _run(s, 4), n=1))
        for seed in range(3):
            fn(jnp.asarray(np.random.default_rng(seed).integers(1, 200, 12), jnp.int32))
