"""Experiment config files (`jaxqueens run CONFIG.toml`): the one strict reader of the format.

A config names a command (`command = "solve"`), optionally `out` and `description`, the
command's long options under `[options]` (`-` written `_`) and, optionally, a `[sweep]` table of
lists (one run per combination). `load_config` reads it (a one-line QueensError for anything
else: not TOML, an unknown top-level key, a table of the wrong type, a value given twice);
`apply_overrides` applies `--set key=value` and refuses a key the sweep sets. The command line
checks each key's type against the command's parser.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path

from jaxqueens.errors import QueensError
from jaxqueens.io import files

TABLES = ("solvers",)  # tables of named tables a command may take (compare's [solvers.NAME])
TOP_KEYS = {"command", "out", "options", "sweep", "description", *TABLES}
MAX_CONFIG_BYTES = 1 << 20  # a config is a few lines; a larger file is refused unread
NOT_IN_CONFIGS = {  # commands a config cannot name, and why
    **dict.fromkeys(("show", "check", "render"), "it takes a board FILE on the command line"),
    "complete": "it takes instance files on the command line; run jaxqueens complete FILES",
    "run": "a config cannot run another config",
}


def load_config(path: str | Path) -> dict:
    """The config in TOML file `path` (a regular file only), by top-level key; a one-line
    QueensError naming the file for anything else: not TOML, an unknown top-level key, a
    command that cannot run from a config, a table of the wrong type, a value given twice
    (`out` at the top and under `[options]`, a key under both `[options]` and `[sweep]`)."""
    path = Path(path)
    data = files.read_input(
        path, QueensError, max_bytes=MAX_CONFIG_BYTES, too_large="too large for a config file"
    )
    try:
        cfg = tomllib.loads(files.without_bom(data).decode("utf-8"))
    except UnicodeDecodeError:
        raise QueensError(f"{path}: not UTF-8 text (a binary file?); pass a TOML config") from None
    except tomllib.TOMLDecodeError as err:
        raise QueensError(f"{path}: not valid TOML ({err})") from None
    unknown = set(cfg) - TOP_KEYS
    if unknown:
        raise QueensError(
            f"{path}: unknown key '{sorted(unknown)[0]}' (top-level keys: "
            f"{', '.join(sorted(TOP_KEYS))}; command options go under [options])"
        )
    if not isinstance(cfg.get("command"), str):
        raise QueensError(f"{path}: 'command' must name a command, e.g. command = \"solve\"")
    for key in ("options", "sweep", *TABLES):
        if key in cfg and not isinstance(cfg[key], dict):
            raise QueensError(
                f"{path}: '{key}' must be a table ([{key}] with key = value lines), "
                f"got {type(cfg[key]).__name__}"
            )
    for key in ("out", "description"):
        if key in cfg and not isinstance(cfg[key], str):
            raise QueensError(
                f"{path}: '{key}' must be a "
                f"{'folder name' if key == 'out' else 'string'}, got {cfg[key]!r}"
            )
    for key in TABLES:
        bad = [name for name, v in cfg.get(key, {}).items() if not isinstance(v, dict)]
        if bad:
            raise QueensError(
                f"{path}: '{key}.{bad[0]}' must be a table ([{key}.{bad[0]}] with key = value "
                "lines)"
            )
    _check_given_once(path, cfg)
    return cfg


def _check_given_once(path: Path, cfg: Mapping) -> None:
    """Refuse a value the config gives twice, where one would silently replace the other: `out`
    at the top and under `[options]`, a key under `[options]` that `[sweep]` also sets
    (every run would take the swept value), and a swept `out` (a sweep writes `run-000`,
    `run-001`, ... in its one folder)."""
    options, sweep = cfg.get("options", {}), cfg.get("sweep", {})
    if "out" in cfg and "out" in options:
        raise QueensError(
            f"{path}: 'out' is given twice (out = {cfg['out']!r} at the top and "
            f"out = {options['out']!r} under [options]); keep one"
        )
    if "out" in sweep:
        raise QueensError(
            f"{path}: [sweep] cannot sweep 'out': a sweep writes one folder per setting "
            "(run-000, run-001, ...) inside its out; drop it from [sweep]"
        )
    both = [key for key in options if key in sweep]
    if both:
        raise QueensError(
            f"{path}: '{both[0]}' is given under [options] and swept under [sweep], where "
            f"every run would replace it; keep one (drop {both[0]} from [options] or [sweep])"
        )


def tables_of(cfg: Mapping) -> dict:
    """The tables of named tables (`TABLES`) a parsed config has, key -> table."""
    return {key: cfg[key] for key in TABLES if key in cfg}


def check_command(command: str, where: str, runnable) -> None:
    """Refuse, naming it and the commands a config runs, a `command` a config cannot run
    (`NOT_IN_CONFIGS`) or that is not among `runnable`; `where`: the config, for the message."""
    runnable = [c for c in runnable if c not in NOT_IN_CONFIGS]
    if command in NOT_IN_CONFIGS:
        raise QueensError(
            f"{where}: 'command' = '{command}' cannot run from a config "
            f"({NOT_IN_CONFIGS[command]}); configs run {', '.join(runnable)}"
        )
    if command not in runnable:
        raise QueensError(
            f"{where}: 'command' must be one of {', '.join(runnable)}, got {command!r}"
        )


def apply_overrides(options: dict, sweep: Mapping, overrides: Mapping, where: str) -> dict:
    """The config's options with `--set` values `overrides` (key -> value) applied, as a new
    dict; a key the config's `sweep` sets is a QueensError (every run of the sweep would replace
    it; `where`: the config, for the message)."""
    for key in overrides:
        if key in sweep:
            values = ", ".join(map(repr, sweep[key])) if isinstance(sweep[key], list) else ""
            raise QueensError(
                f"--set {key}: {where} sweeps '{key}' ([sweep] {key} = [{values}]), which "
                f"would replace it in every run; drop the --set or the sweep key"
            )
    return {**options, **overrides}
