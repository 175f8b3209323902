"""The kernel contract every solver family keeps, and its typed-key helpers.

Each family is a module ``jaxqueens.solvers.<family>`` written for **one** chain, trial, task or
instance (callers batch it; :mod:`jaxqueens.parallel` chooses how):

============  ================================================================================
``Config``    frozen dataclass, jit-static: what fixes shapes and compiled branches (n, the
              init, the neighbour, capacities). A new value compiles anew.
``Params``    ``NamedTuple`` of 0-d (or fixed-shape) arrays: every number a user might sweep
              (restart period, temperatures, rates, budgets). New values never recompile, and
              ``jax.vmap`` over a stacked ``Params`` runs a whole sweep in one compiled call.
              ``default_params(config)`` gives the package's defaults.
``State``     ``NamedTuple`` with a shape comment on every field.
``Result``    ``NamedTuple``: what one run reports (chain families: at least ``rows [n]``,
              ``solved``, ``steps``).
``init``      ``init(key, config, params[, problem]) -> State``
``step``      ``step(state, config, params[, problem]) -> State``: one step (a no-op once done)
``run``       ``run(key, config, params[, problem]) -> Result``: until solved or out of budget
============  ================================================================================

``key`` is a typed ``jax.random.key`` (a legacy ``uint32[2]`` key from ``jax.random.PRNGKey``
is accepted); it is consumed. The exact families (``count``, ``complete``) draw nothing at random:
they take the same arguments in the same places, so one harness calls every family alike, and
their ``key`` may be ``None`` (a key given is checked, :func:`ignore_key`, and unused; their
results never depend on it). ``problem`` is the dynamic description of what is solved beyond
``n``: optional for the chain families (a start board, a constrained instance), required by the
exact ones (the task a count searches, the instance a completion decides).
Inside the hot loops a counter-based integer hash seeded once from the key replaces threefry
(25x cheaper per step on the CPU, ``shared/PERFORMANCE.md``; :mod:`jaxqueens.core.rng`); its
seed is 64 bits drawn from the whole key (:func:`seed_of`), so chains do not share streams.

Chain families (min-conflicts, LS/TA/SA) add the hooks that :mod:`jaxqueens.parallel.chains`
batches them with (one chain per ``lax.map`` iteration on a CPU, lockstep lanes with refill on
an accelerator): ``done(state, config, params)``, ``result(state, config, params)``,
``finish(state, config, params[, problem]) -> Result`` (``run`` from a given state), and, for
chains that restart, ``advance`` (one step of the current attempt), ``retry`` and ``restart``, so
that lockstep lanes restart only when some lane needs it. A plain ``jax.vmap`` of ``run`` is
correct but lockstep: every lane waits for the slowest chain; for many chains use
:func:`jaxqueens.parallel.chains.run`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxqueens.core.rng import stream_seed
from jaxqueens.errors import QueensError


def as_key(key) -> jax.Array:
    """``key`` as a typed ``jax.random`` key: a typed key as it is, a legacy ``uint32[..., 2]``
    key (``jax.random.PRNGKey``) wrapped with the default implementation.

    Raises:
      QueensError: anything else (a plain integer seed, a float array), naming the fix.
    """
    dtype = getattr(key, "dtype", None)
    if dtype is not None and jnp.issubdtype(dtype, jax.dtypes.prng_key):
        return key
    if dtype == jnp.uint32 and jnp.shape(key)[-1:] == (2,):
        return jax.random.wrap_key_data(key)
    shown = f"{dtype}{list(jnp.shape(key))}" if dtype is not None else type(key).__name__
    raise QueensError(
        f"a kernel key must be a jax.random.key (or a legacy jax.random.PRNGKey), got {shown}: "
        "pass jax.random.key(seed)"
    )


def ignore_key(key) -> None:
    """The ``key`` of a deterministic family (``count``, ``complete``): ``None``, or a key
    checked as :func:`as_key` checks it (so a wrong argument fails as it would anywhere else), and
    not used."""
    if key is not None:
        as_key(key)


def seed_of(key) -> jax.Array:
    """The 64-bit stream seed uint32 [2] a kernel draws from: 64 bits of the whole key
    (:func:`jaxqueens.core.rng.stream_seed`; so chain ``i`` of a batch, keyed ``fold_in(key, i)``,
    has :func:`jaxqueens.core.rng.chain_seeds`' seed ``i``)."""
    return stream_seed(as_key(key))


def chain_keys(key, chain_ids: jax.Array) -> jax.Array:
    """Typed keys [C] of chains ``chain_ids`` [C]: ``fold_in(key, i)``."""
    key = as_key(key)
    return jax.vmap(lambda i: jax.random.fold_in(key, i))(chain_ids)
