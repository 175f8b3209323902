"""The public API: every name in ``jaxqueens.__all__`` exists and the headline calls work."""

import numpy as np

import jaxqueens as jq
from jaxqueens.core.oeis import A000170


def test_all_names_exist():
    assert not [name for name in jq.__all__ if not hasattr(jq, name)]
    for name in ("count_solutions", "enumerate_solutions", "first_solution", "solve_large", "solve",
                 "anneal", "evolve", "estimate", "stats"):
        assert name in jq.__all__


def test_headline_calls():
    assert jq.count_solutions(8).total == A000170[8]
    assert len(jq.enumerate_solutions(6)) == A000170[6]
    rows, placements, backtracks = jq.first_solution(8)
    assert jq.check_board(rows).ok and (placements, backtracks) == (113, 105)
    assert jq.are_solutions(np.asarray([rows])).all()
    assert jq.solve_large(200, quiet=True).summary["n"] == 200
