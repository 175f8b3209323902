"""parallel.shard: splitting a batch over local devices gives what one device gives."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxqueens.parallel import shard

DEVICES = [1, jax.local_device_count()] if jax.local_device_count() > 1 else [1]


@pytest.mark.parametrize("num_devices", DEVICES)
def test_over_devices_equals_a_plain_call(num_devices):
    x = jnp.arange(24, dtype=jnp.int32).reshape(8, 3)
    scale = jnp.int32(3)
    fn = lambda a, s: (a * s, a.sum(axis=1))
    out = jax.jit(
        lambda a, s: shard.over_devices(fn, a, s, num_devices=num_devices, sharded=(True, False))
    )(x, scale)
    want = fn(x, scale)
    for got, ref in zip(out, want, strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(ref))


@pytest.mark.parametrize("num_devices", DEVICES)
def test_out_axes_join_along_another_axis(num_devices):
    x = jnp.arange(8, dtype=jnp.float32)
    fn = lambda a: (a, jnp.stack([a, -a]))
    a, b = jax.jit(lambda v: shard.over_devices(fn, v, num_devices=num_devices, out_axes=(0, 1)))(x)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(x))
    np.testing.assert_array_equal(np.asarray(b), np.stack([np.asarray(x), -np.asarray(x)]))


@pytest.mark.parametrize("num_devices", DEVICES)
def test_map_items_is_one_call_per_item(num_devices):
    items = jnp.arange(6, dtype=jnp.int32)
    out = jax.jit(lambda v: shard.map_items(lambda i: i * i + 1, v, num_devices))(items)
    np.testing.assert_array_equal(np.asarray(out), np.arange(6) ** 2 + 1)


def test_pad_rows():
    x = np.arange(10).reshape(5, 2)
    padded = shard.pad_rows(x, 4, fill=-1)
    assert padded.shape == (8, 2) and (padded[5:] == -1).all()
    np.testing.assert_array_equal(padded[:5], x)
    assert shard.pad_rows(x, 5) is x
