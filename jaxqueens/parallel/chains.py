"""Many independent chains of one :class:`~jaxqueens.solvers.base.ChainKernel`, batched per backend.

- CPU (:func:`run_mapped`): one chain per ``lax.map`` iteration, no lockstep, the chains split
  over host devices (:func:`jaxqueens.parallel.shard.over_devices`). ``shared/PERFORMANCE.md``
  measured lockstep ``vmap`` 4-13x slower than this on XLA:CPU.
- Accelerators (:func:`run_lockstep`): lockstep lanes with refill
  (:func:`jaxqueens.parallel.lanes.lockstep`).

Chain i is seeded from ``fold_in(key, i)`` in both, so results are identical whatever the
strategy, batch, chunk or device count. :func:`run` picks the strategy of the default backend, or
the one its ``lanes`` names; on an accelerator :func:`compile_runner` sizes the lanes from the
compiled program against the device (:func:`jaxqueens.parallel.sizing.choose`, through
:func:`lockstep_builder`, which ``make gpu-check`` compiles too).
A kernel with a per-chain input (``resume``: where each chain starts, when it pauses; see
:class:`~jaxqueens.solvers.base.ChainKernel`) takes it, split with the chains, in every strategy.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens.core.rng import chain_seeds
from jaxqueens.errors import QueensError
from jaxqueens.parallel import devices, memory, sizing
from jaxqueens.parallel.lanes import gate, lockstep, where_lanes
from jaxqueens.parallel.shard import over_devices
from jaxqueens.solvers.base import ChainKernel

RESULT_COPIES = 3
"""A call's results live on the device, in a host copy and in the driver's records."""
CHAINS_PER_LANE = 2
"""Accelerator: chains per call for each lockstep lane (a lane that finishes takes the next)."""
RESULT_SHARE = 0.25
"""Accelerator: share of the device budget a call's results may take (:func:`accelerator_chunk`)."""


def _lockstep_chains(kernel: ChainKernel, key, chain_ids, lanes: int, data, resume=None):
    """Lockstep lanes over the chains ``chain_ids`` [C] (``resume``: their per-chain input [C] or
    None); returns results [C, ...] in that order. Runs ``kernel.lockstep()``, the same chains
    formulated for lanes."""
    kernel = kernel.lockstep()
    vstep = jax.vmap(lambda s: kernel.step(s, data))
    vrestart = jax.vmap(lambda s: kernel.restart(s, data))

    def advance(s, active):
        for _ in range(kernel.unroll):
            s = vstep(s)
        retry = jax.vmap(kernel.retry)(s) & active
        # Restart lanes whose attempt failed, once enough of them wait (lanes.gate: a restart
        # builds a fresh board for every lane); a waiting lane is stopped, its steps no-ops.
        running = active & ~retry & ~jax.vmap(kernel.finished)(s)
        return lax.cond(
            gate(retry, running, lanes),
            lambda s: where_lanes(retry, vrestart(s), s),
            lambda s: s,
            s,
        )

    def init_item(k):
        seed = chain_seeds(key, chain_ids[k][None])[0]
        if resume is None:
            return kernel.init(seed, data)
        return kernel.init_from(
            seed, data, resume if _shared(resume) else jax.tree.map(lambda x: x[k], resume)
        )

    return lockstep(
        init_item,
        advance,
        jax.vmap(kernel.finished),
        jax.vmap(kernel.result),
        chain_ids.shape[0],
        lanes,
    )


def _shared(resume) -> bool:
    """A per-call input whose leaves are 0-d: the same for every chain (replicated, not split)."""
    return all(jnp.ndim(x) == 0 for x in jax.tree.leaves(resume))


