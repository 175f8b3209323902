"""Instant start (issue 15, item 1): what needs no JAX never imports it.

Each case runs in a fresh Python process (``python -c`` around ``python -m jaxqueens``) and looks
at ``sys.modules`` when the command has ended: no ``jax`` (nor ``jaxlib``) may be there for
``check``, ``show``, ``render``, ``--help``, ``COMMAND --help`` and argument errors, which also
come before JAX is imported. The lazy-import mechanism (:mod:`jaxqueens._lazy`) and the public
API's lazy names are tested here too. No timing assertions: the figures are in
``scripts/bench_startup.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import jaxqueens
from jaxqueens import _lazy
from jaxqueens.core import board, checker
from jaxqueens.io import boards as boardio

SOLUTION_8 = [0, 4, 7, 5, 2, 6, 1, 3]

REPORT = """
def report():
    heavy = ("jax", "jaxlib", "jax.", "jaxlib.")
    jax = sorted(m for m in sys.modules if m in heavy[:2] or m.startswith(heavy[2:]))
    print("PROBE " + json.dumps({"jax": jax[:5]}), file=sys.stderr)
"""
"""The exit handler of PROBE and FORKS: the heavy modules imported, one JSON line on stderr."""
# Runs `python -m jaxqueens ARGS` in this process and, at its exit, reports the heavy modules that
# were imported, as one JSON line on stderr (an exit handler: a command that imported JAX ends the
# process with os._exit once the exit handlers ran, jaxqueens.cli.main.entry).
PROBE = (
    """
import atexit, json, runpy, sys
"""
    + REPORT
    + """
atexit.register(report)
sys.argv = ["jaxqueens"] + sys.argv[1:]
runpy.run_module("jaxqueens", run_name="__main__", alter_sys=True)
"""
)


def _probe(*args, env=None) -> tuple[dict, str, str]:
    """(probe report, stdout, stderr without the report) of ``python -m jaxqueens ARGS``."""
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )
    report, rest = _split(out.stderr)
    report["code"] = out.returncode
    return report, out.stdout, rest


def _split(stderr: str) -> tuple[dict, str]:
    """(probe report, the rest) of a probed command's standard error."""
    lines = stderr.splitlines()
    report = [json.loads(line[len("PROBE ") :]) for line in lines if line.startswith("PROBE ")]
    assert len(report) == 1, stderr[-3000:]
    return report[0], "\n".join(line for line in lines if not line.startswith("PROBE "))


# Runs each of several `python -m jaxqueens ARGS` (a JSON object: name -> args, stdout file,
# stderr file) as PROBE does, in a child forked from one process that imported the command line's
# modules (no JAX: a jax module there would show in every child's report) and ran nothing, each
# with its own stdout and stderr files; prints one JSON line: name -> exit code.
FORKS = (
    """
import atexit, json, os, runpy, sys, traceback
import jaxqueens.cli.main  # what `python -m jaxqueens` imports first, once for every child
"""
    + REPORT
    + """
codes = {}
for name, (args, out, err) in json.loads(sys.argv[1]).items():
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        for fd, path in ((1, out), (2, err)):
            os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
        atexit.register(report)
        sys.argv = ["jaxqueens", *args]
        code = 0
        try:
            runpy.run_module("jaxqueens", run_name="__main__", alter_sys=True)
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else stop.code is not None
            if isinstance(stop.code, str):
                print(stop.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
            code = 1
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(int(code))
    codes[name] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
print(json.dumps(codes))
"""
)


