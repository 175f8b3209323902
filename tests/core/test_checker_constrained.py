"""checker.check_constrained / require_constrained: the independent check of constrained boards,
against a pairwise plain-Python reference written from the definitions."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxqueens.core import checker
from jaxqueens.core.constraints import Constraints
from jaxqueens.core.oeis import A051906
from jaxqueens.errors import SolutionCheckError


def solves(rows, m):
    """Plain reference: every rule from the raw fields, pair by pair."""
    n = m.n
    for x, y in enumerate(rows):
        if (
            y in m.rows
            or x in m.columns
            or x + y in m.sums
            or x - y + n - 1 in m.diffs
            or (x, y) in m.blocked
        ):
            return False
    if any(rows[x] != y for x, y in m.fixed):
        return False
    for i, j in itertools.combinations(range(n), 2):
        a, b = rows[i], rows[j]
        if a == b:
            return False
        if m.toroidal:
            if (i + a - j - b) % n == 0 or (i - a - j + b) % n == 0:
                return False
        elif abs(a - b) == j - i:
            return False
    return True


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_agrees_with_the_reference(data):
    n = data.draw(st.integers(1, 7))
    rows = data.draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n))
    line = st.integers(0, 2 * n - 2)
    sq = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
    m = Constraints(
        n,
        fixed=data.draw(st.lists(sq, max_size=2)),
        blocked=data.draw(st.lists(sq, max_size=3)),
        rows=data.draw(st.lists(st.integers(0, n - 1), max_size=1)),
        sums=data.draw(st.lists(line, max_size=2)),
        diffs=data.draw(st.lists(line, max_size=2)),
        toroidal=data.draw(st.booleans()),
    )
    report = checker.check_constrained(np.array(rows), m)
    assert report.ok == solves(rows, m)
    assert report.ok == (not report.problems)


def test_plain_model_matches_check_board():
    for rows in ([0, 4, 7, 5, 2, 6, 1, 3], [0, 1, 2, 3, 4, 5, 6, 7]):
        assert checker.check_constrained(np.array(rows), Constraints(8)).ok == checker.is_solution(
            rows
        )


def test_each_rule_is_named():
    sol = np.array([1, 3, 0, 2])
    for m, msg in [
        (Constraints(4, sums=[4]), "x\\+y=4 is excluded"),
        (Constraints(4, diffs=[1]), "x-y=-2 is excluded"),
        (Constraints(4, rows=[0]), "row 0 is excluded"),
        (Constraints(4, columns=[3]), "column 3 is excluded"),
        (Constraints(4, blocked=[(0, 1)]), "square \\(0, 1\\) is blocked"),
        (Constraints(4, fixed=[(0, 2)]), "fixed queen on row 2 moved to row 1"),
        (Constraints(4, toroidal=True), "mod n"),
    ]:
        report = checker.check_constrained(sol, m)
        assert not report.ok and any(__import__("re").search(msg, p) for p in report.problems), (
            report
        )
    assert not checker.check_constrained(np.array([1, 3, 0]), Constraints(4)).ok  # wrong length
    assert not checker.check_constrained(np.array([1, 3, 0, 9]), Constraints(4)).ok  # off the board


def test_toroidal_solutions_by_brute_force_match_a051906():
    for n in (4, 5, 6, 7):
        m = Constraints(n, toroidal=True)
        found = sum(
            checker.check_constrained(np.array(p), m).ok for p in itertools.permutations(range(n))
        )
        assert found == A051906[n]


def test_require_constrained_names_the_first_bad_board():
    m = Constraints(4, fixed=[(0, 1)])
    checker.require_constrained(np.array([[1, 3, 0, 2]]), m)
    with pytest.raises(SolutionCheckError, match="board 1 of 2"):
        checker.require_constrained(np.array([[1, 3, 0, 2], [2, 0, 3, 1]]), m)
    with pytest.raises(SolutionCheckError, match="shape"):
        checker.require_constrained(np.array([1, 3, 0, 2]), m)
