"""Option groups and checks that several commands share, so every command spells them alike.

- board size: ``-n N``, ``--n N`` or a bare ``N`` (:func:`add_size`, :func:`board_size`);
- board files: ``FILE [--one-based]`` (:func:`add_file`, :func:`boards_of`);
- long runs: ``--out DIR``, ``--resume DIR``, ``--checkpoint-every S`` (:func:`add_checkpoint`,
  :func:`checkpoint_target`) and the message after Ctrl-C (:func:`report_interrupt`);
- ``--quiet``: no progress line; without it, a progress line is drawn on a terminal and never off
  one (:func:`quiet`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from jaxqueens.errors import QueensError
from jaxqueens.io import boards as boardio
from jaxqueens.io import checkpoint
from jaxqueens.parallel.gather import is_writer


def add_size(p: argparse.ArgumentParser, default: int | None = 8, required: bool = False,
             help: str | None = None) -> None:
    """``N``, ``-n N`` and ``--n N`` (the classic solvers' spelling): the board size."""
    what = help or (f"board size (default {default})" if default is not None else "board size")
    p.add_argument("n_pos", nargs="?", type=int, metavar="N", help="board size (same as -n)")
    p.add_argument("-n", "--n", dest="n", type=int, default=None, help=what)
    p.set_defaults(n_default=default, n_required=required)


def board_size(args, start: np.ndarray | None = None) -> int:
    """The board size from ``-n``/``N`` (they must agree) or from a ``--file`` start board."""
    if args.n is not None and args.n_pos is not None and args.n != args.n_pos:
        raise QueensError(f"two board sizes given (-n {args.n} and {args.n_pos}); give one")
    n = args.n if args.n is not None else args.n_pos
    if start is not None:
        if n is not None and n != start.shape[0]:
            raise QueensError(f"--file {args.file} holds a board of n = {start.shape[0]} but "
                              f"n = {n} was given; drop -n or pass -n {start.shape[0]}")
        return start.shape[0]
    if n is None:
        if getattr(args, "n_required", False):
            raise QueensError("give the board size: -n N (or N)")
        return getattr(args, "n_default", 8)
    return n


def add_file(p: argparse.ArgumentParser) -> None:
    """``FILE [--one-based]``: a board file of any supported format."""
    p.add_argument("file", metavar="FILE",
                   help="board file: text (one row per line, column 0 first), .npy [B, n] or .jsonl")
    p.add_argument("--one-based", action="store_true",
                   help="rows in a text file are written 1..n instead of 0..n-1")


def boards_of(args) -> np.ndarray:
    """The boards of ``args.file`` ([B, n]); a file with no board is an error."""
    boards = boardio.load_boards(args.file, one_based=args.one_based)
    if boards.shape[0] == 0:
        raise QueensError(f"{args.file}: holds no boards (write at least one board into it)")
    return boards


def pick(boards: np.ndarray, index: int, file: str) -> np.ndarray:
    """Board ``index`` of a file's boards (negative counts from the end)."""
    if not -boards.shape[0] <= index < boards.shape[0]:
        raise QueensError(
            f"--index {index} is out of range: {file} holds {boards.shape[0]} board(s) "
            f"(use 0..{boards.shape[0] - 1})")
    return boards[index]


def add_quiet(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quiet", action="store_true",
                   help="no progress line (without it: a progress line on a terminal only)")


def quiet(args) -> bool | None:
    """``True`` with ``--quiet``; otherwise None: progress on a terminal, quiet off one."""
    return True if getattr(args, "quiet", False) else None


def add_checkpoint(p: argparse.ArgumentParser) -> None:
    """``--resume DIR`` and ``--checkpoint-every SECONDS`` for resumable commands."""
    p.add_argument("--resume", default=None, metavar="DIR",
                   help="continue an interrupted run from DIR/checkpoint.npz (same options; "
                        "results equal an uninterrupted run); outputs go to DIR")
    p.add_argument("--checkpoint-every", type=float, default=30.0, metavar="SECONDS",
                   help="with --out: save finished work this often (default 30)")


def checkpoint_target(args) -> tuple[Path | None, bool]:
    """(checkpoint file or None, resume?) from ``--out``/``--resume``; sets ``args.out``."""
    if args.resume:
        if args.out and Path(args.out) != Path(args.resume):
            raise QueensError("--resume DIR writes to DIR; drop --out or give the same folder")
        args.out = args.resume
        path = Path(args.resume) / checkpoint.FILENAME
        if not path.exists():
            raise QueensError(f"--resume {args.resume}: no {checkpoint.FILENAME} there; "
                              "check the folder, or start without --resume")
        return path, True
    if args.checkpoint_every <= 0:
        raise QueensError(f"--checkpoint-every must be positive, got {args.checkpoint_every}")
    return (Path(args.out) / checkpoint.FILENAME if args.out else None), False


def report_interrupt(what: str, out) -> int:
    """After Ctrl-C: say what was kept (``what``) and how to resume; exit code 130."""
    if out is not None and is_writer():
        print(f"interrupted after {what}, saved in {Path(out) / checkpoint.FILENAME}; resume with "
              f"the same command and --resume {out}", file=sys.stderr)
    else:
        print("interrupted; nothing saved (give --out DIR to make runs resumable)", file=sys.stderr)
    return 130
