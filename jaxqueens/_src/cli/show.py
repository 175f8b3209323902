"""`jaxqueens show FILE`: boards with their conflict counts and ASCII pictures."""

from __future__ import annotations

from jaxqueens._src.cli.boards import add_file, boards_of
from jaxqueens._src.plots import render
from jaxqueens.core import checker

MAX_SHOWN = 5
"""How many boards of a multi-board file `show` prints in full."""


def add_command(sub) -> None:
    """Register `jaxqueens show` among the subcommands `sub` (`add_subparsers`)."""
    p = sub.add_parser(
        "show",
        help="print a board with its conflict counts",
        description="Print each board of FILE with its attacking pairs, NMOF attack "
        "count and conflicted queens, as ASCII (row 0 at the bottom).",
    )
    add_file(p)
    p.set_defaults(func=cmd_show, uses_jax=False)  # never imports JAX (tests/test_startup.py)


def cmd_show(args) -> int:
    """Print boards with their conflict counts (the NumPy checker's, no JAX) and ASCII
    pictures; exit code 0."""
    boards = boards_of(args)
    pairs = checker.attacking_pairs(boards)
    attacks = checker.n_attacks(boards)
    conflicted = (checker.queen_conflicts(boards) > 0).sum(axis=-1)
    n = boards.shape[-1]
    for i, rows in enumerate(boards[:MAX_SHOWN]):
        head = f"board {i}: " if boards.shape[0] > 1 else ""
        print(
            f"{head}n = {n}, attacking pairs = {pairs[i]}, attacks (NMOF) = {attacks[i]}, "
            f"conflicted queens = {conflicted[i]}" + (" -- a solution" if pairs[i] == 0 else "")
        )
        if n <= render.MAX_ASCII_N:
            print(render.ascii_board(rows))
    if boards.shape[0] > MAX_SHOWN:
        solved = int((pairs == 0).sum())
        print(
            f"... {boards.shape[0] - MAX_SHOWN} more boards; {solved} of {boards.shape[0]} are "
            "solutions"
        )
    return 0
