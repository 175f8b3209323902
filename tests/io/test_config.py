"""io/config.py: the strict reader of experiment configs (issue 28: 9 and the messages)."""

import pytest

from jaxqueens.errors import QueensError
from jaxqueens.io import config


def test_defect_28_9_set_on_a_swept_key_is_an_error():
    sweep = {"n": [8, 10]}
    with pytest.raises(
        QueensError, match=r"--set n: c\.toml sweeps 'n' \(\[sweep\] n = \[8, 10\]\)"
    ):
        config.apply_overrides({"chains": 5}, sweep, {"n": 12}, "c.toml")
    assert config.apply_overrides({"chains": 5}, sweep, {"chains": 3}, "c.toml") == {"chains": 3}


@pytest.mark.parametrize("command", ["complete", "check", "show", "render", "run"])
def test_defect_28_msg_commands_that_cannot_run_from_a_config(command):
    with pytest.raises(QueensError, match=f"'command' = '{command}' cannot run from a config"):
        config.check_command(command, "c.toml", ["solve", command, "anneal"])
    config.check_command("solve", "c.toml", ["solve", "complete"])


def test_load_config_is_strict(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('command = "solve"\nextra = 1\n')
    with pytest.raises(QueensError, match="unknown key 'extra'"):
        config.load_config(path)
    path.write_text('command = "solve"\n[options]\nn = 8\n')
    assert config.load_config(path) == {"command": "solve", "options": {"n": 8}}


def test_config_starting_with_a_bom_is_read(tmp_path):
    path = tmp_path / "c.toml"
    path.write_bytes(b'\xef\xbb\xbfcommand = "solve"\n[options]\nn = 8\n')
    assert config.load_config(path) == {"command": "solve", "options": {"n": 8}}


@pytest.mark.parametrize(
    "text, needle",
    [
        (
            'command = "solve"\nout = "a"\n[options]\nout = "b"\n',
            "'out' is given twice (out = 'a' at the top and out = 'b' under [options]); keep one",
        ),
        (
            'command = "solve"\n[options]\nn = 8\n[sweep]\nn = [8, 10]\n',
            "'n' is given under [options] and swept under [sweep]",
        ),
        ('command = "solve"\nout = "a"\n[sweep]\nout = ["b", "c"]\n', "cannot sweep 'out'"),
    ],
)
def test_config_value_given_twice_is_refused(tmp_path, text, needle):
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(QueensError) as err:
        config.load_config(path)
    assert needle in str(err.value) and "\n" not in str(err.value)
