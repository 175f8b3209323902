"""``jaxqueens run CONFIG.toml``: experiments from config files, with overrides and sweeps.

A config names a command and its options, exactly the command line's long options with ``_``
for ``-`` (``maxsteps``, ``init_prob``)::

    command = "solve"
    out = "out/solve-32"
    [options]
    n = 32
    chains = 10000
    init = "qs4"
    [sweep]            # optional: one run per combination, one row each in results.csv
    n = [16, 32, 64]

Keys are checked against the command's own parser (unknown key or wrong type: a one-line error
naming the key), ``--set key=value`` overrides them, and the output folder receives
``run.json``: the resolved options, package and JAX versions, devices and seed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

import jax

from jaxqueens._version import __version__
from jaxqueens.errors import QueensError
from jaxqueens.io.tables import write_dict_csv, write_json

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

TOP_KEYS = {"command", "out", "options", "sweep", "description"}


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(sub: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The command's options by config key (long option without dashes, ``-`` as ``_``)."""
    out = {}
    for action in sub._actions:
        longs = [o for o in action.option_strings if o.startswith("--")]
        if longs:
            out[longs[0][2:].replace("-", "_")] = action
        elif action.option_strings == ["-n"]:
            out["n"] = action
    out.pop("help", None)
    return out


def _argv(key: str, value, action: argparse.Action, where: str) -> list[str]:
    """Command-line words for one option, with the type checked."""
    flag = action.option_strings[-1] if action.option_strings != ["-n"] else "-n"
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
        if not isinstance(value, bool):
            raise QueensError(f"{where}: '{key}' must be true or false, got {value!r}")
        return [flag] if value != (isinstance(action, argparse._StoreFalseAction)) else []
    expected = action.type or str
    ok = (isinstance(value, bool) is False) and (
        (expected is int and isinstance(value, int)) or
        (expected is float and isinstance(value, (int, float))) or
        (expected is str and isinstance(value, str)))
    if not ok:
        raise QueensError(f"{where}: '{key}' must be {getattr(expected, '__name__', 'a value')}, "
                          f"got {value!r}")
    if action.choices is not None and value not in action.choices:
        raise QueensError(f"{where}: '{key}' must be one of {', '.join(map(str, action.choices))}, "
                          f"got {value!r}")
    return [flag, str(value)]


def _parse_set(text: str, options: dict[str, argparse.Action]):
    """``key=value`` from ``--set``, the value converted by the option's type."""
    if "=" not in text:
        raise QueensError(f"--set {text!r}: write key=value")
    key, raw = (part.strip() for part in text.split("=", 1))
    if key not in options:
        raise QueensError(f"--set: unknown key '{key}' (valid: {', '.join(sorted(options))})")
    action = options[key]
    if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
        if raw.lower() not in ("true", "false"):
            raise QueensError(f"--set {key}: write true or false, got {raw!r}")
        return key, raw.lower() == "true"
    try:
        return key, (action.type or str)(raw)
    except ValueError:
        raise QueensError(f"--set {key}: {raw!r} is not a valid {getattr(action.type, '__name__', 'value')}") from None


def load_config(path: str | Path) -> dict:
    """Read and shape-check a config file."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            cfg = tomllib.load(f)
    except FileNotFoundError:
        raise QueensError(f"{path}: no such config file; check the path") from None
    except tomllib.TOMLDecodeError as err:
        raise QueensError(f"{path}: not valid TOML ({err})") from None
    unknown = set(cfg) - TOP_KEYS
    if unknown:
        raise QueensError(f"{path}: unknown key '{sorted(unknown)[0]}' (top-level keys: "
                          f"{', '.join(sorted(TOP_KEYS))}; command options go under [options])")
    if not isinstance(cfg.get("command"), str):
        raise QueensError(f"{path}: 'command' must name a command, e.g. command = \"solve\"")
    return cfg


def resolve(cfg: dict, parser: argparse.ArgumentParser, overrides: list[str], where: str):
    """(command, options dict, sweep dict) with every key and type checked."""
    subs = _subparsers(parser)
    command = cfg["command"]
    if command not in subs or command == "run":
        raise QueensError(f"{where}: 'command' must be one of "
                          f"{', '.join(c for c in subs if c != 'run')}, got {command!r}")
    options = _options(subs[command])
    opts = dict(cfg.get("options", {}))
    for key, value in opts.items():
        if key not in options:
            raise QueensError(f"{where}: unknown key '{key}' for {command} "
                              f"(valid: {', '.join(sorted(options))})")
        _argv(key, value, options[key], where)
    for text in overrides:
        key, value = _parse_set(text, options)
        opts[key] = value
    if "out" in cfg:
        opts.setdefault("out", cfg["out"])
    sweep = dict(cfg.get("sweep", {}))
    for key, values in sweep.items():
        if key not in options:
            raise QueensError(f"{where}: unknown sweep key '{key}' for {command}")
        if not isinstance(values, list) or not values:
            raise QueensError(f"{where}: sweep '{key}' must be a non-empty list")
        for value in values:
            _argv(key, value, options[key], where)
    return command, opts, sweep, options


def _record(out: Path, command: str, opts: dict, setting: dict) -> None:
    write_json(out / "run.json", {
        "command": command, "options": opts, "setting": setting,
        "jaxqueens": __version__, "jax": jax.__version__, "python": sys.version.split()[0],
        "backend": jax.default_backend(), "devices": [str(d) for d in jax.devices()],
        "process_count": jax.process_count(), "seed": opts.get("seed", 0),
    })


def cmd_run(args) -> int:
    """Run the config's command once, or once per sweep setting."""
    parser = args.build_parser()
    cfg = load_config(args.config)
    command, opts, sweep, options = resolve(cfg, parser, args.set or [], str(args.config))
    if args.out:
        opts["out"] = args.out
    settings = [dict(zip(sweep, combo)) for combo in itertools.product(*sweep.values())] or [{}]
    rows, code = [], 0
    for i, setting in enumerate(settings):
        run_opts = {**opts, **setting}
        if sweep and "out" in run_opts:
            run_opts["out"] = str(Path(opts["out"]) / f"run-{i:03d}")
        argv = [command] + [w for k, v in run_opts.items() for w in _argv(k, v, options[k], str(args.config))]
        if sweep:
            print(f"== {command} {' '.join(f'{k}={v}' for k, v in setting.items())}")
        sub_args = parser.parse_args(argv)
        code = max(code, sub_args.func(sub_args))
        if "out" in run_opts:
            out = Path(run_opts["out"])
            _record(out, command, run_opts, setting)
            summary = out / "summary.json"
            flat = json.loads(summary.read_text()) if summary.exists() else {}
            rows.append({**setting, **{k: v for k, v in flat.items() if not isinstance(v, (dict, list))}})
    if sweep and "out" in opts:
        write_dict_csv(Path(opts["out"]) / "results.csv", rows)
        print(f"wrote {Path(opts['out']) / 'results.csv'} ({len(rows)} settings)")
    return code


def add_command(sub, build_parser) -> None:
    """Register ``jaxqueens run``; ``build_parser()`` makes the parser whose commands configs name."""
    p = sub.add_parser("run", help="run an experiment from a TOML config (with --set overrides)",
                       description=__doc__.split("\n\n")[1] if __doc__ else None)
    p.add_argument("config", metavar="CONFIG", help="TOML file, e.g. configs/solve_n32.toml")
    p.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override an option of the config (repeatable)")
    p.add_argument("--out", default=None, help="output folder (overrides the config's)")
    p.set_defaults(func=cmd_run, build_parser=build_parser)
