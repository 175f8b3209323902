"""parallel.items: the CPU and the accelerator strategies give identical results (both run here)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxqueens.parallel import devices, items

D = jax.local_device_count()


def _search_parts():
    one_step = lambda x: jnp.where(x % 2 == 0, x // 2, 3 * x + 1)

    def one(x):
        return jax.lax.while_loop(
            lambda c: c[0] != 1, lambda c: (one_step(c[0]), c[1] + 1), (x, jnp.int32(0))
        )[1]

    def advance(s, active):
        move = (s[0] != 1) & active
        return jnp.where(move, one_step(s[0]), s[0]), s[1] + move.astype(jnp.int32)

    return one, (lambda x: (x, jnp.int32(0))), advance, (lambda s: s[0] == 1), (lambda s: s[1])


@pytest.mark.parametrize("accelerator", [False, True])
def test_search_same_on_both_strategies(monkeypatch, accelerator):
    monkeypatch.setattr(devices, "is_accelerator", lambda: accelerator)
    xs = jnp.asarray(np.arange(1, 1 + 8 * D), jnp.int32)
    out = jax.jit(lambda v: items.search_each(*_search_parts(), v, D, lanes=3))(xs)
    want = []
    for x in range(1, 1 + 8 * D):
        steps = 0
        while x != 1:
            x, steps = (x // 2 if x % 2 == 0 else 3 * x + 1), steps + 1
        want.append(steps)
    np.testing.assert_array_equal(np.asarray(out), want)


@pytest.mark.parametrize("accelerator", [False, True])
def test_each_same_on_both_strategies(monkeypatch, accelerator):
    monkeypatch.setattr(devices, "is_accelerator", lambda: accelerator)
    xs = jnp.arange(4 * D, dtype=jnp.int32)
    out = jax.jit(lambda v: items.each(lambda x: x * 3 - 1, v, D))(xs)
    np.testing.assert_array_equal(np.asarray(out), np.arange(4 * D) * 3 - 1)


@pytest.mark.parametrize("block", [0, 4, 6, 7, 24, 4096])
def test_blocks_equal_one_vmap_for_any_block(block):
    """Lockstep blocks under lax.map (gcd(items, block) each) give what one vmap gives."""
    xs = (jnp.arange(24, dtype=jnp.int32), jnp.arange(48, dtype=jnp.int32).reshape(24, 2))
    one = lambda x: {"a": x[0] * 3 - 1, "b": x[1] * x[0]}
    out = jax.jit(lambda v: items.blocks(one, v, block))(xs)
    want = jax.vmap(one)(xs)
    for k in ("a", "b"):
        np.testing.assert_array_equal(np.asarray(out[k]), np.asarray(want[k]))
    assert out["b"].shape == (24, 2)
