"""The one schema of the commands' options (:mod:`jaxqueens.cli.schema`): recorded from the
command definitions, read by ``run``, ``evolve --config`` and ``compare --config`` alike."""

import argparse
import ast
from pathlib import Path

import pytest

from jaxqueens.cli import compare, evolve, schema
from jaxqueens.cli.main import build_parser
from jaxqueens.errors import QueensError

PACKAGE = Path(__file__).resolve().parents[2] / "jaxqueens"


def _toy() -> schema.Parser:
    p = schema.Parser(prog="jaxqueens toy")
    p.add_argument("-n", "--n", type=int, default=None)
    p.add_argument("--rate", type=float, default=None)
    p.add_argument("--init", choices=("a", "b"), default=None)
    g = p.add_argument_group("more")
    g.add_argument("--max-steps", dest="max_steps", type=int, default=None)
    x = p.add_mutually_exclusive_group()
    x.add_argument("--plot", action="store_true", default=None)
    x.add_argument("--no-cache", dest="cache", action="store_false")
    p.add_argument("--solvers", metavar="LIST", default=None)
    p.add_argument("--config", default=None)
    return p


def test_every_option_is_recorded_with_its_config_key_groups_included():
    options = _toy().options
    assert sorted(options) == ["config", "init", "max_steps", "n", "no_cache", "plot", "rate",
                               "solvers"]  # fmt: skip
    assert options["max_steps"].flag == "--max-steps" and options["max_steps"].kind is int
    assert options["rate"].kind is float and options["init"].kind is str
    assert options["plot"].is_flag and options["no_cache"].is_flag
    assert options["solvers"].is_list and not options["init"].is_list


def test_values_become_the_command_line_words():
    options = _toy().options
    assert schema.argv_of({"max_steps": 5}, options, "c.toml") == ["--max-steps", "5"]
    assert schema.argv_of({"rate": 2}, options, "c.toml") == ["--rate", "2.0"]
    assert schema.argv_of({"plot": True}, options, "c.toml") == ["--plot"]
    assert schema.argv_of({"plot": False}, options, "c.toml") == []
    assert schema.argv_of({"no_cache": False}, options, "c.toml") == ["--no-cache"]
    assert schema.argv_of({"solvers": ["x", "y"]}, options, "c.toml") == ["--solvers", "x,y"]


@pytest.mark.parametrize(
    "key, value, needle",
    [
        ("steps", 5, "unknown key 'steps'"),
        ("max_steps", 2.5, "'max_steps' must be an integer, got 2.5"),
        ("max_steps", True, "'max_steps' must be an integer"),
        ("max_steps", 2**40, "'max_steps'"),
        ("rate", "fast", "'rate' must be a number"),
        ("init", "c", "'init' must be one of a, b"),
        ("plot", 1, "'plot' must be true or false"),
        ("init", ["a"], "'init' must be a string"),
    ],
)
def test_bad_values_are_one_line_naming_the_key(key, value, needle):
    with pytest.raises(QueensError, match=needle) as err:
        schema.check(key, value, _toy().options, "c.toml")
    assert str(err.value).startswith("c.toml: ") and "\n" not in str(err.value)


def test_set_values_are_converted_by_the_options_type():
    options = _toy().options
    assert schema.parse_set("max_steps=7", options) == ("max_steps", 7)
    assert schema.parse_set("plot=TRUE", options) == ("plot", True)
    for text, needle in (
        ("max_steps", "write key=value"),
        ("x=1", "unknown key 'x'"),
        ("plot=yes", "true or false"),
        ("max_steps=1.5", "not a valid int"),
    ):
        with pytest.raises(QueensError, match=needle):
            schema.parse_set(text, options)


def test_a_config_fills_what_the_command_line_did_not_give(tmp_path):
    conf = tmp_path / "c.toml"
    conf.write_text('command = "toy"\n[options]\nn = 12\nrate = 0.5\nplot = true\n')
    parser = _toy()
    args = parser.parse_args(["--config", str(conf), "--rate", "0.25"])
    merged = schema.apply_config(args, parser)
    assert (merged.n, merged.rate, merged.plot) == (12, 0.25, True)
    assert args.n is None and args.plot is None  # the parsed namespace is not changed
    given = schema.given(merged, parser.options)
    assert given == {"config": str(conf), "n": 12, "rate": 0.25, "plot": True}


