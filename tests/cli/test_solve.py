"""`jaxqueens solve` (jaxqueens.cli.solve): the batched, large-n and backtracking paths,
outputs and one-line errors."""

import contextlib
import csv
import json

import numpy as np
import pytest

import jaxqueens
from jaxqueens.cli.main import main
from jaxqueens.core import checker
from jaxqueens.core import constraints as cons
from jaxqueens.errors import QueensError
from jaxqueens.io import boards as boardio
from jaxqueens.io import schema

SOLUTION_8 = [0, 4, 7, 5, 2, 6, 1, 3]


def run_cli(argv, capsys):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_cli_end_to_end_writes_every_file(tmp_path, capsys):
    out = tmp_path / "run"
    code, stdout, err = run_cli(
        [
            "solve",
            "10",
            "--chains",
            "40",
            "--batch",
            "20",
            "--seed",
            "1",
            "--out",
            out,
            "--plot",
            "--quiet",
        ],
        capsys,
    )
    assert code == 0, err
    assert "40 of 40 chains solved" in stdout and "all verified" in stdout
    assert stdout.count("Q") >= 10  # the board is printed for n <= 16
    expected = {
        "solutions.npy",
        "runs.csv",
        "summary.json",
        "solution.png",
        "steps_hist.png",
        "trace_conflicted_queens.png",
        "trace_conflicting_pairs.png",
    }
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


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["solve", "-n", "2"], "no solution"),
        (["solve", "3"], "no solution"),
        (["solve", "-n", "8", "--chains", "0"], "--chains"),
        (["solve", "-n", "8", "--batch", "0"], "--batch must be at least 1, got 0"),
        (["solve", "-n", "8", "--maxsteps", "0"], "--maxsteps must be at least 1"),
        (["solve", "-n", "8", "--tabu", "-1"], "--tabu must be at least 0, got -1"),
        (["solve", "-n", "8", "--max-restarts", "-1"], "--max-restarts must be at least 0"),
        (["solve", "-n", "8", "--plot"], "--out"),
        (["solve", "-n", "8", "9"], "two board sizes"),
        (["solve", "-n", "100000", "--chains", "10", "--mode", "batched"], "limit"),
    ],
)
def test_cli_errors_are_one_line(argv, needle, capsys):
    code, _, err = run_cli(argv, capsys)
    assert code == 2 and needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_cli_argparse_errors(capsys):
    for argv in (["solve", "--init", "bogus"], ["solve", "--chains", "many"]):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
        assert capsys.readouterr().err.count("\n") == 1


def test_cli_large_mode_outputs(tmp_path, capsys):
    out = tmp_path / "big"
    code = main(["solve", "-n", "20000", "--out", str(out), "--plot", "--quiet"])  # auto: large
    stdout = capsys.readouterr().out
    assert code == 0 and "solved and verified" in stdout and "init" in stdout
    rows = np.load(out / "solutions.npy")[0]
    assert checker.is_solution(rows)
    text = (out / "solution.txt").read_text().split()
    assert [int(x) for x in text] == rows.tolist()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["chains"] == summary["solved"] == 1
    for key in ("init_s", "search_s", "steps", "conflicted_after_init", "compile_s"):
        assert key in summary["per_chain"][0]
    with open(out / "runs.csv") as f:
        assert f.read().splitlines()[0] == ",".join(schema.CORE)
    assert (out / "trace_conflicting_pairs.png").exists() and (
        out / "trace_conflicted_queens.png"
    ).exists()
    # Small n on the large path also writes the poster.
    code = main(
        [
            "solve",
            "-n",
            "50",
            "--mode",
            "large",
            "--chains",
            "2",
            "--out",
            str(tmp_path / "s"),
            "--quiet",
        ]
    )
    assert code == 0 and (tmp_path / "s" / "solution.png").exists()
    # Every path writes what solve's batched path writes: solutions.npy [C, n] and runs.csv.
    boards = np.load(tmp_path / "s" / "solutions.npy")
    assert boards.shape == (2, 50) and all(checker.is_solution(b) for b in boards)
    with open(tmp_path / "s" / "runs.csv") as f:
        assert [line.split(",")[:3] for line in f.read().splitlines()[1:]] == [
            ["large", "0", "1"],
            ["large", "1", "1"],
        ]


