"""What a chain-solver run writes (jaxqueens.io.chains): solutions.npy, runs.csv,
summary.json."""

import json

import numpy as np
import pytest

from jaxqueens.drivers import chains as driver
from jaxqueens.drivers import chains_types
from jaxqueens.io import chains as chain_out
from jaxqueens.io import checkpoint, schema
from tests.drivers.test_chains import fake_chunk


def test_outputs_and_summary(tmp_path):
    run = driver.run_chains(fake_chunk, 6, chains_types.Budget(chains=10), 8, "fake")
    summary = chains_types.summarize(run, solver="fake")
    paths = chain_out.write_outputs(run, tmp_path, summary)
    assert [p.name for p in paths] == ["solutions.npy", "runs.csv", "summary.json"]
    np.testing.assert_array_equal(np.load(tmp_path / "solutions.npy"), run.solutions)
    lines = (tmp_path / "runs.csv").read_text().splitlines()
    assert lines[0] == ",".join(schema.CORE) and len(lines) == 15
    assert lines[1].startswith("fake,0,1,0,0,0,")  # solver, run, solved, steps, to solution
    loaded = json.loads((tmp_path / "summary.json").read_text())
    assert loaded["chains"] == 14 and loaded["solved"] == 10 and loaded["distinct_solutions"] == 4
    assert loaded["success_rate"] == pytest.approx(10 / 14)
    solved_steps = run.steps[run.solved]
    assert loaded["steps"]["median"] == pytest.approx(np.median(solved_steps))
    assert loaded["steps"]["max"] == solved_steps.max()
    assert not list(tmp_path.glob(".*tmp"))  # no temporary files left behind


def test_best_objective_column_and_checkpoint_removal(tmp_path):
    run = driver.run_chains(fake_chunk, 6, chains_types.Budget(chains=3), 8, "fake")
    run.best = np.arange(len(run.chain_id))
    (tmp_path / checkpoint.FILENAME).write_bytes(b"old")
    chain_out.write_outputs(run, tmp_path, chains_types.summarize(run))
    lines = (tmp_path / "runs.csv").read_text().splitlines()
    assert lines[0] == ",".join(schema.CORE)
    assert (
        lines[1].startswith("fake,0,1,0,0,0,")
        and lines[1].endswith(",0")
        and "e" in lines[1].split(",")[6]
    )
    assert not (tmp_path / checkpoint.FILENAME).exists()  # a finished run drops its checkpoint
    run.stopped_by = "interrupted"
    (tmp_path / checkpoint.FILENAME).write_bytes(b"old")
    chain_out.write_outputs(run, tmp_path, chains_types.summarize(run))
    assert (tmp_path / checkpoint.FILENAME).exists()  # an interrupted one keeps it


def test_write_outputs_with_best_saves_best_boards(tmp_path):
    run = driver.run_chains(fake_chunk, 6, chains_types.Budget(chains=3), 8, "fake")
    run.best = np.arange(len(run.chain_id)) + 1
    unsolved = ~run.solved
    assert unsolved.tolist() == [False, False, True, False]  # fake_chunk: chain 2 fails
    assert "best_boards.npy" not in [p.name for p in chain_out.write_outputs(run, tmp_path, {})]
    paths = chain_out.write_outputs(run, tmp_path, {}, best=True)[-2:]
    assert [p.name for p in paths] == ["best_boards.npy", "best_boards.csv"]
    np.testing.assert_array_equal(np.load(paths[0]), run.rows[unsolved])
    lines = paths[1].read_text().splitlines()
    assert lines == ["run,best_attacking_pairs,steps_spent,restarts", "2,3,2,0"]
    solved_only = driver.run_chains(fake_chunk, 6, chains_types.Budget(chains=2), 2, "fake")
    assert solved_only.solved.all()
    written = chain_out.write_outputs(solved_only, tmp_path / "x", {}, best=True)
    assert [p.name for p in written] == ["solutions.npy", "runs.csv", "summary.json"]
    assert not (tmp_path / "x" / "best_boards.npy").exists()
