"""The 8 symmetries of the square acting on N-Queens boards, vectorised in NumPy (host only).

The dihedral group D4 acts on a board `rows[..., n]` by three generators: reversing the columns
(`rows[::-1]`), reversing the rows (`n - 1 - rows`) and transposing (the inverse permutation).
Two solutions are equivalent when a symmetry maps one onto the other; the number of classes is
OEIS A002562. `fundamental` keeps one canonical form per class (the lexicographically smallest
of the 8 images); `stabilizer_sizes` counts classes in a stream: by the orbit-stabilizer theorem
the number of classes is `sum(stabilizer_sizes) / 8` over all solutions.
"""

from __future__ import annotations

import numpy as np

from jaxqueens.errors import QueensError

NAMES = (
    "identity",
    "rot90",
    "rot180",
    "rot270",
    "flip-rows",
    "flip-columns",
    "transpose",
    "anti-transpose",
)


def _permutations(boards) -> np.ndarray:
    """`boards` as an integer `[B, n]` array of permutations of 0..n-1 (the symmetries'
    domain: a board with a row off the board, or two queens on one row, has no transpose).

    Raises:
      QueensError: another shape, a float or bool array, or a row that is not a permutation.
    """
    boards = np.asarray(boards)
    if boards.ndim != 2:
        raise QueensError(f"expected boards [B, n], got shape {list(boards.shape)}")
    if boards.dtype == np.bool_ or not np.issubdtype(boards.dtype, np.integer):
        raise QueensError(f"boards must hold whole row numbers, got {boards.dtype}")
    n = boards.shape[1]
    ok = (np.sort(boards, axis=1) == np.arange(n)).all(axis=1)
    if not ok.all():
        bad = int(np.argmin(ok))
        raise QueensError(
            f"board {bad} is not a permutation of 0..{n - 1} (a row off the board or two queens "
            "on one row): the symmetries act on solutions"
        )
    return boards


def _inverse(boards: np.ndarray) -> np.ndarray:
    """Inverse permutations `[B, n]` (the board transposed)."""
    b, n = boards.shape
    inv = np.empty_like(boards)
    np.put_along_axis(
        inv,
        boards.astype(np.intp),
        np.broadcast_to(np.arange(n, dtype=boards.dtype), (b, n)),
        axis=1,
    )
    return inv


def images_of(boards, inv, top):
    """The 8 images of boards under D4, in the order of `NAMES`, from the boards and their
    inverses (NumPy or JAX arrays alike: `symmetry_jax.transforms` stacks the same list).

    Args:
      boards: Integer `[..., n]` permutations.
      inv: their inverse permutations (the boards transposed).
      top: `n - 1` in the boards' dtype.

    Returns:
      A list of 8 arrays shaped like `boards`.
    """
    flip = lambda x: x[..., ::-1]  # reflect columns: c -> n-1-c; `top - x` reflects rows
    # quarter turns (counter-clockwise with row 0 at the bottom, as jaxqueens draws boards) and
    # the anti-transpose compose the transpose with a reflection: rot90 (c, r) -> (n-1-r, c)
    turns = [flip(inv), top - flip(boards), top - inv]  # rot90, rot180, rot270
    return [boards, *turns, top - boards, flip(boards), inv, top - flip(inv)]


def transforms(boards: np.ndarray) -> np.ndarray:
    """All 8 images of every board under D4, in the order of `NAMES`.

    Args:
      boards: Integer `[B, n]` permutations (solutions).

    Returns:
      `[8, B, n]` of the same dtype.
    """
    boards = _permutations(boards)
    return np.stack(images_of(boards, _inverse(boards), boards.dtype.type(boards.shape[1] - 1)))


def _lex_less(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise `a < b` in lexicographic order: `[B]` bool from two `[B, n]`."""
    diff = a != b
    first = np.argmax(diff, axis=1)
    at = np.arange(a.shape[0])
    return diff.any(axis=1) & (a[at, first] < b[at, first])


def canonical(boards: np.ndarray) -> np.ndarray:
    """The lexicographically smallest of the 8 images of each board.

    Args:
      boards: Integer `[B, n]` permutations (solutions).

    Returns:
      `[B, n]` of the same dtype: each board's canonical form.

    Raises:
      QueensError: `boards` is not a `[B, n]` array of permutations of whole row numbers.
    """
    images = transforms(boards)
    best = images[0].copy()
    for img in images[1:]:
        less = _lex_less(img, best)
        best[less] = img[less]
    return best


def stabilizer_sizes(boards: np.ndarray) -> np.ndarray:
    """How many of the 8 symmetries map each board onto itself.

    A class (orbit) of a board with stabilizer size s holds 8 / s solutions, so the number of
    classes among a symmetric set of solutions is `stabilizer_sizes(all).sum() // 8`.

    Args:
      boards: int `[B, n]`.

    Returns:
      int64 `[B]` in {1, 2, 4, 8}.
    """
    images = transforms(boards)
    return (images == images[0][None]).all(axis=2).sum(axis=0).astype(np.int64)


def fundamental(boards: np.ndarray) -> np.ndarray:
    """One canonical representative per symmetry class, sorted.

    Args:
      boards: Integer `[B, n]` permutations (solutions).

    Returns:
      `[U, n]`: the distinct canonical forms, in lexicographic order (`U` classes).

    Raises:
      QueensError: `boards` is not a `[B, n]` array of permutations of whole row numbers.
    """
    boards = np.asarray(boards)
    if boards.ndim == 2 and boards.shape[0] == 0:
        return boards.reshape(0, boards.shape[-1])
    return np.unique(canonical(boards), axis=0)
