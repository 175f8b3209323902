"""Batching of independent chains, chosen by backend here and only here.

Any chain solver (min-conflicts, annealing, ...) describes one chain through a
:class:`ChainKernel`; this module runs many of them:

- CPU (:func:`run_mapped`): one chain per ``lax.map`` iteration, no lockstep,
  the chains split over host devices with ``shard_map`` (one device per core,
  see :mod:`jaxqueens.backend`). ``shared/PERFORMANCE.md`` measured lockstep
  ``vmap`` 4-13x slower than this on XLA:CPU.
- Accelerators (:func:`run_lockstep`): B lanes advance in lockstep (``vmap``)
  inside one ``while_loop``; a lane whose chain finishes writes its result and
  takes the next chain id, so no lane idles while a slow chain runs.

Chain i is seeded from ``fold_in(key, i)`` in both, so results are identical
whatever the strategy, batch, chunk or device count.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple, Protocol

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens import backend
from jaxqueens.rng import chain_seeds


class ChainKernel(Protocol):
    """One chain of a solver. Implementations are frozen dataclasses (hashable: jit-static).

    ``data`` is a dynamic pytree shared by every chain of a run (a start board, a
    threshold schedule, or None); ``State`` and ``Result`` are the solver's pytrees.
    """

    unroll: int  # steps per lockstep iteration

    def init(self, seed: jax.Array, data: Any) -> Any: ...  # state with its first board
    def step(self, s: Any, data: Any) -> Any: ...  # one step; a no-op once the attempt stopped
    def retry(self, s: Any) -> jax.Array: ...  # attempt over, unsolved, restarts left
    def restart(self, s: Any, data: Any) -> Any: ...  # next attempt of the same chain
    def finished(self, s: Any) -> jax.Array: ...  # chain done for good
    def result(self, s: Any) -> Any: ...  # what the chain reports
    def solve_one(self, seed: jax.Array, data: Any) -> Any: ...  # the whole chain (CPU path)


@functools.partial(jax.jit, static_argnums=(0, 2, 3, 4))
def _sharded(kernel: ChainKernel, key, num_chains: int, num_devices: int, lanes: int, offset, data):
    """Chains split evenly over ``num_devices``; per device one chain per ``lax.map`` iteration
    (``lanes == 0``) or ``lanes`` lockstep lanes with recycling."""
    per = -(-num_chains // num_devices)
    ids = (offset + jnp.arange(per * num_devices, dtype=jnp.int32)).reshape(num_devices, per)

    def shard(ids, data):
        if lanes:
            out = _lockstep_body(kernel, key, ids[0], min(lanes, per), data)
        else:
            out = lax.map(lambda seed: kernel.solve_one(seed, data), chain_seeds(key, ids[0]))
        return jax.tree.map(lambda x: x[None], out)

    if num_devices == 1:
        out = shard(ids, data)
    else:
        mesh = jax.make_mesh((num_devices,), ("d",), devices=jax.local_devices()[:num_devices],
                             axis_types=(jax.sharding.AxisType.Auto,))
        P = jax.sharding.PartitionSpec
        out = jax.shard_map(shard, mesh=mesh, in_specs=(P("d"), P()), out_specs=P("d"),
                            check_vma=False)(ids, data)
    return jax.tree.map(lambda x: x.reshape((per * num_devices,) + x.shape[2:])[:num_chains], out)


def run_mapped(kernel: ChainKernel, key, num_chains: int, offset=0, data=None,
               num_devices: int | None = None):
    """CPU strategy: chains ``offset + [0, num_chains)``, one per ``lax.map`` iteration, split
    evenly over devices. Returns the kernel's result pytree with a leading [C] axis."""
    d = num_devices or jax.local_device_count()
    return _sharded(kernel, key, num_chains, d, 0, jnp.int32(offset), data)


class _Lanes(NamedTuple):
    s: Any  # [B] lane states
    chain: jax.Array  # [B] int32 chain id of each lane (>= num_chains: idle)


def _where(mask, new, old):
    """Per-lane select between two [B, ...] pytrees."""
    return jax.tree.map(lambda a, b: jnp.where(mask.reshape((-1,) + (1,) * (a.ndim - 1)), a, b),
                        new, old)


def _lockstep_body(kernel: ChainKernel, key, chain_ids, lanes: int, data):
    """Lockstep lanes over the chains ``chain_ids`` [C]; returns results [C, ...] in that order."""
    num_chains = chain_ids.shape[0]
    seed_of = lambda k: chain_seeds(key, chain_ids[k][None])[0]  # noqa: E731
    vinit = jax.vmap(lambda k: kernel.init(seed_of(k), data))
    vstep = jax.vmap(lambda s: kernel.step(s, data))
    first = jnp.arange(lanes, dtype=jnp.int32)
    s0 = vinit(jnp.minimum(first, num_chains - 1))
    out = jax.tree.map(lambda x: jnp.zeros((num_chains,) + x.shape[1:], x.dtype),
                       jax.vmap(kernel.result)(s0))

    def body(carry):
        L, nxt, out = carry
        s = L.s
        for _ in range(kernel.unroll):
            s = vstep(s)
        active = L.chain < num_chains
        finished = jax.vmap(kernel.finished)(s) & active
        retry = jax.vmap(kernel.retry)(s) & active
        # Restart lanes whose attempt failed (a real branch only when some lane needs it).
        s = lax.cond(jnp.any(retry),
                     lambda s: _where(retry, jax.vmap(lambda x: kernel.restart(x, data))(s), s),
                     lambda s: s, s)
        # Emit finished lanes and recycle them with the next chains.
        dst = jnp.where(finished, L.chain, num_chains)
        out = jax.tree.map(lambda o, r: o.at[dst].set(r, mode="drop"), out, jax.vmap(kernel.result)(s))
        rank = jnp.cumsum(finished.astype(jnp.int32)) - 1
        new_chain = jnp.where(finished, nxt + rank, L.chain)
        nxt = nxt + jnp.sum(finished.astype(jnp.int32))
        take = finished & (new_chain < num_chains)
        s = lax.cond(jnp.any(take),
                     lambda s: _where(take, vinit(jnp.minimum(new_chain, num_chains - 1)), s),
                     lambda s: s, s)
        return _Lanes(s, new_chain), nxt, out

    carry = (_Lanes(s0, first), jnp.int32(lanes), out)
    _, _, out = lax.while_loop(lambda c: jnp.any(c[0].chain < num_chains), body, carry)
    return out


def run_lockstep(kernel: ChainKernel, key, num_chains: int, lanes: int = 256, offset=0, data=None,
                 num_devices: int | None = None):
    """Accelerator strategy: on each device, ``lanes`` chains advance in lockstep inside one
    ``while_loop``; a lane whose chain finishes writes its result and takes the next chain.
    Same chain ids and seeds as :func:`run_mapped`, so the results are identical."""
    d = num_devices or jax.local_device_count()
    return _sharded(kernel, key, num_chains, d, max(1, lanes), jnp.int32(offset), data)


def run(kernel: ChainKernel, key, num_chains: int, offset=0, data=None):
    """Chains ``offset + [0, num_chains)`` with the strategy of the default backend.

    Args:
      kernel: the solver's one-chain kernel.
      key: a ``jax.random`` key; chain i uses ``fold_in(key, offset + i)`` (not split here:
        pass a fresh key per independent experiment).
      data: dynamic pytree every chain sees (start board, schedule, ...).
    """
    if backend.is_accelerator():
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