def test_cli_mode_choice_and_limits(capsys):
    assert main(["solve", "-n", "60000", "--chains", "10", "--mode", "batched"]) == 2
    assert "--mode large" in capsys.readouterr().err
    assert main(["solve", "-n", "3", "--mode", "large"]) == 2


def test_cli_backtrack_prints_and_writes_the_classic_solution(tmp_path, capsys):
    out = tmp_path / "bt"
    code, stdout, err = run_cli(["solve", "8", "--method", "backtrack", "--out", out], capsys)
    assert code == 0, err
    assert (
        "first solution [0, 4, 7, 5, 2, 6, 1, 3], verified; 113 placements, 105 backtracks"
        in stdout
    )
    assert "wrote solutions.npy, runs.csv, summary.json, solution.txt to" in stdout
    assert [int(x) for x in (out / "solution.txt").read_text().split()] == SOLUTION_8
    assert np.load(out / "solutions.npy").tolist() == [SOLUTION_8]
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary) == ["n", "method", "rows", "placements", "backtracks", "seconds", "run"]
    assert summary["rows"] == SOLUTION_8 and summary["placements"] == 113
    code, _, err = run_cli(["solve", "3", "--method", "backtrack"], capsys)
    assert code == 2 and "no solution" in err


def test_cli_size_spellings_agree(capsys):
    outs = []
    for argv in (["solve", "9"], ["solve", "-n", "9"], ["solve", "--n", "9"]):
        code, stdout, _ = run_cli([*argv, "--chains", "3", "--quiet"], capsys)
        assert code == 0
        outs.append(stdout.split("solutions/s")[0].splitlines()[0])
    assert outs[0] == outs[1] == outs[2] and outs[0].startswith("n = 9: 3 of 3 chains solved")


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["solve", "-n", "5000", "--chains", "-5"], "--chains must be at least 1, got -5"),
        (
            ["solve", "-n", "50", "--mode", "large", "--chains", "0"],
            "--chains must be at least 1, got 0",
        ),
        (["solve", "-n", "50", "--mode", "large", "--resume", "nowhere"], "--resume"),
        (["solve", "-n", "50", "--mode", "large", "--solutions", "3"], "--solutions"),
        (["solve", "-n", "50", "--mode", "large", "--time", "5"], "--time"),
        (
            ["solve", "-n", "50", "--mode", "large", "--maxsteps", "0"],
            "--maxsteps must be at least 1, got 0",
        ),
        (
            ["solve", "-n", "50", "--mode", "large", "--batch", "0"],
            "--batch must be at least 1, got 0",
        ),
        (
            ["solve", "-n", "50", "--mode", "large", "--tabu", "-5"],
            "--tabu must be at least 0, got -5",
        ),
        (["solve", "-n", "50", "--mode", "large", "--tabu", "5"], "--tabu"),
        (["solve", "-n", "60000", "--time", "5"], "--time"),  # auto: past the batched limit, large
        (["solve", "-n", "8", "--method", "backtrack", "--time", "5"], "--time"),
        (
            ["solve", "-n", "8", "--method", "backtrack", "--chains", "-5"],
            "--chains must be at least 1",
        ),
    ],
)
def test_defect_11_large_and_backtrack_paths_refuse_what_they_ignore(argv, needle, capsys):
    code, stdout, err = run_cli(argv, capsys)
    assert code == 2 and needle in err and err.count("\n") == 1 and "Traceback" not in err
    assert stdout == ""  # refused before any work


