"""Tests for the independent NumPy checker, against a brute-force pairwise reference."""

import ast
import functools
import itertools
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxqueens.core import checker
from jaxqueens.core.checker import (
    MAX_PROBLEMS,
    are_solutions,
    attacking_pairs,
    check_board,
    is_solution,
    queen_conflicts,
    require_solutions,
)
from jaxqueens.errors import SolutionCheckError

SOLUTION_8 = [0, 4, 7, 5, 2, 6, 1, 3]
SOLUTION_17 = [0, 2, 4, 1, 7, 10, 14, 6, 15, 13, 16, 3, 5, 8, 11, 9, 12]


def attacks(r1, c1, r2, c2):
    return r1 == r2 or r1 + c1 == r2 + c2 or r1 - c1 == r2 - c2


def pairs_reference(rows):
    """O(n^2) count of attacking pairs, one pair at a time."""
    rows = [int(r) for r in rows]
    return sum(
        attacks(rows[a], a, rows[b], b) for a, b in itertools.combinations(range(len(rows)), 2)
    )


def conflicts_reference(rows):
    rows = [int(r) for r in rows]
    return [
        sum(attacks(rows[a], a, rows[b], b) for b in range(len(rows)) if b != a)
        for a in range(len(rows))
    ]


@functools.lru_cache
def eight_queens_brute_force():
    return np.array([p for p in itertools.permutations(range(8)) if pairs_reference(p) == 0])


@st.composite
def boards(draw, max_n=40):
    """A random board, permutation or combination encoded, as a list."""
    n = draw(st.integers(1, max_n))
    if draw(st.booleans()):
        return draw(st.permutations(range(n)))
    return draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n))


@pytest.mark.parametrize("rows", [[0], SOLUTION_8, SOLUTION_17, [1, 3, 0, 2], [2, 0, 3, 1]])
def test_known_solutions(rows):
    report = check_board(rows)
    assert report == checker.CheckReport(ok=True, n=len(rows), problems=(), attacking_pairs=0)
    assert is_solution(rows) and is_solution(np.array(rows, dtype=np.uint8))
    assert are_solutions(np.array([rows])).tolist() == [True]


@pytest.mark.parametrize(
    "rows, pairs, first_problem",
    [
        (
            [0, 1, 2, 3, 4, 5, 6, 7],
            28,
            "anti-diagonal r-c=0 holds 8 queens (columns 0, 1, 2, 3, 4, 5, 6, 7)",
        ),
        (
            [7, 6, 5, 4, 3, 2, 1, 0],
            28,
            "diagonal r+c=7 holds 8 queens (columns 0, 1, 2, 3, 4, 5, 6, 7)",
        ),
        ([0, 4, 7, 5, 2, 6, 1, 1], 2, "row 1 holds 2 queens (columns 6, 7)"),
        ([0, 0], 1, "row 0 holds 2 queens (columns 0, 1)"),
        ([0, 1], 1, "anti-diagonal r-c=0 holds 2 queens (columns 0, 1)"),
        ([1, 0], 1, "diagonal r+c=1 holds 2 queens (columns 0, 1)"),
        ([0, 2, 1], 1, "diagonal r+c=3 holds 2 queens (columns 1, 2)"),
    ],
)
def test_known_non_solutions(rows, pairs, first_problem):
    report = check_board(rows)
    assert not report.ok and not is_solution(rows)
    assert report.attacking_pairs == pairs == pairs_reference(rows)
    assert report.problems[0] == first_problem
    assert not are_solutions(np.array([rows]))[0]


def test_all_92_solutions_of_8_queens():
    sols = eight_queens_brute_force()
    assert sols.shape == (92, 8)
    assert are_solutions(sols).all() and are_solutions(sols).sum() == 92
    assert all(check_board(s).ok for s in sols)
    everything = np.array(list(itertools.permutations(range(8))))
    assert are_solutions(everything).sum() == 92
    assert (attacking_pairs(everything) == 0).sum() == 92
    require_solutions(sols, "brute force")


@settings(max_examples=150, deadline=None)
@given(boards())
def test_matches_pairwise_reference(rows):
    pairs = pairs_reference(rows)
    report = check_board(rows)
    assert report.attacking_pairs == pairs
    assert report.ok == (pairs == 0) == is_solution(rows)
    assert attacking_pairs(np.array(rows)) == pairs
    assert queen_conflicts(np.array(rows)).tolist() == conflicts_reference(rows)
    assert 2 * pairs == sum(conflicts_reference(rows))
    assert bool(report.problems) == (pairs > 0)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 12), st.integers(0, 20), st.randoms(use_true_random=False))
def test_batch_matches_reference(n, batch, rnd):
    rows = [[rnd.randrange(n) for _ in range(n)] for _ in range(batch)]
    rows += [rnd.sample(range(n), n) for _ in range(batch)]
    arr = np.array(rows, dtype=np.int64).reshape(len(rows), n)
    want = [pairs_reference(r) for r in rows]
    assert attacking_pairs(arr).tolist() == want
    assert are_solutions(arr).tolist() == [p == 0 for p in want]
    # Leading shape is kept; dtype does not matter.
    assert (
        attacking_pairs(arr.astype(np.int16).reshape(2, batch, n)).tolist()
        == np.reshape(want, (2, batch)).tolist()
    )


def test_batch_edge_shapes():
    assert are_solutions(np.zeros((0, 8), np.int32)).shape == (0,)
    assert attacking_pairs(np.zeros((0, 8), np.int32)).shape == (0,)
    assert (
        are_solutions(np.zeros((3, 0), np.int32)).tolist() == [True] * 3
    )  # the empty board is vacuously fine
    assert attacking_pairs(np.zeros((2, 3, 4), np.int32)).tolist() == [[6] * 3] * 2
    require_solutions(np.zeros((0, 8), np.int32))


