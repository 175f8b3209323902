"""``jaxqueens anneal``: methods, outputs per method, the plot, board sizes, resume, errors."""

import json

import numpy as np
import pytest

from jaxqueens.cli.anneal import parse_methods
from jaxqueens.cli.main import main
from jaxqueens.core import checker
from jaxqueens.core import constraints as cons
from jaxqueens.errors import QueensError
from jaxqueens.io import schema


def test_cli_all_methods_with_plot(tmp_path, capsys):
    out = tmp_path / "an"
    code = main(
        [
            "anneal",
            "--method",
            "all",
            "-n",
            "8",
            "--chains",
            "20",
            "--steps",
            "2000",
            "--out",
            str(out),
            "--plot",
            "--quiet",
        ]
    )
    stdout = capsys.readouterr().out
    assert code == 0
    for method in ("LS", "TA", "SA"):
        assert f"{method}: estimated run time" in stdout and f"{method}: n = 8" in stdout
    assert (out / "traces.png").exists()
    for method in ("ls", "ta", "sa"):
        assert {"solutions.npy", "runs.csv", "summary.json"} <= {
            p.name for p in (out / method).iterdir()
        }
        header = (out / method / "runs.csv").read_text().splitlines()[0].split(",")
        assert header == [*schema.CORE, "best_nmof_attacks", "best_step"]


def test_bare_size_and_resume_per_method(tmp_path, capsys):
    out = tmp_path / "two"
    argv = ["anneal", "6", "--method", "ls,ta", "--chains", "64", "--steps", "200", "--quiet"]
    assert main([*argv, "--out", str(out)]) == 0
    assert "LS: n = 6" in capsys.readouterr().out
    summary = json.loads((out / "ta" / "summary.json").read_text())
    assert summary["n"] == 6 and summary["method"] == "ta" and summary["chains"] == 64
    assert main([*argv, "--resume", str(out)]) == 0  # both methods had finished: nothing to do
    assert "n = 6" not in capsys.readouterr().out
    (out / "ta" / "summary.json").unlink()
    assert main([*argv, "--resume", str(out)]) == 2
    assert "no checkpoint or finished run for ta" in capsys.readouterr().err


