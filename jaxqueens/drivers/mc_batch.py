"""Batched min-conflicts: the one-chain :class:`~jaxqueens.solvers.minconflicts.Kernel` run through
:mod:`jaxqueens.parallel.lanes` (per-chain ``lax.map`` over host devices on CPU, lockstep ``vmap`` with lane
recycling on accelerators), plus the trace of one chain for the classic figures.
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.parallel import chains as _chains
from jaxqueens.solvers.minconflicts import Config, Kernel, Metrics, Result, trace
from jaxqueens.core.rng import chain_seeds


def _start(start):
    return None if start is None else jnp.asarray(start, jnp.int32)


def run_mapped(key, config: Config, num_chains: int, offset=0, num_devices: int | None = None,
               start=None) -> Result:
    """CPU strategy (:func:`jaxqueens.parallel.chains.run_mapped`): a :class:`Result` with a leading [C] axis."""
    return _chains.run_mapped(Kernel(config), key, num_chains, offset, _start(start), num_devices)


def run_lockstep(key, config: Config, num_chains: int, lanes: int = 256, offset=0,
                 start=None) -> Result:
    """Accelerator strategy (:func:`jaxqueens.parallel.chains.run_lockstep`); identical results."""
    return _chains.run_lockstep(Kernel(config), key, num_chains, lanes, offset, _start(start))


def solve(key, config: Config, num_chains: int, offset=0, start=None) -> Result:
    """Solve chains ``offset + [0, num_chains)`` with the strategy of the default backend.

    Args:
        key: a ``jax.random`` key; chain i uses ``fold_in(key, offset + i)``.
        start: optional board [n]: every chain's first attempt starts from it.
    Returns:
        :class:`Result` with a leading [num_chains] axis (device arrays).
    """
    return _chains.run(Kernel(config), key, num_chains, offset, _start(start))


def compile_runner(key, config: Config, chunk: int, start=None) -> Callable[[int, int], Result]:
    """Compile the batched solver for ``chunk`` chains ahead of time; return ``run(offset, count)``.

    The driver times compilation apart from the run and calls ``run`` once per chunk. A call
    with another ``count`` (a short last chunk) compiles that size on first use.
    """
    return _chains.compile_runner(Kernel(config), key, chunk, _start(start))


def trace_chain(key, config: Config, num_steps: int, start=None) -> Metrics:
    """Per-step conflicted queens and attacking pairs of chain 0's first attempt, as host arrays,
    cut after the step at which it solved (or after ``num_steps`` steps)."""
    seed = chain_seeds(key, jnp.arange(1))[0]
    start = _start(start)
    _, metrics = jax.jit(lambda s, b: trace(s, config, num_steps, b))(seed, start)
    metrics = Metrics(*(np.asarray(m) for m in metrics))
    done = np.flatnonzero(metrics.conflicted == 0)
    end = int(done[0]) + 1 if done.size else num_steps
    return Metrics(*(m[:end] for m in metrics))
