"""Where a run's results came from: the command line, the versions, the platform and devices, the
seed and every effective setting.

The command line registers the run before the command works (:func:`begin`, by
:mod:`jaxqueens.cli.main`); a command adds the values it resolved itself (:func:`settle`:
defaults that depend on n or on the path taken). :func:`record` is then the ``run`` block of
every ``summary.json`` (:func:`jaxqueens.io.tables.write_json` adds it) and what ``report.html``
shows in its command, settings and environment sections (:mod:`jaxqueens.io.report`): one
gathering, two readers. Nothing here imports JAX: the devices are asked only of a JAX that the
command has already loaded.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from jaxqueens import _lazy
from jaxqueens._version import __version__

metadata = _lazy.load("importlib.metadata")  # 12 ms at every start otherwise

PACKAGES = ("jax", "jaxlib", "numpy", "matplotlib")
"""Packages whose installed versions a record names (beside jaxqueens and python)."""

_RUN: dict[str, Any] | None = None


def versions() -> dict[str, str | None]:
    """Versions of jaxqueens, python and :data:`PACKAGES` (installed metadata: nothing is
    imported)."""
    out: dict[str, str | None] = {"jaxqueens": __version__, "python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def devices() -> dict[str, Any] | None:
    """The backend, process count and devices JAX runs on; None when the command has not loaded
    JAX (it is never imported here)."""
    if not _lazy.is_loaded("jax"):
        return None
    jax = sys.modules["jax"]
    return {
        "backend": jax.default_backend(),
        "processes": jax.process_count(),
        "devices": [str(d) for d in jax.devices()],
    }


def _plain(value: Any) -> Any:
    """``value`` as data a JSON document holds (other objects as their text)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


def begin(
    command: str, words: Sequence[str], options: Mapping[str, Any], given: Mapping[str, Any]
) -> None:
    """Register the run: its ``command``, the command line's ``words`` (``jaxqueens ...``),
    every option of the command with its parsed value (``options``, by config key; argparse's
    defaults filled in) and the options the user gave (``given``)."""
    global _RUN
    _RUN = {
        "command": command,
        "words": [str(w) for w in words],
        "options": {k: _plain(v) for k, v in options.items() if not callable(v)},
        "given": sorted(given),
        "settled": {},
    }


def settle(**values: Any) -> None:
    """Record settings the command resolved itself (a default chosen from n, the path or a
    preset), overriding the parsed values of the same name; nothing without a run."""
    if _RUN is not None:
        _RUN["settled"].update({k: _plain(v) for k, v in values.items()})


def end() -> None:
    """Forget the run (the command has finished)."""
    global _RUN
    _RUN = None


def active() -> bool:
    """A run is registered (a command of the command line is running)."""
    return _RUN is not None


def environment() -> dict[str, Any]:
    """Versions and platform."""
    return {"versions": versions(), "platform": platform.platform()}


def settings() -> dict[str, Any]:
    """Every setting of the run: the parsed options, then what the command resolved."""
    if _RUN is None:
        return {}
    return {**_RUN["options"], **_RUN["settled"]}


def record(doc: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """The run's record (None without a run): ``command_line`` (as typed), ``argv``,
    ``command``, ``versions``, ``platform``, ``devices`` (None: JAX never started), ``seed``
    (the effective one; None for a command without one) and ``settings`` (every option, defaults
    filled in, and the values the command resolved). An option still None (its default decided
    by the command) takes the value of the same name in ``doc`` (the summary the record goes
    into), where the command put the value it used: in its ``config`` or ``params`` object,
    else at its top."""
    if _RUN is None:
        return None
    effective = settings()
    doc = doc or {}
    sources = [doc.get(k) for k in ("config", "params")] + [doc]
    for source in (s for s in sources if isinstance(s, Mapping)):
        for key, value in source.items():
            if key in effective and effective[key] is None and not isinstance(value, Mapping):
                effective[key] = _plain(value)
    env = environment()
    return {
        "command_line": " ".join(_RUN["words"]),
        "argv": list(_RUN["words"]),
        "command": _RUN["command"],
        "versions": env["versions"],
        "platform": env["platform"],
        "devices": devices(),
        "seed": effective.get("seed"),
        "settings": effective,
    }
