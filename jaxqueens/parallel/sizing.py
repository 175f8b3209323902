"""Batch sizes per backend: the CPU's table, and on an accelerator sizes chosen from the
compiled program against the device.

`sizes` is the one table of batch sizes the drivers read (`CPU_SIZES` on the CPU); on an
accelerator it names the strategy only (lockstep `vmap` with lane recycling) and the lanes, items
and probes per call of every workload come from `choose`: a builder lowers the workload's real
jitted function at a candidate batch, and the compiled executable's `memory_analysis()` is
compared with the device's budget (`memory_stats()["bytes_limit"]`, or a described device's
memory times `MEMORY_FRACTION` in the compile check). The batch is the device's parallelism or
the largest batch under the budget, whichever is smaller; memory is taken as affine in the
batch. Choices are cached per (workload, shapes, device).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Hashable
from typing import Any, NamedTuple

from jaxqueens import _lazy, _process
from jaxqueens.parallel import devices

jax = _lazy.load("jax")

MEMORY_FRACTION = 0.75
"""Share of a device's memory a process may use: JAX's default preallocation
(`XLA_PYTHON_CLIENT_MEM_FRACTION`), the budget of a described device."""
FILL = 0.95
"""Share of the budget a chosen batch may plan to use (what the estimate from two compiles may be
off by, and the allocator's fragmentation)."""
RESIDENT_THREADS_PER_SM = {
    (6, 0): 2048,
    (7, 0): 2048,
    (7, 5): 1024,
    (8, 0): 2048,
    (8, 6): 1536,
    (8, 7): 2048,
    (8, 9): 1536,
    (9, 0): 2048,
    (10, 0): 2048,
    (12, 0): 1536,
}
"""Maximum resident threads per SM by compute capability (CUDA C++ Programming Guide,
"Technical Specifications per Compute Capability")."""
DEFAULT_PARALLELISM = 1 << 16
"""Lanes to fill an accelerator whose SM count or compute capability JAX does not report."""


@dataclasses.dataclass(frozen=True)
class Target:
    """What a batch is sized against."""

    budget_bytes: int  #: device memory the executable may use (arguments + outputs + temporaries).
    parallelism: int  #: lanes that fill the device (SMs x resident threads per SM).
    name: str  #: the device, for messages and cache keys.


def device_target(device=None) -> Target:
    """The `Target` of a real accelerator: the allocator's `bytes_limit` and `core_count` x
    resident threads per SM.

    Args:
      device: the device (default: the first local device).

    Returns:
      `Target`.
    """
    device = device or jax.local_devices()[0]
    stats = device.memory_stats() or {}
    limit = stats.get("bytes_limit") or stats.get("bytes_reservable_limit")
    if not limit:
        raise RuntimeError(f"{device.device_kind} reports no memory limit (memory_stats)")
    sms = getattr(device, "core_count", None)
    cc = getattr(device, "compute_capability", None)
    threads = None
    if isinstance(cc, str) and "." in cc:
        major, minor = (int(x) for x in cc.split(".")[:2])
        threads = RESIDENT_THREADS_PER_SM.get((major, minor), 2048)
    parallelism = sms * threads if sms and threads else DEFAULT_PARALLELISM
    return Target(int(limit), int(parallelism), str(device.device_kind))


class Choice(NamedTuple):
    """What `choose` found."""

    batch: int  #: the batch size chosen (0: none fits, even the smallest)
    bytes: int  #: argument + output + temporary bytes of the executable at that batch
    fits: bool  #: within the budget
    compiled: Any  #: the compiled executable at `batch`
    compiles: int  #: executables compiled to decide


def footprint(compiled) -> int:
    """Argument + output + temporary bytes of a compiled executable (`memory_analysis`).

    Args:
      compiled: the compiled executable.

    Returns:
      The bytes.
    """
    m = compiled.memory_analysis()
    return int(m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes)


def _round(batch: float, multiple: int, floor: int) -> int:
    return max(floor, int(batch) // multiple * multiple)


def choose(
    build: Callable[[int], Any],
    target: Target,
    want: int,
    *,
    floor: int = 1,
    multiple: int = 1,
    key: Hashable | None = None,
) -> Choice:
    """The batch for `build` on `target`: `want` if it fits, else the largest that does.

    Args:
      build: `batch -> jax.stages.Lowered` (or an object with `.compile()`): the workload's
        jitted function lowered at that batch, its arguments placed on the target device.
      target: the device's budget and parallelism.
      want: the batch that fills the device (at most; callers cap it by the work there is).
      floor: the smallest batch tried.
      multiple: the granule of every batch tried.
      key: cache the choice under this key (workload, shapes, device): the next call compiles
        only the chosen batch.

    Returns:
      `Choice`; `fits` is False when even `floor` exceeds the budget (its bytes).
    """
    budget = target.budget_bytes
    cached = _process.batch_sizes.chosen.get((key, target)) if key is not None else None
    if cached is not None:
        compiled = build(cached[0]).compile()
        return Choice(cached[0], footprint(compiled), cached[1] <= budget, compiled, 1)
    tries = 0
    seen: dict[int, tuple[Any, int]] = {}

    def at(b: int) -> tuple[Any, int]:
        nonlocal tries
        if b not in seen:
            tries += 1
            c = build(b).compile()
            seen[b] = (c, footprint(c))
        return seen[b]

    batch = _round(max(want, floor), multiple, floor)
    compiled, nbytes = at(batch)
    if nbytes > budget and batch > floor:
        # bytes = base + per * batch, through this compile and one at half the batch
        half = _round(batch // 2, multiple, floor)
        m1, m0 = nbytes, at(half)[1]
        per = (m1 - m0) / (batch - half) if batch > half else m1 / batch
        base = m1 - per * batch
        guess = (FILL * budget - base) / per if per > 0 else floor
        batch = _round(min(guess, batch - 1), multiple, floor)
        compiled, nbytes = at(batch)
        while nbytes > budget and batch > floor:
            batch = _round(batch * 0.8, multiple, floor)
            compiled, nbytes = at(batch)
    fits = nbytes <= budget
    if key is not None:
        _process.batch_sizes.chosen[key, target] = (batch, nbytes)
    return Choice(batch, nbytes, fits, compiled, tries)


def abstract(tree, sharding=None):
    """The arguments of a builder that compiles for a described device (`placement` in
    scripts/gpumodel/model.py) without making the arrays.

    Args:
      tree: a PyTree of arrays (or `jax.ShapeDtypeStruct`).
      sharding: where to place them (None: unplaced).

    Returns:
      `tree` with every leaf a `jax.ShapeDtypeStruct` placed by `sharding`.
    """

    def one(x):
        x = x if hasattr(x, "dtype") and hasattr(x, "shape") else jax.numpy.asarray(x)
        return jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=sharding)

    return jax.tree.map(one, tree)


def items_for(lanes: int, per_lane: int, work: int | None, multiple: int = 1) -> int:
    """Items per call for `lanes` lockstep lanes: `per_lane` each (a lane that finishes takes the
    next), at most the `work` there is, a multiple of `multiple`.

    Args:
      lanes: lockstep lanes.
      per_lane: items per lane.
      work: items there are (None: unbounded).
      multiple: the items' multiple (the devices a call spans).

    Returns:
      The items per call.
    """
    items = lanes * per_lane if work is None else min(work, lanes * per_lane)
    return max(multiple, math.ceil(items / multiple) * multiple)


@dataclasses.dataclass(frozen=True)
class Sizes:
    """Batch sizes for the default backend (the drivers read these; flags may override them)."""

    accelerator: bool  #: lockstep lanes (True) or one item per lax.map iteration (False)
    chain_lanes: int  #: lockstep lanes per device for chain solvers
    count_prefixes: int  #: prefixes an exact count expands to, at least
    count_lanes: int  #: lockstep lanes per device for the exact count
    estimator_probes: int  #: default probes of Knuth's estimator
    estimator_block: int  #: probes per lax.map iteration (0: all at once, the accelerator way)


CPU_SIZES = Sizes(
    accelerator=False,
    chain_lanes=256,
    count_prefixes=4096,
    count_lanes=4096,
    estimator_probes=10**7,
    estimator_block=4096,
)
ACCELERATOR_DEFAULTS = Sizes(
    accelerator=True,
    chain_lanes=0,
    count_prefixes=0,
    count_lanes=0,
    estimator_probes=10**8,
    estimator_block=0,
)
"""On an accelerator the lanes and items per call are not taken from a table: each driver sizes
them from its compiled program against the device (`choose`); the zeros
here say so. What stays is the strategy (lockstep lanes, all probes at once) and the default
length of an estimate."""


def sizes() -> Sizes:
    """The batch sizes of the default backend: the CPU's table (`CPU_SIZES`); on an accelerator the
    strategy only (`ACCELERATOR_DEFAULTS`: the sizes come from `choose`).

    Returns:
      `Sizes`.
    """
    return ACCELERATOR_DEFAULTS if devices.is_accelerator() else CPU_SIZES
