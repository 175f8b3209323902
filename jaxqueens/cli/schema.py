"""The one schema of every command's options, taken from the command definitions themselves.

A command defines its options once, with `add_argument` on a `Parser`, which keeps them
(`Parser.options`, `Parser.commands`): config files are read against the same definitions as the
command line. A config key is a long option with `_` for `-` (`n` for `-n`); its value is checked
against the option's type, choices and 32-bit range and becomes the command line's words.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from jaxqueens.cli.options import Integer, Real, int_range_error
from jaxqueens.errors import QueensError
from jaxqueens.io.config import load_config, tables_of


class Option(NamedTuple):
    """One option of a command, as a config file names it."""

    key: str  # config key: the long option without its dashes, "-" written "_"
    flag: str  # the option string the command line is given (the longest, or "-n")
    action: argparse.Action  # the definition: dest, type, choices, const (flags take no value)
    is_repeated: bool = False  # given once per value (action="append"): a config gives a list

    @property
    def is_flag(self) -> bool:
        """A switch that takes no value (`store_true`/`store_false`)."""
        return self.action.nargs == 0

    @property
    def kind(self) -> type:
        """The value type: `int` for every integer type, `float`, else `str`."""
        kind = self.action.type
        if isinstance(kind, type) and issubclass(kind, int):
            return int
        return float if isinstance(kind, type) and issubclass(kind, float) else str

    @property
    def is_list(self) -> bool:
        """A comma list (`metavar="LIST"`): a config may give it as a TOML list."""
        return self.action.metavar == "LIST"


class Table(NamedTuple):
    """A config table of named tables a command takes (`[solvers.sa]`: compare's per-solver
    settings) and the repeatable option that gives the same on the command line (`--set
    sa.rounds=100`); `entries(name)`: the options entry `name` takes, by key."""

    option: str  # config key of the repeatable option (action "append") taking NAME.KEY=VALUE
    entries: Callable[[str], dict[str, Option]]


_ASCII_TYPES: dict[Any, type] = {int: Integer, float: Real}
"""The types every option of a `Parser` reads numbers with: ASCII text only (`-n ８` is refused)."""


def _ascii(kwargs: dict[str, Any]) -> dict[str, Any]:
    """`add_argument`'s keywords with `type=int`/`float` read from ASCII text only."""
    kind = kwargs.get("type")
    return {**kwargs, "type": _ASCII_TYPES[kind]} if kind in _ASCII_TYPES else kwargs


class _Recording:
    """An argument group that records the options added to it in its parser."""

    def __init__(self, group: Any, parser: Parser):
        self._group, self._parser = group, parser

    def add_argument(self, *args, **kwargs) -> argparse.Action:
        action = self._group.add_argument(*args, **_ascii(kwargs))
        return self._parser.record(action, kwargs.get("action") == "append")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._group, name)


