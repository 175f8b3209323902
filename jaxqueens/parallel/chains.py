"""Many independent chains of one chain family (a solver module keeping the chain contract of
`jaxqueens.solvers.base`), batched per backend: one chain per `lax.map` iteration on a CPU,
lockstep lanes with refill on an accelerator. Chain i is keyed `fold_in(key, i)` in both, so
results do not depend on the strategy, chunk or device count. The docs' parallel page
describes both strategies.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxqueens.core import rng
from jaxqueens.errors import QueensError
from jaxqueens.parallel import cache, devices, memory, sizing
from jaxqueens.parallel.lanes import gate, lockstep, where_lanes
from jaxqueens.parallel.shard import over_devices
from jaxqueens.solvers.base import chain_keys

RESULT_COPIES = 3
"""A call's results live on the device, in a host copy and in the driver's records."""
CHAINS_PER_LANE = 2
"""Accelerator: chains per call for each lockstep lane (a lane that finishes takes the next)."""
RESULT_SHARE = 0.25
"""Accelerator: share of the device budget a call's results may take (`accelerator_chunk`)."""


@dataclasses.dataclass(frozen=True)
class Chains:
    """A chain family bound to one static config (hashable: a jit-static argument)."""

    family: types.ModuleType  #: the solver module.
    config: Any  #: its static `Config`.

    def lockstep(self) -> Chains:
        """The same chains formulated for lockstep lanes (the family's `lockstep_config`, e.g.
        a fresh board's line counts by one scatter-add where one chain loops: on a GPU a loop
        is host-driven); itself when the family has none."""
        to_lanes = getattr(self.family, "lockstep_config", None)
        return self if to_lanes is None else Chains(self.family, to_lanes(self.config))

    def fresh(self) -> Any:
        """The per-call input that runs every chain fresh and to its end; None when the
        family's chains cannot pause at a work bound (and resume in a later call)."""
        return self.family.fresh() if hasattr(self.family, "Fresh") else None

    def start(self, key, params, problem, resume=None):
        """One chain's state: fresh, or where `resume` (one chain's row) says."""
        f = self.family
        if resume is None:
            return f.init(key, self.config, params, problem)
        return f.resume(key, self.config, params, problem, resume)

    def run_one(self, key, params, problem, resume=None):
        """One chain to its end (or its pause): the CPU path."""
        f = self.family
        if resume is None:
            return f.run(key, self.config, params, problem)
        return f.finish(self.start(key, params, problem, resume), self.config, params, problem)

    @property
    def restarts(self) -> bool:
        """The family restarts failed attempts (`retry`/`restart`); LS/TA/SA chains do not."""
        return hasattr(self.family, "restart")


def _lockstep_chains(chains: Chains, key, chain_ids, lanes: int, params, problem, resume=None):
    """Lockstep lanes over the chains `chain_ids` [C] (`resume`: their per-chain input [C] or
    None); returns results [C, ...] in that order. Runs `Chains.lockstep`, the same chains
    formulated for lanes."""
    chains = chains.lockstep()
    f, config = chains.family, chains.config  # the chain contract (`jaxqueens.solvers.base`)
    step = getattr(f, "advance", f.step)
    vadvance = jax.vmap(lambda s: step(s, config, params, problem))
    vrestart = jax.vmap(lambda s: f.restart(s, config, params, problem))
    vdone = jax.vmap(lambda s: f.done(s, config, params))

    def advance(s, active):
        for _ in range(getattr(config, "unroll", 1)):  # steps per lockstep iteration
            s = vadvance(s)
        if not chains.restarts:
            return s
        retry = jax.vmap(lambda s: f.retry(s, config, params))(s) & active
        # Restart lanes whose attempt failed, once enough of them wait (lanes.gate: a restart
        # builds a fresh board for every lane); a waiting lane is stopped, its steps no-ops.
        running = active & ~retry & ~vdone(s)
        return lax.cond(
            gate(retry, running, lanes),
            lambda s: where_lanes(retry, vrestart(s), s),
            lambda s: s,
            s,
        )

    def init_item(k):
        chain_key = chain_keys(key, chain_ids[k][None])[0]
        row = resume if resume is None or _shared(resume) else jax.tree.map(lambda x: x[k], resume)
        return chains.start(chain_key, params, problem, row)

    return lockstep(
        init_item,
        advance,
        vdone,
        jax.vmap(lambda s: f.result(s, config, params)),
        chain_ids.shape[0],
        lanes,
    )


