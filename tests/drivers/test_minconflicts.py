"""jaxqueens.solve and `jaxqueens solve`: determinism, start boards, errors, outputs."""

import csv
import json

import numpy as np
import pytest

import jaxqueens
from jaxqueens.io import boards as boardio
from jaxqueens.core import checker
from jaxqueens.cli.main import main
from jaxqueens.errors import QueensError

SOLUTION_8 = [0, 4, 7, 5, 2, 6, 1, 3]


def test_results_do_not_depend_on_batch():
    runs = [jaxqueens.solve(16, chains=24, seed=3, batch=b, max_steps=64) for b in (4, 10, 24)]
    for other in runs[1:]:
        np.testing.assert_array_equal(runs[0].run.rows, other.run.rows)
        np.testing.assert_array_equal(runs[0].run.steps, other.run.steps)
        np.testing.assert_array_equal(runs[0].run.restarts, other.run.restarts)
    assert runs[0].run.restarts.sum() > 0  # restarts happened and still agree
    assert checker.are_solutions(runs[0].solutions).all() and len(runs[0].solutions) == 24
    other_seed = jaxqueens.solve(16, chains=24, seed=4, batch=24, max_steps=64)
    assert not np.array_equal(other_seed.run.steps, runs[0].run.steps)


@pytest.mark.parametrize("init", ["random", "permutation", "greedy", "qs4"])
@pytest.mark.parametrize("tabu", [0, 5])
def test_every_init_and_tabu_solves(init, tabu):
    res = jaxqueens.solve(20, chains=8, init=init, tabu=tabu, batch=8)
    assert res.summary["solved"] == 8 and checker.are_solutions(res.solutions).all()


def test_solution_budget_finds_all_of_n6():
    res = jaxqueens.solve(6, chains=None, solutions=4, batch=16)
    assert res.summary["stopped_by"] == "solutions" and res.summary["distinct_solutions"] == 4


def test_start_board():
    # From a solution, every chain is solved in 0 steps and keeps that board.
    res = jaxqueens.solve(8, chains=6, start=SOLUTION_8, batch=6)
    assert (res.run.steps == 0).all()
    np.testing.assert_array_equal(res.solutions, np.tile(SOLUTION_8, (6, 1)))
    # From a board one move away, chains start there: few steps, no restarts needed.
    near = list(SOLUTION_8)
    near[3] = 3
    res = jaxqueens.solve(8, chains=20, start=near, batch=20, trace_steps=50)
    assert res.trace["pairs"][0] == checker.attacking_pairs(np.array(near))
    assert np.median(res.run.steps) <= 10
    with pytest.raises(QueensError, match="columns"):
        jaxqueens.solve(9, chains=2, start=SOLUTION_8)


def test_trivial_and_impossible_sizes():
    res = jaxqueens.solve(1, chains=5)
    assert res.summary["solved"] == 5 and res.solutions.tolist() == [[0]] * 5
    for n in (2, 3):
        with pytest.raises(QueensError, match="no solution"):
            jaxqueens.solve(n)
    with pytest.raises(QueensError, match="positive"):
        jaxqueens.solve(0)


def run_cli(argv, capsys):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_end_to_end_writes_every_file(tmp_path, capsys):
    out = tmp_path / "run"
    code, stdout, err = run_cli(["solve", "10", "--chains", "40", "--batch", "20", "--seed", "1",
                                 "--out", out, "--plot", "--quiet"], capsys)
    assert code == 0, err
    assert "40 of 40 chains solved" in stdout and "all verified" in stdout
    assert stdout.count("Q") >= 10  # the board is printed for n <= 16
    expected = {"solutions.npy", "runs.csv", "summary.json", "solution.png", "steps_hist.png",
                "trace_conflicted_queens.png", "trace_conflicting_pairs.png"}
    assert expected <= {p.name for p in out.iterdir()}
    sols = np.load(out / "solutions.npy")
    assert sols.shape == (40, 10) and checker.are_solutions(sols).all()
    with open(out / "runs.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 40 and all(r["solved"] == "1" for r in rows)
    summary = json.loads((out / "summary.json").read_text())
    for key in ("n", "chains", "success_rate", "steps", "solutions_per_s", "distinct_solutions"):
        assert key in summary
    assert set(summary["steps"]) == {"mean", "median", "p90", "p99", "max"}
    # The same run through the API gives the same boards.
    api = jaxqueens.solve(10, chains=40, seed=1)
    np.testing.assert_array_equal(api.solutions, sols)


def test_cli_start_file(tmp_path, capsys):
    board = tmp_path / "b.txt"
    boardio.write_board(board, SOLUTION_8)
    code, stdout, _ = run_cli(["solve", "--file", board, "--chains", "4", "--quiet"], capsys)
    assert code == 0 and "steps median 0," in stdout
    code, _, err = run_cli(["solve", "-n", "9", "--file", board, "--chains", "4"], capsys)
    assert code == 2 and "n = 8" in err and err.count("\n") == 1


@pytest.mark.parametrize("argv,needle", [
    (["solve", "-n", "2"], "no solution"),
    (["solve", "3"], "no solution"),
    (["solve", "-n", "8", "--chains", "0"], "--chains"),
    (["solve", "-n", "8", "--batch", "0"], "--batch"),
    (["solve", "-n", "8", "--maxsteps", "0"], "--maxsteps must be at least 1"),
    (["solve", "-n", "8", "--tabu", "-1"], "--tabu must be at least 0"),
    (["solve", "-n", "8", "--plot"], "--out"),
    (["solve", "-n", "8", "9"], "two board sizes"),
    (["solve", "-n", "100000", "--chains", "10"], "limit"),
])
def test_cli_errors_are_one_line(argv, needle, capsys):
    code, _, err = run_cli(argv, capsys)
    assert code == 2 and needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_cli_argparse_errors(capsys):
    for argv in (["solve", "--init", "bogus"], ["solve", "--chains", "many"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        assert capsys.readouterr().err.count("\n") == 1