@functools.partial(jax.jit, static_argnums=(0, 2, 3, 4))
def _sharded(
    kernel: ChainKernel,
    key,
    num_chains: int,
    num_devices: int,
    lanes: int,
    offset,
    data,
    resume=None,
):
    """Chains split evenly over ``num_devices``; per device one chain per ``lax.map`` iteration
    (``lanes == 0``) or ``lanes`` lockstep lanes with refill."""
    per = -(-num_chains // num_devices)
    ids = offset + jnp.arange(per * num_devices, dtype=jnp.int32)
    split = resume is not None and not _shared(resume)
    if split and per * num_devices > num_chains:  # padding chains repeat the last row
        extra = per * num_devices - num_chains
        resume = jax.tree.map(
            lambda x: jnp.concatenate([x, jnp.repeat(x[-1:], extra, axis=0)]), resume
        )

    def shard(ids, resume, data):
        if lanes:
            return _lockstep_chains(kernel, key, ids, min(lanes, per), data, resume)
        seeds = chain_seeds(key, ids)
        if resume is None:
            return lax.map(lambda seed: kernel.solve_one(seed, data), seeds)
        if not split:
            return lax.map(lambda seed: kernel.solve_from(seed, data, resume), seeds)
        return lax.map(lambda x: kernel.solve_from(x[0], data, x[1]), (seeds, resume))

    out = over_devices(
        shard, ids, resume, data, num_devices=num_devices, sharded=(True, split, False)
    )
    return jax.tree.map(lambda x: x[:num_chains], out)


def run_mapped(
    kernel: ChainKernel,
    key,
    num_chains: int,
    offset=0,
    data=None,
    num_devices: int | None = None,
    resume=None,
):
    """CPU strategy: chains ``offset + [0, num_chains)``, one per ``lax.map`` iteration, split
    evenly over devices. Returns the kernel's result pytree with a leading [C] axis."""
    d = num_devices or jax.local_device_count()
    return _sharded(kernel, key, num_chains, d, 0, jnp.int32(offset), data, resume)


def run_lockstep(
    kernel: ChainKernel,
    key,
    num_chains: int,
    lanes: int | None = None,
    offset=0,
    data=None,
    num_devices: int | None = None,
    resume=None,
):
    """Accelerator strategy: on each device, ``lanes`` chains advance in lockstep; a lane whose
    chain finishes writes its result and takes the next chain (``lanes`` default:
    the device's parallelism; :func:`compile_runner` sizes them from the compiled program).
    Same chain ids and seeds as :func:`run_mapped`, so the results are identical."""
    d = num_devices or jax.local_device_count()
    lanes = sizing.device_target().parallelism if lanes is None else lanes
    return _sharded(kernel, key, num_chains, d, max(1, lanes), jnp.int32(offset), data, resume)


def run(
    kernel: ChainKernel,
    key,
    num_chains: int,
    offset=0,
    data=None,
    resume=None,
    lanes: int | None = None,
):
    """Chains ``offset + [0, num_chains)`` with the strategy of the default backend.

    Args:
      kernel: the solver's one-chain kernel.
      key: a ``jax.random`` key; chain i uses ``fold_in(key, offset + i)`` (not split here:
        pass a fresh key per independent experiment).
      data: dynamic pytree every chain sees (start board, schedule, ...).
      resume: the kernel's per-call input: 0-d leaves for every chain alike, or a [num_chains]
        leading axis, one row per chain (None: every chain fresh, to the end).
      lanes: the strategy: 0 one chain per ``lax.map`` iteration (the CPU's), > 0 that many
        lockstep lanes per device (an accelerator's); None: the default backend's.
    """
    if lanes is None:  # a call outside compile_runner: the device's parallelism, unchecked
        lanes = sizing.device_target().parallelism if devices.is_accelerator() else 0
    if lanes:
        return run_lockstep(kernel, key, num_chains, lanes, offset=offset, data=data, resume=resume)
    return run_mapped(kernel, key, num_chains, offset, data=data, resume=resume)


def lockstep_builder(
    kernel: ChainKernel, key, chunk: int, data=None, num_devices: int = 1, place=None
) -> Callable[[int], Any]:
    """``lanes -> jax.stages.Lowered``: a call of ``chunk`` chains on ``lanes`` lockstep lanes
    per device, the executable :func:`compile_runner` runs on an accelerator. ``place`` maps the
    arguments (a pytree) to where they live: ``None`` leaves them as given (the default device);
    the GPU check passes abstract values on a described device
    (:func:`jaxqueens.parallel.sizing.abstract`)."""
    place = place or (lambda tree: tree)
    args = place((key, jnp.int32(0), data, kernel.resume_input()))

    def build(lanes: int):
        fn = lambda key, offset, data, resume: _sharded(
            kernel, key, chunk, num_devices, max(1, lanes), offset, data, resume
        )
        return jax.jit(fn).trace(*args).lower()

    return build


def accelerator_chunk(chains: int | None, n: int, target: sizing.Target, devices_: int = 1) -> int:
    """Chains per call on an accelerator: :data:`CHAINS_PER_LANE` per lane that fills the device,
    at most the chains asked for, and results within :data:`RESULT_SHARE` of its memory."""
    fill = CHAINS_PER_LANE * target.parallelism * devices_
    results = 2 * 4 * (n + 4)  # rows and four scalars, int32, and a copy
    fit = int(RESULT_SHARE * target.budget_bytes * devices_ // results)
    cap = max(devices_, min(fill, fit))
    if chains is not None:
        cap = min(cap, max(chains, 1))
    return -(-cap // devices_) * devices_


def compile_runner(
    kernel: ChainKernel, key, chunk: int, data=None, target: sizing.Target | None = None
) -> Callable[[int, int], Any]:
    """Compile :func:`run` for ``chunk`` chains ahead of time; return ``run_chunk(offset, count)``.

    The driver times compilation apart from the run and calls ``run_chunk`` once per chunk. A
    call with another ``count`` (a short last chunk) compiles that size on first use. A chunk
    whose results cannot fit in memory is refused before compiling
    (:func:`jaxqueens.parallel.memory.check_memory`). On an accelerator the lanes per device are
    chosen from the compiled program against the device (``target``, default the first local
    device's: :func:`jaxqueens.parallel.sizing.choose`); ``run_chunk.lanes`` says how many.
    """
    fresh = kernel.resume_input()  # None for kernels without a per-call input
    lanes, num = 0, jax.local_device_count()
    accelerator = devices.is_accelerator() or target is not None
    fn = jax.jit(
        lambda key, offset, data, resume: run(kernel, key, chunk, offset, data, resume, lanes=0)
    )
    args = (key, jnp.int32(0), data, fresh)
    lowered = None if accelerator else fn.lower(*args)
    out = jax.eval_shape(fn, *args) if accelerator else lowered.out_info
    results = sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(out))
    n = getattr(kernel.config, "n", "?")
    memory.check_memory(
        RESULT_COPIES * results,
        f"--batch {chunk} (chains per kernel call, n = {n}: their boards and results)",
        "use a smaller --batch",
    )
    if accelerator:
        target = target or sizing.device_target()
        choice = sizing.choose(
            lockstep_builder(kernel, key, chunk, data, num),
            target,
            min(target.parallelism, -(-chunk // num)),
            key=("chains", kernel, chunk, num, jax.tree.structure(data)),
        )
        if not choice.fits:
            raise QueensError(
                f"--batch {chunk} (chains per kernel call, n = {n}) needs "
                f"{memory.format_bytes(choice.bytes)} on {target.name}, over its "
                f"{memory.format_bytes(target.budget_bytes)}: use a smaller --batch"
            )
        compiled, lanes = choice.compiled, choice.batch
    else:
        compiled = lowered.compile()

    def run_chunk(offset: int, count: int, resume=None):
        """Chains ``offset .. offset + count - 1``; ``resume``: the kernel's per-call input
        (default: fresh chains, run to the end). Shared inputs run the executable compiled here;
        one row per chain compiles its own on first use."""
        resume = fresh if resume is None else resume
        if count == chunk and (resume is None or _shared(resume)):
            return compiled(key, jnp.int32(offset), data, resume)
        return run(kernel, key, count, offset, data, resume, lanes=lanes)

    run_chunk.lanes = lanes
    return run_chunk