def _shared(resume) -> bool:
    """A per-call input whose leaves are 0-d: the same for every chain (replicated, not split)."""
    return all(jnp.ndim(x) == 0 for x in jax.tree.leaves(resume))


@functools.partial(jax.jit, static_argnums=(0, 2, 3, 4))
def _sharded(
    chains: Chains,
    key,
    num_chains: int,
    num_devices: int,
    lanes: int,
    offset,
    params,
    problem=None,
    resume=None,
):
    """Chains split evenly over `num_devices`; per device one chain per `lax.map` iteration
    (`lanes == 0`) or `lanes` lockstep lanes with refill."""
    per = -(-num_chains // num_devices)
    ids = offset + jnp.arange(per * num_devices, dtype=jnp.int32)
    split = resume is not None and not _shared(resume)
    if split and per * num_devices > num_chains:  # padding chains repeat the last row
        extra = per * num_devices - num_chains
        resume = jax.tree.map(
            lambda x: jnp.concatenate([x, jnp.repeat(x[-1:], extra, axis=0)]), resume
        )

    def shard(ids, resume, params, problem):
        if lanes:
            return _lockstep_chains(chains, key, ids, min(lanes, per), params, problem, resume)
        keys = chain_keys(key, ids)
        if not split:
            return lax.map(lambda k: chains.run_one(k, params, problem, resume), keys)
        return lax.map(lambda x: chains.run_one(x[0], params, problem, x[1]), (keys, resume))

    out = over_devices(
        shard,
        ids,
        resume,
        params,
        problem,
        num_devices=num_devices,
        sharded=(True, split, False, False),
    )
    return jax.tree.map(lambda x: x[:num_chains], out)


def run(
    family,
    config,
    key,
    num_chains: int,
    params,
    problem=None,
    offset: int = 0,
    resume=None,
    lanes: int | None = None,
    num_devices: int | None = None,
) -> Any:
    """Chains `offset + [0, num_chains)` of `family` with the strategy of the default backend.

    Usable inside a user's `jit` (`family` and `config` static):

        from jaxqueens.parallel import chains
        import jaxqueens.solvers.minconflicts as mc
        config = mc.Config(n=32)
        out = chains.run(mc, config, jax.random.key(0), 10_000, mc.default_params(config))

    Args:
      family: the solver module (or a [`Chains`][jaxqueens.parallel.chains.Chains], then `config` is
          ignored).
      config: its static `Config`.
      key: a `jax.random` key; chain i uses `fold_in(key, offset + i)` (not split here:
        pass a fresh key per independent experiment).
      num_chains: chains to run.
      params: the family's `Params`, shared by every chain.
      problem: the family's `Problem` (start board, instance), shared by every chain, or None.
      resume: the family's per-call input (`Fresh`: 0-d leaves, every chain alike; `Resume`:
        a [num_chains] leading axis, one row per chain); None: every chain fresh, to the end.
      offset: the first chain's index.
      lanes: the strategy: 0 one chain per `lax.map` iteration (the CPU's), > 0 that many
        lockstep lanes per device (an accelerator's); None: the default backend's.
      num_devices: local devices to split the chains over evenly (None: all).

    Returns:
      The family's `Result` with a leading [num_chains] axis, in chain order.
    """
    chains = family if isinstance(family, Chains) else Chains(family, config)
    if lanes is None:  # the default backend's: on an accelerator, the device's parallelism
        lanes = sizing.device_target().parallelism if devices.is_accelerator() else 0
    d = num_devices or devices.local_device_count()
    return _sharded(chains, key, num_chains, d, lanes, jnp.int32(offset), params, problem, resume)


def run_mapped(
    chains: Chains,
    key,
    num_chains: int,
    params,
    problem=None,
    offset=0,
    num_devices: int | None = None,
    resume=None,
):
    """CPU strategy: `run` with one chain per `lax.map` iteration (the other arguments as for
    `run`).

    Args:
      chains: the family bound to its config (`Chains`).
      num_devices: local devices to split the chains over evenly (None: all).

    Returns:
      The family's `Result` with a leading [num_chains] axis.
    """
    return run(chains, None, key, num_chains, params, problem, offset, resume, 0, num_devices)


def run_lockstep(
    chains: Chains,
    key,
    num_chains: int,
    params,
    problem=None,
    lanes: int | None = None,
    offset=0,
    num_devices: int | None = None,
    resume=None,
):
    """Accelerator strategy: on each device, `lanes` chains advance in lockstep; a lane whose
    chain finishes writes its result and takes the next chain. Same chain keys and results as
    `run_mapped` (the other arguments as for `run`).

    Args:
      chains: the family bound to its config (`Chains`).
      lanes: lanes per device (None: the device's parallelism).
      num_devices: local devices to split the chains over evenly (None: all).

    Returns:
      The family's `Result` with a leading [num_chains] axis.
    """
    lanes = max(1, sizing.device_target().parallelism if lanes is None else lanes)
    return run(chains, None, key, num_chains, params, problem, offset, resume, lanes, num_devices)


def lockstep_builder(
    chains: Chains, key, chunk: int, params, problem=None, num_devices: int = 1, place=None
) -> Callable[[int], Any]:
    """The lowering of a call of `chunk` chains on lockstep lanes: what `compile_runner` runs
    on an accelerator.

    Args:
      chains: the chain family and its config.
      key: the run's key.
      chunk: chains per call.
      params: the family's `Params`.
      problem: the family's `Problem`, or None.
      num_devices: devices the chains are split over.
      place: maps the arguments (a pytree) to where they live (None: as given; the GPU check
        passes abstract values on a described device).

    Returns:
      `build(lanes) -> jax.stages.Lowered` for `lanes` lanes per device.
    """
    place = place or (lambda tree: tree)
    args = place((key, jnp.int32(0), params, problem, chains.fresh()))

    def build(lanes: int):
        return jax.jit(_call(chains, chunk, max(1, lanes), num_devices)).trace(*args).lower()

    return build


def _call(chains: Chains, count: int, lanes: int, num_devices: int | None = None):
    """`run` of `count` chains on `lanes` lanes per device, as a function of a call's inputs."""

    def call(key, offset, params, problem, resume):
        return run(chains, None, key, count, params, problem, offset, resume, lanes, num_devices)

    return call


def accelerator_chunk(chains: int | None, n: int, target: sizing.Target, devices_: int = 1) -> int:
    """Chains per call on an accelerator: `CHAINS_PER_LANE` per lane that fills the device,
    at most the chains asked for, and results within `RESULT_SHARE` of its memory.

    Args:
      chains: the chains asked for (None: unbounded).
      n: board size.
      target: the device's parallelism and memory budget.
      devices_: devices the chains are split over.

    Returns:
      Chains per call, a multiple of `devices_`.
    """
    fill = CHAINS_PER_LANE * target.parallelism * devices_
    results = 2 * 4 * (n + 4)  # rows and four scalars, int32, and a copy
    fit = int(RESULT_SHARE * target.budget_bytes * devices_ // results)
    cap = max(devices_, min(fill, fit))
    if chains is not None:
        cap = min(cap, max(chains, 1))
    return -(-cap // devices_) * devices_


@functools.partial(jax.jit, static_argnums=1)
def _split_bits(data, num: int):
    keys = jax.random.split(jax.random.wrap_key_data(data, impl=rng.THREEFRY), num)
    return jax.random.key_data(keys)


def seed_keys(seed: int, num: int) -> tuple[jax.Array, ...]:
    """`jax.random.split(jax.random.key(seed), num)`, as `num` keys: the same bits, split by an
    executable loaded from the cache folder (`cache.call`) and wrapped on the host (eagerly,
    they compile a handful of programs at every start); other PRNG implementations split eagerly.

    Args:
      seed: the run's seed.
      num: keys to make.

    Returns:
      `num` typed keys.
    """
    data = rng.seed_data(seed)
    if data is None:
        return tuple(jax.random.split(jax.random.key(seed), num))
    bits = np.asarray(cache.call("seed-keys", _split_bits, (data,), (num,)))
    return tuple(rng.wrap_threefry(row) for row in bits)


def _check_results(out, chunk: int, n) -> None:
    """Refuse a call whose results (`out`: arrays or shapes) cannot fit in memory."""
    results = sum(x.size * x.dtype.itemsize for x in jax.tree.leaves(out))
    memory.check_memory(
        RESULT_COPIES * results,
        f"--batch {chunk} (chains per kernel call, n = {n}: their boards and results)",
        "use a smaller --batch",
    )


def _choose_lanes(chains: Chains, key, chunk: int, params, problem, num: int, target, n):
    """The accelerator's executable for `chunk` chains and its lanes per device, chosen from
    the compiled program against `target` (`sizing.choose`); refused when none fits."""
    choice = sizing.choose(
        lockstep_builder(chains, key, chunk, params, problem, num),
        target,
        min(target.parallelism, -(-chunk // num)),
        key=("chains", chains, chunk, num, jax.tree.structure((params, problem))),
    )
    if not choice.fits:
        raise QueensError(
            f"--batch {chunk} (chains per kernel call, n = {n}) needs "
            f"{memory.format_bytes(choice.bytes)} on {target.name}, over its "
            f"{memory.format_bytes(target.budget_bytes)}: use a smaller --batch"
        )
    return choice.compiled, choice.batch


def compile_runner(
    chains: Chains,
    key,
    chunk: int,
    params,
    problem=None,
    target: sizing.Target | None = None,
    total: int | None = None,
) -> Callable[..., Any]:
    """Compile `run` for `chunk` chains ahead of time; return `run_chunk(offset, count)`.

    The driver times compilation apart from the run and calls `run_chunk` once per chunk; a
    chunk whose results cannot fit in memory is refused before compiling. On an accelerator
    the lanes per device are chosen from the compiled program (`run_chunk.lanes` says how
    many).

    Args:
      chains: the chain family and its config.
      key: a `jax.random` key; chain i uses `fold_in(key, i)`.
      chunk: chains per kernel call.
      params: the family's `Params`, shared by every chain.
      problem: the family's `Problem`, or None.
      target: the accelerator to size lanes for (default: the first local device's).
      total: the chains of the whole run, when known: their short last chunk
        (`total % chunk`) is compiled here too, so that no timed call compiles (None: any
        other count compiles on first use).

    Returns:
      `run_chunk(offset, count, resume=None)`: the family's `Result` for chains
      `offset .. offset + count - 1`.
    """
    fresh = chains.fresh()  # None for families without a per-call input
    lanes, num = 0, devices.local_device_count()
    accelerator = devices.is_accelerator() or target is not None

    fn = jax.jit(_call(chains, chunk, 0))
    args = (key, np.int32(0), params, problem, fresh)
    n = getattr(chains.config, "n", "?")

    def lower():
        lowered = fn.lower(*args)
        _check_results(lowered.out_info, chunk, n)  # before compiling
        return lowered

    static = (chains.family.__name__, chains.config)
    if not accelerator:  # a repeated run loads the executable without tracing (parallel.cache)
        compiled = cache.loaded("chains", (*static, chunk), args, lower)  # once per process
        _check_results(compiled.out_info, chunk, n)
    else:
        _check_results(jax.eval_shape(fn, *args), chunk, n)
        target = target or sizing.device_target()
        compiled, lanes = _choose_lanes(chains, key, chunk, params, problem, num, target, n)
    executables = {chunk: compiled}
    last = total % chunk if total is not None else 0
    if last:  # the short last chunk, compiled with the rest (not inside a timed call)
        lowered = lambda: jax.jit(_call(chains, last, lanes)).lower(*args)
        if accelerator:
            executables[last] = lowered().compile()
        else:
            executables[last] = cache.loaded("chains", (*static, last), args, lowered)

    def run_chunk(offset: int, count: int, resume=None):
        """Chains `offset .. offset + count - 1` (`resume`: the family's per-call input)."""
        resume = fresh if resume is None else resume
        if count in executables and (resume is None or _shared(resume)):
            return executables[count](key, np.int32(offset), params, problem, resume)
        return run(chains, None, key, count, params, problem, offset, resume, lanes=lanes)

    run_chunk.lanes = lanes  # type: ignore[attr-defined]
    return run_chunk
