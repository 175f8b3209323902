"""The exact search of constrained instances batched per backend: the jitted function the
`complete` driver calls.

`search_chunk` runs the one-item kernel of `jaxqueens.solvers.complete` over a batch
of work items (sub-trees of instances) with the strategy of the backend
(`jaxqueens.parallel.items.search_each`: one item per `lax.map` iteration on the CPU,
lockstep lanes with refill on an accelerator). `chunk_builder` lowers it as an accelerator
runs it (`make gpu-check` compiles it for described GPUs) and `accelerator_lanes` sizes
its lanes against a device.
"""

from __future__ import annotations

import dataclasses
import functools

import jax

from jaxqueens.parallel import items, sizing
from jaxqueens.solvers import complete as solver
from jaxqueens.solvers.complete import Config

ITEMS_PER_LANE = 4
"""Accelerator: items per kernel call, per lockstep lane."""


def _advance(lanes: solver.State, active, config: Config) -> solver.State:
    del active  # a lane that is not live stays as it is
    return jax.vmap(lambda s: solver.step_lane(s, config))(lanes)


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def search_chunk(batch, config: Config, num_devices: int, sizes: sizing.Sizes):
    """Run every item of a batch, batched the way `sizes` names.

    Args:
      batch: uint32 `[P, HEAD + n]`, P a multiple of `num_devices`; zero rows are empty items.
      config: the kernel's static shape.
      num_devices: devices the call spans.
      sizes: the backend's batch sizes.

    Returns:
      `(head, stacks, solutions)`: uint32 `[P, 4]` (d, steps, lo, hi), uint32 `[P, n + 1, 5]`
      and the listed solutions, uint32 `[P, cap, n + 1]`.
    """
    return items.search_each(
        lambda it: solver.readout(solver.search(it, config), config),
        lambda it: solver.start(it, config),
        functools.partial(_advance, config=config),
        lambda s: ~jax.vmap(lambda x: solver.live(x, config))(s),
        lambda s: solver.readout(s, config),
        batch,
        num_devices,
        sizes.count_lanes,
        accelerator=sizes.accelerator,
    )


def chunk_builder(config: Config, num_devices: int = 1, place=None):
    """The builder `jaxqueens.parallel.sizing.choose` sizes (and `make gpu-check` compiles):
    `search_chunk` as an accelerator runs it, `ITEMS_PER_LANE` items per lane and call.

    Args:
      config: the kernel's static shape.
      num_devices: devices a call spans.
      place: places the example arguments on the target devices (default: as they are).

    Returns:
      `lanes -> jax.stages.Lowered`, for `lanes` lockstep lanes per device.
    """
    place = place or (lambda tree: tree)

    def build(lanes: int):
        sizes = dataclasses.replace(sizing.ACCELERATOR_DEFAULTS, count_lanes=lanes)
        rows = ITEMS_PER_LANE * lanes * num_devices
        batch = place(jax.ShapeDtypeStruct((rows, config.width), jax.numpy.uint32))
        return search_chunk.trace(batch, config, num_devices, sizes).lower()

    return build


def accelerator_lanes(config: Config, num_devices: int, target=None) -> sizing.Choice:
    """Lockstep lanes per device for `config`'s items on an accelerator, sized from the compiled
    `search_chunk` against the device.

    Args:
      config: the kernel's static shape.
      num_devices: devices a call spans.
      target: the device's budget and parallelism (default: the first local device's).

    Returns:
      `jaxqueens.parallel.sizing.Choice`.
    """
    target = target or sizing.device_target()
    return sizing.choose(
        chunk_builder(config, num_devices),
        target,
        target.parallelism,
        key=("complete", config, num_devices),
    )
