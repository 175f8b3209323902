"""cli.options: the output preflight every writing command runs before any work, and the final
write with Ctrl-C deferred."""

import errno
import os
import shutil
import signal
from collections import namedtuple

import numpy as np
import pytest

import jaxqueens.drivers.anneal
import jaxqueens.drivers.backtrack
import jaxqueens.drivers.count
import jaxqueens.drivers.estimate
import jaxqueens.drivers.ga
import jaxqueens.drivers.large
import jaxqueens.drivers.minconflicts
import jaxqueens.drivers.stats
import jaxqueens.plots.render
from jaxqueens.cli import options
from jaxqueens.cli.main import build_parser, main
from jaxqueens.core import arguments
from jaxqueens.errors import QueensError
from jaxqueens.io import writing

# command -> (arguments before the output path, option naming it, (module, function) doing the work)
WRITERS = {
    "solve": (
        ["solve", "-n", "6", "--chains", "2", "--quiet"],
        "--out",
        (jaxqueens.drivers.minconflicts, "run"),
    ),
    "solve-large": (
        ["solve", "-n", "50", "--mode", "large", "--quiet"],
        "--out",
        (jaxqueens.drivers.large, "solve_large"),
    ),
    "solve-backtrack": (
        ["solve", "-n", "8", "--method", "backtrack"],
        "--out",
        (jaxqueens.drivers.backtrack, "first_solution"),
    ),
    "anneal": (
        ["anneal", "-n", "6", "--chains", "2", "--steps", "50", "--quiet"],
        "--out",
        (jaxqueens.drivers.anneal, "run"),
    ),
    "evolve": (
        ["evolve", "-n", "6", "--pop", "8", "--generations", "2", "--quiet"],
        "--out",
        (jaxqueens.drivers.ga, "evolve"),
    ),
    "count": (
        ["count", "-n", "6", "--quiet"],
        "--out",
        (jaxqueens.drivers.count, "count_solutions"),
    ),
    "count-enumerate": (
        ["count", "-n", "6", "--enumerate"],
        "--out",
        (jaxqueens.drivers.count, "enumerate_solutions"),
    ),
    "stats": (
        ["stats", "-n", "6", "--chains", "4", "--quiet"],
        "--out",
        (jaxqueens.drivers.stats, "collect"),
    ),
    "estimate": (
        ["estimate", "-n", "8", "--probes", "1024", "--quiet"],
        "--out",
        (jaxqueens.drivers.estimate, "estimate"),
    ),
    "render": (["render", "BOARD"], "-o", (jaxqueens.plots.render, "render_png")),
    "run": (["run", "CONFIG"], "--out", (jaxqueens.drivers.minconflicts, "run")),
}


def _no_work(*args, **kwargs):
    raise AssertionError("the work started before the output path was checked")


def _argv(command, tmp_path, target):
    head, flag, _ = WRITERS[command]
    board = tmp_path / "board.txt"
    board.write_text("1\n3\n0\n2\n")
    config = tmp_path / "solve.toml"
    config.write_text('command = "solve"\n[options]\nn = 6\nchains = 2\nquiet = true\n')
    head = [str(board) if w == "BOARD" else str(config) if w == "CONFIG" else w for w in head]
    return [*head, flag, str(target)]


def _under(tmp_path):
    root = str(tmp_path)
    return lambda p: os.fspath(os.path.abspath(p)).startswith(root)


@pytest.mark.parametrize("problem", ["existing-file", "under-a-file", "read-only", "disk-full"])
@pytest.mark.parametrize("command", sorted(WRITERS))
def test_defect_2_output_path_is_checked_before_any_work(
    command, problem, tmp_path, monkeypatch, capsys
):
    """Every writing command refuses a bad output path up front: one line naming it, exit 2."""
    module, name = WRITERS[command][2]
    monkeypatch.setattr(module, name, _no_work)
    png = command == "render"
    target = tmp_path / ("poster.png" if png else "out")
    if (
        problem == "existing-file"
    ):  # a file where a folder goes (render: a folder where a file goes)
        target.mkdir() if png else target.write_text("precious\n")
    elif problem == "under-a-file":
        (tmp_path / "plain").write_text("a file, not a folder\n")
        target = tmp_path / "plain" / target.name
    elif problem == "read-only":  # as root chmod does not stop writes: the check asks os.access
        real, inside = os.access, _under(tmp_path)
        monkeypatch.setattr(
            os, "access", lambda p, mode, *a, **k: False if inside(p) else real(p, mode, *a, **k)
        )
    else:
        real_usage, inside = shutil.disk_usage, _under(tmp_path)
        usage = namedtuple("usage", "total used free")
        monkeypatch.setattr(
            shutil,
            "disk_usage",
            lambda p: usage(10 << 30, 10 << 30, 0) if inside(p) else real_usage(p),
        )
    code = main(_argv(command, tmp_path, target))
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert str(target) in err or str(target.parent) in err, err
    if problem == "existing-file" and not png:
        assert target.read_text() == "precious\n"


