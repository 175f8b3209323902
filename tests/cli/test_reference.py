"""The CLI reference page is generated from the parser (jaxqueens/cli/reference.py, filled
in by the docs build's hook), and the help it is made of is plain text."""

import argparse
import re
from pathlib import Path

from jaxqueens.cli import main, reference

ROOT = Path(__file__).resolve().parents[2]


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [
        s
        for a in parser._actions
        if a.help is not argparse.SUPPRESS
        for s in a.option_strings
        if s not in ("-h", "--help")
    ]


def test_the_reference_lists_every_command_and_option():
    text = reference.markdown()
    parser = main.build_parser()
    for name, sub in (parser.commands or {}).items():
        section = text.split(f"## jaxqueens {name}\n", 1)[1].split("\n## ", 1)[0]
        for option in _options(sub):
            assert f"`{option}" in section, (name, option)
        for action in sub._actions:
            if not action.option_strings and action.help is not argparse.SUPPRESS:
                assert f"`{action.metavar or action.dest}`" in section, (name, action.dest)
    for option in [*_options(main._distributed_parser()), "--version"]:
        assert f"`{option}" in text.split("## Commands", 1)[0], option


def test_the_docs_page_is_the_generated_one():
    page = (ROOT / "docs" / "reference" / "cli.md").read_text()
    assert "{{ cli_reference }}" in page
    assert "docs/_gen/hooks.py" in (ROOT / "mkdocs.yml").read_text()
    hooks = (ROOT / "docs" / "_gen" / "hooks.py").read_text()
    assert "reference.markdown()" in hooks


def _texts(parser: argparse.ArgumentParser):
    yield parser.description or ""
    yield parser.epilog or ""
    for action in parser._actions:
        if isinstance(action.help, str):
            yield action.help
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                yield choice.help or ""


def test_help_is_plain_text_and_points_at_the_docs():
    parser = main.build_parser()
    for sub in [parser, *(parser.commands or {}).values()]:
        for text in _texts(sub):
            assert "``" not in text and "::" not in text, text
            assert not re.search(r":(func|class|mod|data|meth):", text), text
            assert "README" not in text and not re.search(r"issue \d", text), text
    assert main.DOCS_URL in (parser.epilog or "")


def test_the_solver_commands_come_first_in_help():
    listed = list(main.build_parser().commands or {})
    assert listed[:8] == [
        "solve",
        "anneal",
        "evolve",
        "count",
        "complete",
        "estimate",
        "stats",
        "compare",
    ]
    assert set(listed[8:]) == {"run", "show", "check", "render"}


def test_render_help_names_the_formats_it_writes():
    render = (main.build_parser().commands or {})["render"]
    assert "PNG" not in (render.description or "")
    for suffix in (".png", ".pdf", ".svg", ".eps"):
        assert suffix in render.description
