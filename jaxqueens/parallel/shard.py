"""One way to spread a batch over the local devices: one mesh, `shard_map` over its leading axis.

Every batched workload (chains, count prefixes, GA trials, estimator strata) calls
`over_devices` inside its jitted function; with one device it is a plain call. A host
array is placed the same way, split along its leading axis, by `shard_batch`. On the CPU
the devices are one host "device" per core (`devices`), faster than one; items are
independent, so there is no
communication between the shards.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from jax import lax
from jax.sharding import PartitionSpec

AXIS = "d"


def local_mesh(num_devices: int) -> jax.sharding.Mesh:
    """A 1-D mesh, axis `AXIS`, over this process's first devices.

    Args:
      num_devices: how many devices.

    Returns:
      The mesh.
    """
    return jax.make_mesh(
        (num_devices,),
        (AXIS,),
        devices=jax.local_devices()[:num_devices],
        axis_types=(jax.sharding.AxisType.Auto,),
    )


def batch_sharding(batch: int) -> jax.sharding.NamedSharding | None:
    """Where `shard_batch` places an array (a jitted function may produce outputs there).

    Args:
      batch: the array's leading size.

    Returns:
      A sharding split over all local devices, or None (the default device) when there is one
      device or the batch does not divide evenly.
    """
    devices = jax.local_devices()
    if len(devices) == 1 or batch % len(devices):
        return None
    return jax.sharding.NamedSharding(local_mesh(len(devices)), _spec(0))


def shard_batch(x):
    """Place an array with its leading (batch) axis split over all local devices.

    Args:
      x: the array; on the default device when its batch does not divide evenly.

    Returns:
      The placed array.
    """
    sharding = batch_sharding(np.shape(x)[0])
    return jax.device_put(x) if sharding is None else jax.device_put(x, sharding)


def _spec(axis: int | None) -> PartitionSpec:
    return PartitionSpec() if axis is None else PartitionSpec(*([None] * axis + [AXIS]))


def over_devices(
    fn: Callable[..., Any],
    *args,
    num_devices: int,
    sharded: tuple[bool, ...] | None = None,
    out_axes: Any = 0,
):
    """`fn(*args)` with the batch split over `num_devices` local devices (call it under jit).

    Args:
      fn: written for one shard: takes the args with their leading axis cut to this device's
        share and returns a pytree.
      *args: pytrees; those marked in `sharded` are split along their leading axis, which
        must divide by `num_devices`; the others are replicated.
      num_devices: local devices to split over.
      sharded: per arg, whether it is split (default: all).
      out_axes: axis of each output (a pytree prefix of ints) along which the shards are joined.

    Returns:
      `fn`'s outputs, the shards joined.
    """
    if num_devices == 1:
        return fn(*args)
    sharded = (True,) * len(args) if sharded is None else sharded
    in_specs = tuple(_spec(0 if s else None) for s in sharded)
    out_specs = jax.tree.map(_spec, out_axes)
    return jax.shard_map(
        fn, mesh=local_mesh(num_devices), in_specs=in_specs, out_specs=out_specs, check_vma=False
    )(*args)


def map_items(fn: Callable[[Any], Any], items, num_devices: int):
    """`fn` on every item, one item per `lax.map` iteration, the items split evenly over the
    devices: the CPU strategy.

    Args:
      fn: the function of one item.
      items: a pytree whose leading axis is a multiple of `num_devices`.
      num_devices: devices to split over.

    Returns:
      `fn`'s outputs stacked along the leading axis.
    """
    return over_devices(lambda x: lax.map(fn, x), items, num_devices=num_devices)


def pad_rows(x: np.ndarray, multiple: int, fill=0) -> np.ndarray:
    """An array with rows appended so that its length divides by `multiple`.

    Args:
      x: the array.
      multiple: the divisor.
      fill: the value of the rows appended.

    Returns:
      The padded array (`x` itself when nothing is needed).
    """
    extra = -len(x) % multiple
    if not extra:
        return x
    return np.concatenate([x, np.full((extra, *x.shape[1:]), fill, x.dtype)])
