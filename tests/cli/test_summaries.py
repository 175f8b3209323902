"""Every command's summary.json is strict JSON with the run record, and every per-run table
(runs.csv) has the documented columns (jaxqueens.io.schema)."""

import csv
import json

import pytest

from jaxqueens.cli.main import main
from jaxqueens.io import schema

COMMANDS = {
    "solve": ["solve", "-n", "8", "--chains", "5"],
    "anneal": ["anneal", "-n", "8", "--method", "sa", "--chains", "4", "--steps", "200"],
    "stats": ["stats", "-n", "6", "--chains", "5", "--no-plots"],
    "compare": [
        "compare",
        "-n",
        "12",
        "--chains",
        "3",
        "--steps",
        "100",
        "--solvers",
        "sa,mc-qs4",
        "--no-plots",
    ],
    "evolve": ["evolve", "-n", "6", "--trials", "2", "--generations", "5"],
    "count": ["count", "-n", "6"],
    "estimate": ["estimate", "-n", "8"],
}
"""One small run of every command that writes a summary.json."""


def _strict(constant):
    raise ValueError(f"summary.json holds {constant}, which is not JSON")


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_summary_is_strict_json_with_the_run_record(tmp_path, command):
    out = tmp_path / command
    argv = [*COMMANDS[command], "--out", str(out), "--quiet"]
    assert main(argv) in (0, 1)
    summaries = sorted(out.rglob("summary.json"))
    assert summaries
    for path in summaries:
        doc = json.loads(path.read_text(), parse_constant=_strict)
        run = doc["run"]
        assert run["command"] == command and run["argv"] == ["jaxqueens", *argv]
        assert run["command_line"] == " ".join(["jaxqueens", *argv])
        assert {"jaxqueens", "python", "jax", "jaxlib", "numpy"} <= set(run["versions"])
        assert run["platform"] and isinstance(run["settings"], dict)
        assert str(run["settings"]["n"]) == COMMANDS[command][2]  # estimate: a range
        if command != "count":  # count has no seed
            assert isinstance(run["seed"], int), f"{command}: no effective seed"
    for table in out.rglob(schema.FILENAME):
        with open(table, newline="") as f:
            schema.check_header(next(csv.reader(f)))


def test_settings_hold_the_defaults_the_command_chose(tmp_path):
    out = tmp_path / "s"
    assert main(["solve", "-n", "8", "--chains", "3", "--out", str(out), "--quiet"]) == 0
    settings = json.loads((out / "summary.json").read_text())["run"]["settings"]
    assert settings["seed"] == 0 and settings["init"] == "permutation"
    assert settings["maxsteps"] == 32 and settings["max_restarts"] == 1_000_000
    assert settings["path"] == "batched" and settings["batch"] >= 1