@pytest.mark.parametrize("name, value", [("batch", 0), ("tabu", -1)])
def test_batched_settings_are_checked_once_by_name_and_said_as_flags(name, value, capsys):
    """`SolveSettings` alone checks batch and tabu on the batched path: the library names the
    parameter, the command line its flag."""
    with pytest.raises(QueensError, match=f"^{name} must be at least") as err:
        jaxqueens.solve(8, chains=2, **{name: value})
    assert err.value.param == name
    code, stdout, out = run_cli(["solve", "-n", "8", f"--{name}", str(value)], capsys)
    assert code == 2 and out.count("\n") == 1 and f"error: --{name} must be at least" in out
    assert stdout == "" and f" {name} must" not in out


def test_defect_11_backtrack_refuses_a_start_file(tmp_path, capsys):
    board = tmp_path / "b.txt"
    boardio.write_board(board, SOLUTION_8)
    code, stdout, err = run_cli(["solve", "--method", "backtrack", "--file", board], capsys)
    assert code == 2 and "--file" in err and "--method backtrack" in err and err.count("\n") == 1
    assert stdout == ""


# ----------------------------------------------------------------------------- issue 14


def test_defect_give_up_mode_reports_no_solution_and_saves_best_boards(tmp_path, capsys):
    out = tmp_path / "g"
    code, stdout, err = run_cli(
        [
            "solve",
            "-n",
            "16",
            "--maxsteps",
            "2",
            "--max-restarts",
            "0",
            "--chains",
            "3",
            "--out",
            out,
            "--quiet",
        ],
        capsys,
    )
    assert code == 1, err
    line = [x for x in stdout.splitlines() if x.startswith("no solution found after")]
    assert (
        len(line) == 1
        and "6 steps by 3 of 3 chains" in line[0]
        and "1 attempt of 2 steps" in line[0]
    )
    best = np.load(out / "best_boards.npy")
    with open(out / "best_boards.csv") as f:
        rows = list(csv.DictReader(f))
    assert best.shape == (3, 16) and [int(r["run"]) for r in rows] == [0, 1, 2]
    assert [int(r["best_attacking_pairs"]) for r in rows] == checker.attacking_pairs(best).tolist()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["max_restarts"] == 0 and summary["max_steps"] == 2 and summary["solved"] == 0


def test_show_initial_prints_the_board_its_pairs_and_generation_time(capsys):
    code, stdout, err = run_cli(
        ["solve", "-n", "10", "--chains", "2", "--init", "greedy", "--show-initial", "--quiet"],
        capsys,
    )
    assert code == 0, err
    head = stdout.splitlines()[0]
    assert head.startswith("initial board of chain 0 (--init greedy): ") and "generated in" in head
    rows = [int(x) for x in stdout.split("rows [")[1].split("]")[0].split(",")]
    assert f": {checker.attacking_pairs(np.array(rows))} attacking pairs" in head


def test_cisc352_move_defaults_and_solves(tmp_path, capsys):
    out = tmp_path / "c"
    code, _stdout, err = run_cli(
        ["solve", "-n", "64", "--move", "cisc352", "--chains", "4", "--out", out, "--quiet"], capsys
    )
    assert code == 0, err
    summary = json.loads((out / "summary.json").read_text())
    # ceil(2n / log2 n) steps per attempt, QS4 boards, at most 100 attempts per chain
    assert summary["move"] == "cisc352" and summary["max_steps"] == 22 and summary["init"] == "qs4"
    assert summary["max_restarts"] == 99 and summary["chains"] == 4
    assert checker.are_solutions(np.load(out / "solutions.npy")).all()