def test_parse_methods():
    assert parse_methods("all") == ["ls", "ta", "sa"]
    assert parse_methods(" sa, ls ") == ["sa", "ls"]
    for bad in ("", ",", "ta,ga"):
        with pytest.raises(QueensError, match="--method"):
            parse_methods(bad)


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["anneal", "-n", "8", "--step", "-2"], "--step"),
        (["anneal", "-n", "8", "--step", "8"], "--step"),
        (["anneal", "-n", "8", "--rounds", "0"], "--rounds"),
        (["anneal", "-n", "3"], "n >= 4"),
        (["anneal", "--method", "ga"], "--method"),
        (["anneal", "--plot"], "--out"),
        (["anneal", "8", "--n", "9"], "two board sizes"),
        (["anneal", "--checkpoint-every", "0"], "--checkpoint-every"),
        (["anneal", "--out", "a", "--resume", "b"], "--resume DIR writes to DIR"),
    ],
)
def test_cli_errors(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


def _interrupt_call(monkeypatch, at: int):
    """Ctrl-C on the ``at``-th kernel call of the whole command (calls counted across methods)."""
    from jaxqueens.parallel import chains

    real, calls = chains.compile_runner, []

    def wrapped(*args, **kwargs):
        run = real(*args, **kwargs)

        def run_chunk(offset, count, *rest):
            calls.append(offset)
            if len(calls) == at:
                raise KeyboardInterrupt
            return run(offset, count, *rest)

        return run_chunk

    monkeypatch.setattr(chains, "compile_runner", wrapped)


@pytest.mark.parametrize("at,method,kept", [(2, "ls", True), (5, "ta", True), (4, "ta", False)])
def test_defect_1_every_method_resumes_after_ctrl_c(
    tmp_path, monkeypatch, capsys, at, method, kept
):
    # 24 chains in chunks of 8: calls 1-3 are LS, 4-6 TA, 7-9 SA. Ctrl-C on call 2 keeps LS's
    # first chunk; on call 5, LS is finished and TA's first chunk is kept; on call 4, TA had
    # finished no chunk yet (nothing to keep for it, LS is finished).
    argv = [
        "anneal",
        "--method",
        "all",
        "-n",
        "8",
        "--chains",
        "24",
        "--steps",
        "300",
        "--batch",
        "8",
        "--quiet",
    ]
    whole, run = tmp_path / "whole", tmp_path / "run"
    assert main([*argv, "--out", str(whole)]) == 0
    _interrupt_call(monkeypatch, at)
    assert main([*argv, "--out", str(run)]) == 130
    err = capsys.readouterr().err
    assert f"--resume {run}" in err
    if kept:
        assert f"saved in {run / method / 'checkpoint.npz'}" in err
        assert (run / method / "checkpoint.npz").exists()
    monkeypatch.undo()
    assert main([*argv, "--resume", str(run)]) == 0
    for m in ("ls", "ta", "sa"):
        np.testing.assert_array_equal(
            np.load(run / m / "solutions.npy"), np.load(whole / m / "solutions.npy")
        )
        a, b = (json.loads((d / m / "summary.json").read_text()) for d in (whole, run))
        assert (a["chains"], a["solved"], a["distinct_solutions"]) == (
            b["chains"],
            b["solved"],
            b["distinct_solutions"],
        )
        assert not (run / m / "checkpoint.npz").exists()
    assert main([*argv, "--resume", str(run)]) == 0  # everything finished: nothing left to do


def test_vignette_options_from_a_file_save_best_boards(tmp_path, capsys):
    """NMOF's vignette from the command line: the one-row start board (1-based, as R writes
    rep(1, N)), the far-end edge and SAopt's T0; the unsolved chains' best boards in --out."""
    board = tmp_path / "one_row.txt"
    board.write_text("1\n" * 8)
    out = tmp_path / "v"
    argv = [
        "anneal",
        "--method",
        "sa",
        "--file",
        str(board),
        "--one-based",
        "--preset",
        "nmof",
        "--edge",
        "nmof",
        "--t0",
        "nmof",
        "--chains",
        "12",
        "--steps",
        "300",
        "--out",
        str(out),
        "--quiet",
    ]
    assert main(argv) == 0
    stdout = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert summary["edge"] == "nmof" and summary["t0"] == "nmof" and summary["start"] == [0] * 8
    unsolved = summary["chains"] - summary["solved"]
    assert unsolved > 0 and f"best board of each of {unsolved} unsolved chains" in stdout
    boards = np.load(out / "best_boards.npy")
    table = np.loadtxt(out / "best_boards.csv", delimiter=",", skiprows=1, dtype=np.int64, ndmin=2)
    assert boards.shape == (unsolved, 8) and table.shape == (unsolved, 4)
    np.testing.assert_array_equal(table[:, 1], checker.attacking_pairs(boards))
    runs = np.loadtxt(out / "runs.csv", delimiter=",", skiprows=1, dtype=str, ndmin=2)
    unsolved_ids = runs[runs[:, 2] == "0", 1].astype(int)
    np.testing.assert_array_equal(runs[runs[:, 2] == "0", 7].astype(int), table[:, 1])
    np.testing.assert_array_equal(table[:, 0], unsolved_ids)


def test_unsolved_run_says_no_solution_found(tmp_path, capsys):
    argv = ["anneal", "-n", "16", "--chains", "4", "--steps", "40", "--quiet"]
    assert main(argv) == 1  # nothing solved: exit 1, as solve and evolve (issue 28)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[-1].startswith(
        "TA: n = 16, no solution found after 40 steps in each of 4 chains; lowest attack count "
    )
    assert main([*argv, "--out", str(tmp_path / "u")]) == 1  # the same line names the best boards
    line = [x for x in capsys.readouterr().out.splitlines() if x.startswith("TA: n = 16")]
    assert line == [f"{lines[-1]}; best boards in {tmp_path / 'u' / 'best_boards.npy'}"]
    assert np.load(tmp_path / "u" / "best_boards.npy").shape == (4, 16)


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["--neighbour", "swap"], "--neighbour swap never changes which rows are occupied"),
        (
            ["--method", "sa", "--t0", "warm"],
            "--t0 'warm': use worsening, nmof or a positive start temperature",
        ),
    ],
)
def test_vignette_option_errors(tmp_path, argv, needle, capsys):
    board = tmp_path / "b.txt"
    board.write_text("0\n" * 6)
    assert main(["anneal", "--file", str(board), "--chains", "2", "--steps", "20", *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------- constrained boards (issue 16)
def test_toroidal_and_instance_runs(tmp_path, capsys):
    assert (
        main(
            [
                "anneal",
                "-n",
                "7",
                "--toroidal",
                "--method",
                "sa",
                "--chains",
                "16",
                "--steps",
                "20000",
                "--quiet",
                "--out",
                str(tmp_path / "t"),
            ]
        )
        == 0
    )
    assert "SA: n = 7," in capsys.readouterr().out
    torus = cons.Constraints(7, toroidal=True)
    boards = np.load(tmp_path / "t" / "solutions.npy")
    assert len(boards) and all(checker.check_constrained(b, torus).ok for b in boards)
    gaps = tmp_path / "part.txt"
    gaps.write_text("2\n.\n.\n1\n.\n.\n.\n.\n")  # a text board with '.' gaps: two fixed queens
    assert (
        main(
            [
                "anneal",
                "--instance",
                str(gaps),
                "--method",
                "sa",
                "--chains",
                "30",
                "--steps",
                "3000",
                "--quiet",
                "--out",
                str(tmp_path / "i"),
            ]
        )
        == 0
    )
    assert "SA: n = 8," in capsys.readouterr().out
    model = cons.completion(8, [(0, 2), (3, 1)])
    boards = np.load(tmp_path / "i" / "solutions.npy")
    assert len(boards) and all(checker.check_constrained(b, model).ok for b in boards)
    summary = json.loads((tmp_path / "i" / "summary.json").read_text())
    assert summary["status"] == "SAT" and summary["instance"] == model.to_dict()
    hard = tmp_path / "hard.jsonl"  # UNSAT, but no plain proof: local search says unknown
    hard.write_text('{"n": 4, "fixed": [[0, 0]]}\n')
    assert (
        main(["anneal", "--instance", str(hard), "--chains", "4", "--steps", "200", "--quiet"]) == 1
    )
    out = capsys.readouterr().out
    assert "instance unknown" in out and "UNSAT" not in out.replace("no UNSAT", "")


@pytest.mark.parametrize(
    "extra,needle",
    [
        (["--file", "BOARD"], "drop --file"),
        (["-n", "9"], "has n = 8 but n = 9"),
        (["--neighbour", "swap"], "needs --neighbour step"),
    ],
)
def test_instance_option_errors(tmp_path, extra, needle, capsys):
    inst = tmp_path / "one.jsonl"
    inst.write_text('{"n": 8, "fixed": [[0, 2]]}\n')
    board = tmp_path / "b.txt"
    board.write_text("\n".join(map(str, range(8))) + "\n")
    extra = [str(board) if x == "BOARD" else x for x in extra]
    assert (
        main(
            [
                "anneal",
                "--instance",
                str(inst),
                "--chains",
                "2",
                "--steps",
                "100",
                "--quiet",
                *extra,
            ]
        )
        == 2
    )
    assert needle in capsys.readouterr().err
    two = tmp_path / "two.jsonl"
    two.write_text('{"n": 8}\n{"n": 9}\n')
    assert main(["anneal", "--instance", str(two), "--quiet"]) == 2
    assert "holds 2 instances" in capsys.readouterr().err


# --- issue 28 -------------------------------------------------------------------------------------


def test_defect_28_10_options_the_method_does_not_use_are_refused(capsys):
    for argv, needle in (
        (["--method", "ls", "--alpha", "0.5"], "anneal --method ls does not use alpha"),
        (["--method", "sa", "--q", "0.2"], "anneal --method sa does not use q (--q)"),
        (["--neighbour", "swap", "--step", "2"], "anneal --neighbour swap does not use step"),
        (["--method", "ls,ta", "--init-prob", "0.2"], "does not use init_prob"),
    ):
        assert main(["anneal", "-n", "8", "--chains", "2", "--steps", "20", *argv]) == 2
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1, err


def test_method_all_takes_an_option_one_method_uses(capsys):
    argv = ["anneal", "-n", "8", "--method", "all", "--alpha", "0.5", "--chains", "4"]
    assert main([*argv, "--steps", "2000", "--quiet"]) in (0, 1)
    assert "SA: n = 8" in capsys.readouterr().out


def test_defect_28_msg_anneal_exits_1_when_nothing_is_solved(capsys):
    assert main(["anneal", "-n", "20", "--chains", "2", "--steps", "10", "--quiet"]) == 1
    assert "no solution found" in capsys.readouterr().out


def test_issue28_item3_ctrl_c_in_a_methods_last_chunk_stops_method_all(
    tmp_path, monkeypatch, capsys
):
    """Ctrl-C during LS's last kernel call: LS finishes and is saved, TA and SA never start, and
    the command exits as interrupted (it ran every method and exited 0 before)."""
    import signal

    from jaxqueens.parallel import chains

    real, calls = chains.compile_runner, []

    def wrapped(*args, **kwargs):
        run = real(*args, **kwargs)

        def run_chunk(offset, count, *rest):
            calls.append(offset)
            if len(calls) == 3:  # 24 chains in chunks of 8: call 3 is LS's last
                signal.raise_signal(signal.SIGINT)
            return run(offset, count, *rest)

        return run_chunk

    monkeypatch.setattr(chains, "compile_runner", wrapped)
    out = tmp_path / "run"
    argv = ["anneal", "--method", "all", "-n", "8", "--chains", "24", "--steps", "300"]
    code = main([*argv, "--batch", "8", "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 130 and len(calls) == 3
    assert f"--resume {out}" in err
    assert not (out / "ta" / "summary.json").exists() and not (out / "sa").exists()


def test_plot_draws_a_percentile_band_across_traced_chains():
    """``--plot`` traces enough chains per method for the figure's 10-90% band
    (plots.chains.method_traces draws chain lines below BAND_CHAINS)."""
    from jaxqueens.cli import anneal as cli_anneal
    from jaxqueens.plots import chains as chain_plots

    assert cli_anneal.TRACE_CHAINS >= chain_plots.BAND_CHAINS
