"""`jaxqueens check FILE`: verify boards with the independent NumPy checker (exit 1 if any
fails)."""

from __future__ import annotations

from jaxqueens._src.cli.boards import add_file, boards_of
from jaxqueens.core import checker

MAX_SHOWN = 5
"""How many failing boards `check` describes."""


def add_command(sub) -> None:
    """Register `jaxqueens check` among the subcommands `sub` (`add_subparsers`)."""
    p = sub.add_parser(
        "check",
        help="verify that boards are solutions (exit 1 if not)",
        description="Verify every board of FILE with the independent NumPy checker. "
        "Exit 0 if all are solutions, 1 if any is not, 2 on bad input.",
    )
    add_file(p)
    p.set_defaults(func=cmd_check, uses_jax=False)  # never imports JAX (tests/test_startup.py)


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