def test_defect_large_path_honours_maxsteps_and_init(tmp_path, capsys):
    out = tmp_path / "L"
    code, stdout, err = run_cli(
        [
            "solve",
            "-n",
            "3000",
            "--mode",
            "large",
            "--maxsteps",
            "5",
            "--init",
            "permutation",
            "--chains",
            "1",
            "--out",
            out,
            "--quiet",
        ],
        capsys,
    )
    assert code == 1, err
    assert "no solution found after 5 steps (--maxsteps 5 swap attempts" in stdout
    board = np.load(out / "best_boards.npy")[0]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["solved"] == 0 and np.load(out / "solutions.npy").shape == (0, 3000)
    chain = summary["per_chain"][0]
    assert chain["pairs"] == checker.attacking_pairs(board) > 0 and not chain["solved"]
    code, stdout, err = run_cli(
        [
            "solve",
            "-n",
            "3000",
            "--mode",
            "large",
            "--init",
            "permutation",
            "--chains",
            "1",
            "--quiet",
        ],
        capsys,
    )
    assert code == 0 and "solved and verified" in stdout, err


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--init", "greedy"], "--init greedy is not available on the large-n path"),
        (["--tabu", "3"], "--tabu is not used by the large-n path"),
        (["--max-restarts", "0"], "--max-restarts is not used by the large-n path"),
        (["--move", "cisc352"], "--move is not used by the large-n path"),
    ],
)
def test_defect_large_path_rejects_what_it_cannot_honour(argv, needle, capsys):
    code, stdout, err = run_cli(["solve", "-n", "50", "--mode", "large", *argv], capsys)
    assert code == 2 and needle in err and err.count("\n") == 1 and stdout == ""


def test_defect_auto_mode_runs_the_same_job_either_side_of_5000(capsys, monkeypatch):
    from jaxqueens.cli import solve as cli_solve

    seen = []
    monkeypatch.setattr(
        cli_solve, "_cmd_large", lambda args, n, setting: seen.append(("large", n)) or 0
    )

    def fake_problem(n, chains, *args):
        seen.append(("batched", n, chains))
        raise KeyboardInterrupt  # stop before any work

    monkeypatch.setattr(cli_solve.mcsolve, "problem", fake_problem)
    for n in (4999, 5000):
        with contextlib.suppress(KeyboardInterrupt):
            main(["solve", "-n", str(n), "--quiet"])
    assert seen == [("batched", 4999, 16), ("batched", 5000, 16)]
    assert main(["solve", "-n", "40000", "--quiet"]) == 0 and seen[-1] == ("large", 40000)


