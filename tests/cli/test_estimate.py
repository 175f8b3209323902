"""``jaxqueens estimate`` (:mod:`jaxqueens.cli.estimate`): size lists, printed lines, table and plot."""

import argparse
import json

import pytest

import jaxqueens  # noqa: F401
from jaxqueens.cli import estimate as E
from jaxqueens.errors import QueensError


def test_parse_sizes():
    assert E.parse_sizes("8,12,20-22") == [8, 12, 20, 21, 22]
    with pytest.raises(QueensError):
        E.parse_sizes("x")


def test_estimate_command_writes_table_and_plot(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    E.add_command(parser.add_subparsers())
    args = parser.parse_args(["estimate", "-n", "8-9,33", "--probes", "2e4", "--quiet", "--depth", "1",
                              "--out", str(tmp_path)])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "n = 8: Q(n) ~" in out and "exact 92" in out and "n = 33" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [e["n"] for e in summary["estimates"]] == [8, 9, 33]
    assert (tmp_path / "estimates.csv").read_text().count("\n") == 4
    assert (tmp_path / "log_q_over_n.png").stat().st_size > 1000
