"""Where a run's results came from: the command line, the versions, the platform, CPU, git commit,
XLA flags and devices, the seed, every effective setting and the config file's text.

`main` begins a `Record` of the run before the command works and hands it to the command,
which adds the values it resolved itself (`settle`: defaults that depend on n or on the path
taken) and gives it to the writer of its `summary.json`: `Record.block` is that file's `run`
block. `report.html` shows the same environment (`environment`, `config_text`). Nothing here
imports JAX: the devices are asked only of a JAX that the command has already loaded.
"""

from __future__ import annotations

import functools
import os
import platform
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jaxqueens import _lazy
from jaxqueens._version import __version__

metadata = _lazy.load("importlib.metadata")  # imported only when a record needs it

PACKAGES = ("jax", "jaxlib", "numpy", "matplotlib")  # versions a record names, beside python
GIT_TIMEOUT = 2.0
"""Seconds `git rev-parse HEAD` may take before the commit is recorded as unknown."""
MAX_CONFIG_BYTES = 1 << 16  # the most of a --config file's text a record holds (then cut)


def versions() -> dict[str, str | None]:
    """Versions of jaxqueens, python and `PACKAGES`, from installed metadata (nothing imported);
    None for a package that is not installed."""
    out: dict[str, str | None] = {"jaxqueens": __version__, "python": platform.python_version()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


@functools.cache
def commit() -> str | None:
    """The git commit of the checkout this package runs from (`git rev-parse HEAD`, given
    `GIT_TIMEOUT` seconds); None when the package is installed rather than checked out, or git
    is missing or slow."""
    root = Path(__file__).resolve().parents[len(__name__.split(".")) - 1]  # above jaxqueens/
    if not (root / ".git").exists():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    head = done.stdout.strip()
    return head if done.returncode == 0 and head else None


@functools.cache
def cpu() -> str | None:
    """The CPU's model name: `/proc/cpuinfo`'s first "model name", else
    `platform.processor`; None when neither says."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or None


def config_text(path: Any) -> str | None:
    """The first `MAX_CONFIG_BYTES` bytes of the `--config` file's text, with a last line
    saying when it was cut; None for no path (anything but a non-empty str) or a file that
    cannot be read."""
    if not isinstance(path, str) or not path:
        return None
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
    except OSError:
        return None
    text = data[:MAX_CONFIG_BYTES].decode("utf-8", errors="replace")
    if len(data) > MAX_CONFIG_BYTES:
        text += f"\n# ... cut: the first {MAX_CONFIG_BYTES:,} bytes of {path}\n"
    return text


def devices() -> dict[str, Any] | None:
    """The `backend`, `processes` and `devices` (their names) JAX runs on; None when the
    command has not loaded JAX (it is never imported here)."""
    if not _lazy.is_loaded("jax"):
        return None
    jax = sys.modules["jax"]
    return {
        "backend": jax.default_backend(),
        "processes": jax.process_count(),
        "devices": [str(d) for d in jax.devices()],
    }


def _plain(value: Any) -> Any:
    """`value` as data a JSON document holds (other objects as their text)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)


def environment() -> dict[str, Any]:
    """What the run ran on: `versions`, `platform`, `cpu`, `commit` (None outside a checkout)
    and `xla_flags` (None when unset)."""
    return {
        "versions": versions(),
        "platform": platform.platform(),
        "cpu": cpu(),
        "commit": commit(),
        "xla_flags": os.environ.get("XLA_FLAGS"),
    }


@dataclass(slots=True)
class Record:
    """One run of a command line, built while it runs (`begin`, by `main`): the command, the
    words as typed, every option of the command by config key (defaults filled in) and the
    values the command settled itself, which override them."""

    command: str
    words: list[str]
    options: dict[str, Any]
    settled: dict[str, Any] = field(default_factory=dict)

    def block(self, doc: Mapping[str, Any]) -> dict[str, Any]:
        """The `run` block of the `summary.json` holding `doc`: `command_line` (as typed),
        `argv`, `command`, the `environment`, `devices` (None: JAX never started), `seed` (None
        for a command without one), `settings` (every option, defaults filled in, and the values
        the command resolved) and `config_text` (None without a `--config` file). An option
        still None (its default decided by the command) takes the value of the same name in
        `doc`: in its `config` or `params` object, else at its top."""
        effective = {**self.options, **self.settled}
        sources = [doc.get(k) for k in ("config", "params")] + [doc]
        for source in (s for s in sources if isinstance(s, Mapping)):
            for key, value in source.items():
                if key in effective and effective[key] is None and not isinstance(value, Mapping):
                    effective[key] = _plain(value)
        return {
            "command_line": " ".join(self.words),
            "argv": list(self.words),
            "command": self.command,
            **environment(),
            "devices": devices(),
            "seed": effective.get("seed"),
            "settings": effective,
            "config_text": config_text(effective.get("config")),
        }


def settle(record: Record | None, **values: Any) -> None:
    """Add to `record` settings the command resolved itself (from n, the path or a preset),
    overriding the parsed value of the same name; nothing without a record (a command run
    outside `main`)."""
    if record is not None:
        record.settled.update({k: _plain(v) for k, v in values.items()})


def begin(command: str, words: Sequence[str], options: Mapping[str, Any]) -> Record:
    """The record of a run starting: the command line as typed (`words`) and every option of
    the command with its parsed value by config key (callables left out)."""
    options = {k: _plain(v) for k, v in options.items() if not callable(v)}
    return Record(command, [str(w) for w in words], options)