def test_defect_2_a_good_output_path_passes_and_stale_temporary_files_go(tmp_path):
    out = tmp_path / "new" / "folder"
    assert writing.prepare_out(str(out), need=1000) == out
    assert not out.exists()  # nothing is created by the check itself
    out.mkdir(parents=True)
    stale = out / ".summary.json.k3j_x9q2.tmp"
    stale.write_text("x")
    os.utime(stale, (0, 0))
    writing.prepare_out(str(out))
    assert not stale.exists()
    assert writing.prepare_out(None) is None


def test_defect_2_free_space_is_checked_against_the_estimate(tmp_path, monkeypatch):
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(1 << 40, 0, 50 << 20))
    writing.prepare_out(str(tmp_path / "out"), need=10 << 20)
    with pytest.raises(QueensError, match=r"--out .*free.*needed"):
        writing.prepare_out(str(tmp_path / "out"), need=100 << 20)


def _ctrl_c_during(monkeypatch, module, name, second=False):
    """Make ``module.name`` (a final writer) receive Ctrl-C in the middle of its work."""
    real = getattr(module, name)

    def writer(*args, **kwargs):
        if second:  # a second Ctrl-C raises at once
            raise KeyboardInterrupt
        signal.raise_signal(signal.SIGINT)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, writer)


