"""`jaxqueens run CONFIG`: key and type checks, overrides, sweeps, recorded provenance."""

import csv
import json
from pathlib import Path

import pytest

from jaxqueens.cli.main import main

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def write(tmp_path, text, name="c.toml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def run(argv, capsys):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_single_run_records_provenance(tmp_path, capsys):
    cfg = write(tmp_path, 'command = "solve"\nout = "%s"\n[options]\nn = 10\nchains = 30\nseed = 4\n'
                'quiet = true\n' % (tmp_path / "o"))
    code, out, _ = run(["run", cfg, "--set", "chains=20"], capsys)
    assert code == 0 and "20 of 20 chains solved" in out
    rec = json.loads((tmp_path / "o" / "run.json").read_text())
    assert rec["command"] == "solve" and rec["options"]["chains"] == 20 and rec["seed"] == 4
    for key in ("jaxqueens", "jax", "devices", "backend", "python"):
        assert key in rec
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["chains"] == 20 and summary["seed"] == 4


def test_sweep_writes_one_row_per_setting(tmp_path, capsys):
    cfg = write(tmp_path, 'command = "solve"\n[options]\nchains = 10\nquiet = true\n'
                '[sweep]\nn = [6, 9]\ninit = ["permutation", "qs4"]\n')
    code, _, _ = run(["run", cfg, "--out", str(tmp_path / "sw")], capsys)
    assert code == 0
    with open(tmp_path / "sw" / "results.csv") as f:
        rows = list(csv.DictReader(f))
    assert [(r["n"], r["init"]) for r in rows] == [("6", "permutation"), ("6", "qs4"),
                                                   ("9", "permutation"), ("9", "qs4")]
    assert all(r["solved"] == "10" for r in rows)
    assert (tmp_path / "sw" / "run-003" / "run.json").exists()


@pytest.mark.parametrize("text,needle", [
    ('command = "solve"\n[options]\nchainz = 3\n', "unknown key 'chainz'"),
    ('command = "solve"\n[options]\nn = "eight"\n', "'n' must be int"),
    ('command = "solve"\n[options]\ninit = "best"\n', "'init' must be one of"),
    ('command = "solve"\n[options]\nplot = 1\n', "'plot' must be true or false"),
    ('command = "solve"\nnumber = 3\n', "unknown key 'number'"),
    ('command = "frobnicate"\n', "'command' must be one of"),
    ('command = "solve"\n[sweep]\nn = 8\n', "sweep 'n' must be a non-empty list"),
    ('command = "solve"\n[sweep]\nm = [1]\n', "unknown sweep key 'm'"),
    ('command = "solve"\n[options\n', "not valid TOML"),
])
def test_config_errors_name_the_key(tmp_path, capsys, text, needle):
    code, _, err = run(["run", write(tmp_path, text)], capsys)
    assert code == 2 and needle in err and err.count("\n") == 1


@pytest.mark.parametrize("override,needle", [
    ("chains", "key=value"), ("chainz=3", "unknown key 'chainz'"), ("n=x", "not a valid int"),
    ("plot=yes", "true or false"),
])
def test_bad_overrides(tmp_path, capsys, override, needle):
    cfg = write(tmp_path, 'command = "solve"\n[options]\nn = 8\n')
    code, _, err = run(["run", cfg, "--set", override], capsys)
    assert code == 2 and needle in err


def test_shipped_configs_are_valid():
    from jaxqueens.cli import run as experiment
    from jaxqueens.cli.main import build_parser

    parser = build_parser()
    configs = sorted(CONFIGS.glob("*.toml"))
    assert configs
    for path in configs:
        experiment.resolve(experiment.load_config(path), parser, [], str(path))
