"""Constrained n-queens boards: one model that every kernel reads (pure NumPy, no devices).

The variants are those of Gent, Jefferson & Nightingale ("Complexity of n-Queens Completion",
JAIR 59, 2017; CSPLib problem 79): n-Queens Completion (some queens already placed) and Excluded
Diagonals, plus blocked squares, excluded rows and columns, and toroidal queens (OEIS A051906).
A square is `(x, y) = (column, row)`, 0-based, and a board is `rows[x]`. The docs' core page
lists the fields and the derived masks; the independent checker
(`jaxqueens.core.checker.check_constrained`) re-derives every rule from the raw fields.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

import numpy as np

from jaxqueens.core import arguments
from jaxqueens.core.constraints_orient import ORIENTATIONS, masks_of, orient, orientation_score
from jaxqueens.errors import QueensError

MAX_N = 64  # uint64 column masks
FIELDS = ("fixed", "blocked", "rows", "columns", "sums", "diffs")


def _ints(values, what: str) -> tuple[int, ...]:
    out = []
    for v in values:
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise QueensError(f"{what}: {v!r} is not an integer; give whole numbers")
        out.append(int(v))
    return tuple(sorted(set(out)))


def _pairs(values, what: str) -> tuple[tuple[int, int], ...]:
    out = []
    for p in values:
        if not isinstance(p, (tuple, list, np.ndarray)) or len(p) != 2:
            raise QueensError(f"{what}: {p!r} is not an (x, y) pair; give [column, row] pairs")
        _ints(p, what)
        out.append((int(p[0]), int(p[1])))
    return tuple(sorted(set(out)))


@dataclasses.dataclass(frozen=True)
class Constraints:
    """One constrained instance (frozen, hashable; fields normalised to sorted unique tuples).

    Build it with keywords, e.g. `Constraints(8, fixed=((0, 3), (4, 1)))`; every value is
    checked against n (a QueensError names the field and the value).
    """

    n: int  #: board size.
    fixed: tuple[tuple[int, int], ...] = ()  #: (x, y): queen in column x, row y
    blocked: tuple[tuple[int, int], ...] = ()  #: (x, y) squares without a queen
    rows: tuple[int, ...] = ()  #: excluded rows y
    columns: tuple[int, ...] = ()  #: excluded columns x
    sums: tuple[int, ...] = ()  #: excluded x + y = k
    diffs: tuple[int, ...] = ()  #: excluded x - y = k - (n - 1)
    toroidal: bool = False  #: queens also attack along diagonals taken modulo n.

    def __post_init__(self):
        n = arguments.integer(self.n, "n", 1)
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "toroidal", arguments.flag(self.toroidal, "toroidal"))
        for name in ("fixed", "blocked"):
            pairs = _pairs(getattr(self, name), name)
            for x, y in pairs:
                if not (0 <= x < n and 0 <= y < n):
                    raise QueensError(
                        f"{name}: square ({x}, {y}) is off the board of n = {n}; "
                        f"columns and rows lie in 0..{n - 1}"
                    )
            object.__setattr__(self, name, pairs)
        for name, hi in (("rows", n), ("columns", n), ("sums", 2 * n - 1), ("diffs", 2 * n - 1)):
            vals = _ints(getattr(self, name), name)
            bad = [v for v in vals if not 0 <= v < hi]
            if bad:
                raise QueensError(
                    f"{name}: {bad[0]} is out of range for n = {n}; {name} lie in 0..{hi - 1}"
                )
            object.__setattr__(self, name, vals)

    @property
    def plain(self) -> bool:
        """No constraint at all (the classic problem, toroidal or not)."""
        return not any(getattr(self, f) for f in FIELDS)

    def to_dict(self) -> dict:
        """The instance as JSON-ready fields (`from_dict` reads it back).

        Returns:
          The non-empty fields under their JSON keys (`JSON_KEYS`).
        """
        doc: dict = {"n": self.n}
        for f in FIELDS:
            v = getattr(self, f)
            if v:
                doc[JSON_KEYS.get(f, f)] = [list(p) if isinstance(p, tuple) else p for p in v]
        if self.toroidal:
            doc["toroidal"] = True
        return doc

    def with_toroidal(self, toroidal: bool = True) -> Constraints:
        """The same instance on a torus, or off it.

        Args:
          toroidal: whether queens attack along diagonals taken modulo n.

        Returns:
          A new `Constraints`.
        """
        return dataclasses.replace(self, toroidal=toroidal)


JSON_KEYS = {"rows": "excluded_rows"}
"""Field -> JSON key where they differ: `"rows"` is a board's key (`{"n": 8, "rows": [0, 4, ...]}`),
so an instance's excluded rows are `"excluded_rows"` (`jsonl` tells the two kinds of line apart)."""
KEYS = ("n", *(JSON_KEYS.get(f, f) for f in FIELDS), "toroidal")
"""The keys of an instance in JSON (`Constraints.to_dict`, `from_dict`)."""


