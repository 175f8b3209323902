"""Independent N-Queens checker in plain NumPy: the reference every solver is verified against.

A board `rows[n]` (as in `jaxqueens.core.board`) is a solution when every value lies in 0..n-1
and no row, diagonal (r + c) or anti-diagonal (r - c) holds two queens. The method is counting:
`np.bincount` tallies the queens on every line of every board at once (board b's lines offset by
b * lines), and a line with k queens contributes k(k-1)/2 attacking pairs. The empty board
(n = 0) is a solution, as a(0) = 1 in OEIS A000170. This module imports nothing from JAX or from
the solvers, so a solver bug cannot hide in shared code.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from jaxqueens.errors import SolutionCheckError

MAX_PROBLEMS = 10  # problems listed by `check_board` before "... and K more"
MAX_COLUMNS_SHOWN = 8  # columns listed per crowded line


@dataclasses.dataclass(frozen=True)
class CheckReport:
    """Verdict on one board."""

    ok: bool  #: True iff the board is a valid n-queens solution.
    n: int  #: Board size checked against (the `n` argument, else the board's length).
    #: Human-readable problems, at most `MAX_PROBLEMS` plus a "... and K more" entry.
    problems: tuple[str, ...]
    #: Sum of k(k-1)/2 over all rows and diagonals; -1 when the board is not a 1-D array of integers
    #: in 0..n-1 (the count would be meaningless).
    attacking_pairs: int


def _cap(problems: list[str], extra: int = 0) -> tuple[str, ...]:
    """Cap a problem list at `MAX_PROBLEMS` entries; `extra` counts problems not yet listed."""
    more = max(0, len(problems) - MAX_PROBLEMS) + extra
    problems = problems[:MAX_PROBLEMS]
    return tuple([*problems, f"... and {more} more"] if more else problems)


def _columns(cols: np.ndarray) -> str:
    shown = ", ".join(str(int(c)) for c in cols[:MAX_COLUMNS_SHOWN])
    return shown + (", ..." if len(cols) > MAX_COLUMNS_SHOWN else "")


def _line_keys(boards: np.ndarray, n: int) -> list[tuple[str, np.ndarray, int, int]]:
    """`(name, keys, offset, lines)` for rows, diagonals and anti-diagonals of `boards` int64
    `[B, m]` (values in 0..n-1; m = n except for a board of the wrong length): `keys` int64
    `[B, m]` in 0..lines-1, the line's own label `key - offset`."""
    m = boards.shape[-1]
    cols = np.arange(m, dtype=np.int64)
    lines = max(n + m - 1, 0)
    return [
        ("row {}", boards, 0, n),
        ("diagonal r+c={}", boards + cols, 0, lines),
        ("anti-diagonal r-c={}", boards - cols + (m - 1), m - 1, lines),
    ]


def _counts(keys: np.ndarray, lines: int) -> np.ndarray:
    """Queens per line: int64 `[B, lines]` from keys int64 `[B, n]` in 0..lines-1."""
    batch = keys.shape[0]
    offset = (np.arange(batch, dtype=np.int64) * lines)[:, None]
    flat = np.bincount((keys + offset).ravel(), minlength=batch * lines)
    return flat.reshape(batch, lines)


def _as_int64(boards: np.ndarray) -> np.ndarray:
    """Validate a `[..., n]` integer array with values in 0..n-1 and return it as int64."""
    boards = np.asarray(boards)
    if not np.issubdtype(boards.dtype, np.integer) or boards.ndim < 1:
        raise ValueError(f"expected an integer array [..., n], got {boards.dtype} {boards.shape}")
    n = boards.shape[-1]
    if boards.size and (boards.min() < 0 or boards.max() >= n):
        raise ValueError(f"board values must lie in 0..{n - 1}")
    return boards.astype(np.int64).reshape(int(np.prod(boards.shape[:-1])), n)


def _line_sum(boards: np.ndarray, cost) -> np.ndarray:
    """Sum over the rows, diagonals and anti-diagonals of `cost(queens on the line)`: `[...]`."""
    shape = np.shape(boards)[:-1]
    flat = _as_int64(boards)
    total = np.zeros(flat.shape[0], dtype=np.int64)
    for _, keys, _, lines in _line_keys(flat, flat.shape[1]):
        total += cost(_counts(keys, lines)).sum(axis=1)
    return total.reshape(shape)


