"""The public API: every name in ``jaxqueens.__all__`` exists and the headline calls work."""

import numpy as np

import jaxqueens as jq
from jaxqueens.core.oeis import A000170


def test_all_names_exist():
    assert not [name for name in jq.__all__ if not hasattr(jq, name)]
    for name in (
        "count_solutions",
        "enumerate_solutions",
        "first_solution",
        "solve_large",
        "solve",
        "anneal",
        "evolve",
        "estimate",
        "stats",
        "compare",
    ):
        assert name in jq.__all__


def test_headline_calls():
    assert jq.count_solutions(8).total == A000170[8]
    assert len(jq.enumerate_solutions(6)) == A000170[6]
    rows, placements, backtracks = jq.first_solution(8)
    assert jq.check_board(rows).ok and (placements, backtracks) == (113, 105)
    assert jq.are_solutions(np.asarray([rows])).all()
    assert jq.solve_large(200, quiet=True).summary["n"] == 200


def test_defect_10_numpy_integers_are_accepted_wherever_n_is_taken():
    """Every public function that takes n takes a NumPy integer too, and reports a Python int."""
    import json

    n = np.int64(8)
    assert jq.count_solutions(n).total == 92 and type(jq.count_solutions(n).n) is int
    assert len(jq.enumerate_solutions(np.int32(6))) == 4
    assert json.loads(json.dumps(jq.solve(n, 2).summary))["n"] == 8
    assert json.loads(json.dumps(jq.solve_large(np.int64(200)).summary))["n"] == 200
    assert json.loads(json.dumps(jq.anneal(n, chains=2, steps=500).summary))["n"] == 8
    assert jq.evolve(n, pop=10, generations=2).population.shape[-1] == 8
    assert jq.check_board(jq.first_solution(n)[0]).ok
    assert jq.estimate(n, 1000).n == 8 and type(jq.estimate(n, 1000).n) is int
    assert json.loads(json.dumps(jq.stats(n, chains=5).summary))["n"] == 8