def from_dict(doc: dict) -> Constraints:
    """A model from `Constraints.to_dict`'s form.

    Args:
      doc: a JSON object with `"n"` and any of `KEYS`.

    Returns:
      The checked `Constraints`.

    Raises:
      QueensError: an unknown key or a value of the wrong kind.
    """
    if not isinstance(doc, dict) or "n" not in doc:
        raise QueensError('an instance needs "n" (and optionally ' + ", ".join(KEYS[1:]) + ")")
    extra = sorted(set(doc) - set(KEYS))
    if extra:
        hint = '; an instance\'s excluded rows are "excluded_rows" ("rows" is a board\'s key)'
        raise QueensError(
            f"unknown key {extra[0]!r}; instance keys are {', '.join(KEYS)}"
            + (hint if extra[0] == "rows" else "")
        )
    fields = {}
    for field in FIELDS:
        key = JSON_KEYS.get(field, field)
        if key in doc:
            if not isinstance(doc[key], list):
                raise QueensError(f'"{key}" must be a list')
            fields[field] = doc[key]
    if "toroidal" in doc and not isinstance(doc["toroidal"], bool):
        raise QueensError('"toroidal" must be true or false')
    return Constraints(doc["n"], toroidal=doc.get("toroidal", False), **fields)


def excluded_diagonals(
    n: int, pairs: Sequence[Sequence[int]], d: int | None = None, toroidal: bool = False
) -> Constraints:
    """The CSPLib prob079 (Excluded Diagonals) instance.

    Args:
      n: board size.
      pairs: `[k, t]` pairs: `t = 1` excludes the sum diagonal `x + y = k`, `t = 0` the
        difference diagonal `x - y = k - (n - 1)`.
      d: how many of the pairs to use, from the first (default all).
      toroidal: queens also attack along diagonals taken modulo n.

    Returns:
      The instance.
    """
    pairs = [tuple(p) for p in pairs]
    d = len(pairs) if d is None else d
    if not 0 <= d <= len(pairs):
        raise QueensError(
            f"d = {d} is out of range: this instance lists {len(pairs)} diagonals "
            f"(use 0..{len(pairs)})"
        )
    sums: list[int] = []
    diffs: list[int] = []
    for k, t in pairs[:d]:
        if t not in (0, 1):
            raise QueensError(
                f"diagonal [{k}, {t}]: the type must be 1 (x + y = k) or 0 (x - y = k - (n - 1))"
            )
        (sums if t == 1 else diffs).append(k)
    return Constraints(n, sums=tuple(sums), diffs=tuple(diffs), toroidal=toroidal)


def completion(n: int, placed: Iterable[Sequence[int]], toroidal: bool = False) -> Constraints:
    """The n-Queens Completion instance.

    Args:
      n: board size.
      placed: `(x, y)` squares holding a queen already.
      toroidal: queens also attack along diagonals taken modulo n.

    Returns:
      The instance.
    """
    return Constraints(n, fixed=_pairs([tuple(p) for p in placed], "fixed"), toroidal=toroidal)