def test_defect_12_ctrl_c_during_the_final_write_lets_it_finish(tmp_path, monkeypatch, capsys):
    """The first Ctrl-C while the outputs are written waits for them: every file is whole, the
    command says so and exits 130."""
    from jaxqueens.io import schema as run_schema

    _ctrl_c_during(monkeypatch, run_schema, "write_csv")  # runs.csv's writer
    out = tmp_path / "out"
    code = main(["solve", "-n", "6", "--chains", "3", "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 130
    assert {"solutions.npy", "runs.csv", "summary.json", "solution.png"} <= {
        p.name for p in out.iterdir()
    }
    assert np.load(out / "solutions.npy").shape == (3, 6)
    assert "complete" in err and str(out) in err


def test_defect_12_count_ctrl_c_in_the_final_write_finishes_it(tmp_path, monkeypatch, capsys):
    from jaxqueens.io import count as count_out

    _ctrl_c_during(monkeypatch, count_out, "write_json")
    out = tmp_path / "out"
    assert main(["count", "-n", "8", "--quiet", "--out", str(out)]) == 130
    assert '"total": 92' in (out / "summary.json").read_text()


def test_defect_12_a_second_ctrl_c_keeps_the_checkpoint_and_prints_the_resume_command(
    tmp_path, monkeypatch, capsys
):
    """Ctrl-C twice stops the final write at once: the checkpoint stays and the resume command
    is printed (count: it recounts nothing)."""
    from jaxqueens.io import count as count_out

    _ctrl_c_during(monkeypatch, count_out, "write_json", second=True)
    out = tmp_path / "out"
    assert main(["count", "-n", "8", "--quiet", "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert (out / "checkpoint.npz").exists() and not (out / "summary.json").exists()
    assert f"--resume {out}" in err
    monkeypatch.undo()
    assert main(["count", "-n", "8", "--quiet", "--resume", str(out)]) == 0
    assert '"total": 92' in (out / "summary.json").read_text()


def test_defect_2_a_disk_that_fills_during_the_final_write_keeps_the_checkpoint(
    tmp_path, monkeypatch, capsys
):
    """Space that runs out after the preflight: one line, exit 2, the checkpoint kept and the
    resume command given (no traceback, nothing finished is lost)."""
    from jaxqueens.io import count as count_out

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device", str(args[0]))

    monkeypatch.setattr(count_out, "write_json", full)
    out = tmp_path / "out"
    assert main(["count", "-n", "8", "--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left" in err and f"--resume {out}" in err, err
    assert (out / "checkpoint.npz").exists()


def test_resume_folder_is_a_new_namespace_writing_to_the_resumed_folder():
    import argparse

    args = argparse.Namespace(out=None, resume="runs/a", n=8)
    done = options.resume_folder(args)
    assert done.out == "runs/a" and args.out is None  # the parsed options are not rewritten
    assert options.resume_folder(argparse.Namespace(out="x", resume=None)).out == "x"
    assert options.resume_folder(argparse.Namespace(out="runs/a", resume="runs/a")).out == "runs/a"
    with pytest.raises(QueensError, match="--resume DIR writes to DIR"):
        options.resume_folder(argparse.Namespace(out="b", resume="runs/a"))


def test_one_run_control_from_the_command_line():
    """`--quiet`, `--progress` and `--checkpoint-every` reach every driver as one RunControl;
    a command without checkpoints gets the default interval."""
    import argparse

    from jaxqueens.drivers.loop import RunControl

    args = argparse.Namespace(quiet=True, checkpoint_every=5.0)
    assert options.control(args, "c.npz", True) == RunControl(True, "c.npz", True, 5.0)
    assert options.control(argparse.Namespace(quiet=False)) == RunControl(quiet=None, resume=False)
    shown = argparse.Namespace(quiet=True, progress=True, checkpoint_every=1.0)
    assert options.control(shown).quiet is False  # count --progress: a line even with --quiet


def test_interrupt_before_the_first_checkpoint_offers_no_resume(tmp_path, monkeypatch, capsys):
    """count and estimate stopped in their first seconds: no "saved in ... resume with" for a
    checkpoint (or a folder) that was never made."""

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(jaxqueens.drivers.count, "count_solutions", stopped)
    monkeypatch.setattr(jaxqueens.drivers.estimate, "estimate", stopped)
    for argv in (["count", "-n", "8"], ["estimate", "-n", "10"]):
        out = tmp_path / argv[0]
        assert main([*argv, "--quiet", "--out", str(out)]) == 130
        err = capsys.readouterr().err
        assert "resume with" not in err and "checkpoint" not in err, err
        assert "nothing to resume" in err and not out.exists()


def test_options_are_built_from_the_settings_fields():
    """`add_fields`: one option per field, its type read from the annotation, its help and other
    keywords from `settings.flag`; another command gives its own help; anneal, evolve and solve
    have an option for each settings field that carries help."""
    import argparse
    import dataclasses

    from jaxqueens.cli.main import build_parser
    from jaxqueens.drivers import settings, solve_setup

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Toy:
        rounds: int = settings.flag("rounds (default 3)")
        rate: float | None = settings.flag("a rate", default=None, metavar="R")
        rule: str = settings.flag("a rule", choices=("a", "b"))
        max_steps: int = settings.flag("steps")  # flag_of's spelling: --maxsteps

    p = argparse.ArgumentParser()
    options.add_fields(p, [Toy], rule="a")
    args = p.parse_args(["--rounds", "4", "--rate", "0.5", "--maxsteps", "9"])
    assert (args.rounds, args.rate, args.rule, args.maxsteps) == (4, 0.5, "a", 9)
    assert p.parse_args([]).rounds is None
    with pytest.raises(SystemExit):
        p.parse_args(["--rule", "c"])
    q = argparse.ArgumentParser()
    options.add_fields(q, [Toy], "rule rounds", {"rounds": "own help"})
    assert [a.help for a in q._actions[1:]] == [None, "own help"]

    parser = build_parser()
    for command, classes in (
        ("anneal", settings.ANNEAL_METHODS.values()),
        ("evolve", settings.GA_SCHEMES.values()),
        ("solve", [solve_setup.SolveSettings]),
    ):
        flags = parser.commands[command].flags
        for field in (f for cls in classes for f in dataclasses.fields(cls)):
            if field.metadata.get("help"):
                spelled = arguments.flag_of(field.name)
                assert flags[spelled].help == field.metadata["help"], (command, field.name)


def test_in_flags_says_the_flag_wherever_the_message_names_the_parameter():
    """`in_flags`: the parameter at the start (glossed or not) or as `NAME=VALUE` is the flag;
    a parameter the command has no flag for, or no parser, leaves the message as it is."""
    complete = build_parser().commands["complete"]
    cases = [
        ("max_nodes must be at least 1, got 0", "max_nodes", "--max-nodes must be at least 1"),
        ("cap (the enumeration cap) must be at least 1", "cap (the enumeration cap)", "--cap must"),
        ("cap=9 (n = 8) is too much; give cap=3 or less", "cap", "--cap 9 (n = 8) is too "),
        ("budget (tree edges) must be at least 1", "budget (tree edges)", "budget (tree edges)"),
    ]
    for text, param, want in cases:
        assert options.in_flags(QueensError(text, param=param), complete).startswith(want)
    assert options.in_flags(QueensError("cap=9; give cap=3", param="cap"), complete).endswith(
        "give --cap 3"
    )
    assert options.in_flags(QueensError("cap=9", param="cap"), None) == "cap=9"
    assert options.in_flags(QueensError("recap=9", param="cap"), complete) == "recap=9"
