"""The ``jaxqueens`` command line: a thin driver over the package.

Exit codes: 0 success; 1 ``check`` found a board that is not a solution (or
``solve`` solved no chain);
2 bad input (a one-line message naming the problem and the fix, no traceback);
130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

import numpy as np

from jaxqueens.errors import QueensError

MAX_SHOWN = 5
"""How many boards of a multi-board file ``show`` prints in full."""


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error message (and exit code 2, as argparse has)."""

    def error(self, message: str):  # noqa: D102 (argparse API)
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def _add_file_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE",
                   help="board file: text (one row per line, column 0 first), .npy [B, n] or .jsonl")
    p.add_argument("--one-based", action="store_true",
                   help="rows in a text file are written 1..n instead of 0..n-1")


def _load(args) -> np.ndarray:
    from jaxqueens.io import boards as boardio

    boards = boardio.load_boards(args.file, one_based=args.one_based)
    if boards.shape[0] == 0:
        raise QueensError(f"{args.file}: holds no boards (write at least one board into it)")
    return boards


def _pick(boards: np.ndarray, index: int, file: str) -> np.ndarray:
    if not -boards.shape[0] <= index < boards.shape[0]:
        raise QueensError(
            f"--index {index} is out of range: {file} holds {boards.shape[0]} board(s) "
            f"(use 0..{boards.shape[0] - 1})")
    return boards[index]


def cmd_show(args) -> int:
    """Print boards with their conflict counts (JAX kernels) and ASCII pictures."""
    from jaxqueens.core import board
    from jaxqueens.plots import render

    boards = _load(args)
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


def cmd_check(args) -> int:
    """Verify boards with the independent checker; exit 1 if any is not a solution."""
    from jaxqueens.core import checker

    boards = _load(args)
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
    print(f"{args.file}: OK, {boards.shape[0]} board(s) of n = {boards.shape[-1]} are all solutions")
    return 0


def cmd_render(args) -> int:
    """Write a PNG poster of one board of FILE."""
    from jaxqueens.plots import render

    rows = _pick(_load(args), args.index, args.file)
    render.render_png(rows, args.output, title=args.title)
    print(f"wrote {args.output}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = _Parser(
        prog="jaxqueens",
        description="Array-parallel N-Queens on JAX: boards, checks and solvers.",
        epilog="Run 'jaxqueens COMMAND --help' for the options of a command. Anywhere on the line: "
               "--log-json (structured logs on stderr); multi-process runs: --coordinator "
               "HOST:PORT --num-processes P --process-id I (see README).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    p = sub.add_parser("show", help="print a board with its conflict counts",
                       description="Print each board of FILE with its attacking pairs, NMOF attack "
                                   "count and conflicted queens, as ASCII (row 0 at the bottom).")
    _add_file_args(p)
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("check", help="verify that boards are solutions (exit 1 if not)",
                       description="Verify every board of FILE with the independent NumPy checker. "
                                   "Exit 0 if all are solutions, 1 if any is not, 2 on bad input.")
    _add_file_args(p)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("render", help="draw a board as a PNG poster (n <= 1000)",
                       description="Draw one board of FILE as a PNG: one block per square, queens "
                                   "highlighted, attacked queens in a third colour.")
    _add_file_args(p)
    p.add_argument("-o", "--output", required=True, metavar="PNG", help="output PNG file")
    p.add_argument("--index", type=int, default=0, help="which board of a multi-board file (default 0)")
    p.add_argument("--title", default=None, help="figure title (default: n and conflict count)")
    p.set_defaults(func=cmd_render)

    from jaxqueens.drivers import anneal as annealing, count, estimate as knuth, minconflicts as mcsolve, stats as solstats

    from jaxqueens.cli import evolve as evolve_cmd, run as experiment

    mcsolve.add_command(sub)
    evolve_cmd.add_command(sub)
    annealing.add_command(sub)
    count.add_command(sub)
    solstats.add_command(sub)
    knuth.add_command(sub)
    experiment.add_command(sub)
    return parser


def _distributed_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--coordinator", default=None, metavar="HOST:PORT")
    p.add_argument("--num-processes", type=int, default=None, metavar="P")
    p.add_argument("--process-id", type=int, default=None, metavar="I")
    p.add_argument("--log-json", action="store_true")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``jaxqueens`` console script.

    ``--coordinator HOST:PORT --num-processes P --process-id I`` (anywhere on the line, or
    ``JAX_COORDINATOR_ADDRESS`` / ``JAX_NUM_PROCESSES`` / ``JAX_PROCESS_ID``) join a
    multi-process run: each process works on its share and process 0 writes the results.
    """
    import time

    from jaxqueens.io import logs

    dist, rest = _distributed_parser().parse_known_args(sys.argv[1:] if argv is None else list(argv))
    args = build_parser().parse_args(rest)
    if dist.log_json:
        logs.enable()
    t0 = time.perf_counter()
    logs.log("start", command=args.command, argv=rest)
    try:
        from jaxqueens.parallel import devices as backend

        backend.init_distributed(dist.coordinator, dist.num_processes, dist.process_id)
        code = args.func(args)
        logs.log("end", command=args.command, code=code, seconds=time.perf_counter() - t0)
        return code
    except QueensError as err:
        print(f"jaxqueens {args.command}: error: {err}", file=sys.stderr)
        logs.log("end", command=args.command, code=2, error=str(err))
        return 2
    except OverflowError as err:
        print(f"jaxqueens {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"jaxqueens {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into e.g. `head`, which has closed it
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
