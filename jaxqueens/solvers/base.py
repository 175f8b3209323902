"""The kernel contract every solver family keeps, and its typed-key and argument-check helpers.

Each family is a module `jaxqueens.solvers.<family>` written for one chain, trial, task or
instance (callers batch it): a static `Config`, a sweepable `Params`, a `State` and a `Result`,
and `init`, `step` and `run` taking a typed `jax.random.key`. Every public kernel checks its
arguments at the boundary with the helpers here. The docs' contract page describes the contract
in full.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core.rng import stream_seed
from jaxqueens.errors import QueensError, clip


def as_key(key) -> jax.Array:
    """`key` as a typed `jax.random` key: a typed key as it is, a legacy `uint32[..., 2]`
    key (`jax.random.PRNGKey`) wrapped with the default implementation.

    Args:
      key: a typed key, or a legacy `uint32[..., 2]` key.

    Returns:
      The typed key.

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
    """The `key` of a deterministic family (`count`, `complete`): `None`, or a key
    checked as `as_key` checks it (so a wrong argument fails as it would anywhere else), and
    not used.

    Args:
      key: None, or a key as `as_key` takes it.

    Raises:
      QueensError: a key `as_key` refuses.
    """
    if key is not None:
        as_key(key)


def seed_of(key) -> jax.Array:
    """The 64-bit stream seed uint32 [2] a kernel draws from: 64 bits of the whole key
    (`stream_seed`; so chain `i` of a batch, keyed `fold_in(key, i)`,
    has `chain_seeds`' seed `i`).

    Args:
      key: a typed key, or a legacy `uint32[2]` key.

    Returns:
      uint32 [2].

    Raises:
      QueensError: a key `as_key` refuses.
    """
    return stream_seed(as_key(key))


def chain_keys(key, chain_ids: jax.Array) -> jax.Array:
    """Typed keys [C] of chains `chain_ids` [C]: `fold_in(key, i)`.

    Args:
      key: a typed key, or a legacy `uint32[2]` key.
      chain_ids: [C] integer chain numbers.

    Returns:
      [C] typed keys.

    Raises:
      QueensError: a key `as_key` refuses.
    """
    key = as_key(key)
    return jax.vmap(lambda i: jax.random.fold_in(key, i))(chain_ids)


def _shown(value) -> str:
    return clip(repr(value))


