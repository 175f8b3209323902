"""`jaxqueens show FILE`: boards with their conflict counts and ASCII pictures; `jaxqueens
check FILE`: verify boards with the independent NumPy checker (exit 1 if any fails). Neither
imports JAX (tests/test_startup.py)."""

from __future__ import annotations

from jaxqueens.cli.boards import add_file, boards_of
from jaxqueens.core import checker
from jaxqueens.plots import render

MAX_SHOWN = 5
"""How many boards of a multi-board file `show` prints in full, and `check` describes."""


def add_command(sub) -> None:
    """Register `jaxqueens show` and `jaxqueens check` among the subcommands `sub`
    (`add_subparsers`), in that order."""
    for name, func, help, description in (
        (
            "show",
            cmd_show,
            "print a board with its conflict counts",
            "Print each board of FILE with its attacking pairs, NMOF attack count and "
            "conflicted queens, as ASCII (row 0 at the bottom).",
        ),
        (
            "check",
            cmd_check,
            "verify that boards are solutions (exit 1 if not)",
            "Verify every board of FILE with the independent NumPy checker. Exit 0 if all are "
            "solutions, 1 if any is not, 2 on bad input.",
        ),
    ):
        p = sub.add_parser(name, help=help, description=description)
        add_file(p)
        p.set_defaults(func=func, uses_jax=False)


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


def cmd_check(args) -> int:
    """Verify boards with the independent checker; exit code 0 if every board is a solution,
    1 if any is not."""
    boards = boards_of(args)
    bad = 0
    for i, rows in enumerate(boards):
        report = checker.check_board(rows)
        if not report.ok:
            bad += 1
            if bad <= MAX_SHOWN:
                print(f"board {i}: NOT a solution: " + "; ".join(report.problems))
    if bad:
        print(f"{args.file}: {bad} of {boards.shape[0]} board(s) are not solutions")
        return 1
    print(
        f"{args.file}: OK, {boards.shape[0]} board(s) of n = {boards.shape[-1]} are all solutions"
    )
    return 0
