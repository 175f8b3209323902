"""Where jaxqueens runs: host CPU devices and how batches are spread over devices.

XLA:CPU runs each computation on one core. ``shared/PERFORMANCE.md`` measured
1.7-2.2x from splitting a batch over one host "device" per core, so the package
asks JAX for ``os.cpu_count()`` CPU devices when it is imported -- only if no
JAX computation has run yet (the setting is fixed once the backend starts) and
only if ``JAXQUEENS_CPU_DEVICES`` does not say otherwise (set it to 1 to keep
JAX's default of one CPU device, or to any count).

At the same moment it appends ``CPU_XLA_FLAGS`` to ``XLA_FLAGS``. XLA:CPU runs
each op of a ``while_loop`` body as a separate thunk (~30-40 ns each) unless the
loop touches under 1 KiB; raising that threshold compiles a whole per-chain
search loop as one native function (4-5x fewer us per min-conflicts step,
measured), and region-based copy insertion drops the per-step copies of the
carried board and counts (~20% more). These flags only exist as ``XLA_FLAGS``
(jit's ``compiler_options`` rejects them), so they are process-wide; set
``JAXQUEENS_XLA_FLAGS=0`` to leave ``XLA_FLAGS`` alone.

This module and its siblings in :mod:`jaxqueens.parallel` are the one place that decides
batching per backend: lockstep ``vmap`` with lane recycling on accelerators, one item per
``lax.map`` iteration sharded over host devices on the CPU. :func:`sizes` is the one table of
batch sizes per backend that the drivers read.
"""

from __future__ import annotations

import dataclasses
import os

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from jaxqueens.errors import QueensError

ENV_CPU_DEVICES = "JAXQUEENS_CPU_DEVICES"
ENV_XLA_FLAGS = "JAXQUEENS_XLA_FLAGS"
BATCH_AXIS = "batch"

CPU_XLA_FLAGS = (
    "--xla_backend_extra_options=xla_cpu_small_while_loop_byte_threshold=1073741824",
    "--xla_cpu_copy_insertion_use_region_analysis=true",
)


def configure_cpu_devices(count: int | None = None) -> bool:
    """Ask for one CPU device per core, and fast CPU loops, before the JAX backend starts.

    Args:
      count: devices wanted; default ``$JAXQUEENS_CPU_DEVICES`` or ``os.cpu_count()``.

    Returns:
      True if the settings were applied, False if the backend had already started.
    """
    if count is None:
        env = os.environ.get(ENV_CPU_DEVICES, "").strip()
        count = int(env) if env.isdigit() and int(env) > 0 else (os.cpu_count() or 1)
    try:
        jax.config.update("jax_num_cpu_devices", int(count))
    except RuntimeError:  # backend already initialised: keep what the user has
        return False
    if os.environ.get(ENV_XLA_FLAGS, "1").strip() != "0":
        flags = os.environ.get("XLA_FLAGS", "")
        extra = [f for f in CPU_XLA_FLAGS if f.split("=")[0] not in flags]
        os.environ["XLA_FLAGS"] = " ".join([flags, *extra]).strip()
    return True


def is_accelerator() -> bool:
    """True on GPU/TPU backends (lockstep vmap); False on the CPU (per-chain map)."""
    return jax.default_backend() != "cpu"


@dataclasses.dataclass(frozen=True)
class Sizes:
    """Batch sizes for the default backend (the drivers read these; flags may override them)."""

    accelerator: bool  # lockstep lanes (True) or one item per lax.map iteration (False)
    chain_lanes: int  # lockstep lanes per device for chain solvers
    count_prefixes: int  # prefixes an exact count expands to, at least
    count_lanes: int  # lockstep lanes per device for the exact count
    estimator_probes: int  # default probes of Knuth's estimator
    estimator_block: int  # probes per lax.map iteration (0: all at once, the accelerator way)


CPU_SIZES = Sizes(accelerator=False, chain_lanes=256, count_prefixes=4096, count_lanes=4096,
                  estimator_probes=10**7, estimator_block=4096)
ACCELERATOR_SIZES = Sizes(accelerator=True, chain_lanes=256, count_prefixes=1 << 17,
                          count_lanes=4096, estimator_probes=10**8, estimator_block=0)


def sizes() -> Sizes:
    """The batch sizes of the default backend (CPU figures measured on a 2-core machine; the
    accelerator figures are not yet tuned on a GPU)."""
    return ACCELERATOR_SIZES if is_accelerator() else CPU_SIZES


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


def init_distributed(coordinator: str | None, num_processes: int | None, process_id: int | None) -> bool:
    """Join a multi-process run (``jax.distributed``) before any JAX computation.

    Arguments default to ``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES`` and
    ``JAX_PROCESS_ID``. On CPU, cross-process collectives use gloo. Returns True if joined.
    """
    coordinator = coordinator or os.environ.get("JAX_COORDINATOR_ADDRESS")
    if not coordinator:
        return False
    num_processes = num_processes or int(os.environ.get("JAX_NUM_PROCESSES", "0") or 0)
    process_id = process_id if process_id is not None else int(os.environ.get("JAX_PROCESS_ID", "-1"))
    if num_processes < 1 or not 0 <= process_id < num_processes:
        raise QueensError("--coordinator needs --num-processes P and --process-id I with 0 <= I < P")
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator, num_processes=num_processes, process_id=process_id)
    return True
