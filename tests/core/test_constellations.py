"""Constellations (core/constellations.py): border configurations, classes and weights, allow
masks and tasks, rotation-symmetric solutions, against brute force and plain references."""

import functools
import itertools

import numpy as np
import pytest
import reference
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxqueens.core import constellations as con
from jaxqueens.core import symmetry
from jaxqueens.core.oeis import A000170, A002562


@functools.lru_cache
def solutions(n):
    return np.asarray(reference.all_solutions(n), np.int64).reshape(-1, n)


def completions(n, allow, col=0, cols=0, ld=0, rd=0):
    """Plain recursive count of the boards whose column k uses a row of ``allow[k]``."""
    full = (1 << n) - 1
    av = full & ~(cols | ld | rd) & int(allow[col])
    if col == n - 1:
        return bin(av).count("1")
    total = 0
    while av:
        bit = av & -av
        av ^= bit
        total += completions(
            n, allow, col + 1, cols | bit, ((ld | bit) << 1) & full, (rd | bit) >> 1
        )
    return total


def border_of(board):
    """(a, b, c, d) of a solution ``board[col] = row``."""
    n = len(board)
    rows = list(board)
    return (rows[0], rows[n - 1], rows.index(0), rows.index(n - 1))


def brute_configurations(n):
    """Every (a, b, c, d) whose border cells are consistent and mutually non-attacking."""
    out = []
    for a, b, c, d in itertools.product(range(n), repeat=4):
        cells = {(0, a), (n - 1, b), (c, 0), (d, n - 1)}
        lines = [x for x, _ in cells], [y for _, y in cells]
        if any(sum(1 for x, y in cells if x == k) != 1 for k in (0, n - 1)):
            continue
        if any(sum(1 for x, y in cells if y == k) != 1 for k in (0, n - 1)):
            continue
        if len(set(lines[0])) < len(cells) or len(set(lines[1])) < len(cells):
            continue
        if any(
            abs(x1 - x2) == abs(y1 - y2) for (x1, y1), (x2, y2) in itertools.combinations(cells, 2)
        ):
            continue
        out.append((a, b, c, d))
    return out


def test_cell_images_are_the_symmetry_module_s_transforms():
    boards = solutions(8)
    cols = np.broadcast_to(np.arange(8), boards.shape)
    gx, gy = con.cell_images(8, cols, boards)
    want = symmetry.transforms(boards)
    for k in range(8):
        got = np.zeros_like(boards)
        np.put_along_axis(got, gx[k], gy[k], axis=1)
        assert (got == want[k]).all(), symmetry.NAMES[k]


@pytest.mark.parametrize("n", [4, 5, 6, 7])
def test_border_configurations_match_brute_force(n):
    got = con.border_configurations(n)
    assert [tuple(c) for c in got.tolist()] == brute_configurations(n)  # both lexicographic
    # every solution's border configuration is among them
    assert {border_of(b) for b in solutions(n).tolist()} <= {tuple(c) for c in got.tolist()}


@settings(max_examples=8, deadline=None)
@given(st.integers(4, 12))
def test_weights_sum_to_all_configurations_and_classes_cover_them_once(n):
    everything = con.border_configurations(n)
    cfg, weights = con.constellations(n)
    assert int(weights.sum()) == len(everything)
    assert set(weights.tolist()) <= {2, 4, 8}
    imgs = con.images(n, cfg)  # [8, K, 4]
    seen = {}
    for k in range(len(cfg)):
        orbit = {tuple(c) for c in imgs[:, k].tolist()}
        assert len(orbit) == weights[k]
        for member in orbit:
            assert member not in seen  # each configuration belongs to exactly one class
            seen[member] = k
    assert set(seen) == {tuple(c) for c in everything.tolist()}


@pytest.mark.parametrize("n", [5, 6, 7, 8])
def test_weighted_completions_are_the_total(n):
    cfg, weights = con.constellations(n)
    allow = con.allow_masks(n, cfg)
    counts = [completions(n, a) for a in allow]
    assert sum(int(w) * c for w, c in zip(weights, counts, strict=True)) == A000170[n]
    # and each count is the number of solutions with that border configuration
    borders = [border_of(b) for b in solutions(n).tolist()]
    assert counts == [borders.count(tuple(c)) for c in cfg.tolist()]