def fixed_rows(m: Constraints) -> np.ndarray:
    """The fixed queen's row per column.

    Args:
      m: the instance.

    Returns:
      int32 `[n]`: the row, -1 where the column is free (if a column names two rows, the first
      one; the instance is then unsatisfiable).
    """
    out = np.full(m.n, -1, np.int32)
    for x, y in reversed(m.fixed):
        out[x] = y
    return out


def open_squares(m: Constraints) -> np.ndarray:
    """The squares that no exclusion forbids (fixed queens not applied).

    Args:
      m: the instance.

    Returns:
      bool `[x, y]`.
    """
    n = m.n
    ok = np.ones((n, n), bool)
    ok[list(m.columns), :] = False
    ok[:, list(m.rows)] = False
    if m.sums or m.diffs:
        lines = np.zeros((2, 2 * n - 1), bool)
        lines[0, list(m.sums)] = True
        lines[1, list(m.diffs)] = True
        x = np.arange(n)
        ok &= ~lines[0][x[:, None] + x[None, :]] & ~lines[1][x[:, None] - x[None, :] + n - 1]
    for bx, by in m.blocked:
        ok[bx, by] = False
    return ok


def attacked_by(n: int, x: int, y: int, toroidal: bool) -> np.ndarray:
    """The squares a queen attacks.

    Args:
      n: board size.
      x: the queen's column.
      y: the queen's row.
      toroidal: diagonals wrap modulo n.

    Returns:
      bool `[x, y]`, the queen's own square included.
    """
    xs, ys = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    if toroidal:
        return (xs == x) | (ys == y) | ((xs + ys - x - y) % n == 0) | ((xs - ys - x + y) % n == 0)
    return (xs == x) | (ys == y) | (xs + ys == x + y) | (xs - ys == x - y)


def allowed_squares(m: Constraints) -> np.ndarray:
    """The squares a queen may take.

    Args:
      m: the instance.

    Returns:
      bool `[x, y]`: `open_squares`, each fixed column cut to its queen and every square a fixed
      queen attacks removed (a fixed queen on a closed square closes its column).
    """
    ok, clash = open_squares(m), np.any(_clash(m), axis=1)
    for i, (x, y) in enumerate(m.fixed):
        keep = ok[x, y] and not clash[i]
        ok &= ~attacked_by(m.n, x, y, m.toroidal)
        ok[x, y] = keep
    return ok


def _clash(m: Constraints) -> np.ndarray:
    """bool `[f, f]`: fixed queens i != j attack each other (one column or row included)."""
    x, y = np.array(m.fixed, np.int64).reshape(-1, 2).T
    dx, dy = x[:, None] - x[None, :], y[:, None] - y[None, :]
    if m.toroidal:
        diagonal = ((dx - dy) % m.n == 0) | ((dx + dy) % m.n == 0)
    else:
        diagonal = (dx == dy) | (dx == -dy)
    return ~np.eye(len(x), dtype=bool) & ((dx == 0) | (dy == 0) | diagonal)


def unsat_reason(m: Constraints, allowed: np.ndarray | None = None) -> str | None:
    """Why `m` plainly has no solution, if it plainly has none.

    A proof, not a search: two fixed queens attack each other (two in one column included), a
    fixed queen stands on a forbidden square, or a column or a row has no allowed square left.

    Args:
      m: the instance.
      allowed: `allowed_squares(m)` if the caller has built it already.

    Returns:
      The reason in words, or None, which proves nothing (only the exact search decides).
    """
    clash = np.triu(_clash(m))
    if clash.any():
        (x1, y1), (x2, y2) = (m.fixed[int(i)] for i in np.argwhere(clash)[0])
        return f"fixed queens at ({x1},{y1}) and ({x2},{y2}) attack each other" + (
            " on the torus" if m.toroidal else ""
        )
    for fx, fy in m.fixed:
        why = _why_closed(m, fx, fy)
        if why:
            return f"the fixed queen at ({fx},{fy}) stands on a forbidden square ({why})"
    ok = allowed_squares(m) if allowed is None else allowed
    for axis, line, need in (
        (1, "column", "every column needs a queen"),
        (0, "row", "n queens fill every row"),
    ):
        empty = np.flatnonzero(~ok.any(axis=axis))
        if len(empty):
            return (
                f"{line} {int(empty[0])} has no allowed square (each is excluded, blocked or "
                f"attacked by a fixed queen) but {need}"
            )
    return None