class Parser(argparse.ArgumentParser):
    """argparse that keeps every option it defines (`options`, by config key) and every
    command (`commands`), through the public `add_*` methods only."""

    def __init__(self, *args, **kwargs):
        # before argparse's own __init__, which adds --help through add_argument
        self.options: dict[str, Option] = {}
        self.flags: dict[str, argparse.Action] = {}  # every option string -> its action
        self.defined: list[argparse.Action] = []  # every argument, positionals too
        self.commands: dict[str, argparse.ArgumentParser] | None = None
        self.command_help: dict[str, str] = {}  # command -> its line in the command list
        self.tables: dict[str, Table] = {}  # config tables of named tables (`Table`)
        super().__init__(*args, **kwargs)

    def record(self, action: argparse.Action, repeated: bool = False) -> argparse.Action:
        self.defined.append(action)
        for name in action.option_strings:
            self.flags[name] = action
        longs = [o for o in action.option_strings if o.startswith("--")]
        if longs and longs[0] != "--help":
            key = longs[0][2:].replace("-", "_")
            self.options[key] = Option(key, action.option_strings[-1], action, repeated)
        elif action.option_strings == ["-n"]:
            self.options["n"] = Option("n", "-n", action)
        return action

    def add_argument(self, *args, **kwargs) -> argparse.Action:
        action = super().add_argument(*args, **_ascii(kwargs))
        return self.record(action, kwargs.get("action") == "append")

    def add_argument_group(self, *args, **kwargs) -> Any:
        return _Recording(super().add_argument_group(*args, **kwargs), self)

    def add_mutually_exclusive_group(self, *args, **kwargs) -> Any:
        return _Recording(super().add_mutually_exclusive_group(*args, **kwargs), self)

    def add_subparsers(self, **kwargs) -> Any:
        action = super().add_subparsers(**kwargs)
        self.commands = action.choices  # name -> parser, filled as commands are added
        add_parser = action.add_parser

        def recorded(name: str, **options: Any) -> argparse.ArgumentParser:
            self.command_help[name] = options.get("help") or ""
            return add_parser(name, **options)

        action.add_parser = recorded  # type: ignore[method-assign]
        return action


@functools.cache
def command_parser(add_command: Callable[[Any], None]) -> Parser:
    """The parser of one command that reads its own config file, built once by the command
    module's `add_command`."""
    root = Parser(prog="jaxqueens")
    sub = root.add_subparsers(parser_class=Parser)
    add_command(sub)
    assert root.commands is not None
    (parser,) = root.commands.values()
    assert isinstance(parser, Parser)
    add_force(parser)
    return parser


def add_force(parser: argparse.ArgumentParser) -> None:
    """Give a command that writes an `--out` folder its `--force` (without it, a folder holding
    an earlier run's outputs is refused)."""
    flags = getattr(parser, "flags", {})  # a Parser's option strings
    if "--out" in flags and "--force" not in flags:
        parser.add_argument(
            "--force",
            action="store_true",
            help="replace the outputs an earlier run left in the --out folder (the files its "
            "manifest.json lists; other files stay); without it such a folder is refused",
        )


def options_of(parser: argparse.ArgumentParser) -> dict[str, Option]:
    """The options of a command's `Parser`, config key -> `Option`."""
    if not isinstance(parser, Parser):
        raise TypeError(f"{parser.prog}: options are read from a jaxqueens.cli.schema.Parser")
    return parser.options


def check(key: str, value: Any, options: dict[str, Option], where: str) -> Any:
    """`value` of config key `key` checked against its option in `options` (`options_of`) and
    converted as the command line would (a comma list joined); an unknown key or a value of the
    wrong type is a one-line QueensError naming the key and `where` (the config)."""
    if key not in options:
        raise QueensError(f"{where}: unknown key '{key}' (valid: {', '.join(sorted(options))})")
    opt = options[key]
    if opt.is_flag:
        if not isinstance(value, bool):
            raise QueensError(f"{where}: '{key}' must be true or false, got {value!r}")
        return value
    if opt.is_repeated:
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise QueensError(f"{where}: '{key}' must be a list of strings, got {value!r}")
        return list(value)
    if opt.is_list and isinstance(value, list) and all(isinstance(v, str) for v in value):
        value = ",".join(value)
    expected = opt.kind
    if expected is str and opt.action.choices is None and _is_number(value):
        value = _words(value)  # a text option given a number (estimate's n = 10): its word
    ok = not isinstance(value, bool) and (
        (expected is int and isinstance(value, int))
        or (expected is float and isinstance(value, (int, float)))
        or (expected is str and isinstance(value, str))
    )
    if not ok:
        want = {int: "an integer", float: "a number", str: "a string"}.get(expected, "a value")
        raise QueensError(f"{where}: '{key}' must be {want}, got {value!r}")
    if opt.action.choices is not None and value not in opt.action.choices:
        raise QueensError(
            f"{where}: '{key}' must be one of "
            f"{', '.join(map(str, opt.action.choices))}, got {value!r}"
        )
    if expected is int:  # the ranges the command line checks, before any run of a sweep
        try:
            value = _convert(opt)(value)
        except (argparse.ArgumentTypeError, ValueError) as err:
            raise QueensError(f"{where}: '{key}' {err}") from None
        if (why := int_range_error(value)) is not None:
            raise QueensError(f"{where}: '{key}': {why}")
    elif expected is float:
        value = float(value)
    return value


