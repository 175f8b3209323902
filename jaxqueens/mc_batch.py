"""Batching min-conflicts chains: the strategy is chosen by backend, here and only here.

- CPU (:func:`run_mapped`): one chain per ``lax.map`` iteration, no lockstep, the chains split
  over host devices with ``shard_map`` (one device per core, see :mod:`jaxqueens.backend`).
  ``shared/PERFORMANCE.md`` measured lockstep ``vmap`` 4-13x slower than this on XLA:CPU.
- Accelerators (:func:`run_lockstep`): B lanes advance in lockstep (``vmap``) inside one
  ``while_loop``; a lane whose chain finishes writes its result and takes the next chain id, so
  no lane idles while a slow chain runs.

Chain i is seeded from ``fold_in(key, i)`` in both, so results are identical whatever the
strategy, batch, chunk or device count.
"""

from __future__ import annotations

import functools
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxqueens import backend
from jaxqueens.minconflicts import Config, Metrics, Result, State, fresh_attempt, init, solve_chain, step, trace
from jaxqueens.rng import chain_seeds


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def _mapped(key, config: Config, num_chains: int, num_devices: int, offset, start):
    per = -(-num_chains // num_devices)
    ids = (offset + jnp.arange(per * num_devices, dtype=jnp.int32)).reshape(num_devices, per)

    def shard(ids, start):
        seeds = chain_seeds(key, ids[0])
        one = lambda s: solve_chain(s, config, start)  # noqa: E731
        return jax.tree.map(lambda x: x[None], lax.map(one, seeds))

    if num_devices == 1:
        out = shard(ids, start)
    else:
        mesh = jax.make_mesh((num_devices,), ("d",), devices=jax.devices()[:num_devices],
                             axis_types=(jax.sharding.AxisType.Auto,))
        P = jax.sharding.PartitionSpec
        out = jax.shard_map(shard, mesh=mesh, in_specs=(P("d"), P()), out_specs=P("d"),
                            check_vma=False)(ids, start)
    return jax.tree.map(lambda x: x.reshape((per * num_devices,) + x.shape[2:])[:num_chains], out)


def run_mapped(key, config: Config, num_chains: int, offset=0, num_devices: int | None = None,
               start=None):
    """CPU strategy: chains ``offset + [0, num_chains)``, one per ``lax.map`` iteration, split
    evenly over host devices. Returns a :class:`Result` with a leading [C] axis."""
    d = num_devices or jax.local_device_count()
    return _mapped(key, config, num_chains, d, jnp.int32(offset), start)


class _Lanes(NamedTuple):
    s: State  # [B] lane states
    chain: jax.Array  # [B] int32 chain id of each lane (>= num_chains: idle)


@functools.partial(jax.jit, static_argnums=(1, 2, 3))
def _lockstep(key, config: Config, num_chains: int, lanes: int, offset, start):
    B = lanes
    vinit = jax.vmap(lambda cid: init(chain_seeds(key, (offset + cid)[None])[0], config, start))
    vstep = jax.vmap(lambda s: step(s, config))
    vfresh = jax.vmap(lambda s: fresh_attempt(s, config))
    n = config.n
    out = Result(
        rows=jnp.zeros((num_chains, n), jnp.int32),
        solved=jnp.zeros(num_chains, bool),
        steps=jnp.zeros(num_chains, jnp.int32),
        restarts=jnp.zeros(num_chains, jnp.int32),
    )
    first = jnp.arange(B, dtype=jnp.int32)
    carry0 = (_Lanes(vinit(jnp.minimum(first, num_chains - 1)), first), jnp.int32(B), out)

    def cond(carry):
        lanes, _, _ = carry
        return jnp.any(lanes.chain < num_chains)

    def body(carry):
        L, nxt, out = carry
        s = L.s
        for _ in range(config.unroll):
            s = vstep(s)
        active = L.chain < num_chains
        finished = s.stop & (s.solved | (s.restarts >= config.max_restarts)) & active
        retry = s.stop & ~finished & active
        # restart lanes that ran out of steps (real branch only when some lane needs it)
        s = lax.cond(
            jnp.any(retry),
            lambda s: jax.tree.map(
                lambda a, b: jnp.where(retry.reshape((-1,) + (1,) * (a.ndim - 1)), a, b),
                vfresh(s._replace(restarts=s.restarts + retry)), s),
            lambda s: s,
            s,
        )
        # emit finished lanes and recycle them with the next chain ids
        dst = jnp.where(finished, L.chain, num_chains)
        out = Result(
            rows=out.rows.at[dst].set(s.rows, mode="drop"),
            solved=out.solved.at[dst].set(s.solved, mode="drop"),
            steps=out.steps.at[dst].set(s.total_steps, mode="drop"),
            restarts=out.restarts.at[dst].set(s.restarts, mode="drop"),
        )
        rank = jnp.cumsum(finished.astype(jnp.int32)) - 1
        new_chain = jnp.where(finished, nxt + rank, L.chain)
        nxt = nxt + jnp.sum(finished.astype(jnp.int32))
        take = finished & (new_chain < num_chains)
        s = lax.cond(
            jnp.any(take),
            lambda s: jax.tree.map(
                lambda a, b: jnp.where(take.reshape((-1,) + (1,) * (a.ndim - 1)), a, b),
                vinit(jnp.minimum(new_chain, num_chains - 1)), s),
            lambda s: s,
            s,
        )
        return _Lanes(s, new_chain), nxt, out

    _, _, out = lax.while_loop(cond, body, carry0)
    return out


def run_lockstep(key, config: Config, num_chains: int, lanes: int = 256, offset=0,
                 start=None) -> Result:
    """GPU strategy: ``lanes`` chains advance in lockstep (``vmap``) inside one ``while_loop``; a
    lane whose chain finishes writes its result and takes the next chain id. Chain ids and seeds
    match :func:`run_mapped`, so results are identical."""
    return _lockstep(key, config, num_chains, min(lanes, num_chains), jnp.int32(offset), start)


def solve(key, config: Config, num_chains: int, offset=0, start=None) -> Result:
    """Solve ``num_chains`` chains with the batching strategy of the default backend.

    Args:
        key: a ``jax.random`` key; chain i uses ``fold_in(key, offset + i)`` (key is not split
            here, so pass a fresh key per independent experiment).
    Returns:
        :class:`Result` with a leading [num_chains] axis (device arrays).
    """
    if backend.is_accelerator():
        return run_lockstep(key, config, num_chains, offset=offset, start=start)
    return run_mapped(key, config, num_chains, offset, start=start)


def compile_runner(key, config: Config, chunk: int, start=None) -> Callable[[int, int], Result]:
    """Compile the batched solver for ``chunk`` chains ahead of time; return ``run(offset, count)``.

    The driver times compilation apart from the run and calls ``run`` once per chunk. A call
    with another ``count`` (a short last chunk) compiles that size on first use.
    """
    start = None if start is None else jnp.asarray(start, jnp.int32)
    fn = jax.jit(lambda key, offset, start: solve(key, config, chunk, offset, start))
    compiled = fn.lower(key, jnp.int32(0), start).compile()

    def run(offset: int, count: int) -> Result:
        if count == chunk:
            return compiled(key, jnp.int32(offset), start)
        return solve(key, config, count, offset, start)

    return run


def trace_chain(key, config: Config, num_steps: int, start=None) -> Metrics:
    """Per-step conflicted queens and attacking pairs of chain 0's first attempt, as host arrays,
    cut after the step at which it solved (or after ``num_steps`` steps)."""
    seed = chain_seeds(key, jnp.arange(1))[0]
    start = None if start is None else jnp.asarray(start, jnp.int32)
    _, metrics = jax.jit(lambda s, b: trace(s, config, num_steps, b))(seed, start)
    metrics = Metrics(*(np.asarray(m) for m in metrics))
    done = np.flatnonzero(metrics.conflicted == 0)
    end = int(done[0]) + 1 if done.size else num_steps
    return Metrics(*(m[:end] for m in metrics))