def check_whole(name: str, value, lo: int | None = None, hi: int | None = None) -> int:
    """`value` as an int: a Python or NumPy integer (not a bool, not a float such as `8.0`)
    in `[lo, hi]` (either end open when None).

    Args:
      name: the argument's name, for the message.
      value: the value to check.
      lo: the least value allowed (None: no bound).
      hi: the largest value allowed (None: no bound).

    Returns:
      `value` as an int.

    Raises:
      QueensError: naming `name`, the value and the range.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise QueensError(f"{name} must be a whole number, got {_shown(value)}")
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        where = (
            f"in [{lo}, {hi}]"
            if lo is not None and hi is not None
            else (f"at least {lo}" if lo is not None else f"at most {hi}")
        )
        raise QueensError(f"{name} must be {where}, got {v}")
    return v


def check_real(
    name: str,
    value,
    lo: float | None = None,
    hi: float | None = None,
    *,
    lo_open: bool = False,
    hi_open: bool = False,
) -> float:
    """`value` as a finite float (a number, not a bool) in the range `lo..hi` (an end is
    open with `lo_open`/`hi_open`; None: unbounded).

    Args:
      name: the argument's name, for the message.
      value: the value to check.
      lo: the lower end (None: unbounded).
      hi: the upper end (None: unbounded).
      lo_open: `lo` itself is refused.
      hi_open: `hi` itself is refused.

    Returns:
      `value` as a float.

    Raises:
      QueensError: naming `name`, the value and the range.
    """
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float | np.number):
        raise QueensError(f"{name} must be a number, got {_shown(value)}")
    v = float(value)
    low_bad = lo is not None and (v <= lo if lo_open else v < lo)
    high_bad = hi is not None and (v >= hi if hi_open else v > hi)
    if not math.isfinite(v) or low_bad or high_bad:
        if lo is None and hi is None:
            raise QueensError(f"{name} must be a finite number, got {v}")
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        lo_s = "-inf" if lo is None else f"{lo:g}"
        hi_s = "inf" if hi is None else f"{hi:g}"
        raise QueensError(f"{name} must be a finite number in {left}{lo_s}, {hi_s}{right}, got {v}")
    return v


def check_choice(name: str, value, options) -> str:
    """`value`, one of `options`.

    Args:
      name: the argument's name, for the message.
      value: the value to check.
      options: the names allowed.

    Returns:
      `value`.

    Raises:
      QueensError: naming `name` and the options.
    """
    if not isinstance(value, str) or value not in options:
        raise QueensError(f"{name} must be one of {', '.join(options)}, got {_shown(value)}")
    return value


def _family(cls: type) -> str:
    """The module a class is imported from: its own, less a `_types` suffix (a family's types
    module is re-exported by the family's module)."""
    return cls.__module__.rsplit(".", 1)[-1].removesuffix("_types")


def check_type(name: str, value, cls: type, fix: str = "") -> Any:
    """`value` when it is a `cls` (a family's `Config`, `Params`, `State` or
    `Problem`); a dict, a tuple or another family's class is refused.

    Args:
      name: the argument's name, for the message.
      value: the value to check.
      cls: the class expected.
      fix: how to make one, for the message.

    Returns:
      `value`.

    Raises:
      QueensError: naming the expected class, what was given and `fix`.
    """
    if not isinstance(value, cls):
        want = f"{_family(cls)}.{cls.__qualname__}"
        got = type(value)
        given = got.__qualname__
        if got.__module__ != "builtins":
            given = f"{_family(got)}.{given}"
        raise QueensError(f"{name} must be a {want}, got a {given}{': ' + fix if fix else ''}")
    return value


def concrete(value) -> np.ndarray | None:
    """`value` as a host array where it can be read without tracing (a NumPy or a concrete
    JAX array, a Python number); None inside `jit`/`vmap` (a tracer).

    Args:
      value: an array, a number, or a tracer.

    Returns:
      A NumPy array, or None for a tracer.
    """
    if isinstance(value, jax.core.Tracer):
        return None
    return np.asarray(value)


def _kind(dtype) -> str:
    d = np.dtype(dtype)
    if d == np.bool_:
        return "bool"
    if np.issubdtype(d, np.integer):
        return "integer"
    if np.issubdtype(d, np.floating):
        return "float"
    return str(d)


def check_params(params, cls: type, template, family: str) -> Any:
    """`params` when it is a `cls` whose every leaf has the shape and the kind of dtype
    (integer, float) of the family's defaults `template`: a swept `Params` reaches the kernel
    per sweep point, with the defaults' shapes.

    Args:
      params: the value to check.
      cls: the family's `Params` class.
      template: the family's default `Params` (shapes and dtypes to match).
      family: the family's module name, for the message.

    Returns:
      `params`.

    Raises:
      QueensError: a wrong type, a missing leaf, a wrong shape or dtype, naming the field.
    """
    check_type("params", params, cls, f"make it with {family}.default_params(config)")
    for field, value, want in zip(params._fields, params, template, strict=True):
        if value is None:
            raise QueensError(f"params.{field} is missing: make params with default_params(config)")
        try:
            shape, dtype = jnp.shape(value), jnp.result_type(value)
        except TypeError as err:
            raise QueensError(f"params.{field} must be an array, got {_shown(value)}") from err
        if shape != jnp.shape(want) or _kind(dtype) != _kind(jnp.result_type(want)):
            raise QueensError(
                f"params.{field} must be {_kind(jnp.result_type(want))} of shape "
                f"{list(jnp.shape(want))}, got {dtype}{list(shape)}"
            )
    return params


def int32_params(cls: Any, values) -> Any:
    """A family's `Params` (`cls`) of NumPy int32 scalars: building them dispatches no XLA
    operation (a short job's first eager conversions compile); jit and vmap take them as they
    take JAX arrays.

    Args:
      cls: the family's `Params` class.
      values: one whole number per field.

    Returns:
      A `cls`.
    """
    return cls._make(np.asarray(v, np.int32) for v in values)


def check_kernel_args(
    family: str,
    config,
    config_cls: type,
    params,
    template,
    check_values,
    state=None,
    state_cls: type | None = None,
) -> None:
    """A kernel's `config`, `params` and `state` checked at its boundary: their types, the
    params' shapes and dtypes (`check_params`), and their values where concrete.

    Args:
      family: the family's module name, for the messages.
      config: the value to check as a `config_cls`.
      config_cls: the family's `Config` class.
      params: the value to check as the family's `Params` (the class of `template`).
      template: the family's `Params` of 0-d leaves with the right dtypes.
      check_values: called with the params' values (Python scalars) when all are concrete.
      state: the value to check as a `state_cls`, or None (not checked).
      state_cls: the family's `State` class.

    Raises:
      QueensError: a wrong type, shape or dtype, or a value out of range.
    """
    check_type("config", config, config_cls)
    check_params(params, type(template), template, family)
    host = [concrete(v) for v in params]
    if all(h is not None and h.ndim == 0 for h in host):
        check_values([h.item() for h in host])  # type: ignore[union-attr]
    if state is not None:
        assert state_cls is not None
        check_type("state", state, state_cls, f"make it with {family}.init")


def check_rows(name: str, rows, n: int) -> jax.Array:
    """A board `rows` [n] given to a kernel (a start board): any integer dtype, shape `[n]`;
    where it is concrete, every row in `[0, n)`. Returns it as int32. A traced board's values
    cannot be read: the kernel must not trust them ([`on_board`][jaxqueens.solvers.base.on_board]).

    Args:
      name: the argument's name, for the message.
      rows: the board to check.
      n: the board size.

    Returns:
      int32 [n].

    Raises:
      QueensError: a float or bool board, a wrong length, a row off the board.
    """
    try:
        shape, dtype = jnp.shape(rows), jnp.result_type(rows)
    except TypeError as err:
        raise QueensError(f"{name} must be an integer array [n], got {_shown(rows)}") from err
    if _kind(dtype) != "integer":
        raise QueensError(f"{name} must hold whole row numbers, got {dtype}: pass an int32 array")
    if shape != (n,):
        raise QueensError(f"{name} must have shape [{n}] (one row per column), got {list(shape)}")
    host = concrete(rows)
    if host is not None and host.size and (host.min() < 0 or host.max() >= n):
        bad = int(np.argmax((host < 0) | (host >= n)))
        raise QueensError(
            f"{name}[{bad}] = {int(host[bad])} is off the board: rows lie in 0..{n - 1}"
        )
    return jnp.asarray(rows).astype(jnp.int32)


def check_chain_problem(problem, cls: type, n: int, constrained: bool) -> Any:
    """A chain family's `Problem` (`cls`, with `start` and `mask`; None: the plain board):
    its type, its start board ([`check_rows`][jaxqueens.solvers.base.check_rows]), and its instance
    when the config is constrained.

    Args:
      problem: the value to check (None: the plain board).
      cls: the family's `Problem` class.
      n: the board size.
      constrained: the config is constrained (a mask is required).

    Returns:
      The `Problem` (`cls()` for None).

    Raises:
      QueensError: a wrong type, a bad start board, or a constrained config without a mask.
    """
    problem = cls() if problem is None else check_type("problem", problem, cls)
    if problem.start is not None:
        check_rows("problem.start", problem.start, n)
    if constrained and problem.mask is None:
        raise QueensError("Config(constrained=True) needs Problem(mask=...): the instance")
    return problem


def check_budget_params(params, cls: Any, family: str, most: int) -> Any:
    """An exact family's `Params` (`cls`, one int32 `budget` [] leaf): its type and shape,
    and its budget in `0..most` where concrete.

    Args:
      params: the value to check.
      cls: the family's `Params` class.
      family: the family's module name, for the message.
      most: the largest budget allowed.

    Returns:
      `params`.

    Raises:
      QueensError: a wrong type, shape or dtype, or a budget out of range.
    """
    check_params(params, cls, cls._make([np.zeros((), np.int32)]), family)
    budget = concrete(params.budget)
    if budget is not None:
        check_whole("params.budget", budget.item(), 0, most)
    return params


def on_board(rows: jax.Array, fallback: jax.Array, n: int) -> jax.Array:
    """`rows` [n] with every row outside `[0, n)` replaced by `fallback`'s row of that
    column (a traced start board: the kernel never places a queen off the board).

    Args:
      rows: [n] int32 board.
      fallback: [n] int32 board whose rows replace those off the board.
      n: the board size.

    Returns:
      [n] int32.
    """
    return jnp.where((rows >= 0) & (rows < n), rows, fallback)


def lockstep_config(config: Any) -> Any:
    """The same chains formulated for lockstep lanes: line counts by one scatter-add.

    Args:
      config: a family's static `Config` with a `scatter_counts` field.

    Returns:
      The lockstep `Config`.
    """
    return dataclasses.replace(config, scatter_counts=True)