def argv_of(values: dict[str, Any], options: dict[str, Option], where: str) -> list[str]:
    """The command-line words of a whole `[options]` table `values`, key by key, each value
    checked (`check`; `where`: the config, as messages name it)."""
    words: list[str] = []
    for key, value in values.items():
        value, opt = check(key, value, options, where), options[key]
        if opt.is_flag:
            words += [opt.flag] if value == opt.action.const else []
        elif opt.is_repeated:
            words += [w for item in value for w in (opt.flag, item)]
        else:
            words += [opt.flag, str(value)]
    return words


def parse_set(text: str, options: dict[str, Option]) -> tuple[str, Any]:
    """`(key, value)` of `--set key=value`, the value converted by the option's type."""
    if "=" not in text:
        raise QueensError(f"--set {text!r}: write key=value")
    key, raw = (part.strip() for part in text.split("=", 1))
    if key not in options:
        raise QueensError(f"--set: unknown key '{key}' (valid: {', '.join(sorted(options))})")
    opt = options[key]
    if opt.is_flag:
        if raw.lower() not in ("true", "false"):
            raise QueensError(f"--set {key}: write true or false, got {raw!r}")
        return key, raw.lower() == "true"
    try:
        return key, _convert(opt)(raw)
    except argparse.ArgumentTypeError as err:
        raise QueensError(f"--set {key}: {err}") from None
    except ValueError:
        raise QueensError(f"--set {key}: {raw!r} is not a valid {opt.kind.__name__}") from None


def _is_number(value: Any) -> bool:
    """A TOML integer or float (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _words(value: Any) -> str:
    """A checked value as the command line writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def table_words(tables: Any, parser: argparse.ArgumentParser, where: str) -> dict[str, list[str]]:
    """A config's tables of named tables (`{"solvers": {"sa": {"rounds": 100}}}`), each key
    checked against its entry's options (`check`), as the values of the repeatable options
    that give them (`{"set": ["sa.rounds=100"]}`); a table the command does not take is one
    line naming it (`where`: the config)."""
    out: dict[str, list[str]] = {}
    known = getattr(parser, "tables", {})
    for name, entries in tables.items():
        if name not in known:
            raise QueensError(
                f"{where}: [{name}.*] tables are not taken by this command; drop them"
            )
        table = known[name]
        if not isinstance(entries, dict) or not all(isinstance(v, dict) for v in entries.values()):
            raise QueensError(
                f"{where}: '{name}' must hold one table per entry ([{name}.NAME] with key = "
                "value lines)"
            )
        words = out.setdefault(table.option, [])
        for entry, values in entries.items():
            options = table.entries(entry)
            for key, value in values.items():
                value = check(key, value, options, f"{where} [{name}.{entry}]")
                words.append(f"{entry}.{key}={_words(value)}")
    return out


def parse_entry(text: str, table: Table, flag: str = "--set") -> tuple[str, str, Any]:
    """`(name, key, value)` of a repeatable table option's `NAME.KEY=VALUE` (`--set
    sa.rounds=100`) filling `table`, the value converted by the entry's option; `flag`: the
    option, as messages name it."""
    head, sep, raw = text.partition("=")
    name, dot, key = head.strip().rpartition(".")
    if not sep or not dot or not name or not key:
        raise QueensError(f"{flag} {text!r}: write SOLVER.KEY=VALUE, e.g. sa.rounds=100")
    options = table.entries(name)
    if key.strip() not in options:
        raise QueensError(
            f"{flag} {name}.{key.strip()}: unknown key {key.strip()!r} for {name} (valid: "
            f"{', '.join(sorted(options))})"
        )
    try:
        key, value = parse_set(f"{key}={raw}", options)
    except QueensError as err:
        raise QueensError(f"{flag} {name}.{str(err).removeprefix('--set ')}") from None
    return name, key, value


