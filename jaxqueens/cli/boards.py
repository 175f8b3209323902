"""The board options several commands share: the board size (`N`, `-n N`, `--n N`), a board
file (`FILE [--one-based]`) and one constrained instance (`--instance FILE`, `--toroidal`), with
the checks they share. No JAX is imported.
"""

from __future__ import annotations

import argparse

import numpy as np

from jaxqueens.errors import QueensError
from jaxqueens.io import boards as boardio
from jaxqueens.io import instances as instio


def add_size(
    p: argparse.ArgumentParser,
    default: int | None = 8,
    required: bool = False,
    help: str | None = None,
) -> None:
    """`N`, `-n N` and `--n N` (the classic solvers' spelling): the board size, `default` when
    none is given (None: none), `required` or not; `help` replaces the usual help."""
    what = help or (f"board size (default {default})" if default is not None else "board size")
    p.add_argument("n_pos", nargs="?", type=int, metavar="N", help="board size (same as -n)")
    p.add_argument("-n", "--n", dest="n", type=int, default=None, help=what)
    p.set_defaults(n_default=default, n_required=required)


def board_size(args, start: np.ndarray | None = None) -> int:
    """The board size from `-n`/`N` (they must agree) or from a `--file` start board `start`
    (None: none)."""
    if args.n is not None and args.n_pos is not None and args.n != args.n_pos:
        raise QueensError(f"two board sizes given (-n {args.n} and {args.n_pos}); give one")
    n = args.n if args.n is not None else args.n_pos
    if n is not None and n < 1:  # before JAX is imported (each solver checks its own upper limit)
        raise QueensError(
            f"n must be a positive integer, got {n}: give the board size as -n N, N >= 1"
        )
    if start is not None:
        if n is not None and n != start.shape[0]:
            raise QueensError(
                f"--file {args.file} holds a board of n = {start.shape[0]} but "
                f"n = {n} was given; drop -n or pass -n {start.shape[0]}"
            )
        return start.shape[0]
    if n is None:
        if getattr(args, "n_required", False):
            raise QueensError("give the board size: -n N (or N)")
        return getattr(args, "n_default", 8)
    return n


def add_file(p: argparse.ArgumentParser) -> None:
    """`FILE [--one-based]`: a board file of any supported format."""
    p.add_argument(
        "file",
        metavar="FILE",
        help="board file: text (one row per line, column 0 first), .npy [B, n] or .jsonl",
    )
    p.add_argument(
        "--one-based",
        action="store_true",
        help="rows in a text file are written 1..n instead of 0..n-1",
    )


def boards_of(args) -> np.ndarray:
    """[B, n] the boards of `args.file`; a file with no board is an error."""
    boards = boardio.load_boards(args.file, one_based=args.one_based)
    if boards.shape[0] == 0:
        raise QueensError(f"{args.file}: holds no boards (write at least one board into it)")
    return boards


def add_instance(p, extra: str = "") -> None:
    """`--instance FILE` and `--toroidal`: local search on one constrained board
    (`jaxqueens.core.constraints`), for every command that runs chains on one board; `extra`:
    words appended to `--instance`'s help."""
    p.add_argument(
        "--instance",
        default=None,
        metavar="FILE",
        help="solve one constrained instance (FILE.param:d, completion parameters, one JSON "
        "line, a text board with '.' gaps): fixed queens never move, forbidden "
        f"squares are never used; unsolved means unknown, not UNSAT{extra}",
    )
    p.add_argument(
        "--toroidal",
        action="store_true",
        help="queens attack along diagonals modulo n (n prime to 6: OEIS A051906)",
    )


def load_instance(spec: str, one_based: bool = False, toroidal: bool = False):
    """`--instance FILE`: the `Constraints` of the one instance the file `spec` holds (with its
    `:d` suffix, if any)."""
    loaded = instio.load_instances([spec], one_based=one_based, toroidal=toroidal, skip_short=False)
    if len(loaded.instances) != 1:
        raise QueensError(
            f"--instance {spec} holds {len(loaded.instances)} instances; give a file "
            "with one (jaxqueens complete takes many)"
        )
    return loaded.instances[0].model


def start_and_instance(args):
    """`(start, instance)` of a command that runs chains on one board: `--file`'s one board
    ([n] array, or None) and `--instance`'s model (or None), with the checks they share (one
    board in the file, not both, `-n` agreeing with the instance)."""
    start = None
    if args.file:
        boards = boards_of(args)
        if boards.shape[0] != 1:
            raise QueensError(
                f"--file {args.file} holds {boards.shape[0]} boards; give a file with one"
            )
        start = boards[0]
    if not args.instance:
        return start, None
    if args.file:
        raise QueensError("--instance sets every chain's start itself; drop --file")
    instance = load_instance(args.instance, args.one_based, args.toroidal)
    if (args.n is not None or args.n_pos is not None) and board_size(args) != instance.n:
        raise QueensError(
            f"--instance {args.instance} has n = {instance.n} but n = {board_size(args)} "
            f"was given; drop -n or pass -n {instance.n}"
        )
    return start, instance


def pick(boards: np.ndarray, index: int, file: str) -> np.ndarray:
    """[n] board `index` (negative counts from the end) of `boards` [B, n], read from `file`
    (as the message names it)."""
    if not -boards.shape[0] <= index < boards.shape[0]:
        raise QueensError(
            f"--index {index} is out of range: {file} holds {boards.shape[0]} board(s) "
            f"(use 0..{boards.shape[0] - 1})"
        )
    return boards[index]