def test_are_solutions_rejects_bad_values_without_crashing():
    good = np.array(SOLUTION_8)
    batch = np.stack([good, good + 1, good - 1, good])
    assert are_solutions(batch).tolist() == [True, False, False, True]
    assert are_solutions(batch.astype(float)).tolist() == [True, False, False, True]
    fractional = batch.astype(float)
    fractional[3, 2] += 0.5
    assert are_solutions(fractional).tolist() == [True, False, False, False]
    assert not are_solutions(batch.astype(bool)).any()
    assert not are_solutions(batch.astype(object)).any()
    with pytest.raises(ValueError, match=r"0\.\.7"):
        attacking_pairs(batch)


@pytest.mark.parametrize(
    "rows, n, problems",
    [
        ([0, 4, 7, 5, 2, 6, 1], 9, ("length 7, expected 9",)),
        ([0, 4, 7, 5, 2, 6, 1, 9], None, ("column 7: row 9 out of range 0..7",)),
        ([0, -1, 2], None, ("column 1: row -1 out of range 0..2",)),
        ([0, 2.5, 1], None, ("column 1: 2.5 is not an integer",)),
        ([0, float("nan"), 1], None, ("column 1: nan is not an integer",)),
        ([True, False], None, ("dtype bool is not an integer type",)),
        (["a", "b"], None, ("dtype <U1 is not an integer type",)),
        ([[1, 3, 0, 2]], None, ("expected a 1-D board rows[n], got shape (1, 4)",)),
        (3, None, ("expected a 1-D board rows[n], got shape ()",)),
    ],
)
def test_bad_inputs_are_problems_not_crashes(rows, n, problems):
    report = check_board(rows, n)
    assert not report.ok and report.problems == problems
    assert report.attacking_pairs == (0 if problems[0].startswith("length") else -1)
    assert not is_solution(rows)


def test_integral_floats_and_unsigned_are_boards():
    assert check_board(np.array(SOLUTION_8, dtype=float)).ok
    assert check_board(np.array([2**64 - 1, 0], dtype=np.uint64)).problems == (
        "column 0: row 18446744073709551615 out of range 0..1",
    )
    ragged = check_board([[1, 2], [3]])
    assert not ragged.ok and ragged.problems[0].startswith("not an array of integers")


def test_wrong_length_is_still_analysed():
    report = check_board([1, 3, 0], n=4)  # a prefix of the n=4 solution, values valid for n=4
    assert report.problems == ("length 3, expected 4",) and report.attacking_pairs == 0
    assert check_board([0, 3], n=4).attacking_pairs == 0
    assert check_board([3, 3], n=4).problems[1] == "row 3 holds 2 queens (columns 0, 1)"


def test_problem_list_is_capped():
    report = check_board(np.arange(40) % 4)  # many crowded rows and diagonals
    assert len(report.problems) == MAX_PROBLEMS + 1
    assert report.problems[-1].startswith("... and ") and report.problems[-1].endswith(" more")
    out_of_range = check_board(np.full(25, 99))
    assert len(out_of_range.problems) == MAX_PROBLEMS + 1
    assert out_of_range.problems[-1] == f"... and {25 - MAX_PROBLEMS} more"
    fractional = check_board(np.full(25, 0.5))
    assert fractional.problems[-1] == f"... and {25 - MAX_PROBLEMS} more"
    crowded_row = check_board(np.zeros(20, np.int32))
    assert crowded_row.problems[0] == "row 0 holds 20 queens (columns 0, 1, 2, 3, 4, 5, 6, 7, ...)"


def test_problem_total_counts_every_line():
    rows = np.arange(40) % 4
    kinds = [
        [r for c, r in enumerate(rows)],
        [r + c for c, r in enumerate(rows)],
        [r - c for c, r in enumerate(rows)],
    ]
    crowded = sum(sum(1 for v in set(k) if k.count(v) >= 2) for k in kinds)
    report = check_board(rows)
    assert MAX_PROBLEMS + int(report.problems[-1].split()[2]) == crowded


def test_require_solutions_names_first_bad_board():
    sols = eight_queens_brute_force()[:5].copy()
    sols[3, 0], sols[3, 1] = sols[3, 1], sols[3, 1]
    sols[4] = 0
    with pytest.raises(
        SolutionCheckError, match=r"^min-conflicts: board 3 of 5 .*row \d holds 2 queens.*2 bad"
    ):
        require_solutions(sols, "min-conflicts")
    with pytest.raises(SolutionCheckError, match=r"shape \[B, 9\], got shape \(5, 8\)"):
        require_solutions(sols, n=9)
    with pytest.raises(SolutionCheckError, match="shape"):
        require_solutions(np.array(SOLUTION_8))
    with pytest.raises(SolutionCheckError, match="out of range"):
        require_solutions(np.array([SOLUTION_8]) + 1)


def test_big_inputs_are_fast():
    rng = np.random.default_rng(0)
    batch = np.argsort(rng.random((100_000, 8)), axis=1)
    start = time.perf_counter()
    ok = are_solutions(batch)
    pairs = attacking_pairs(batch)
    assert time.perf_counter() - start < 2.0
    assert (ok == (pairs == 0)).all() and 0 < ok.sum() < 1000
    big = rng.permutation(10**6)
    start = time.perf_counter()
    report = check_board(big)
    assert time.perf_counter() - start < 2.0
    assert report.attacking_pairs > 0 and len(report.problems) == MAX_PROBLEMS + 1


def test_checker_imports_only_numpy_and_errors():
    tree = ast.parse(Path(checker.__file__).read_text())
    modules = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    modules |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert modules <= {"__future__", "dataclasses", "numpy", "jaxqueens.errors"}