def attacking_pairs(boards: np.ndarray) -> np.ndarray:
    """Number of attacking queen pairs of each board.

    Args:
      boards: Integer `[..., n]`, values in 0..n-1 (checked: ValueError otherwise).

    Returns:
      int64 `[...]`: sum over rows, diagonals and anti-diagonals of k(k-1)/2.
    """
    return _line_sum(boards, lambda k: k * (k - 1) // 2)


def queen_conflicts(boards: np.ndarray) -> np.ndarray:
    """Number of other queens attacking each queen (the min-conflicts count).

    Args:
      boards: Integer `[..., n]`, values in 0..n-1 (checked: ValueError otherwise).

    Returns:
      int64 `[..., n]`; a queen is attacked iff its entry is positive.
    """
    shape = np.shape(boards)
    flat = _as_int64(boards)
    out = np.zeros(flat.shape, dtype=np.int64)
    for _, keys, _, lines in _line_keys(flat, flat.shape[1]):
        out += np.take_along_axis(_counts(keys, lines), keys, axis=1) - 1
    return out.reshape(shape)


def n_attacks(boards: np.ndarray) -> np.ndarray:
    """NMOF's attack count: for rows, diagonals and anti-diagonals, queens minus lines occupied.

    Args:
      boards: Integer `[..., n]`, values in 0..n-1 (checked: ValueError otherwise).

    Returns:
      int64 `[...]`: the sum over every line of max(k - 1, 0) for a line holding k queens.
    """
    return _line_sum(boards, lambda k: np.maximum(k - 1, 0))


def are_solutions(boards: np.ndarray) -> np.ndarray:
    """Whether each board of a batch is a valid solution.

    Args:
      boards: `[B, n]` (any leading shape works). Non-integer dtypes and
        out-of-range values give False, never an error; integral floats are accepted.

    Returns:
      bool `[B]`.
    """
    boards = np.asarray(boards)
    if boards.ndim < 1:
        raise ValueError(f"expected boards of shape [B, n], got shape {boards.shape}")
    shape, n = boards.shape[:-1], boards.shape[-1]
    flat = boards.reshape(int(np.prod(shape)), n)
    if np.issubdtype(flat.dtype, np.floating):
        good = np.all(np.isfinite(flat) & (flat == np.floor(flat)), axis=1)
        flat = np.where(good[:, None], flat, 0)
    elif np.issubdtype(flat.dtype, np.integer):
        good = np.ones(flat.shape[0], dtype=bool)
    else:  # bool, object, strings, complex: never a board
        return np.zeros(shape, dtype=bool)
    good &= np.all((flat >= 0) & (flat < n), axis=1)
    flat = np.where(good[:, None], flat, 0).astype(np.int64)
    for _, keys, _, lines in _line_keys(flat, flat.shape[1]):
        good &= _counts(keys, lines).max(axis=1, initial=0) <= 1
    return good.reshape(shape)


def is_solution(rows: np.ndarray) -> bool:
    """Whether one board is a valid solution (never raises on bad input).

    Args:
      rows: `rows[x]` per column.

    Returns:
      True for a solution.
    """
    return check_board(rows).ok


def check_board(rows: np.ndarray, n: int | None = None) -> CheckReport:
    """Check one board and explain every problem found.

    Args:
      rows: `[n]` integer rows, one per column. Anything else (wrong ndim,
        non-integer values, out-of-range rows) is reported as a problem.
      n: Expected board size; defaults to the board's length.

    Returns:
      A `CheckReport`.
    """
    try:
        arr = np.asarray(rows)
    except (ValueError, TypeError) as exc:  # ragged nested lists and the like
        return CheckReport(False, n or 0, (f"not an array of integers ({exc})",), -1)
    if arr.ndim != 1:
        size = n if n is not None else (arr.shape[-1] if arr.ndim else 0)
        return CheckReport(
            False, size, (f"expected a 1-D board rows[n], got shape {arr.shape}",), -1
        )
    n = len(arr) if n is None else int(n)
    problems = [] if len(arr) == n else [f"length {len(arr)}, expected {n}"]

    if np.issubdtype(arr.dtype, np.floating):
        bad = np.flatnonzero(~(np.isfinite(arr) & (arr == np.floor(arr))))
        shown = bad[: MAX_PROBLEMS + 1]
        problems += [f"column {c}: {arr[c]} is not an integer" for c in shown]
        if len(bad):
            return CheckReport(False, n, _cap(problems, len(bad) - len(shown)), -1)
    elif not np.issubdtype(arr.dtype, np.integer):
        problems.append(f"dtype {arr.dtype} is not an integer type")
        return CheckReport(False, n, _cap(problems), -1)

    bad = np.flatnonzero((arr < 0) | (arr >= n))
    if len(bad):
        shown = bad[: MAX_PROBLEMS + 1]
        problems += [f"column {c}: row {int(arr[c])} out of range 0..{n - 1}" for c in shown]
        return CheckReport(False, n, _cap(problems, len(bad) - len(shown)), -1)

    board = arr.astype(np.int64)[None, :]
    pairs, unlisted = 0, 0
    for name, keys, offset, lines in _line_keys(board, n):
        k = _counts(keys, lines)[0]
        pairs += int((k * (k - 1) // 2).sum())
        crowded = np.flatnonzero(k >= 2)
        room = max(0, MAX_PROBLEMS + 1 - len(problems))
        for line in crowded[:room]:
            cols = np.flatnonzero(keys[0] == line)
            problems.append(
                f"{name.format(line - offset)} holds {k[line]} queens (columns {_columns(cols)})"
            )
        unlisted += len(crowded) - min(room, len(crowded))
    return CheckReport(not problems, n, _cap(problems, unlisted), pairs)


def require_solutions(
    boards: np.ndarray, what: str = "solver output", n: int | None = None
) -> None:
    """Raise unless every board of a batch is a valid solution.

    Solvers call this before they count or report anything.

    Args:
      boards: `[B, n]` boards.
      what: What the boards are, for the message (e.g. "min-conflicts output").
      n: Expected board size, if the caller knows it.

    Raises:
      SolutionCheckError: naming the first bad board's index and its first problem.
    """
    boards = np.asarray(boards)
    if boards.ndim != 2 or (n is not None and boards.shape[1] != n):
        want = "[B, n]" if n is None else f"[B, {n}]"
        raise SolutionCheckError(
            f"{what}: expected boards of shape {want}, got shape {boards.shape}"
        )
    bad = np.flatnonzero(~are_solutions(boards))
    if len(bad):
        i = int(bad[0])
        report = check_board(boards[i])
        first = report.problems[0] if report.problems else "rejected by are_solutions"
        raise SolutionCheckError(
            f"{what}: board {i} of {len(boards)} is not a valid {boards.shape[1]}-queens solution: "
            f"{first} ({len(bad)} bad board(s) in all)"
        )


# --- constrained boards (n-Queens Completion, excluded diagonals, toroidal) ----------------------
# Written apart from jaxqueens.core.constraints' mask maths: every rule is re-derived here from the
# model's raw fields (read by attribute name only), square by square and pair by pair.


def check_constrained(rows: np.ndarray, model) -> CheckReport:
    """Check one board against a constrained instance and explain every problem found.

    Args:
      rows: `[n]` integer rows, one per column.
      model: a [`Constraints`][jaxqueens.core.constraints.Constraints] (fields `n`, `fixed`,
        `blocked`, `rows`, `columns`, `sums`, `diffs`, `toroidal`).

    Returns:
      A `CheckReport`; `attacking_pairs` counts attacking pairs under the model's attack rule
      (modular diagonals when `toroidal`).
    """
    n = int(model.n)
    base = check_board(rows, n)
    if base.attacking_pairs < 0 or np.asarray(rows).shape != (n,):
        return CheckReport(False, n, base.problems, base.attacking_pairs)
    ys = [int(v) for v in np.asarray(rows)]
    problems, pairs = list(base.problems), base.attacking_pairs
    if model.toroidal:  # rows as before; diagonals taken modulo n
        problems = [p for p in problems if p.startswith("row ")]
        pairs = 0
        for name, keys in (
            ("row", list(ys)),
            ("diagonal (x+y) mod n", [(x + y) % n for x, y in enumerate(ys)]),
            ("diagonal (x-y) mod n", [(x - y) % n for x, y in enumerate(ys)]),
        ):
            k = np.bincount(np.asarray(keys, np.int64), minlength=n)
            pairs += int((k * (k - 1) // 2).sum())
            if name != "row":
                problems += [
                    f"{name} = {line} holds {k[line]} queens" for line in np.flatnonzero(k >= 2)
                ]
    blocked = {(int(a), int(b)) for a, b in model.blocked}
    for x, y in enumerate(ys):
        why = []
        if y in set(model.rows):
            why.append(f"row {y} is excluded")
        if x in set(model.columns):
            why.append(f"column {x} is excluded")
        if x + y in set(model.sums):
            why.append(f"diagonal x+y={x + y} is excluded")
        if x - y + n - 1 in set(model.diffs):
            why.append(f"diagonal x-y={x - y} is excluded")
        if (x, y) in blocked:
            why.append(f"square ({x}, {y}) is blocked")
        problems += [f"column {x}: queen on row {y}: {w}" for w in why]
    for x, y in model.fixed:
        if ys[int(x)] != int(y):
            problems.append(f"column {x}: fixed queen on row {y} moved to row {ys[int(x)]}")
    return CheckReport(not problems, n, _cap(problems), pairs)


def require_constrained(boards: np.ndarray, model, what: str = "solver output") -> None:
    """Raise unless every board solves a constrained instance.

    Args:
      boards: int `[B, n]`.
      model: the `Constraints` instance.
      what: what the boards are, for the message.

    Raises:
      SolutionCheckError: naming the first bad board and its first problem.
    """
    boards = np.asarray(boards)
    if boards.ndim != 2 or boards.shape[1] != int(model.n):
        raise SolutionCheckError(
            f"{what}: expected boards of shape [B, {model.n}], got shape {boards.shape}"
        )
    for i, b in enumerate(boards):
        report = check_constrained(b, model)
        if not report.ok:
            raise SolutionCheckError(
                f"{what}: board {i} of {len(boards)} does not solve the instance: "
                f"{report.problems[0]}"
            )
