"""The exact count's kernels batched per backend: the jitted functions the count driver calls.

Every function here runs the one-task kernels of `jaxqueens.solvers.count` over a batch of
tasks, with the strategy of the backend chosen in `jaxqueens.parallel.items` (one task per
`lax.map` iteration over host devices on a CPU, lockstep lanes with refill on an
accelerator):

- `count_items`: constellation searches, resumable, at most a budget of edges per device
  and call (the route of `jaxqueens.count_solutions`);
- `count_chunk` and `enumerate_chunk`: the mirror-prefix kernel counting and listing
  every solution (the route of `jaxqueens.enumerate_solutions`, n <= 14);
- `probe_chunk`: Knuth probes of the tasks' trees (`count --plan`).

`items_builder` lowers `count_items` as an accelerator runs it (`make gpu-check`
compiles it for described GPUs) and `accelerator_lanes` sizes its lanes against a device.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp

from jaxqueens.core import constellations
from jaxqueens.parallel import items, sizing
from jaxqueens.parallel.lanes import where_lanes
from jaxqueens.solvers import count as solver
from jaxqueens.solvers import count_prefix as prefix_kernel
from jaxqueens.solvers import count_probe
from jaxqueens.solvers.count_prefix import KernelConfig

TASKS_PER_LANE = 16  # accelerator: tasks per lockstep lane and call (a lane that finishes refills)


def _advance_lanes(lanes: prefix_kernel.Lane, active, config: KernelConfig) -> prefix_kernel.Lane:
    """One lockstep iteration: every live lane (`d >= 0`) takes one tree edge."""
    del active  # a lane without an item is finished (d < 0) and stays as it is
    moved = jax.vmap(lambda s: prefix_kernel.step_prefix(s, config))(lanes)
    return where_lanes(lanes.d >= 0, moved, lanes)


def _count_words(lanes: prefix_kernel.Lane):
    return jnp.stack([lanes.lo, lanes.hi], 1)  # [B, 2] uint32


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def count_chunk(prefixes, config: KernelConfig, num_devices: int, sizes: sizing.Sizes):
    """Count words per prefix, batched the backend's way (`sizes` is `sizing.sizes`).

    Args:
      prefixes: uint32 `[P, 4]` (cols, ld, rd, av), P a multiple of `num_devices` (pad with
        zero rows: `av = 0` is an empty search).
    Returns:
      uint32 `[P, 2]`: solutions below each prefix, low and high word.
    """
    return items.search_each(
        lambda r: prefix_kernel.count_prefix(r, config),
        lambda r: prefix_kernel.init_prefix(r, config),
        functools.partial(_advance_lanes, config=config),
        lambda s: s.d < 0,
        _count_words,
        prefixes,
        num_devices,
        sizes.count_lanes,
        accelerator=sizes.accelerator,
    )


@functools.partial(jax.jit, static_argnums=(1, 2, 3, 4))
def enumerate_chunk(
    prefixes, config: KernelConfig, cap: int, num_devices: int, sizes: sizing.Sizes
):
    """Every prefix's solutions (at most `cap` each; `count_prefix.enumerate_prefix` of
    `jaxqueens.solvers`), batched the way `sizes` names (mapped, or vmapped on an accelerator).

    Args:
      prefixes: uint32 `[P, 4]` mirror prefixes.
      config: the prefix kernel's static shape.
      cap: most solutions listed per prefix.
      num_devices: devices the call spans.
      sizes: the backend's batch sizes.

    Returns:
      `(counts, lists)`: uint32 `[P, 2]` and uint32 `[P, cap, W]`.
    """
    return items.each(
        lambda p: prefix_kernel.enumerate_prefix(p, config, cap),
        prefixes,
        num_devices,
        sizes.accelerator,
    )


def _advance_searches(lanes, active, config: solver.Config):
    """One lockstep iteration of constellation searches: every live lane takes one tree edge."""
    del active  # a lane without an item is finished (d < 0) and stays as it is
    states, tables = lanes
    moved = jax.vmap(lambda s, t: solver.edge(s, t, config))(states, tables)
    return where_lanes(states.d >= 0, moved, states), tables


@functools.partial(jax.jit, static_argnums=(2, 3, 4))
def count_items(batch, budget, config: solver.Config, num_devices: int, sizes: sizing.Sizes):
    """Constellation searches (`jaxqueens.solvers.count.search`), resumable, batched the
    backend's way: on the CPU one after the other under one budget of `budget` edges per
    device; on an accelerator lockstep lanes, each advanced at most `budget` times.

    Args:
      batch: uint32 `[B, config.width]` search items (a stack row per level, then the level
        table), B a multiple of `num_devices` (pad with finished items: `d = -1`).
      budget: [] int32 (a host scalar: any value, no recompilation).
    Returns:
      states: uint32 `[B, config.state_width]`, each search as it stands (`d = -1`:
        finished) with the completions it found in this call (word 1);
      work: int32 `[num_devices]`: edges taken (CPU) or lockstep iterations (accelerator).
    """
    params = solver.Params(jnp.asarray(budget, jnp.int32))

    def reached(item):
        return solver.pack(solver.unpack(item, config)[0])

    return items.search_budget(
        lambda x: solver.search(x, params, config),
        lambda item: solver.unpack(item, config),
        functools.partial(_advance_searches, config=config),
        lambda lanes: lanes[0].d < 0,
        lambda lanes: jax.vmap(solver.pack)(lanes[0]),
        reached,
        batch,
        num_devices,
        sizes.count_lanes,
        params.budget,
        accelerator=sizes.accelerator,
    )


@functools.partial(jax.jit, static_argnums=(4,))
def probe_chunk(prefixes, owner, tables, seed, config: solver.Config):
    """Knuth probes (`jaxqueens.solvers.count_probe.probe`) of tasks, one probe per task; probe i is
    lane i of the hash stream `seed`.

    Args:
      prefixes: uint32 `[P, 4]` the tasks' prefixes.
      owner: int32 `[P]` each task's row of `tables`.
      tables: uint32 `[K, config.levels * TABLE_WORDS]` level tables.
      seed: uint32 seed of the hash stream.
      config: the kernel's static shape.

    Returns:
      `jaxqueens.solvers.count_probe.Probe` of float32 `[P]` arrays.
    """
    lanes = jnp.arange(prefixes.shape[0], dtype=jnp.uint32)
    return jax.vmap(
        lambda p, k, lane: count_probe.probe(solver.Problem(p, tables[k]), seed, lane, config)
    )(prefixes, owner, lanes)


def items_builder(n: int, depth: int, num_devices: int = 1, place=None):
    """The builder `jaxqueens.parallel.sizing.choose` sizes (and `make gpu-check` compiles for
    described GPUs): `count_items` as an accelerator runs it, `TASKS_PER_LANE` items per lane and
    call.

    Args:
      n: board size.
      depth: host-placed columns.
      num_devices: devices a call spans.
      place: places the example arguments on the target devices (default: as they are).

    Returns:
      `lanes -> jax.stages.Lowered`, for `lanes` lockstep lanes per device.
    """
    place = place or (lambda tree: tree)
    config = solver.Config(n, constellations.table_levels(n, depth))

    def build(lanes: int):
        sizes = dataclasses.replace(sizing.ACCELERATOR_DEFAULTS, count_lanes=lanes)
        rows = TASKS_PER_LANE * lanes * num_devices
        batch = place(jax.ShapeDtypeStruct((rows, config.width), jnp.uint32))
        budget = place(jax.ShapeDtypeStruct((), jnp.int32))
        return count_items.trace(batch, budget, config, num_devices, sizes).lower()

    return build


def accelerator_lanes(n: int, depth: int, num_devices: int, target=None) -> sizing.Choice:
    """Lockstep lanes per device for counting n on an accelerator, sized from the compiled
    `count_items` against the device.

    Args:
      n: board size.
      depth: host-placed columns.
      num_devices: devices a call spans.
      target: the device's budget and parallelism (default: the first local device's).

    Returns:
      `jaxqueens.parallel.sizing.Choice`.
    """
    target = target or sizing.device_target()
    return sizing.choose(
        items_builder(n, depth, num_devices),
        target,
        target.parallelism,
        key=("count", n, depth, num_devices),
    )