def _why_closed(m: Constraints, x: int, y: int) -> str | None:
    """Which exclusion closes square (x, y) (the first that applies, as `open_squares`), or
    None: it is open."""
    n = m.n
    for closed, why in (
        (x in m.columns, f"column {x} is excluded"),
        (y in m.rows, f"row {y} is excluded"),
        (x + y in m.sums, f"diagonal x+y={x + y} is excluded"),
        (x - y + n - 1 in m.diffs, f"diagonal x-y={x - y} is excluded"),
        ((x, y) in m.blocked, "the square is blocked"),
    ):
        if closed:
            return why
    return None


def describe(m: Constraints) -> str:
    """A short label of an instance, e.g. `n=8 fixed=2 sums=3`.

    Args:
      m: the instance.

    Returns:
      The label.
    """
    parts = [f"n={m.n}"] + [f"{f}={len(getattr(m, f))}" for f in FIELDS if getattr(m, f)]
    return " ".join(parts + (["toroidal"] if m.toroidal else []))


# --- the search order: an instance seen in one of the 8 orientations (`constraints_orient`) ------


def board_from_orientation(rows: np.ndarray, t: int) -> np.ndarray:
    """A board found in an orientation, as a board of the original instance.

    Args:
      rows: int `[n]`, `rows[x']` in orientation `t`.
      t: the orientation it was found in.

    Returns:
      int `[n]`: the same queens, `rows[x]` of the original board.
    """
    rows = np.asarray(rows, np.int64)
    n = len(rows)
    x, y = np.arange(n), rows.copy()
    if t & 2:
        y = n - 1 - y
    if t & 1:
        x = n - 1 - x
    if t & 4:
        x, y = y, x
    out = np.full(n, -1, np.int64)
    out[x] = y
    return out


def column_masks(m: Constraints, orientation: int = 0) -> np.ndarray:
    """The allowed rows of each column as bits.

    Args:
      m: the instance (n <= 64).
      orientation: the orientation (0..7, `orient`) the board is seen in.

    Returns:
      uint64 `[n]`: bit y of entry x is set iff row y is allowed in column x.
    """
    if m.n > MAX_N:
        raise QueensError(f"n = {m.n}: bitmask search supports n <= {MAX_N}")
    return masks_of(orient(allowed_squares(m), orientation))


def best_orientation(m: Constraints) -> int:
    """The orientation (0..7) whose `orientation_score` is least.

    Args:
      m: the instance.

    Returns:
      The orientation, 0 on ties.
    """
    return search_masks(m)[0]


def search_masks(m: Constraints, choose: bool = True) -> tuple[int, np.ndarray]:
    """The column masks to search an instance with (the allowed squares are built once).

    Args:
      m: the instance.
      choose: pick the best orientation (`best_orientation`); else orientation 0.

    Returns:
      `(orientation, masks)`: masks are uint64 `[n]` `column_masks` in that orientation.
    """
    if m.n > MAX_N:
        raise QueensError(f"n = {m.n}: bitmask search supports n <= {MAX_N}")
    ok = allowed_squares(m)
    scores = [orientation_score(orient(ok, t)) for t in range(ORIENTATIONS)] if choose else [0]
    t = int(np.argmin(scores))
    return t, masks_of(orient(ok, t))