@pytest.mark.parametrize("n", [4, 5, 8, 12, 17, 23])
def test_allow_masks_match_a_cell_by_cell_reference_across_all_border_configurations(n):
    """Every border configuration (not only the one searched per class): a border queen's column
    allows its own row only, any other column the rows no border queen attacks."""
    cfg = con.border_configurations(n)
    got = con.allow_masks(n, cfg)
    assert got.dtype == np.uint32 and got.shape == (len(cfg), n)
    for k in range(0, len(cfg), max(1, len(cfg) // 300)):  # a spread of ~300 configurations
        a, b, c, d = cfg[k].tolist()
        queens = {(0, a), (n - 1, b), (c, 0), (d, n - 1)}  # (column, row); corners shared
        for col in range(n):
            own = [r for x, r in queens if x == col]
            rows = own or [
                r
                for r in range(n)
                if not any(r == y or abs(col - x) == abs(r - y) for x, y in queens)
            ]
            assert int(got[k, col]) == sum(1 << r for r in rows), (n, k, col)


@pytest.mark.parametrize("n,depth", [(7, 1), (8, 3), (9, 4)])
def test_tasks_split_each_constellation_exactly(n, depth):
    cfg, _ = con.constellations(n)
    allow = con.allow_masks(n, cfg)
    masks, owner = con.tasks(n, allow, depth)
    assert masks.dtype == np.uint32 and masks.shape == (len(owner), 4)
    assert (np.diff(owner) >= 0).all() and (masks[:, 3] != 0).all()
    per = np.zeros(len(cfg), np.int64)
    full = (1 << n) - 1
    for (c, l, r, av), k in zip(masks.tolist(), owner.tolist(), strict=True):
        assert av == full & ~(c | l | r) & int(allow[k, depth])
        per[k] += completions_from(n, allow[k], depth, c, l, r)
    assert per.tolist() == [completions(n, a) for a in allow]


@pytest.mark.parametrize("n,depth", [(7, 1), (8, 3), (9, 4)])
def test_placements_are_the_tasks_with_their_queens_rows(n, depth):
    """The rows of each task's placed queens rebuild its masks at column `depth`."""
    allow = con.allow_masks(n, con.constellations(n)[0])
    masks, owner, rows = con.placements(n, allow, depth)
    want = con.tasks(n, allow, depth)
    np.testing.assert_array_equal(masks, want[0])
    np.testing.assert_array_equal(owner, want[1])
    assert rows.dtype == np.int8 and rows.shape == (len(owner), depth)
    assert con.placements(n, allow, depth, rows=False)[2].shape == (0, 0)
    for (c, l, r, _), queens in zip(masks.tolist(), rows.tolist(), strict=True):
        assert c == sum(1 << y for y in queens)
        gaps = [(y, depth - x) for x, y in enumerate(queens)]
        assert l == sum(1 << (y + g) for y, g in gaps if y + g < n)
        assert r == sum(1 << (y - g) for y, g in gaps if y >= g)


def completions_from(n, allow, col, cols, ld, rd):
    return completions(n, allow, col, cols, ld, rd)


@pytest.mark.parametrize("n", range(1, 9))
def test_rotation_fixed_solutions_match_brute_force(n):
    boards = solutions(n)
    if len(boards) == 0:
        assert con.fixed_by_rotation(n) == (0, 0)
        return
    images = symmetry.transforms(boards)
    fixed = lambda k: int((images[k] == boards).all(axis=1).sum())
    assert fixed(1) == fixed(3)
    assert con.fixed_by_rotation(n) == (fixed(1), fixed(2))


@pytest.mark.parametrize("n", range(1, 17))
def test_burnside_gives_the_fundamental_counts(n):
    assert con.classes(A000170[n], n) == A002562[n]


def test_a_wrong_total_is_caught():
    with pytest.raises(RuntimeError, match="multiple of 8"):
        con.classes(A000170[8] + 1, 8)


def _tree_edges(n, allow):
    """Edges of the plain column-by-column DFS under ``allow`` masks (a reference in Python)."""
    full = (1 << n) - 1

    def walk(col, cols, ld, rd):
        if col == n:
            return 0
        free, edges = full & ~(cols | ld | rd) & int(allow[col]), 0
        while free:
            bit = free & -free
            free ^= bit
            edges += 1 + walk(col + 1, cols | bit, ((ld | bit) << 1) & full, (rd | bit) >> 1)
        return edges

    return walk(0, 0, 0, 0)


def test_preference_picks_members_with_smaller_trees():
    # the chosen member of every class is a member (checked above); here, the members it picks
    # walk fewer edges in total than the classes' average member, and than the smallest key
    n = 10
    cfg = con.border_configurations(n)
    edges = np.array([_tree_edges(n, a) for a in con.allow_masks(n, cfg)])
    orbit = con._key(n, con.images(n, cfg)).min(axis=0)
    _, cls = np.unique(orbit, return_inverse=True)
    mean = (np.bincount(cls, edges) / np.bincount(cls)).sum()
    key_first = edges[np.unique(cls, return_index=True)[1]].sum()  # cfg is in key order
    index = {k: i for i, k in enumerate(con._key(n, cfg))}
    chosen = edges[[index[k] for k in con._key(n, con.constellations(n)[0])]].sum()
    assert chosen < 0.85 * mean and chosen < key_first
    # the side queens near the middle rows first: (n-1)//2 beats 1 for the queen of column 0
    near, far = np.array([[4, 5, 3, 6]]), np.array([[1, 5, 3, 6]])
    assert con.preference(n, near)[0] < con.preference(n, far)[0]
    assert con.preference_features(n, near).shape == (1, len(con.PREFERENCE_COEFFICIENTS))


def level_walk(table, cols, ld, rd, av):
    """The search the counting kernel walks, read off a level table in plain Python (one task,
    from its level 0): (completions, edges). Mirrors jaxqueens.solvers.count.edge."""
    found = edges = 0

    def walk(k, cols, ld, rd, av):
        nonlocal found, edges
        row = [int(w) for w in table[k]]
        while av:
            bit = av & -av
            av ^= bit
            edges += 1
            g = row[con.GAP]
            nc, nl, nr = cols | bit, (ld | bit) << g, (rd | bit) >> g
            nav = ~(nc | nl | nr) & row[con.ALLOW1]
            found += bin(nav & row[con.COUNT_MASK]).count("1")
            ahead = [
                ~(nc | (nl << row[gap]) | (nr >> row[gap])) & row[allow]
                for gap, allow in [(con.GAP2, con.ALLOW2), (con.GAP3, con.ALLOW3)]
            ]
            if nav and all(ahead):
                walk(k + 1, nc, nl & 0xFFFFFFFF, nr, nav)

    walk(0, cols, ld, rd, av)
    return found, edges


@pytest.mark.parametrize("n,depth", [(6, 1), (7, 2), (8, 1), (8, 3), (9, 2), (10, 4)])
def test_level_tables_search_each_task_exactly(n, depth):
    """Searched over its level table (border columns skipped, a look-ahead of two levels), a
    task has the completions of the plain search over every column."""
    cfg, weights = con.constellations(n)
    allow = con.allow_masks(n, cfg)
    columns, levels = con.level_columns(n, cfg, depth)
    tables = con.level_tables(n, cfg, allow, depth)
    rows = con.table_levels(n, depth)
    assert tables.shape == (len(cfg), rows, con.TABLE_WORDS) and tables.dtype == np.uint32
    assert rows >= levels.max() and rows & (rows - 1) == 0
    for k, (c, lv) in enumerate(zip(columns.tolist(), levels.tolist(), strict=True)):
        border = {0, n - 1, int(cfg[k, 2]), int(cfg[k, 3])}
        assert c[:lv] == [depth] + [x for x in range(depth + 1, n) if x not in border]
        assert (tables[k, max(lv - 1, 0) :] == 0).all()  # no edges from the last level on
        if lv > 1:
            assert tables[k, lv - 2, con.COUNT_MASK] == 0xFFFFFFFF
            assert not tables[k, : lv - 2, con.COUNT_MASK].any()
            assert tables[k, : lv - 1, con.GAP].sum() == c[lv - 1] - depth
    masks, owner = con.tasks(n, allow, depth)
    total = 0
    for (c, ld, rd, av), k in zip(masks.tolist(), owner.tolist(), strict=True):
        want = completions_from(n, allow[k], depth, c, ld, rd)
        got = bin(av).count("1") if levels[k] == 1 else level_walk(tables[k], c, ld, rd, av)[0]
        assert got == want
        total += int(weights[k]) * got
    assert total == A000170[n]


def test_bad_arguments():
    with pytest.raises(ValueError):
        con.border_configurations(1)
    with pytest.raises(ValueError):
        con.tasks(8, np.zeros((1, 8), np.uint32), 8)


def _allow_reference(n: int, cfg) -> list[list[int]]:
    """The rows each column may use, cell by cell: a border queen's column only its own row,
    another column every row no border queen attacks."""
    a, b, c, d = (int(v) for v in cfg)
    queens = [(0, a), (n - 1, b), (c, 0), (d, n - 1)]
    out = []
    for col in range(n):
        own = [y for x, y in queens if x == col]
        rows = (
            set(own)
            if own
            else {
                r
                for r in range(n)
                if not any(r == y or abs(col - x) == abs(r - y) for x, y in queens)
            }
        )
        out.append(sum(1 << r for r in rows))
    return out


@pytest.mark.parametrize("n", [4, 5, 8, 9, 32])
def test_allow_masks_match_a_cell_by_cell_reference(n):
    cfg = con.border_configurations(n) if n < 32 else con.constellations(n)[0]
    if len(cfg) > 300:
        cfg = cfg[np.random.default_rng(n).choice(len(cfg), 300, replace=False)]
    allow = con.allow_masks(n, cfg)
    assert allow.dtype == np.uint32 and allow.shape == (len(cfg), n)
    assert allow.tolist() == [_allow_reference(n, c) for c in cfg.tolist()]
