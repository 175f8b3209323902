"""The command line: good files, bad files, exit codes and one-line errors."""

import re
import subprocess
import sys

import matplotlib.image
import numpy as np
import pytest

from jaxqueens.cli.main import main
from jaxqueens.io import boards as boardio

SOLUTION_8 = [0, 4, 7, 5, 2, 6, 1, 3]


@pytest.fixture
def files(tmp_path):
    paths = {}
    paths["good"] = tmp_path / "good.txt"
    boardio.write_board(paths["good"], SOLUTION_8)
    paths["bad"] = tmp_path / "diag.txt"
    boardio.write_board(paths["bad"], np.arange(8))
    paths["onebased"] = tmp_path / "one.txt"
    boardio.write_board(paths["onebased"], SOLUTION_8, one_based=True)
    paths["batch"] = tmp_path / "batch.npy"
    boardio.write_boards_npy(paths["batch"], np.array([SOLUTION_8] * 7 + [list(range(8))]))
    paths["garbage"] = tmp_path / "garbage.txt"
    paths["garbage"].write_text("0\n4\nseven\n")
    paths["empty"] = tmp_path / "empty.txt"
    paths["empty"].write_text("")
    return paths


def run(argv, capsys):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_show_solution(files, capsys):
    code, out, err = run(["show", files["good"]], capsys)
    assert code == 0 and err == ""
    assert "attacking pairs = 0" in out and "a solution" in out
    assert out.count("Q") == 8


def test_show_batch_summarises(files, capsys):
    code, out, _ = run(["show", files["batch"]], capsys)
    assert code == 0
    assert "board 4:" in out and "board 5:" not in out
    assert "7 of 8 are solutions" in out


def test_check_exit_codes(files, capsys):
    assert run(["check", files["good"]], capsys)[0] == 0
    code, out, _ = run(["check", files["bad"]], capsys)
    assert code == 1 and "NOT a solution" in out and "anti-diagonal" in out
    code, out, _ = run(["check", files["batch"]], capsys)
    assert code == 1 and "1 of 8" in out


def test_one_based(files, capsys):
    code, _, err = run(["check", files["onebased"]], capsys)
    assert code == 2 and "--one-based" in err
    assert run(["check", "--one-based", files["onebased"]], capsys)[0] == 0


def test_render_writes_png(files, tmp_path, capsys):
    out_png = tmp_path / "sub" / "q.png"
    code, _out, _ = run(["render", files["good"], "-o", out_png], capsys)
    assert code == 0 and out_png.exists()
    assert matplotlib.image.imread(out_png).ndim == 3


@pytest.mark.parametrize(
    "case,needle",
    [
        ("garbage", ":3:"),
        ("empty", "empty"),
        ("missing", "no such file"),
    ],
)
def test_bad_files_one_line_exit_2(files, tmp_path, capsys, case, needle):
    path = files.get(case, tmp_path / "missing.txt")
    for command in ("show", "check"):
        code, _out, err = run([command, path], capsys)
        assert code == 2
        assert err.count("\n") == 1 and needle in err and "Traceback" not in err


def test_bad_flags_exit_2(files, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["render", str(files["good"])])  # -o missing
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--output" in err
    code, _, err = run(["render", files["good"], "-o", "x.png", "--index", "5"], capsys)
    assert code == 2 and "out of range" in err


