"""Where jaxqueens runs: host CPU devices and how batches are spread over devices.

XLA:CPU runs each computation on one core. ``shared/PERFORMANCE.md`` measured
1.7-2.2x from splitting a batch over one host "device" per core, so the package
asks JAX for ``os.cpu_count()`` CPU devices when it is imported -- only if no
JAX computation has run yet (the setting is fixed once the backend starts) and
only if ``JAXQUEENS_CPU_DEVICES`` does not say otherwise (set it to 1 to keep
JAX's default of one CPU device, or to any count).

This module is the one place that decides batching per backend: lockstep
``vmap`` with lane recycling on accelerators, one chain per ``lax.map``
iteration sharded over host devices on the CPU.
"""

from __future__ import annotations

import os

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

ENV_CPU_DEVICES = "JAXQUEENS_CPU_DEVICES"
BATCH_AXIS = "batch"


def configure_cpu_devices(count: int | None = None) -> bool:
    """Ask for one CPU device per core before the JAX backend starts.

    Args:
      count: devices wanted; default ``$JAXQUEENS_CPU_DEVICES`` or ``os.cpu_count()``.

    Returns:
      True if the setting was applied, False if the backend had already started.
    """
    if count is None:
        env = os.environ.get(ENV_CPU_DEVICES, "").strip()
        count = int(env) if env.isdigit() and int(env) > 0 else (os.cpu_count() or 1)
    try:
        jax.config.update("jax_num_cpu_devices", int(count))
    except RuntimeError:  # backend already initialised: keep what the user has
        return False
    return True


def is_accelerator() -> bool:
    """True on GPU/TPU backends (lockstep vmap); False on the CPU (per-chain map)."""
    return jax.default_backend() != "cpu"


def batch_mesh() -> Mesh:
    """A 1-D mesh over every local device, axis name ``BATCH_AXIS``."""
    return Mesh(np.asarray(jax.local_devices()), (BATCH_AXIS,))


def shard_batch(x):
    """Place ``x`` with its leading (batch) axis split over all local devices.

    Falls back to the default device when the batch does not divide evenly.
    """
    mesh = batch_mesh()
    if mesh.size == 1 or np.shape(x)[0] % mesh.size:
        return jax.device_put(x)
    return jax.device_put(x, NamedSharding(mesh, PartitionSpec(BATCH_AXIS)))
