"""Many independent GA trials, batched: the per-trial kernel vmapped in lockstep.

`jaxqueens.solvers.ga` is written for one trial; every trial of a run does the same number of
generations, so trials advance in lockstep on every backend: `jax.vmap` of the family's `init`,
`initial_metrics` and `generation`, split over the local devices. The trials share one
generation counter, so migration and the chunk's end are real branches. Trial t is keyed
`fold_in(key, t)`, so its result does not depend on the trials beside it, the chunking or the
devices.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax import lax

from jaxqueens.parallel.shard import over_devices
from jaxqueens.solvers import ga
from jaxqueens.solvers.base import chain_keys


@functools.partial(jax.jit, static_argnums=(0, 2))
def init(config: ga.Config, key, trials: int, first, params: ga.Params, problem=None):
    """States [T] of trials `first .. first + trials - 1` and their generation-0 metrics [T].

    Args:
      config: the static GA `Config`.
      key: the run's key; trial t is keyed `fold_in(key, t)`.
      trials: trials to start (static).
      first: the first trial's number.
      params: the GA `Params`, shared by every trial.
      problem: the GA `Problem` (None: the plain board).

    Returns:
      `(states, metrics)`: `State` and generation-0 `Metrics` with a leading [T] axis.
    """
    keys = chain_keys(key, first + jnp.arange(trials, dtype=jnp.int32))
    states = jax.vmap(lambda k: ga.init(k, config, params, problem))(keys)
    return states, jax.vmap(lambda s: ga.initial_metrics(s, config, params))(states)


_SHARED_GEN = ga.State._make(None if f == "gen" else 0 for f in ga.State._fields)
"""vmap axes of a lockstep batch: every field per trial but the generation counter."""


def generations(config: ga.Config, states: ga.State, params: ga.Params, problem, stop, length):
    """`length` generations of every trial of `states` [T] (a `lax.scan`); generations
    past `stop` are skipped (zero metrics), so every chunk has one shape and compiles once.
    The trials must be in the same generation.

    Args:
      config: the static GA `Config`.
      states: `State` [T] of trials in the same generation.
      params: the GA `Params`.
      problem: the GA `Problem`, or None.
      stop: [] int32, the generation after which generations are skipped.
      length: generations in the chunk (static).

    Returns:
      `(states, metrics)`: `State` [T] and `Metrics` [length, T, ...].
    """
    one = jax.vmap(
        lambda s: ga.generation(s, config, params, problem),
        in_axes=(_SHARED_GEN,),
        out_axes=(_SHARED_GEN, 0),
    )

    def skip(s):
        zero = jax.eval_shape(one, s)[1]
        return s, jax.tree.map(lambda x: jnp.zeros(x.shape, x.dtype), zero)

    def body(s, _):
        return lax.cond(s.gen < stop, one, skip, s)

    trials = states.gen.shape[0]
    s, metrics = lax.scan(body, states._replace(gen=states.gen[0]), None, length=length)
    return s._replace(gen=jnp.full((trials,), s.gen, s.gen.dtype)), metrics


def run_chunk(
    config: ga.Config,
    states: ga.State,
    params: ga.Params,
    problem,
    stop,
    length: int,
    num_devices: int = 1,
):
    """[`generations`][jaxqueens.parallel.trials.generations] with the trials split over
    `num_devices` local devices (call it under `jit`; `params` and `problem` are replicated).

    Args:
      config: the static GA `Config`.
      states: `State` [T] of trials in the same generation, T a multiple of `num_devices`.
      params: the GA `Params`.
      problem: the GA `Problem`, or None.
      stop: [] int32, as for `generations`.
      length: generations in the chunk (static).
      num_devices: local devices to split the trials over.

    Returns:
      `(states, metrics)`, as for `generations`.
    """
    local: Callable[..., Any]
    args: tuple[Any, ...]
    if problem is None:  # no empty pytree through shard_map
        local = lambda st, p, sp: generations(config, st, p, None, sp, length)
        args = (states, params, stop)
    else:
        local = lambda st, p, sp, pr: generations(config, st, p, pr, sp, length)
        args = (states, params, stop, problem)
    return over_devices(
        local,
        *args,
        num_devices=num_devices,
        sharded=(True,) + (False,) * (len(args) - 1),
        out_axes=(0, 1),
    )