def test_help_states_the_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["solve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "max(4000, 2n)" in text and "--max-restarts" in text and "predicted faster" in text


# ---------------------------------------------------------------- constrained boards (issue 16)
def test_toroidal_and_instance_runs(tmp_path, capsys):
    code, out, err = run_cli(
        ["solve", "-n", "7", "--toroidal", "--chains", "8", "--quiet", "--out", tmp_path / "t"],
        capsys,
    )
    assert code == 0 and "8 of 8 chains solved" in out, err
    torus = cons.Constraints(7, toroidal=True)
    assert all(
        checker.check_constrained(b, torus).ok for b in np.load(tmp_path / "t" / "solutions.npy")
    )
    gaps = tmp_path / "part.txt"
    gaps.write_text("2\n.\n.\n1\n.\n.\n.\n.\n")
    code, out, _ = run_cli(["solve", "--instance", gaps, "--chains", "10", "--quiet"], capsys)
    assert code == 0 and "10 of 10 chains solved" in out and "SAT, every solution checked" in out
    unsat = tmp_path / "unsat.jsonl"  # no solution holds both queens; no plain proof of it
    unsat.write_text('{"n": 8, "fixed": [[0, 0], [1, 2]]}\n')
    code, out, _ = run_cli(
        [
            "solve",
            "--instance",
            unsat,
            "--chains",
            "2",
            "--max-restarts",
            "1",
            "--quiet",
            "--out",
            tmp_path / "u",
        ],
        capsys,
    )
    assert code == 1 and "unknown" in out and "UNSAT" not in out.replace("no UNSAT", "")
    summary = json.loads((tmp_path / "u" / "summary.json").read_text())
    assert summary["status"] == "unknown" and summary["instance"]["fixed"] == [[0, 0], [1, 2]]


@pytest.mark.parametrize(
    "extra,needle",
    [
        (["--file", "BOARD"], "drop --file"),
        (["-n", "9"], "has n = 8 but n = 9"),
        (["--mode", "large"], "--instance is not used by the large-n path"),
        (["--method", "backtrack"], "--instance is not used by --method backtrack"),
        (["--show-initial"], "--show-initial shows plain boards"),
    ],
)
def test_instance_option_errors(tmp_path, extra, needle, capsys):
    inst = tmp_path / "one.jsonl"
    inst.write_text('{"n": 8, "fixed": [[0, 2]]}\n')
    board = tmp_path / "b.txt"
    board.write_text("\n".join(map(str, SOLUTION_8)) + "\n")
    extra = [board if x == "BOARD" else x for x in extra]
    code, _, err = run_cli(["solve", "--instance", inst, "--quiet", *extra], capsys)
    assert code == 2 and needle in err
    code, _, err = run_cli(["solve", "-n", "6", "--toroidal", "--quiet"], capsys)
    assert code == 2 and "no toroidal solution" in err


# --- issue 28 -------------------------------------------------------------------------------------


def test_defect_28_msg_instance_beyond_the_batched_limit_has_one_answer(tmp_path, capsys):
    """solve --instance at n > 46,340: one line saying no path takes it (no circular advice
    between --mode batched and --mode large)."""
    big = tmp_path / "big.txt"
    big.write_text(".\n" * 46_341)
    for mode in ([], ["--mode", "batched"], ["--mode", "large"]):
        code, _, err = run_cli(["solve", "--instance", str(big), *mode], capsys)
        assert code == 2 and err.count("\n") == 1, err
        assert "n <= 46,340" in err and "the large-n path takes no instance" in err, err
        assert "--mode" not in err


@pytest.mark.parametrize("value", ["nan", "inf"])  # (-inf and 0 were refused before)
def test_defect_28_msg_checkpoint_every_must_be_finite_and_positive(tmp_path, value, capsys):
    code, _, err = run_cli(
        ["solve", "-n", "8", "--out", str(tmp_path / "o"), f"--checkpoint-every={value}"], capsys
    )
    assert code == 2 and "--checkpoint-every" in err and err.count("\n") == 1, err


@pytest.mark.parametrize("command", ["solve", "anneal", "evolve"])
def test_defect_28_msg_plainly_unsat_instance_is_unsat_with_its_reason(tmp_path, command, capsys):
    """Mutually attacking fixed queens: UNSAT with the reason (exit 1), no search run; never
    "no solution found after 0 steps ... gave up after 100 attempts" and unknown."""
    f = tmp_path / "att.jsonl"
    f.write_text('{"n": 8, "fixed": [[0, 0], [1, 1]]}\n')
    code, out, err = run_cli([command, "--instance", str(f), "--quiet"], capsys)
    assert code == 1, (out, err)
    assert f"instance {f}: UNSAT (fixed queens at (0,0) and (1,1) attack each other)" in out
    assert "unknown" not in out and "gave up" not in out and "0 steps" not in out


def test_issue28_item13_time_with_chains_that_never_solve_is_bounded_in_memory(monkeypatch, capsys):
    """``solve --time T --max-restarts 0 --maxsteps 1``: the run stops at the cap on kept chains
    with a line saying why and how to bound it (it kept every chain run: 6.4 M at n = 30)."""
    from jaxqueens.cli.main import main
    from jaxqueens.drivers import chains

    monkeypatch.setattr(chains, "KEPT_CHAINS_MAX", 64, raising=False)  # (raising: run on old code)
    argv = ["solve", "-n", "30", "--time", "2", "--max-restarts", "0", "--maxsteps", "1"]
    assert main([*argv, "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "0 of 64 chains solved" in out
    assert "stopped after 64 chains, the most one run keeps in memory" in out


def test_solve_said_over_seconds_without_saying_what_the_seconds_cover(capsys):
    """The line "N solutions/s over 2.54 s" did not say what the seconds cover (a process of 8-10
    s): it says they are the search's (the chains' kernel calls), start-up and compilation
    excluded."""
    code, stdout, _ = run_cli(["solve", "-n", "8", "--chains", "4", "--quiet"], capsys)
    line = next(line for line in stdout.splitlines() if "solutions/s" in line)
    assert code == 0 and " over " not in line, line
    assert " s of search (" in line and "start-up" in line and "compile" in line, line