def _probe_many(cases: dict[str, list], folder) -> dict[str, tuple[dict, str, str]]:
    """`_probe` of several command lines (name -> args), each in its own child of one process:
    name -> (probe report, stdout, stderr without the report)."""
    given = {
        name: ([str(a) for a in args], str(folder / f"{name}.out"), str(folder / f"{name}.err"))
        for name, args in cases.items()
    }
    done = subprocess.run(
        [sys.executable, "-c", FORKS, json.dumps(given)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    codes = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(codes) == set(cases), done.stderr[-3000:]
    seen = {}
    for name, (_, out, err) in given.items():
        report, rest = _split(Path(err).read_text())
        report["code"] = codes[name]
        seen[name] = (report, Path(out).read_text(), rest)
    return seen


def _no_jax_cases(folder) -> dict[str, tuple[list, int]]:
    """Commands that never import JAX: name -> (args, exit code)."""
    board = folder / "board.txt"
    return {
        "check": (["check", board], 0),
        "show": (["show", board], 0),
        "render": (["render", board, "-o", folder / "b.png"], 0),
        "help": (["--help"], 0),
        "solve-help": (["solve", "--help"], 0),
        "count-help": (["count", "--help"], 0),
        "solve-negative-n": (["solve", "-n", "-3"], 2),
        "unknown-option": (["solve", "-n", "8", "--no-such-option"], 2),
        "bad-file": (["check", folder / "missing.txt"], 2),
    }


def _error_cases(folder) -> dict[str, tuple[list, str]]:
    """Argument errors fixed in issue 28: name -> (args, a phrase of the one error line)."""
    board = folder / "board.txt"
    return {
        "anneal-unused-option": (["anneal", "--method", "ls", "--alpha", "0.5"], "does not use"),
        "anneal-steps-below-rounds": (["anneal", "--steps", "5"], "at least --rounds"),
        "evolve-unused-option": (["evolve", "--elite", "2"], "does not use elite"),
        "evolve-unknown-option": (["evolve", "--file", board], "no option --file"),
        "stats-other-solver-option": (["stats", "--pop", "5"], "only --solver ga"),
        "stats-anneal-steps": (["stats", "--solver", "anneal", "--steps", "5"], "--rounds"),
        "compare-budget": (["compare", "--steps", "5"], "too small for"),
        "compare-solver-setting": (["compare", "--set", "sa.q=0.3"], "does not use q"),
        "checkpoint-every-nan": (["anneal", "--checkpoint-every", "nan"], "finite"),
        "run-set-swept-key": (["run", folder / "sweep.toml", "--set", "n=12"], "sweeps 'n'"),
        "run-config-complete": (["run", folder / "complete.toml"], "cannot run from a config"),
        "render-bad-suffix": (["render", board, "-o", folder / "b.xyz"], "suffix"),
        "complete-board-instance-mix": (
            ["complete", folder / "mixed.jsonl"],
            "mixes the board key",
        ),
        "complete-named-pipe": (["complete", folder / "pipe.param"], "named pipe"),
    }


@pytest.fixture(scope="module")
def probed(tmp_path_factory) -> tuple[dict, object]:
    """Every case of the two tests below probed by `_probe_many`: (name -> probe result, its
    folder)."""
    folder = tmp_path_factory.mktemp("startup")
    boardio.write_board(folder / "board.txt", SOLUTION_8)
    (folder / "sweep.toml").write_text('command = "solve"\n[sweep]\nn = [8, 10]\n')
    (folder / "complete.toml").write_text('command = "complete"\n')
    (folder / "mixed.jsonl").write_text('{"n": 8, "rows": [], "fixed": [[0, 0]]}\n')
    os.mkfifo(folder / "pipe.param")
    cases = {name: args for name, (args, _) in _no_jax_cases(folder).items()}
    cases.update({name: args for name, (args, _) in _error_cases(folder).items()})
    return _probe_many(cases, folder), folder


@pytest.mark.parametrize("case", list(_no_jax_cases(Path("."))))
def test_commands_without_jax_never_import_it(case, probed):
    seen, folder = probed
    code = _no_jax_cases(folder)[case][1]
    report, out, err = seen[case]
    assert report == {"code": code, "jax": []}, (report, err[-2000:])
    if code == 2:  # one line naming the problem, before any JAX
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    if case == "solve-negative-n":
        assert "-3" in err and "positive" in err
    if case == "check":
        assert "OK, 1 board(s)" in out
    if case == "render":
        assert (folder / "b.png").stat().st_size > 0


def test_command_modules_and_file_helpers_import_without_jax():
    """Every module of jaxqueens.cli (new commands too) and the board-file helpers import no
    JAX: a command module loads what needs JAX through jaxqueens._lazy."""
    code = (
        "import pkgutil, sys, importlib, jaxqueens.cli\n"
        "names = ['jaxqueens.cli.' + m.name\n"
        "         for m in pkgutil.iter_modules(jaxqueens.cli.__path__)\n"
        "         if m.name not in ('__main__',)]\n"
        "names += ['jaxqueens.cli.options', 'jaxqueens.io.boards',\n"
        "          'jaxqueens.io.atomic', 'jaxqueens.core.checker',\n"
        "          'jaxqueens.parallel.devices',\n"
        "          'jaxqueens.parallel.cache', 'jaxqueens.parallel.processes',\n"
        "          'jaxqueens.io.writing', 'jaxqueens.solvers.variants',\n"
        "          'jaxqueens.drivers.settings']\n"
        "bad = []\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        "    if 'jax' in sys.modules:\n"
        "        bad.append(name); break\n"
        "print(len(names), bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    count, bad = out.stdout.split(" ", 1)
    assert int(count) >= 16 and bad.strip() == "[]", f"imports JAX at import time: {bad}"


def test_solve_still_works_and_loads_jax_when_it_runs():
    report, out, err = _probe("solve", "-n", "8", "--chains", "4", "--quiet")
    assert report["code"] == 0 and "jax" in report["jax"], err[-2000:]
    assert "4 of 4 chains solved" in out


def test_import_jaxqueens_is_jax_free_and_names_resolve_lazily():
    code = (
        "import sys, jaxqueens\n"
        "from jaxqueens import check_board, load_boards, QueensError\n"
        "before = 'jax' in sys.modules\n"
        "assert check_board([0, 4, 7, 5, 2, 6, 1, 3]).ok\n"
        "assert set(jaxqueens.__all__) <= set(dir(jaxqueens))\n"
        "solve = jaxqueens.solve\n"
        "print(before, 'jax' in sys.modules, solve.__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "True", "jaxqueens.drivers.minconflicts"]


def test_public_names_are_the_modules_objects():
    from jaxqueens.drivers import minconflicts

    assert set(jaxqueens._HOME) == set(jaxqueens.__all__) - {"__version__"}  # one table, no strays

    assert jaxqueens.solve is minconflicts.solve and jaxqueens.check_board is checker.check_board
    with pytest.raises(AttributeError, match="no_such_name"):
        jaxqueens.no_such_name  # noqa: B018
    assert jaxqueens.count_solutions.__module__ == "jaxqueens.drivers.count"
    assert jaxqueens.core.checker is checker  # the layers are reachable from the package too


def test_show_counts_match_the_jax_kernels():
    """show prints the NumPy checker's counts (no JAX); they equal the JAX kernels'."""
    rng = np.random.default_rng(15)
    for n in (1, 2, 3, 5, 8, 13):
        boards = rng.integers(0, n, (40, n))
        assert np.array_equal(checker.n_attacks(boards), np.asarray(board.n_attacks(boards)))
        assert np.array_equal(
            checker.attacking_pairs(boards), np.asarray(board.attacking_pairs(boards))
        )
        assert np.array_equal(
            checker.queen_conflicts(boards) > 0, np.asarray(board.conflicted_mask(boards))
        )
    assert checker.n_attacks(np.arange(8)) == 7  # one diagonal holds all 8 queens
    assert checker.n_attacks(np.asarray(SOLUTION_8)) == 0


# ----------------------------------------------------------------------------- jaxqueens._lazy
@pytest.fixture
def fresh_module(tmp_path, monkeypatch):
    """A module that nobody has imported: ``lazyprobe`` (counts its own imports)."""
    (tmp_path / "lazyprobe.py").write_text(
        "import builtins\nbuiltins.LAZYPROBE_RUNS = "
        "getattr(builtins, 'LAZYPROBE_RUNS', 0) + 1\nVALUE = 41\n"
        "def twice(x):\n    return 2 * x\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "lazyprobe"
    sys.modules.pop("lazyprobe", None)
    import builtins

    if hasattr(builtins, "LAZYPROBE_RUNS"):
        del builtins.LAZYPROBE_RUNS


def test_lazy_module_is_imported_at_first_use_only(fresh_module, monkeypatch):
    import builtins

    mod = _lazy.load(fresh_module)
    assert fresh_module not in sys.modules and not _lazy.is_loaded(fresh_module)
    assert not hasattr(builtins, "LAZYPROBE_RUNS")
    assert mod.VALUE == 41 and mod.twice(4) == 8  # the first use imports it, once
    assert _lazy.is_loaded(fresh_module) and builtins.LAZYPROBE_RUNS == 1
    real = sys.modules[fresh_module]
    monkeypatch.setattr(mod, "VALUE", 7)  # writes reach the real module
    assert real.VALUE == 7 and mod.VALUE == 7
    assert _lazy.load(fresh_module) is real  # once imported, load gives the module itself
    assert "twice" in dir(mod) and builtins.LAZYPROBE_RUNS == 1


def test_monkeypatch_on_a_lazy_module_is_undone_on_the_real_module(fresh_module):
    """pytest's monkeypatch reads the old value from ``__dict__``: on the stand-in that must be
    the real module's, or the undo deletes the patched name from the real module."""
    mod = _lazy.load(fresh_module)
    patch = pytest.MonkeyPatch()
    patch.setattr(mod, "twice", lambda x: 0)  # before the first use: the patch imports it
    real = sys.modules[fresh_module]
    assert real.twice(4) == 0 and mod.twice(4) == 0
    patch.undo()
    assert real.twice(4) == 8 and mod.twice(4) == 8 and mod.__dict__ is real.__dict__


def test_lazy_load_of_a_missing_package_fails_at_once():
    with pytest.raises(ModuleNotFoundError, match="no_such_package_xyz"):
        _lazy.load("no_such_package_xyz.sub")


# --- issue 28: the argument errors fixed there come before JAX too --------------------------------


@pytest.mark.parametrize("case", list(_error_cases(Path("."))))
def test_defect_28_msg_argument_errors_never_import_jax(case, probed):
    seen, folder = probed
    needle = _error_cases(folder)[case][1]
    report, _, err = seen[case]
    assert report == {"code": 2, "jax": []}, (report, err[-2000:])
    assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