def _convert(opt: Option) -> Callable[[Any], Any]:
    """The option's conversion of a value (`str` for an option without a type)."""
    return opt.action.type if callable(opt.action.type) else str


def config_values(cfg: Any, parser: Any, where: str, command: str = "", convert=True) -> dict:
    """A loaded config's `[options]` for `parser`'s command, each key and value checked
    (`check`; converted unless `convert` is false; an unknown key names `command` when given),
    and its tables of named tables as the words of the repeatable options that give them, before
    any words `[options]` gives (`table_words`); `where`: the config, as messages name it."""
    options = options_of(parser)
    values = {}
    for key, value in cfg.get("options", {}).items():
        if command and key not in options:
            raise QueensError(
                f"{where}: unknown key '{key}' for {command} (valid: {', '.join(sorted(options))})"
            )
        checked = check(key, value, options, where)
        values[key] = checked if convert else value
    for key, words in table_words(tables_of(cfg), parser, where).items():
        values[key] = words + values.get(key, [])
    return values


def read_config(path: str | Path, command: str, parser: argparse.ArgumentParser) -> dict:
    """The `[options]` (and `out`) of config file `path` written for `command`, checked and
    converted (`config_values`), for a command that takes `--config FILE` itself (`evolve`,
    `compare`); a config for another command, or one with a `[sweep]` (only `jaxqueens run`
    sweeps), is one line naming `jaxqueens run`."""
    cfg = load_config(path)
    if cfg["command"] != command:
        raise QueensError(
            f"{path}: a config for {cfg['command']!r}, not {command}; run it with "
            f"'jaxqueens run {path}'"
        )
    if "sweep" in cfg:
        raise QueensError(
            f"{path}: {command} --config runs one setting, not a [sweep]; run the sweep with "
            f"'jaxqueens run {path}', or drop [sweep]"
        )
    values = config_values(cfg, parser, str(path))
    if "out" in cfg:
        values["out"] = check("out", cfg["out"], options_of(parser), str(path))
    return values


def given(args: argparse.Namespace, options: dict[str, Option]) -> dict[str, Any]:
    """The options the command line gave, config key -> value: each value that is not None,
    each flag that is set."""
    out = {}
    for key, opt in options.items():
        value = getattr(args, opt.action.dest, None)
        if value is not None and (not opt.is_flag or value == opt.action.const):
            out[key] = value
    return out


def apply_config(args: argparse.Namespace, parser: argparse.ArgumentParser) -> argparse.Namespace:
    """`args` of a command that takes `--config FILE` (its parser `parser`) with the
    config's values for every option the command line did not give (a new namespace; `args` is
    not changed). The size counts as given when the positional `N` was."""
    options = options_of(parser)
    path = getattr(args, "config", None)
    if not path or "config" not in options:  # (`run`'s CONFIG is its positional argument)
        return args
    command = parser.prog.split()[-1]
    values = read_config(path, command, parser)
    given_now = given(args, options)
    if getattr(args, "n_pos", None) is not None:
        given_now["n"] = args.n_pos
    merged = argparse.Namespace(**vars(args))
    for key, value in values.items():
        if key == "config":
            continue
        if key not in given_now:
            setattr(merged, options[key].action.dest, value)
        elif options[key].is_repeated:  # the config's first, the command line's after them
            setattr(merged, options[key].action.dest, [*value, *given_now[key]])
    return merged