def test_evolve_and_compare_read_their_configs_against_their_own_parsers(tmp_path):
    """The options a config may set are exactly the command's options: one schema, no copy."""
    parser = build_parser()
    for module, name in ((evolve, "evolve"), (compare, "compare")):
        assert set(module.parser().options) == set(parser.commands[name].options)
    conf = tmp_path / "e.toml"
    conf.write_text('command = "evolve"\n[options]\nmigrate_every = 5\ncheckpoint_every = 2.0\n')
    assert schema.read_config(conf, "evolve", evolve.parser()) == {
        "migrate_every": 5,
        "checkpoint_every": 2.0,
    }


def test_a_plain_argparse_parser_is_refused():
    with pytest.raises(TypeError, match=r"schema\.Parser"):
        schema.options_of(argparse.ArgumentParser())


def test_the_cli_uses_no_argparse_privates():
    """The schema reads the definitions through argparse's public methods only."""
    paths = sorted((PACKAGE / "cli").glob("*.py"))
    assert len(paths) > 10, "the CLI's modules were not found"
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
                base = node.value
                owner = base.id if isinstance(base, ast.Name) else getattr(base, "attr", "")
                private = node.attr.endswith("actions") or node.attr == "_subparsers"
                assert not (owner == "argparse" or private), f"{path.name}: {owner}.{node.attr}"


def test_options_in_fullwidth_digits_are_refused(capsys):
    from jaxqueens.cli.main import main

    options = _toy().options
    assert options["n"].kind is int and options["rate"].kind is float
    for text in ("n=\uff18", "rate=\uff10.5"):
        with pytest.raises(QueensError, match="is not written with the ASCII digits 0-9"):
            schema.parse_set(text, options)
    for argv, needle in (
        (["solve", "-n", "\uff18"], "'\uff18' is not written with the ASCII digits 0-9; write 8"),
        (["solve", "\uff18"], "'\uff18' is not written with the ASCII digits 0-9; write 8"),
        (["solve", "--seed", "\uff18"], "'\uff18' is not written with the ASCII digits 0-9"),
        (["anneal", "--alpha", "\uff10.5"], "not written with the ASCII digits 0-9; write 0.5"),
        (["solve", "-n", "x"], "invalid int value: 'x'"),  # argparse's own words, as before
    ):
        with pytest.raises(SystemExit) as stop:  # argparse's own exit, code 2
            main(argv)
        err = capsys.readouterr().err
        assert stop.value.code == 2 and needle in err and err.count("\n") == 1, err


def test_sweep_in_evolve_or_compare_config_is_refused(tmp_path):
    for module, name in ((evolve, "evolve"), (compare, "compare")):
        conf = tmp_path / f"{name}.toml"
        conf.write_text(f'command = "{name}"\n[options]\nseed = 1\n[sweep]\nn = [8, 10]\n')
        with pytest.raises(QueensError, match=f"{name} --config runs one setting, not a") as err:
            schema.read_config(conf, name, module.parser())
        assert f"jaxqueens run {conf}" in str(err.value)


def test_estimate_size_given_as_a_number_in_a_config_is_taken():
    options = build_parser().commands["estimate"].options
    assert options["n"].kind is str  # sizes are text: 8, 20-27, 8,12
    assert schema.argv_of({"n": 10}, options, "c.toml") == ["--n", "10"]
    assert schema.argv_of({"n": "20-22"}, options, "c.toml") == ["--n", "20-22"]
    with pytest.raises(QueensError, match="'n' must be a string, got True"):
        schema.check("n", True, options, "c.toml")


def test_set_of_a_key_a_solver_does_not_take_names_the_solver_and_the_key():
    table = schema.Table("set", compare.solver_options)
    with pytest.raises(QueensError) as err:
        schema.parse_entry("mc-qs4.rounds=3", table)
    assert str(err.value) == (
        "--set mc-qs4.rounds: unknown key 'rounds' for mc-qs4 (valid: maxsteps, steps, tabu)"
    )
    assert schema.parse_entry("sa.rounds=3", table) == ("sa", "rounds", 3)