def test_console_script_and_help():
    out = subprocess.run(
        [sys.executable, "-m", "jaxqueens.cli.main", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0
    for command in ("show", "check", "render"):
        assert command in out.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "jaxqueens.cli.main", "frobnicate"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


def test_no_cache_is_a_global_option(files, capsys):
    """``--no-cache`` is read anywhere on the line, like ``--log-json`` (issue 15)."""
    for argv in (["--no-cache", "check", files["good"]], ["check", files["good"], "--no-cache"]):
        assert run(argv, capsys)[0] == 0
    with pytest.raises(SystemExit) as exc:
        main(["check", str(files["good"]), "--no-cach"])  # never abbreviated
    assert exc.value.code == 2
    assert (
        "--no-cache"
        in subprocess.run(
            [sys.executable, "-m", "jaxqueens", "--help"], capture_output=True, text=True
        ).stdout
    )


def test_negative_size_is_refused_before_any_run(capsys):
    for command in ("solve", "anneal", "count", "stats", "evolve"):
        code, _, err = run([command, "-n", "-3"], capsys)
        assert code == 2 and "n must be a positive integer, got -3" in err, (command, err)


def test_evolve_configures_without_loop_unrolling_and_the_others_with_it(monkeypatch, capsys):
    """The command picks the XLA flags (``parallel.devices``): LLVM's loop unrolling off for the
    GA, on for the rest (the counting DFS runs 1.7x slower without it)."""
    from jaxqueens.parallel import devices

    real, asked = devices.configure, {}

    def spy(*args, **kwargs):  # the suite configured first: a second call changes nothing
        asked["loop_unrolling"] = kwargs.get("loop_unrolling", True)
        return real(*args, **kwargs)

    monkeypatch.setattr(devices, "configure", spy)
    for command, unrolled in (("evolve", False), ("solve", True), ("count", True)):
        asked.clear()
        assert run([command, "-n", "-3"], capsys)[0] == 2  # refused after configuring
        assert asked == {"loop_unrolling": unrolled}, command


SIZED = {  # command -> extra arguments that make a tiny, fast run
    "solve": ["--chains", "2", "--quiet"],
    "anneal": ["--chains", "2", "--steps", "200", "--quiet"],
    "evolve": ["--pop", "10", "--generations", "2", "--quiet"],
    "count": [],
    "stats": ["--chains", "20", "--quiet"],
    "estimate": ["--probes", "1024", "--quiet"],
}


@pytest.mark.parametrize("command", sorted(SIZED))
@pytest.mark.parametrize("spelling", ["-n", "--n", "bare"])
def test_every_size_spelling_reaches_the_command(command, spelling, capsys):
    """`-n 6`, `--n 6` and a bare `6` all run n = 6 (abbreviations are never taken)."""
    size = ["6"] if spelling == "bare" else [spelling, "6"]
    assert main([command, *size, *SIZED[command]]) in (0, 1)
    out = capsys.readouterr().out
    assert re.search(r"n = 6\b|\b6\s+4\b", out), out[-500:]


def test_no_abbreviated_options():
    for argv in (
        ["--c", "10", "solve", "-n", "8"],
        ["solve", "--cha", "2"],
        ["--num", "2", "solve"],
    ):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2


# ------------------------------------------------------------ the top-level handler (issue 13)


def _show_parser_calls(monkeypatch, fn):
    """Make the `show` subparser dispatch to fn (its func default is bound at parser build)."""
    import jaxqueens.cli.show as show_module

    real = show_module.add_command

    def add(sub):
        real(sub)
        sub.choices["show"].set_defaults(func=fn)

    monkeypatch.setattr(show_module, "add_command", add)


def test_internal_error_exits_3_with_one_line(files, monkeypatch, capsys):
    """An unexpected exception is a bug: a short message with a bug-report hint, exit 3 (never 1,
    which `check` uses for "not a solution"), and no traceback."""
    monkeypatch.delenv("JAXQUEENS_DEBUG", raising=False)

    def boom(args):
        raise RuntimeError("boom: an invariant broke\nsecond line")

    _show_parser_calls(monkeypatch, boom)
    code, _out, err = run(["show", files["good"]], capsys)
    assert code == 3, (code, err)
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "internal error" in err and "RuntimeError: boom" in err and "report" in err
    assert "JAXQUEENS_DEBUG=1" in err


def test_internal_error_traceback_with_debug(files, monkeypatch, capsys):
    monkeypatch.setenv("JAXQUEENS_DEBUG", "1")

    def boom(args):
        raise RuntimeError("boom")

    _show_parser_calls(monkeypatch, boom)
    code, _, err = run(["show", files["good"]], capsys)
    assert code == 3 and "Traceback" in err and "RuntimeError: boom" in err


@pytest.mark.parametrize(
    "exc,code,needle",
    [
        (MemoryError(), 2, "out of memory"),
        (OSError(28, "No space left on device", "out/summary.json"), 2, "No space left on device"),
        (KeyboardInterrupt(), 130, "interrupted"),
        (ZeroDivisionError("x"), 3, "internal error"),
    ],
)
def test_exit_codes_of_the_handler(files, monkeypatch, capsys, exc, code, needle):
    monkeypatch.delenv("JAXQUEENS_DEBUG", raising=False)

    def fail(args):
        raise exc

    _show_parser_calls(monkeypatch, fail)
    got, _, err = run(["show", files["good"]], capsys)
    assert got == code and needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_internal_error_in_a_subprocess_exits_3(tmp_path):
    """The console script end to end: a broken checker (a bug) gives exit 3 and one line."""
    good = tmp_path / "good.txt"
    boardio.write_board(good, SOLUTION_8)
    code = (
        "import sys, jaxqueens.cli.show as c\n"
        "def boom(args): raise RuntimeError('boom')\n"
        "c.cmd_check = boom\n"
        "from jaxqueens.cli.main import main\n"
        f"sys.exit(main(['check', {str(good)!r}]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={k: v for k, v in __import__("os").environ.items() if k != "JAXQUEENS_DEBUG"},
    )
    assert out.returncode == 3 and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, (
        out.stderr
    )


# ------------------------------------------------------------ defect 19: integer options


@pytest.mark.parametrize(
    "argv,flag",
    [
        (["solve", "-n", "8", "--maxsteps", "3000000000"], "--maxsteps"),
        (["solve", "-n", "8", "--maxsteps", "99999999999999999999"], "--maxsteps"),
        (["solve", "-n", "8", "--tabu", "-99999999999999999999"], "--tabu"),
        (["solve", "-n", "8", "--chains", "99999999999999999999"], "--chains"),
        (["anneal", "-n", "8", "--steps", "99999999999999999999"], "--steps"),
        (["evolve", "-n", "8", "--pop", "99999999999999999999"], "--pop"),
        (["estimate", "-n", "8", "--depth", "99999999999999999999"], "--depth"),
        (["count", "-n", "99999999999999999999"], "-n"),
        (["solve", "99999999999999999999"], "N"),
    ],
)
def test_defect_19_integer_options_are_range_checked(argv, flag, capsys):
    """An integer option that ends in a fixed-width array is refused in one line naming it."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and flag in err and "2147483647" in err, err
    assert "C long" not in err


@pytest.mark.parametrize("command", ["solve", "anneal", "evolve", "stats", "estimate"])
@pytest.mark.parametrize("seed", ["-1", "4294967296", "99999999999999999999"])
def test_defect_19_seed_out_of_range(command, seed, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "-n", "8", f"--seed={seed}"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and "--seed" in err, err
    assert "between 0 and 2^32-1" in err


def test_defect_19_seeds_in_range_work_as_before(capsys):
    """The largest seed runs, and gives the same chains through `run` configs and the API."""
    import jaxqueens as jq

    code = main(["solve", "-n", "8", "--chains", "3", "--seed", "4294967295", "--quiet"])
    assert code == 0 and "3 of 3 chains solved" in capsys.readouterr().out
    a = jq.solve(8, 3, seed=4294967295).solutions
    b = jq.solve(8, 3, seed=4294967295).solutions
    np.testing.assert_array_equal(a, b)


def test_version_names_jaxqueens_and_what_it_runs_with(capsys):
    from jaxqueens import __version__

    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"jaxqueens {__version__} (python ") and "jax " in line


def test_driver_errors_name_parameters_and_the_command_line_says_flags(capsys):
    """A driver's error names its parameter (a library user passed `seed=`); the command line
    shows the flag for it, mapped in one place (cli.options.in_flags, settings.FLAGS)."""
    import jaxqueens
    from jaxqueens.errors import QueensError

    with pytest.raises(QueensError, match=r"^max_steps must be at least 1") as err:
        jaxqueens.solve(8, chains=2, max_steps=0)
    assert err.value.param == "max_steps"
    assert main(["anneal", "-n", "8", "--method", "sa", "--t-end", "2"]) == 2
    line = capsys.readouterr().err.strip()
    assert "error: --t-end = 2.0 is out of range" in line and "t_end" not in line, line


def test_the_processes_of_a_run_compare_its_settings_and_nothing_else(tmp_path):
    """The settings the processes of a multi-process `run` compare at the join: the command and
    its settings, a config by its content; no callables and no record (set only after the join)."""
    from jaxqueens.cli import main as cli_main

    conf = tmp_path / "c.toml"
    conf.write_text('command = "solve"\n[options]\nn = 8\n')
    args = cli_main.build_parser().parse_args(["run", str(conf), "--set", "seed=3"])
    settings = cli_main._join_settings(args)
    assert set(settings) == {"command", "config", "set", "force"}
    assert settings["config"].startswith("sha256:") and settings["set"] == "['seed=3']"
