"""The large-n path: QS4 initialisation, swap repair, verification, memory check, CLI."""

import json

import jax.numpy as jnp
import numpy as np
import pytest

from jaxqueens.core import checker

from jaxqueens.solvers import large

from jaxqueens.drivers import large as large_solve
from jaxqueens.cli.main import main
from jaxqueens.errors import QueensError


@pytest.mark.parametrize("n", [4, 5, 10, 100, 10_000, 100_000])
def test_solves_and_verifies(n):
    res = large_solve.solve_large(n, seed=1)
    assert res.rows.shape == (n,) and checker.is_solution(res.rows)
    s = res.summary
    assert s["verified"] and s["steps"] >= s["moves"] >= 0 and s["init_s"] >= 0
    assert s["conflicted_after_init"] >= 0 and s["pairs_after_init"] >= 0


def test_qs4_init_is_a_permutation_with_exact_counts():
    n = 5000
    config = large.Config(n=n)
    s = large.new_state(jnp.uint32(3), n)
    for start in range(0, n, 1300):  # in chunks, as the driver calls it
        s = large.init_columns(s, config, start, min(n, start + 1300))
    rows = np.asarray(s.rows)
    assert sorted(rows) == list(range(n))
    c = np.arange(n)
    np.testing.assert_array_equal(s.diag, np.bincount(rows + c, minlength=2 * n - 1))
    np.testing.assert_array_equal(s.anti, np.bincount(rows - c + n - 1, minlength=2 * n - 1))
    # QS4 leaves few conflicts: far below a random permutation's ~n/2 conflicted queens.
    assert int(np.asarray(large.conflicted_mask(s)).sum()) < 100


def test_repair_keeps_counts_exact_and_never_worsens():
    n = 3000
    config = large.Config(n=n, tries=2)  # a poor init leaves work for the repair
    s = large.new_state(jnp.uint32(9), n)
    s = large.init_columns(s, config, 0, n)
    pairs = int(large.attacking_pairs(s, config))
    s, stats = large.repair_round(s, config, 500, False)
    rows = np.asarray(s.rows)
    assert sorted(rows) == list(range(n))
    assert int(stats.pairs) == int(large.attacking_pairs(s, config)) == checker.attacking_pairs(rows)
    assert int(stats.pairs) <= pairs
    trace = np.asarray(stats.trace)
    trace = trace[trace >= 0]
    assert np.all(np.diff(trace) <= 0)  # only improving swaps without sideways


def test_same_seed_same_solution():
    a = large_solve.solve_large(20_000, seed=5)
    b = large_solve.solve_large(20_000, seed=5)
    c = large_solve.solve_large(20_000, seed=6)
    np.testing.assert_array_equal(a.rows, b.rows)
    assert not np.array_equal(a.rows, c.rows)


def test_errors():
    for n in (0, -5, 2, 3):
        with pytest.raises(QueensError, match="no solution"):
            large_solve.solve_large(n)
    with pytest.raises(QueensError, match=r"needs about .* GiB .* available"):
        large_solve.check_memory(10**9, available=8 * 2**30)
    large_solve.check_memory(10**6, available=8 * 2**30)  # fits


def test_cli_large_mode_outputs(tmp_path, capsys):
    out = tmp_path / "big"
    code = main(["solve", "-n", "20000", "--out", str(out), "--plot", "--quiet"])  # auto: large
    stdout = capsys.readouterr().out
    assert code == 0 and "solved and verified" in stdout and "init" in stdout
    rows = np.load(out / "solution.npy")[0]
    assert checker.is_solution(rows)
    text = (out / "solution.txt").read_text().split()
    assert [int(x) for x in text] == rows.tolist()
    summary = json.loads((out / "summary.json").read_text())
    for key in ("init_s", "search_s", "steps", "conflicted_after_init", "compile_s"):
        assert key in summary
    assert (out / "trace_conflicting_pairs.png").exists() and (out / "trace_conflicted_queens.png").exists()
    # Small n on the large path also writes the poster.
    code = main(["solve", "-n", "50", "--mode", "large", "--chains", "2", "--out", str(tmp_path / "s"), "--quiet"])
    assert code == 0 and (tmp_path / "s" / "chain-1" / "solution.png").exists()


def test_cli_mode_choice_and_limits(capsys):
    assert main(["solve", "-n", "60000", "--chains", "10"]) == 2
    assert "--mode large" in capsys.readouterr().err
    assert main(["solve", "-n", "3", "--mode", "large"]) == 2
