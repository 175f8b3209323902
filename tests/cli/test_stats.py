"""``jaxqueens stats`` (`jaxqueens.cli.stats`): the printed summary, tables and figures."""

import argparse
import json

from jaxqueens.cli import stats


def test_stats_command_writes_tables_and_plots(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    stats.add_command(parser.add_subparsers())
    args = parser.parse_args(
        ["stats", "-n", "6", "--chains", "300", "--quiet", "--out", str(tmp_path)]
    )
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "4 of 4 distinct solutions, 1 of 1 fundamental classes" in out and "p = " in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["distinct_solutions"] == 4 and summary["chains"] == 300
    freq = (tmp_path / "frequencies.csv").read_text().splitlines()
    assert freq[0] == "solution,count,canonical,class_size" and len(freq) == 5
    assert sum(int(line.split(",")[1]) for line in freq[1:]) == 300
    for name in (
        "classes.csv",
        "coverage.csv",
        "runs.csv",
        "success.csv",
        "coverage.png",
        "frequency_hist.png",
        "steps_hist.png",
        "steps_ecdf.png",
        "success_rate.png",
    ):
        assert (tmp_path / name).stat().st_size > 0, name


def test_defect_28_10_other_solvers_options_are_refused(capsys):
    from jaxqueens.cli.main import main

    for argv, needle in (
        (["--alpha", "0.5"], "stats --solver minconflicts does not use alpha (--alpha)"),
        (["--solver", "anneal", "--pop", "10"], "does not use pop (--pop): only --solver ga"),
        (["--solver", "ga", "--maxsteps", "10"], "does not use max_steps (--maxsteps)"),
        (["--solver", "anneal", "--method", "ls", "--alpha", "0.5"], "--method ls does not use"),
    ):
        assert main(["stats", "-n", "6", "--chains", "5", "--quiet", *argv]) == 2
        err = capsys.readouterr().err
        assert needle in err and err.count("\n") == 1, err
