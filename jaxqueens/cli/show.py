"""``jaxqueens show FILE``: boards with their conflict counts and ASCII pictures."""

from __future__ import annotations

import numpy as np

from jaxqueens.cli import options
from jaxqueens.core import board
from jaxqueens.plots import render

MAX_SHOWN = 5
"""How many boards of a multi-board file ``show`` prints in full."""


def add_command(sub) -> None:
    p = sub.add_parser("show", help="print a board with its conflict counts",
                       description="Print each board of FILE with its attacking pairs, NMOF attack "
                                   "count and conflicted queens, as ASCII (row 0 at the bottom).")
    options.add_file(p)
    p.set_defaults(func=cmd_show)


def cmd_show(args) -> int:
    """Print boards with their conflict counts (JAX kernels) and ASCII pictures."""
    boards = options.boards_of(args)
    pairs = np.asarray(board.attacking_pairs(boards))
    attacks = np.asarray(board.n_attacks(boards))
    conflicted = np.asarray(board.conflicted_mask(boards)).sum(axis=-1)
    n = boards.shape[-1]
    for i, rows in enumerate(boards[:MAX_SHOWN]):
        head = f"board {i}: " if boards.shape[0] > 1 else ""
        print(f"{head}n = {n}, attacking pairs = {pairs[i]}, attacks (NMOF) = {attacks[i]}, "
              f"conflicted queens = {conflicted[i]}" + (" -- a solution" if pairs[i] == 0 else ""))
        if n <= render.MAX_ASCII_N:
            print(render.ascii_board(rows))
    if boards.shape[0] > MAX_SHOWN:
        solved = int((pairs == 0).sum())
        print(f"... {boards.shape[0] - MAX_SHOWN} more boards; {solved} of {boards.shape[0]} are solutions")
    return 0
