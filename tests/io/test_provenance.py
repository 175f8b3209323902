"""io.provenance: the run record of every summary.json (and of report.html)."""

import json
import re
import shutil
from pathlib import Path

from jaxqueens.io import provenance, schema, tables


def test_summary_json_without_a_record_is_the_document_alone(tmp_path):
    """A library call gives no record: its summary.json holds no `run` block, whatever its
    name."""
    path = tables.write_json(tmp_path / "summary.json", {"n": 8})
    assert json.loads(path.read_text()) == {"n": 8}


def test_summary_json_carries_the_run_record(tmp_path):
    record = provenance.begin(
        "solve", ["jaxqueens", "solve", "-n", "8"], {"n": 8, "seed": None, "init": None}
    )
    provenance.settle(record, seed=0)
    tables.write_json(tmp_path / "summary.json", {"n": 8, "init": "permutation"}, record)
    schema.write(tmp_path, "solve", {"other.json": {"n": 8}}, record)
    run = json.loads((tmp_path / "summary.json").read_text())["run"]
    assert run["command_line"] == "jaxqueens solve -n 8" and run["command"] == "solve"
    assert {"jaxqueens", "python", "jax", "jaxlib", "numpy"} <= set(run["versions"])
    assert run["platform"] and run["seed"] == 0
    # every option, with the value the command settled or put in its summary
    assert run["settings"] == {"n": 8, "seed": 0, "init": "permutation"}
    assert "run" not in json.loads((tmp_path / "other.json").read_text())


def test_summary_json_records_commit_xla_flags_cpu_and_config_text(tmp_path, monkeypatch):
    """The run record names the git commit (in a checkout), the XLA flags, the CPU model and
    the --config file's text, not only its path."""
    config = tmp_path / "run.toml"
    config.write_text('command = "solve"\n[options]\nn = 8\n')
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    record = provenance.begin("solve", ["jaxqueens", "run", str(config)], {"config": str(config)})
    tables.write_json(tmp_path / "summary.json", {"n": 8}, record)
    run = json.loads((tmp_path / "summary.json").read_text())["run"]
    assert run["config_text"] == config.read_text()
    assert run["xla_flags"] == "--xla_force_host_platform_device_count=2"
    assert isinstance(run["cpu"], str) and run["cpu"]
    checkout = Path(__file__).resolve().parents[2] / ".git"  # this test's own checkout
    if checkout.exists() and shutil.which("git"):
        assert re.fullmatch(r"[0-9a-f]{40}", run["commit"])
    else:
        assert run["commit"] is None
