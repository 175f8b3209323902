"""Many independent chains of one :class:`~jaxqueens.solvers.base.ChainKernel`, batched per backend.

- CPU (:func:`run_mapped`): one chain per ``lax.map`` iteration, no lockstep, the chains split
  over host devices (:func:`jaxqueens.parallel.shard.over_devices`). ``shared/PERFORMANCE.md``
  measured lockstep ``vmap`` 4-13x slower than this on XLA:CPU.
- Accelerators (:func:`run_lockstep`): lockstep lanes with refill
  (:func:`jaxqueens.parallel.lanes.lockstep`).

Chain i is seeded from ``fold_in(key, i)`` in both, so results are identical whatever the
strategy, batch, chunk or device count. :func:`run` picks the strategy of the default backend.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens.core.rng import chain_seeds
from jaxqueens.parallel import devices
from jaxqueens.parallel.lanes import lockstep, where_lanes
from jaxqueens.parallel.shard import over_devices
from jaxqueens.solvers.base import ChainKernel

def _lockstep_chains(kernel: ChainKernel, key, chain_ids, lanes: int, data):
    """Lockstep lanes over the chains ``chain_ids`` [C]; returns results [C, ...] in that order."""
    vstep = jax.vmap(lambda s: kernel.step(s, data))
    vrestart = jax.vmap(lambda s: kernel.restart(s, data))

    def advance(s, active):
        for _ in range(kernel.unroll):
            s = vstep(s)
        retry = jax.vmap(kernel.retry)(s) & active
        # Restart lanes whose attempt failed (a real branch only when some lane needs it).
        return lax.cond(jnp.any(retry), lambda s: where_lanes(retry, vrestart(s), s), lambda s: s, s)

    return lockstep(lambda k: kernel.init(chain_seeds(key, chain_ids[k][None])[0], data), advance,
                    jax.vmap(kernel.finished), jax.vmap(kernel.result), chain_ids.shape[0], lanes)


@functools.partial(jax.jit, static_argnums=(0, 2, 3, 4))
def _sharded(kernel: ChainKernel, key, num_chains: int, num_devices: int, lanes: int, offset, data):
    """Chains split evenly over ``num_devices``; per device one chain per ``lax.map`` iteration
    (``lanes == 0``) or ``lanes`` lockstep lanes with refill."""
    per = -(-num_chains // num_devices)
    ids = offset + jnp.arange(per * num_devices, dtype=jnp.int32)

    def shard(ids, data):
        if lanes:
            return _lockstep_chains(kernel, key, ids, min(lanes, per), data)
        return lax.map(lambda seed: kernel.solve_one(seed, data), chain_seeds(key, ids))

    out = over_devices(shard, ids, data, num_devices=num_devices, sharded=(True, False))
    return jax.tree.map(lambda x: x[:num_chains], out)


def run_mapped(kernel: ChainKernel, key, num_chains: int, offset=0, data=None,
               num_devices: int | None = None):
    """CPU strategy: chains ``offset + [0, num_chains)``, one per ``lax.map`` iteration, split
    evenly over devices. Returns the kernel's result pytree with a leading [C] axis."""
    d = num_devices or jax.local_device_count()
    return _sharded(kernel, key, num_chains, d, 0, jnp.int32(offset), data)


def run_lockstep(kernel: ChainKernel, key, num_chains: int, lanes: int | None = None, offset=0,
                 data=None, num_devices: int | None = None):
    """Accelerator strategy: on each device, ``lanes`` chains advance in lockstep; a lane whose
    chain finishes writes its result and takes the next chain (``lanes`` default:
    :func:`jaxqueens.parallel.devices.sizes`). Same chain ids and seeds as :func:`run_mapped`,
    so the results are identical."""
    d = num_devices or jax.local_device_count()
    lanes = devices.sizes().chain_lanes if lanes is None else lanes
    return _sharded(kernel, key, num_chains, d, max(1, lanes), jnp.int32(offset), data)


def run(kernel: ChainKernel, key, num_chains: int, offset=0, data=None):
    """Chains ``offset + [0, num_chains)`` with the strategy of the default backend.

    Args:
      kernel: the solver's one-chain kernel.
      key: a ``jax.random`` key; chain i uses ``fold_in(key, offset + i)`` (not split here:
        pass a fresh key per independent experiment).
      data: dynamic pytree every chain sees (start board, schedule, ...).
    """
    if devices.is_accelerator():
        return run_lockstep(kernel, key, num_chains, offset=offset, data=data)
    return run_mapped(kernel, key, num_chains, offset, data=data)


def compile_runner(kernel: ChainKernel, key, chunk: int, data=None) -> Callable[[int, int], Any]:
    """Compile :func:`run` for ``chunk`` chains ahead of time; return ``run_chunk(offset, count)``.

    The driver times compilation apart from the run and calls ``run_chunk`` once per chunk. A
    call with another ``count`` (a short last chunk) compiles that size on first use.
    """
    fn = jax.jit(lambda key, offset, data: run(kernel, key, chunk, offset, data))
    compiled = fn.lower(key, jnp.int32(0), data).compile()

    def run_chunk(offset: int, count: int):
        if count == chunk:
            return compiled(key, jnp.int32(offset), data)
        return run(kernel, key, count, offset, data)

    return run_chunk
