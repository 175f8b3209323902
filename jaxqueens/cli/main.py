"""The ``jaxqueens`` command line: a thin driver over the package.

Exit codes: 0 success; 1 ``check`` found a board that is not a solution (or
``solve`` solved no chain);
2 bad input (a one-line message naming the problem and the fix, no traceback);
130 interrupted.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Sequence

from jaxqueens.cli import anneal, check, count, estimate, evolve, render, run, show, solve, stats
from jaxqueens.errors import QueensError
from jaxqueens.io import logs
from jaxqueens.parallel import devices


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error message (exit code 2, as argparse has) and no abbreviations:
    ``--n`` must never be read as ``--num-processes``, nor ``--c`` as ``--coordinator``."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # noqa: D102 (argparse API)
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


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

    for command in (show, check, render, solve, evolve, anneal, count, stats, estimate):
        command.add_command(sub)
    run.add_command(sub, build_parser)
    return parser


def _distributed_parser() -> argparse.ArgumentParser:
    """The options read anywhere on the line, before the command's own parser (exact spellings only)."""
    p = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
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
    dist, rest = _distributed_parser().parse_known_args(sys.argv[1:] if argv is None else list(argv))
    args = build_parser().parse_args(rest)
    if dist.log_json:
        logs.enable()
    t0 = time.perf_counter()
    logs.log("start", command=args.command, argv=rest)
    try:
        devices.init_distributed(dist.coordinator, dist.num_processes, dist.process_id)
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
