"""The command-line reference as Markdown, generated from the parser itself.

The documentation site's CLI reference page is built from `markdown()` at build time (an mkdocs
hook), so every command and option it lists is one that `jaxqueens.cli.main.build_parser()`
defines; `python -m jaxqueens.cli.reference` prints it.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from jaxqueens.cli import main


def _help(action: argparse.Action, prog: str) -> str:
    """An action's help with argparse's `%(...)s` placeholders filled in, as `--help` shows it."""
    text = action.help or ""
    if "%" not in text:
        return text
    params = {k: v for k, v in vars(action).items() if v is not argparse.SUPPRESS}
    params["prog"] = prog
    if params.get("choices") is not None:
        params["choices"] = ", ".join(map(str, params["choices"]))
    return text % params


def _cell(text: str) -> str:
    """Text for one Markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def _spelling(action: argparse.Action) -> str:
    """How the option is written: `-n N, --n N`; a positional by its metavar."""
    metavar = action.metavar
    if isinstance(metavar, tuple):
        metavar = " ".join(metavar)
    if not action.option_strings:
        return f"`{metavar or action.dest}`"
    if action.nargs == 0:
        return ", ".join(f"`{s}`" for s in action.option_strings)
    if metavar is None:
        metavar = (
            "{" + ",".join(map(str, action.choices)) + "}"
            if action.choices is not None
            else action.dest.upper()
        )
    return ", ".join(f"`{s} {metavar}`" for s in action.option_strings)


def _table(actions: Iterable[argparse.Action], prog: str) -> list[str]:
    lines = ["| option | meaning |", "|---|---|"]
    for action in actions:
        if action.help is argparse.SUPPRESS or "--help" in action.option_strings:
            continue
        lines.append(f"| {_cell(_spelling(action))} | {_cell(_help(action, prog))} |")
    return lines


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The commands of the top-level parser (`build_parser()`), name -> parser, in the order
    `jaxqueens --help` lists them."""
    return dict(getattr(parser, "commands", None) or {})


def summaries(parser: argparse.ArgumentParser) -> dict[str, str]:
    """The one-line help of each command in `jaxqueens --help`, name -> help."""
    return dict(getattr(parser, "command_help", {}))


def markdown() -> str:
    """The whole reference as Markdown (headings from level 2): the global options, then every
    command with its usage and options."""
    parser = main.build_parser()
    helps = summaries(parser)
    out = [
        "## Global options",
        "",
        "Given anywhere on the line, before or after the command.",
        "",
        *_table(getattr(main._distributed_parser(), "defined", []), "jaxqueens"),
        "| `--version` | print the versions of jaxqueens, JAX and Python, then exit |",
        "",
        "## Commands",
        "",
        "| command | what it does |",
        "|---|---|",
    ]
    for name in commands(parser):
        out.append(f"| [`{name}`](#jaxqueens-{name}) | {_cell(helps.get(name, ''))} |")
    out.append("")
    for name, sub in commands(parser).items():
        first, *rest = sub.format_usage().strip().split("\n")
        usage = "\n".join([first.removeprefix("usage: "), *(r[len("usage: ") :] for r in rest)])
        out += [f"## jaxqueens {name}", ""]
        if sub.description:
            out += [" ".join(sub.description.split()), ""]
        out += ["```text", usage, "```", ""]
        out += [*_table(getattr(sub, "defined", []), sub.prog), ""]
        if sub.epilog:
            out += [" ".join(sub.epilog.split()), ""]
    return "\n".join(out)


if __name__ == "__main__":  # pragma: no cover - a maintainer's view of the page
    print(markdown())
