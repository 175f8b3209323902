"""``jaxqueens anneal``: methods, outputs per method, the plot, board sizes, resume, errors."""

import json

import pytest

from jaxqueens.cli.anneal import parse_methods
from jaxqueens.cli.main import main
from jaxqueens.errors import QueensError


def test_cli_all_methods_with_plot(tmp_path, capsys):
    out = tmp_path / "an"
    code = main(["anneal", "--method", "all", "-n", "8", "--chains", "20", "--steps", "2000",
                 "--out", str(out), "--plot", "--quiet"])
    stdout = capsys.readouterr().out
    assert code == 0
    for method in ("LS", "TA", "SA"):
        assert f"{method}: estimated run time" in stdout and f"{method}: n = 8" in stdout
    assert (out / "traces.png").exists()
    for method in ("ls", "ta", "sa"):
        assert {"solutions.npy", "runs.csv", "summary.json"} <= {p.name for p in (out / method).iterdir()}
        header = (out / method / "runs.csv").read_text().splitlines()[0]
        assert header.endswith("best_objective")


def test_bare_size_and_resume_per_method(tmp_path, capsys):
    out = tmp_path / "two"
    argv = ["anneal", "6", "--method", "ls,ta", "--chains", "8", "--steps", "200", "--quiet"]
    assert main(argv + ["--out", str(out)]) == 0
    assert "LS: n = 6" in capsys.readouterr().out
    summary = json.loads((out / "ta" / "summary.json").read_text())
    assert summary["n"] == 6 and summary["method"] == "ta" and summary["chains"] == 8
    assert main(argv + ["--resume", str(out)]) == 0  # both methods had finished: nothing to do
    assert "n = 6" not in capsys.readouterr().out
    (out / "ta" / "summary.json").unlink()
    assert main(argv + ["--resume", str(out)]) == 2
    assert "no checkpoint or finished run for ta" in capsys.readouterr().err


def test_parse_methods():
    assert parse_methods("all") == ["ls", "ta", "sa"]
    assert parse_methods(" sa, ls ") == ["sa", "ls"]
    for bad in ("", ",", "ta,ga"):
        with pytest.raises(QueensError, match="--method"):
            parse_methods(bad)


@pytest.mark.parametrize("argv,needle", [
    (["anneal", "-n", "8", "--step", "-2"], "--step"),
    (["anneal", "-n", "8", "--step", "8"], "--step"),
    (["anneal", "-n", "8", "--rounds", "0"], "--rounds"),
    (["anneal", "-n", "3"], "n >= 4"),
    (["anneal", "--method", "ga"], "--method"),
    (["anneal", "--plot"], "--out"),
    (["anneal", "8", "--n", "9"], "two board sizes"),
    (["anneal", "--checkpoint-every", "0"], "--checkpoint-every"),
    (["anneal", "--out", "a", "--resume", "b"], "--resume DIR writes to DIR"),
])
def test_cli_errors(argv, needle, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1
