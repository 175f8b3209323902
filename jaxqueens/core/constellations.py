"""Constellations: the border queens of a solution, one canonical form per symmetry class.

Method after the Q27 project (Preusser and Engelhardt 2016) and NQueensFAF: every solution has one
queen on each border line, and the 8 symmetries of the square act on these border configurations,
so the total is the sum over canonical configurations of orbit weight times completions; the
fundamental count (OEIS A002562) follows by Burnside's lemma from the solutions fixed by the
quarter and half turns (`fixed_by_rotation`). `tasks` turns each canonical configuration into
`allow` masks that the bitmask search of `jaxqueens.solvers.count` completes. Pure NumPy; the
docs' count page describes the method.
"""

from __future__ import annotations

import itertools

import numpy as np

from jaxqueens.core.prefixes import free_rows, place

BATCH = 1 << 16  # nodes expanded at once by the orbit search (bounds its memory)


def cell_images(n: int, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 8 images of cells under D4.

    Args:
      n: board size.
      x: int columns.
      y: int rows, the shape of `x`.

    Returns:
      `(columns, rows)`: two `[8, ...]` arrays, in the order of `NAMES`.
    """
    x, y = np.asarray(x), np.asarray(y)
    t = n - 1
    xs = [x, t - y, t - x, y, x, t - x, y, t - y]
    ys = [y, x, t - y, t - x, t - y, y, x, t - x]
    return np.stack(xs), np.stack(ys)


def _cells(n: int, cfg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Columns and rows `[M, 4]` of the border queens of `cfg` `[M, 4]` (a corner: twice)."""
    a, b, c, d = cfg.T
    x = np.stack([np.zeros_like(a), np.full_like(b, n - 1), c, d], axis=1)
    y = np.stack([a, b, np.zeros_like(c), np.full_like(d, n - 1)], axis=1)
    return x, y


def _config_of(n: int, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Configurations `[..., 4]` of border cell sets `[..., 4]` (each line holds one queen)."""

    def on(mask, value):
        return np.take_along_axis(value, np.argmax(mask, axis=-1)[..., None], axis=-1)[..., 0]

    return np.stack([on(x == 0, y), on(x == n - 1, y), on(y == 0, x), on(y == n - 1, x)], axis=-1)


def border_configurations(n: int) -> np.ndarray:
    """Every border configuration of non-attacking queens, in lexicographic order.

    Args:
      n: board size.

    Returns:
      int64 `[M, 4]` rows `(a, b, c, d)`: `a`/`b` the rows of the queens in columns 0 / n-1,
      `c`/`d` the columns of the queens in rows 0 / n-1. Corners are shared: `a == 0` iff
      `c == 0`, and so on.
    """
    if n < 2:
        raise ValueError(f"border configurations need n >= 2, not n = {n}")
    t = n - 1
    line = np.arange(n, dtype=np.int32)
    cfg = np.stack(np.meshgrid(line, line, line, line, indexing="ij"), axis=-1).reshape(-1, 4)
    a, b, c, d = cfg.T
    ok = (
        ((a == 0) == (c == 0))
        & ((a == t) == (d == 0))
        & ((b == 0) == (c == t))
        & ((b == t) == (d == t))
    )
    cfg = cfg[ok]
    x, y = _cells(n, cfg)
    bad = np.zeros(len(cfg), bool)
    for i, j in itertools.combinations(range(4), 2):  # each pair of border queens once
        dx, dy = x[:, i] - x[:, j], y[:, i] - y[:, j]
        same = (dx == 0) & (dy == 0)  # a corner queen, counted for its row and its column
        bad |= ((dx == 0) | (dy == 0) | (dx == dy) | (dx == -dy)) & ~same
    return cfg[~bad].astype(np.int64)


def images(n: int, cfg: np.ndarray) -> np.ndarray:
    """The 8 images of border configurations under D4.

    Args:
      n: board size.
      cfg: int `[M, 4]` configurations.

    Returns:
      `[8, M, 4]`, in the order of `symmetry.NAMES`.
    """
    x, y = _cells(n, np.asarray(cfg))
    gx, gy = cell_images(n, x, y)
    return _config_of(n, gx, gy)


def _key(n: int, cfg: np.ndarray) -> np.ndarray:
    return ((cfg[..., 0] * n + cfg[..., 1]) * n + cfg[..., 2]) * n + cfg[..., 3]


# log(tree edges) of a member against the mean of its class: a cubic in (ca, cb, lo, hi), its
# monomials PREFERENCE_TERMS (the variables, then their products two and three at a time),
# fitted by scripts/fit_count_preference.py on every member of every class at n = 12..15 with the
# counting kernel of jaxqueens.solvers.count (level tables, look-ahead)
PREFERENCE_TERMS = [
    comb for k in (1, 2, 3) for comb in itertools.combinations_with_replacement(range(4), k)
]
PREFERENCE_COEFFICIENTS = (  # in the order of PREFERENCE_TERMS, by degree
    *(-0.177, 0.665, -0.698, -0.988),  # linear
    *(2.695, 0.218, -0.791, -0.419, 0.557, 1.216, -3.091, -1.629, -3.102, -0.869),  # quadratic
    *(-0.805, -0.341, -0.07, -0.702, -0.204, -0.011, 0.191, 0.511, 0.104, 0.819),  # cubic
    *(-0.061, -1.117, 0.24, -0.562, -0.257, 2.111, 3.635, 0.822, 1.807, 2.335),
)


def preference_features(n: int, cfg: np.ndarray) -> np.ndarray:
    """The terms of `PREFERENCE_COEFFICIENTS` for border configurations.

    `ca`, `cb` are the distances of the queens of columns 0 and n-1 from the middle row, `lo`,
    `hi` the earlier and the later column of the queens of rows 0 and n-1 (all scaled to 0..1),
    then their products two and three at a time (`PREFERENCE_TERMS`).

    Args:
      n: board size.
      cfg: int `[M, 4]` configurations.

    Returns:
      float64 `[M, 34]`.
    """
    cfg = np.asarray(cfg, np.float64).reshape(-1, 4)
    t = max(n - 1, 1)
    a, b, c, d = cfg.T
    v = [np.abs(2 * a - t) / t, np.abs(2 * b - t) / t, np.minimum(c, d) / t, np.maximum(c, d) / t]
    return np.stack([np.prod([v[i] for i in term], axis=0) for term in PREFERENCE_TERMS], axis=-1)


def preference(n: int, cfg: np.ndarray) -> np.ndarray:
    """Which member of a class to search (smallest first).

    Every member of a class has the same number of completions, but the DFS, which places
    columns left to right, walks trees of very different sizes: `PREFERENCE_COEFFICIENTS` predict
    them.

    Args:
      n: board size.
      cfg: int `[M, 4]` configurations.

    Returns:
      float64 `[M]`: the predicted log(tree edges) of each configuration relative to its class.
    """
    return preference_features(n, cfg) @ np.asarray(PREFERENCE_COEFFICIENTS)


def constellations(n: int) -> tuple[np.ndarray, np.ndarray]:
    """One border configuration per symmetry class, and the class sizes.

    Any member of a class stands for the whole class; the one searched is the first by
    `preference` (the smallest search tree), ties broken by the smallest key
    `((a*n + b)*n + c)*n + d`.

    Args:
      n: board size.

    Returns:
      `(configs, weights)`: configs int64 `[K, 4]`, one per class, in key order; weights int64
      `[K]`, the class sizes, 8 / |stabiliser| (`weights.sum()` is the number of all border
      configurations).
    """
    cfg = border_configurations(n)
    keys = _key(n, images(n, cfg))  # [8, M]
    orbit = keys.min(axis=0)
    weights = 8 // (keys == keys[0][None]).sum(axis=0)
    order = np.lexsort((keys[0], preference(n, cfg), orbit))  # by class, preference, key
    first = np.ones(len(order), bool)
    first[1:] = orbit[order][1:] != orbit[order][:-1]
    pick = np.sort(order[first])
    return cfg[pick], weights[pick].astype(np.int64)


def allow_masks(n: int, cfg: np.ndarray) -> np.ndarray:
    """The rows each column may use under each configuration (built from bits, not cells).

    Args:
      n: board size.
      cfg: int `[K, 4]` configurations.

    Returns:
      uint32 `[K, n]`.
    """
    cfg = np.asarray(cfg, np.int64).reshape(-1, 4)
    x, y = _cells(n, cfg)  # [K, 4]
    dx = np.arange(n)[None, :, None] - x[:, None, :]  # [K, n, 4] columns from each border queen
    qy = np.broadcast_to(y[:, None, :], dx.shape)

    def bit(row):  # the row's bit, 0 off the board
        inside = (row >= 0) & (row < n)
        return np.where(inside, np.uint64(1) << np.clip(row, 0, n - 1).astype(np.uint64), 0)

    attacked = np.bitwise_or.reduce(bit(qy) | bit(qy + dx) | bit(qy - dx), axis=-1)  # [K, n]
    own = np.bitwise_or.reduce(np.where(dx == 0, bit(qy), np.uint64(0)), axis=-1)
    full = np.uint64((1 << n) - 1)
    ok = np.where((dx == 0).any(-1), own, full & ~attacked)
    return ok.astype(np.uint32)


def tasks(n: int, allow: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Split constellations into independent tasks by placing their first `depth` columns.

    Args:
      n: board size.
      allow: uint32 `[K, n]` from `allow_masks`.
      depth: columns placed on the host, 1..n-1 (column 0 holds a border queen, so depth 1
        gives one task per constellation).

    Returns:
      masks: uint32 `[P, 4]` (cols, ld, rd, av) at column `depth`, dead ends dropped;
      owner: int64 `[P]` the constellation each task belongs to (tasks of one constellation
      are consecutive).
    """
    masks, owner, _ = placements(n, allow, depth, rows=False)
    return masks, owner


def placements(n: int, allow: np.ndarray, depth: int, rows: bool = True) -> tuple[np.ndarray, ...]:
    """The tasks of `tasks` and the rows of their placed queens.

    Args:
      n: board size.
      allow: uint32 `[K, n]` from `allow_masks`.
      depth: columns placed on the host, 1..n-1.
      rows: keep the rows (False: an empty `[0, 0]` array, and no time spent on them).

    Returns:
      `(masks, owner, rows)`: `tasks`' masks and owners, and int8 `[P, depth]` the queens' rows.
    """
    if not 1 <= depth <= n - 1:
        raise ValueError(f"depth {depth} out of range for n = {n}")
    allow = np.asarray(allow).astype(np.uint64)
    owner = np.arange(len(allow))
    cols = ld = rd = np.zeros(len(allow), np.uint64)
    queens = np.zeros((len(allow), 0), np.int8)
    for level in range(depth):
        parent, row, cols, ld, rd = place(cols, ld, rd, n, allow[owner, level])
        owner = owner[parent]
        if rows:
            queens = np.concatenate([queens[parent], row.astype(np.int8)[:, None]], axis=1)
    av = free_rows(cols, ld, rd, n) & allow[owner, depth]
    keep = av != 0
    masks = np.stack([cols, ld, rd, av], axis=1)[keep].astype(np.uint32)
    return masks, owner[keep], queens[keep] if rows else queens[:0]


# the words of a level table row (jaxqueens.solvers.count reads them in this order)
GAP, ALLOW1, GAP2, ALLOW2, GAP3, ALLOW3, COUNT_MASK = range(7)
TABLE_WORDS = 8


def table_levels(n: int, depth: int) -> int:
    """The rows of every level table: at least the levels any task can have.

    Args:
      n: board size.
      depth: host-placed columns.

    Returns:
      A power of two (>= 2), at least `n - depth - 1` (column n - 1 always holds a border queen).
    """
    return max(2, 1 << (max(n - depth - 1, 1) - 1).bit_length())


def level_columns(n: int, cfg: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """The columns each constellation's tasks search, in order.

    Column `depth` (where a task starts) comes first, then every later column without a border
    queen (a border queen is fixed and every other column's allowed rows already avoid it).

    Args:
      n: board size.
      cfg: int `[K, 4]` configurations.
      depth: host-placed columns.

    Returns:
      `(columns, levels)`: columns int64 `[K, n - depth]`, the searched columns first, then `n`
      (padding); levels int64 `[K]`, how many columns each searches (1 .. n - depth - 1).
    """
    cfg = np.asarray(cfg, np.int64).reshape(-1, 4)
    x = np.arange(n)[None, :]
    border = (x == 0) | (x == n - 1) | (x == cfg[:, 2:3]) | (x == cfg[:, 3:4])
    searched = (x == depth) | ((x > depth) & ~border)
    columns = np.sort(np.where(searched, x, n + x), axis=1)[:, : n - depth]
    return np.where(columns < n, columns, n), searched.sum(axis=1)


def level_tables(n: int, cfg: np.ndarray, allow: np.ndarray, depth: int) -> np.ndarray:
    """What the counting kernel (`edge`) reads per level.

    Row k of a constellation describes the edges from its level k (column `columns[k]` of
    `level_columns`) to level k + 1: `GAP` the columns between them (the diagonals shift by it),
    `ALLOW1` level k + 1's allowed rows; for the look-ahead, `GAP2`/`GAP3` the columns from level
    k + 1 to levels k + 2 and k + 3 and `ALLOW2`/`ALLOW3` their allowed rows (where level k + 3
    does not exist, level k + 2 again; on the row before the last level both 0: the child there
    is counted, never entered); `COUNT_MASK` all ones on the row before the last level (its
    child's free rows are solutions), else 0. Rows from the last level on are 0.

    Args:
      n: board size.
      cfg: int `[K, 4]` configurations.
      allow: uint32 `[K, n]` `allow_masks`.
      depth: host-placed columns.

    Returns:
      uint32 `[K, table_levels(n, depth), TABLE_WORDS]`.
    """
    cfg = np.asarray(cfg, np.int64).reshape(-1, 4)
    allow = np.asarray(allow, np.uint32)
    columns, levels = level_columns(n, cfg, depth)
    rows = table_levels(n, depth)
    k = np.arange(rows)[None, :]  # [1, P]
    pad = np.concatenate([columns, np.full((len(cfg), rows + 3), n)], axis=1)

    def col(j):  # column of level k + j, [K, P] (n past the last level)
        return np.take_along_axis(pad, np.broadcast_to(k + j, (len(cfg), rows)), axis=1)

    wide = np.concatenate([allow, np.zeros((len(cfg), 1), np.uint32)], axis=1)  # column n: 0

    def allowed(c):
        return np.take_along_axis(wide, np.minimum(c, n), axis=1)

    c0, c1, c2, c3 = col(0), col(1), col(2), col(3)
    lv = levels[:, None]
    edge = k < lv - 1  # level k has a child level
    last = k == lv - 2  # its child is the last level
    third = k + 3 < lv
    table = np.zeros((len(cfg), rows, TABLE_WORDS), np.uint32)
    table[..., GAP] = np.where(edge, c1 - c0, 0)
    table[..., ALLOW1] = np.where(edge, allowed(c1), 0)
    table[..., GAP2] = np.where(edge & ~last, c2 - c1, 0)
    table[..., ALLOW2] = np.where(edge & ~last, allowed(c2), 0)
    table[..., GAP3] = np.where(edge & ~last, np.where(third, c3 - c1, c2 - c1), 0)
    table[..., ALLOW3] = np.where(edge & ~last, np.where(third, allowed(c3), allowed(c2)), 0)
    table[..., COUNT_MASK] = np.where(last, np.uint32(0xFFFFFFFF), np.uint32(0))
    return table


def _half_turn_fixed(n: int) -> int:
    """Solutions fixed by the half turn: queens placed in pairs (x, r), (n-1-x, n-1-r), column
    pairs from the outside in, breadth-first in bounded batches. Masks are uint64: rows (n
    bits), diagonals r - x + n - 1 and anti-diagonals r + x (2n - 1 bits each). The centre
    diagonals (bit n - 1) start taken: a pair on one would attack itself; for odd n the centre
    queen (m, m) takes them (and row m) anyway."""
    one, full, m = np.uint64(1), np.uint64((1 << n) - 1), n // 2
    centre = one << np.uint64(n - 1)
    rows0 = (one << np.uint64(m)) if n % 2 else np.uint64(0)
    stack = [(0, np.array([rows0]), np.array([centre]), np.array([centre]))]
    found = 0
    while stack:
        x, rows, d1, d2 = stack.pop()
        if x == m:
            found += len(rows)
            continue
        free = full & ~rows & ~(d1 >> np.uint64(n - 1 - x)) & ~(d2 >> np.uint64(x))
        parent, r = np.nonzero((free[:, None] >> np.arange(n, dtype=np.uint64)) & one)
        r = r.astype(np.uint64)
        xs, t = np.uint64(x), np.uint64(n - 1)
        rows = rows[parent] | (one << r) | (one << (t - r))
        d1 = d1[parent] | (one << (r + t - xs)) | (one << (t - r + xs))
        d2 = d2[parent] | (one << (r + xs)) | (one << (t + t - r - xs))
        for lo in range(0, len(rows), BATCH):
            stack.append((x + 1, rows[lo : lo + BATCH], d1[lo : lo + BATCH], d2[lo : lo + BATCH]))
    return found


def _quarter_turn_fixed(n: int) -> int:
    """Solutions fixed by the quarter turn (x, y) -> (n-1-y, x): orbits of 4 queens placed at
    once, at the lowest free column (depth-first, Python ints; the tree is tiny)."""
    if n % 4 in (2, 3):
        return 0  # an orbit has 4 queens, plus the centre for odd n
    full = (1 << n) - 1

    def orbit(x, y):
        cells = [(x, y)]
        for _ in range(3):
            x, y = n - 1 - y, x
            cells.append((x, y))
        return set(cells)

    def search(cols, rows, d1, d2):
        if cols == full:
            return 1
        x = (~cols & (cols + 1)).bit_length() - 1
        found = 0
        for r in range(n):
            c2, r2, a, b, ok = cols, rows, d1, d2, True
            for cx, cy in orbit(x, r):
                if (c2 >> cx | r2 >> cy | a >> (cy - cx + n - 1) | b >> (cy + cx)) & 1:
                    ok = False
                    break
                c2, r2 = c2 | 1 << cx, r2 | 1 << cy
                a, b = a | 1 << (cy - cx + n - 1), b | 1 << (cy + cx)
            if ok:
                found += search(c2, r2, a, b)
        return found

    return search(0, 0, 0, 0)


def fixed_by_rotation(n: int) -> tuple[int, int]:
    """The solutions fixed by the rotations.

    Args:
      n: board size.

    Returns:
      `(F90, F180)`: the solutions fixed by a quarter turn (either direction) and by the half turn.
    """
    if n == 1:
        return 1, 1
    return _quarter_turn_fixed(n), _half_turn_fixed(n)


def classes(total: int, n: int, fixed: tuple[int, int] | None = None) -> int:
    """Fundamental solutions (A002562) from the total, by Burnside's lemma.

    The rotations by 90 and 270 degrees fix F90 solutions each, the half turn F180, every
    reflection none.

    Args:
      total: all solutions of n.
      n: board size.
      fixed: `(F90, F180)` if known, else `fixed_by_rotation(n)`.

    Returns:
      The number of classes.
    """
    f90, f180 = fixed_by_rotation(n) if fixed is None else fixed
    s = total + 2 * f90 + f180
    if n == 1:
        s = 8  # the single queen is fixed by every symmetry
    if s % 8:
        raise RuntimeError(f"Burnside sum {s} for n = {n} is not a multiple of 8 (a bug)")
    return s // 8
