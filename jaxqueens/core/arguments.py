"""The one boundary check of the arguments a user passes to a public function (pure Python).

Every public driver checks its numbers here before any work, so a wrong type or a value out of
range is a one-line `QueensError` naming the argument and the valid range, never a JAX or
stdlib error from deep inside, and never a silent conversion (`seed=1.5`, `chains=2.5`,
`toroidal="no"`). The module imports neither JAX nor NumPy arrays beyond the scalar types, so
the command line runs the same checks before JAX is imported.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable
from typing import Any, Literal, overload

import numpy as np

from jaxqueens.errors import QueensError, clip

INT32_MAX = 2**31 - 1
"""Largest count a 32-bit JAX integer holds: the default upper bound of `integer`."""
SEED_MAX = 2**32 - 1
"""Seeds are 32-bit: `jax.random.key` keeps 32 bits without x64 (`key(2**32)` is `key(0)`),
so every seed that gives its own results lies in `0..SEED_MAX`."""


def _shown(value: Any) -> str:
    return clip(repr(value))


def _range(lo: int | float | None, hi: int | float | None) -> str:
    if lo is not None and hi is not None:
        return f"{lo:,}..{hi:,}" if isinstance(lo, int) and isinstance(hi, int) else f"{lo}..{hi}"
    if lo is not None:
        return f">= {lo:,}" if isinstance(lo, int) else f">= {lo}"
    return f"<= {hi:,}" if isinstance(hi, int) else f"<= {hi}"


WHOLE_NUMBER = r"[+-]?[0-9]+"
"""A whole number as every file format spells it: an optional sign, then ASCII digits."""


def is_integer(value: Any) -> bool:
    """Whether a value is a Python or NumPy integer (a bool is not).

    Args:
      value: any value.

    Returns:
      True for an integer.
    """
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


@overload
def integer(
    value: Any,
    name: str,
    lo: int | None = ...,
    hi: int | None = ...,
    *,
    optional: Literal[False] = ...,
) -> int: ...


@overload
def integer(
    value: Any, name: str, lo: int | None = ..., hi: int | None = ..., *, optional: bool
) -> int | None: ...


def integer(
    value: Any,
    name: str,
    lo: int | None = None,
    hi: int | None = INT32_MAX,
    *,
    optional: bool = False,
) -> int | None:
    """A checked integer: never a bool, float or complex, within `lo..hi`.

    Args:
      value: the value given.
      name: the parameter's name, for the message.
      lo: the least value allowed (None: no bound).
      hi: the greatest value allowed (None: no bound).
      optional: let None pass through.

    Returns:
      `value` as a Python int (or None, if optional).

    Raises:
      QueensError: naming `name`, the value and the valid range.
    """
    if value is None and optional:
        return None
    if not is_integer(value):
        raise QueensError(
            f"{name} must be an integer ({_range(lo, hi)}), got {_shown(value)} "
            f"({type(value).__name__})",
            param=name,
        )
    value = operator.index(value)
    if lo is not None and value < lo:
        what = ": give a positive integer" if lo == 1 else ""
        raise QueensError(f"{name} must be at least {lo:,}, got {_shown(value)}{what}", param=name)
    if hi is not None and value > hi:
        raise QueensError(
            f"{name} must be at most {hi:,}, got {_shown(value)}"
            + (" (counts are 32-bit)" if hi == INT32_MAX else ""),
            param=name,
        )
    return value


def seed(value: Any, name: str = "seed") -> int:
    """A checked random seed: an integer in `0..SEED_MAX`.

    Args:
      value: the value given.
      name: the parameter's name, for the message.

    Returns:
      The seed as a Python int.

    Raises:
      QueensError: naming `name`, the value and the valid range.
    """
    return integer(value, name, 0, SEED_MAX)


@overload
def real(
    value: Any,
    name: str,
    lo: float | None = ...,
    hi: float | None = ...,
    *,
    lo_open: bool = ...,
    hi_open: bool = ...,
    optional: Literal[False] = ...,
) -> float: ...


@overload
def real(
    value: Any,
    name: str,
    lo: float | None = ...,
    hi: float | None = ...,
    *,
    lo_open: bool = ...,
    hi_open: bool = ...,
    optional: bool,
) -> float | None: ...


def real(
    value: Any,
    name: str,
    lo: float | None = None,
    hi: float | None = None,
    *,
    lo_open: bool = False,
    hi_open: bool = False,
    optional: bool = False,
) -> float | None:
    """A checked finite real number (ints allowed; bool, complex, strings, nan and inf refused).

    Args:
      value: the value given.
      name: the parameter's name, for the message.
      lo: the least value allowed (None: no bound).
      hi: the greatest value allowed (None: no bound).
      lo_open: `lo` itself is excluded.
      hi_open: `hi` itself is excluded.
      optional: let None pass through.

    Returns:
      `value` as a float (or None, if optional).

    Raises:
      QueensError: naming `name`, the value and the valid range.
    """
    if value is None and optional:
        return None
    real_type = isinstance(value, (int, float, np.integer, np.floating))
    if not real_type or isinstance(value, (bool, np.bool_)) or not math.isfinite(float(value)):
        raise QueensError(
            f"{name} must be a finite number, got {_shown(value)} ({type(value).__name__})",
            param=name,
        )
    x = float(value)
    low_bad = lo is not None and (x <= lo if lo_open else x < lo)
    high_bad = hi is not None and (x >= hi if hi_open else x > hi)
    if low_bad or high_bad:
        left = "" if lo is None else ("(" if lo_open else "[") + f"{lo}"
        right = "" if hi is None else f"{hi}" + (")" if hi_open else "]")
        span = f"{left}, {right}" if lo is not None and hi is not None else None
        want = (
            f"in {span}"
            if span
            else (f"{'above' if lo_open else 'at least'} {lo}")
            if lo is not None
            else f"{'below' if hi_open else 'at most'} {hi}"
        )
        raise QueensError(f"{name} = {value!r} is out of range: give a number {want}", param=name)
    return x


@overload
def seconds(value: Any, name: str, *, optional: Literal[False] = ...) -> float: ...


@overload
def seconds(value: Any, name: str, *, optional: bool) -> float | None: ...


def seconds(value: Any, name: str, *, optional: bool = False) -> float | None:
    """A checked positive, finite number of seconds (an interval of inf would never fire).

    Args:
      value: the value given.
      name: the parameter's name, for the message.
      optional: let None pass through.

    Returns:
      The seconds as a float (or None, if optional).

    Raises:
      QueensError: naming `name` and the value.
    """
    return real(value, name, 0.0, None, lo_open=True, optional=optional)


def flag(value: Any, name: str) -> bool:
    """A checked `True` or `False` (NumPy's bool too; anything else, `"no"` included, is refused).

    Args:
      value: the value given.
      name: the parameter's name, for the message.

    Returns:
      The value as a Python bool.

    Raises:
      QueensError: naming `name` and the value.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise QueensError(f"{name} must be True or False, got {_shown(value)}", param=name)
    return bool(value)


def choice(value: Any, name: str, options: Iterable[str]) -> str:
    """A checked choice among strings.

    Args:
      value: the value given.
      name: the parameter's name, for the message.
      options: the strings allowed.

    Returns:
      `value`.

    Raises:
      QueensError: naming `name`, the value and the options.
    """
    options = tuple(options)
    if not isinstance(value, str) or value not in options:
        raise QueensError(
            f"{name} {_shown(value)} is unknown; use one of {', '.join(options)}", param=name
        )
    return value


def ascii_number(text: str) -> str:
    """`text` itself, when it holds ASCII characters only: the one rule for the text of a
    number (`-n 8`, `--set chains=100`, `FILE.param:8`), which `int` and `float`
    alone would break by reading `８` as 8.

    Args:
      text: The text of a number, as the user wrote it.

    Returns:
      `text`, for `int` or `float` to read (which may still refuse it: `"x"`).

    Raises:
      QueensError: naming the text and, where it is a number in other digits, its ASCII form.
    """
    if text.isascii():
        return text
    fix = "write it with the digits 0-9"
    for kind in (int, float):
        try:
            fix = f"write {kind(text)}"
            break
        except ValueError:
            continue
    raise QueensError(f"{clip(text)!r} is not written with the ASCII digits 0-9; {fix}")


FLAGS = {"max_steps": "--maxsteps", "seconds": "--time", "n": "-n"}
"""Command-line flags of the parameters whose flag is not `--` and the name with `-` for `_`."""


def flag_of(param: str) -> str:
    """The command line's flag of a drivers' parameter.

    Args:
      param: the parameter (`max_steps`), perhaps glossed in parentheses after a space
        (`cap (the enumeration cap)`: the flag is `cap`'s).

    Returns:
      Its flag (`--maxsteps`).
    """
    param = param.split(" (")[0]
    return FLAGS.get(param, "--" + param.replace("_", "-"))


def unused(command: str, shown: str, option: str, who: str) -> QueensError:
    """The one-line refusal of an option the run's setting does not use.

    Args:
      command: the command (`"anneal"`, `"compare sa"`).
      shown: the deciding setting as given (`"--method ls"`).
      option: the option refused (`alpha`).
      who: the settings that use it (`"SA (--method sa)"`).

    Returns:
      The error to raise: `anneal --method ls does not use alpha (--alpha): only SA ... does`.
    """
    return QueensError(
        f"{command} {shown} does not use {option} ({flag_of(option)}): only {who} does; drop it"
    )
