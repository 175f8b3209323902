"""The constraint model (core/constraints.py): validation, derived masks, orientations."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxqueens.core import constraints as C
from jaxqueens.errors import QueensError


def squares_by_definition(m):
    """bool [x, y] straight from the field definitions, square by square."""
    n = m.n
    ok = np.ones((n, n), bool)
    for x, y in itertools.product(range(n), range(n)):
        ok[x, y] = not (
            y in m.rows
            or x in m.columns
            or x + y in m.sums
            or x - y + n - 1 in m.diffs
            or (x, y) in m.blocked
        )
    return ok


@st.composite
def models(draw, max_n=7):
    n = draw(st.integers(1, max_n))
    sq = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
    line = st.integers(0, 2 * n - 2)
    return C.Constraints(
        n,
        fixed=draw(st.lists(sq, max_size=2)),
        blocked=draw(st.lists(sq, max_size=4)),
        rows=draw(st.lists(st.integers(0, n - 1), max_size=1)),
        columns=draw(st.lists(st.integers(0, n - 1), max_size=1)) if draw(st.booleans()) else (),
        sums=draw(st.lists(line, max_size=3)),
        diffs=draw(st.lists(line, max_size=3)),
        toroidal=draw(st.booleans()),
    )


def test_fields_are_normalised_and_round_trip():
    m = C.Constraints(8, fixed=[[3, 1], (0, 2), (3, 1)], sums=[5, 2, 5], diffs=np.array([4]))
    assert m.fixed == ((0, 2), (3, 1)) and m.sums == (2, 5) and m.diffs == (4,)
    assert C.from_dict(m.to_dict()) == m and hash(m) == hash(C.from_dict(m.to_dict()))
    assert C.Constraints(5).plain and not m.plain
    assert C.describe(m) == "n=8 fixed=2 sums=2 diffs=1"


@pytest.mark.parametrize(
    "kwargs,msg",
    [
        ({"n": 0}, "positive"),
        ({"n": 4, "fixed": [(4, 0)]}, "off the board"),
        ({"n": 4, "blocked": [(0, 1, 2)]}, "pair"),
        ({"n": 4, "sums": [7]}, "out of range"),
        ({"n": 4, "rows": [1.5]}, "not an integer"),
        ({"n": 4, "diffs": [-1]}, "out of range"),
    ],
)
def test_bad_fields_are_one_line_errors(kwargs, msg):
    with pytest.raises(QueensError, match=msg):
        C.Constraints(**kwargs)


@pytest.mark.parametrize(
    "doc,msg",
    [
        ({"fixed": []}, "needs"),
        ({"n": 4, "bogus": 1}, "unknown key"),
        ({"n": 4, "sums": 3}, "must be a list"),
        ({"n": 4, "toroidal": "yes"}, "true or false"),
    ],
)
def test_from_dict_refuses_bad_documents(doc, msg):
    with pytest.raises(QueensError, match=msg):
        C.from_dict(doc)


def test_excluded_diagonals_take_the_first_d_pairs():
    pairs = [[4, 1], [0, 0], [9, 1], [3, 0]]
    m = C.excluded_diagonals(6, pairs, 3)
    assert m.sums == (4, 9) and m.diffs == (0,)
    ok = C.open_squares(m)
    assert (
        not ok[1, 3] and not ok[0, 5] and ok[5, 0]
    )  # x + y = 4; x - y = -5 (k = 0); (5,0) is k = 10
    assert C.excluded_diagonals(6, pairs).diffs == (0, 3)
    with pytest.raises(QueensError, match="out of range"):
        C.excluded_diagonals(6, pairs, 5)
    with pytest.raises(QueensError, match="type"):
        C.excluded_diagonals(6, [[1, 2]])


@settings(max_examples=60, deadline=None)
@given(models())
def test_open_and_allowed_squares_follow_the_definitions(m):
    ok = C.open_squares(m)
    assert (ok == squares_by_definition(m)).all()
    allowed = C.allowed_squares(m)
    assert not (allowed & ~ok).any()
    n = m.n
    for x, y in itertools.product(range(n), range(n)):
        if not allowed[x, y] and ok[x, y]:  # only fixed queens close an open square
            assert any(fx == x or C.attacked_by(n, fx, fy, m.toroidal)[x, y] for fx, fy in m.fixed)
    masks = C.column_masks(m)
    assert masks.dtype == np.uint64 and masks.shape == (n,)
    assert all(int(masks[x]) >> y & 1 == allowed[x, y] for x in range(n) for y in range(n))


def test_fixed_queens_cut_their_column_and_the_squares_they_attack():
    m = C.completion(8, [(1, 3), (3, 4)])
    ok = C.allowed_squares(m)
    assert ok[1].tolist() == [y == 3 for y in range(8)] and ok[3].tolist() == [
        y == 4 for y in range(8)
    ]
    assert not ok[0, 2] and not ok[0, 3] and not ok[2, 3] and ok[0, 0]
    attacking = C.completion(8, [(0, 0), (2, 2)])  # the two placed queens attack each other
    assert not C.allowed_squares(attacking)[0].any() and not C.allowed_squares(attacking)[2].any()
    assert C.fixed_rows(m).tolist() == [-1, 3, -1, 4, -1, -1, -1, -1]


def test_toroidal_attacks_wrap():
    a = C.attacked_by(5, 0, 0, True)
    assert a[4, 1] and a[1, 4] and a[3, 2] and not a[1, 2]
    assert not C.attacked_by(5, 0, 0, False)[4, 1]


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 9), st.integers(0, 7), st.randoms(use_true_random=False))
def test_orientations_map_boards_back(n, t, rnd):
    rows = list(range(n))
    rnd.shuffle(rows)
    squares = np.zeros((n, n), bool)
    squares[np.arange(n), rows] = True
    seen = C.orient(squares, t)
    assert seen.sum() == n and (seen.sum(axis=1) == 1).all()
    assert C.board_from_orientation(seen.argmax(axis=1), t).tolist() == rows


def test_best_orientation_puts_the_constrained_columns_first():
    m = C.completion(8, [(7, 2), (6, 5)])  # fixed queens in the last columns
    t = C.best_orientation(m)
    masks = C.column_masks(m, t)
    assert bin(int(masks[0])).count("1") == 1  # a fixed column now comes first
    assert C.best_orientation(C.Constraints(6, columns=[3])) in range(8)  # an empty column: any


@pytest.mark.parametrize("value", ["no", 1, 0, None, "false"])
def test_defect_28_16_toroidal_must_be_true_or_false(value):
    with pytest.raises(QueensError, match="toroidal must be True or False"):
        C.Constraints(8, toroidal=value)
    assert C.Constraints(8, toroidal=np.bool_(True)).toroidal is True


@pytest.mark.parametrize(
    "kwargs, reason",
    [
        ({"fixed": ((0, 0), (1, 1))}, "fixed queens at (0,0) and (1,1) attack each other"),
        ({"fixed": ((2, 0), (2, 5))}, "fixed queens at (2,0) and (2,5) attack each other"),
        ({"fixed": ((0, 0), (3, 0))}, "fixed queens at (0,0) and (3,0) attack each other"),
        ({"fixed": ((0, 0), (2, 3)), "toroidal": True, "n": 5}, "attack each other on the torus"),
        (
            {"fixed": ((0, 0),), "rows": (0,)},
            "(0,0) stands on a forbidden square (row 0 is excluded)",
        ),
        ({"columns": (3,)}, "column 3 has no allowed square"),
        ({"rows": (6,)}, "row 6 has no allowed square"),
        ({"fixed": ((0, 3), (4, 1))}, None),
        ({}, None),
    ],
)
def test_defect_28_msg_unsat_reason_is_a_proof(kwargs, reason):
    """Plainly UNSAT instances are found without a search; None proves nothing. Every instance
    given a reason has no solution by brute force (n = 8)."""
    n = kwargs.pop("n", 8)
    m = C.Constraints(n, **kwargs)
    assert C.unsat_reason(m) == reason or (reason and reason in C.unsat_reason(m))
    if reason is not None:
        from jaxqueens.core.checker import check_constrained

        # Every board the constrained checker accepts is an n-queens solution (a torus' diagonals
        # include the plane's), so the brute force checks the plain solutions among all n!
        # permutations, found here with NumPy (92 at n = 8, 10 at n = 5).
        perms = np.array(list(itertools.permutations(range(n))))
        i, j = np.triu_indices(n, 1)
        plain = perms[~(np.abs(perms[:, i] - perms[:, j]) == j - i).any(axis=1)]
        assert len(plain) == {5: 10, 8: 92}[n]
        assert not any(check_constrained(p, m).ok for p in plain)
