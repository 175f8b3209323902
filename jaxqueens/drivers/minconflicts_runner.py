"""The compiled chains of a min-conflicts run: chains per call, work-bounded calls, chain 0's trace.

Every kernel call of `solve` is bounded in work (`BoundedRunner`), so `--time` and Ctrl-C,
checked between calls, hold even when chains restart a million times; a paused chain continues
in the next call, so results never depend on the bound.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.drivers import chains_types, solve_setup
from jaxqueens.parallel import chains as chain_batch
from jaxqueens.parallel import devices as backend
from jaxqueens.parallel import sizing
from jaxqueens.parallel.devices import local_device_count
from jaxqueens.solvers import minconflicts
from jaxqueens.solvers.base import chain_keys
from jaxqueens.solvers.variants import default_max_steps

CALL_SECONDS = 0.5  # target duration of one bounded kernel call (`BoundedRunner`)
FIRST_CALL_STEPS = 1 << 25
"""Steps, over all chains of a chunk, that bound a chunk's first call before the bound adapts to
the measured speed: each chain gets `FIRST_CALL_STEPS // (chunk * (max_steps + n))` attempts."""


def default_chunk(n: int, chains: int | None, max_steps: int | None = None) -> int:
    """Chains per kernel call, a multiple of the local device count: about 2^21 queens and at most
    `devices * solve_setup.CALL_WORK` queen-steps for one attempt of each, split evenly over the
    `chains` asked for (None: unbounded); on an accelerator, enough to fill the device
    (`accelerator_chunk`). `max_steps` per attempt defaults to `default_max_steps`."""
    devices = local_device_count()
    if backend.is_accelerator():  # enough chains to fill the device, results within its memory
        return chain_batch.accelerator_chunk(chains, n, sizing.device_target(), devices)
    steps = default_max_steps(n) if max_steps is None else max_steps
    cap = max(devices, min(8192, (1 << 21) // n, devices * solve_setup.CALL_WORK // (steps * n)))
    if chains is not None:
        calls = -(-chains // cap)
        cap = -(-chains // calls)
    return -(-cap // devices) * devices


def chain_problem(start, mask=None) -> minconflicts.Problem | None:
    """The chains' shared kernel `Problem` of a start board [n] and/or an instance's `Mask` (None:
    neither given)."""
    start = None if start is None else jnp.asarray(start, jnp.int32)
    return None if start is None and mask is None else minconflicts.Problem(start, mask)


def compile_runner(
    key,
    config: minconflicts.Config,
    params: minconflicts.Params,
    chunk: int,
    start=None,
    bounded: bool = False,
    mask=None,
    total: int | None = None,
) -> Callable[[int, int], minconflicts.Result] | BoundedRunner:
    """Compile the batched solver for `chunk` chains ahead of time: `run(offset, count)`, which the
    driver calls once per chunk; chain i uses `fold_in(key, i)`.

    `start` is every chain's first board [n] (or None), `mask` the instance of a constrained config
    (or None). With `bounded` it returns a `BoundedRunner` (each call bounded in work; the same
    results). `total` is the chains the run asks for, when known: their short last chunk is compiled
    here too (another count compiles on first use)."""
    chains = chain_batch.Chains(minconflicts, config)
    run = chain_batch.compile_runner(
        chains, key, chunk, params, chain_problem(start, mask), total=total
    )
    return BoundedRunner(run, config, params, chunk) if bounded else run


class BoundedRunner:
    """`run(offset, count)` whose kernel calls are bounded in work, with the results of an
    unbounded run.

    Each chain may spend at most `cap + 1` attempts in one call; `cap` is a dynamic input
    (`Fresh`), so nothing recompiles when it changes.
    A chain that reaches it pauses (`ChunkResult.paused`); calling again with the same
    `(offset, count)` continues exactly the paused chains from their last attempt (the others
    are skipped), so chains, seeds and results never depend on `cap`. `cap` adapts to the
    measured call time (`CALL_SECONDS`).
    """

    def __init__(self, run, config: minconflicts.Config, params: minconflicts.Params, chunk: int):
        self.run, self.config = run, config
        self.max_restarts = int(params.max_restarts)
        first = FIRST_CALL_STEPS // (max(chunk, 1) * (int(params.max_steps) + config.n))
        self.cap = int(min(self.max_restarts, max(0, first - 1)))
        self._last: tuple[tuple[int, int], chains_types.ChunkResult] | None = None  # the last call

    def _resume(self, prev) -> minconflicts.Fresh | minconflicts.Resume:
        if prev is None:
            return minconflicts.fresh(until=self.cap)
        p = prev.paused
        until = np.minimum(prev.restarts.astype(np.int64) + 1 + self.cap, minconflicts.NO_PAUSE)
        return minconflicts.Resume(
            restarts=np.where(p, prev.restarts, -1).astype(np.int32),
            total_steps=np.where(p, prev.steps, 0).astype(np.int32),
            until=np.where(p, until, -1).astype(np.int32),
        )

    def __call__(self, offset: int, count: int) -> chains_types.ChunkResult:
        prev = (
            self._last[1] if self._last is not None and self._last[0] == (offset, count) else None
        )
        t0 = time.perf_counter()
        out = jax.device_get(self.run(offset, count, self._resume(prev)))
        dt = time.perf_counter() - t0
        paused = ~out.solved & (out.restarts < self.max_restarts)  # minconflicts.paused
        res = chains_types.ChunkResult.of(out, paused=paused)
        if prev is not None:  # the chains that were not paused keep their results
            assert prev.paused is not None  # this runner sets it for every chain
            keep = ~prev.paused
            older = keep
            if prev.best is not None and res.best is not None:
                # a continued chain reports its best board over every call, not only this one
                older = keep | (~res.solved & (prev.best <= res.best))  # ties: the first
            picked: dict[str, Any] = {
                f: _pick(older if f in ("rows", "best") else keep, prev, res, f)
                for f in res._fields
            }
            res = chains_types.ChunkResult(**picked)
        assert res.paused is not None  # set above, for every chain of the call
        if res.paused.any() or dt > 2 * CALL_SECONDS:
            scale = min(4.0, max(0.25, CALL_SECONDS / max(dt, 1e-3)))
            self.cap = int(min(self.max_restarts, max(0, int(scale * (self.cap + 1)) - 1)))
        self._last = ((offset, count), res)
        return res


def _pick(keep: np.ndarray, a, b, field: str) -> np.ndarray | None:
    """Per chain: `a`'s `field` where `keep` [count], else `b`'s (None where either lacks it)."""
    x, y = getattr(a, field), getattr(b, field)
    if x is None or y is None:
        return None
    return np.where(keep.reshape((-1,) + (1,) * (x.ndim - 1)), x, y)


@functools.lru_cache(maxsize=32)
def _trace(config: minconflicts.Config, num_steps: int):
    """`trace` jitted for `(config, num_steps)` (Params
    and the problem are arguments), one function per pair: a repeated trace reuses its compile."""
    return jax.jit(lambda k, p, b: minconflicts.trace(k, config, p, num_steps, b))


def trace_chain(
    key,
    config: minconflicts.Config,
    params: minconflicts.Params,
    num_steps: int,
    start=None,
    mask=None,
) -> minconflicts.Metrics:
    """Per-step conflicted queens and attacking pairs of chain 0's first attempt, at most
    `num_steps`: `Metrics` of host arrays, cut after the step at which the chain solved. `start` is
    every chain's first board [n] (or None), `mask` the instance of a constrained config (or
    None)."""
    chain0 = chain_keys(key, jnp.arange(1))[0]
    _, metrics = _trace(config, num_steps)(chain0, params, chain_problem(start, mask))
    conflicted, pairs = np.asarray(metrics.conflicted), np.asarray(metrics.pairs)
    done = np.flatnonzero(conflicted == 0)
    end = int(done[0]) + 1 if done.size else num_steps
    return minconflicts.Metrics(conflicted[:end], pairs[:end])
