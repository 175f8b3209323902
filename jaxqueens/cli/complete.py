"""`jaxqueens complete FILES_OR_DIRS...`: decide, count or enumerate constrained instances
(n-Queens Completion, CSPLib prob079 excluded diagonals, blocked squares, toroidal) exactly, in
batches (`jaxqueens.drivers.complete.solve_instances`), read by `jaxqueens.io.instances`: the
table on stdout and, with `--out DIR`, the files of `jaxqueens.io.complete` (`--resume DIR`).
"""

from __future__ import annotations

import sys

from jaxqueens import _lazy
from jaxqueens.cli import options
from jaxqueens.errors import QueensError
from jaxqueens.io import complete as outputs
from jaxqueens.io import instances as instio
from jaxqueens.io import tables, writing

# JAX and the solver load at their first use (jaxqueens._lazy): --help and argument errors never do
complete = _lazy.load("jaxqueens.drivers.complete")

MAX_N = 32  # uint32 masks of the exact search (jaxqueens.solvers.complete.MAX_N)


def add_command(sub) -> None:
    """Register `jaxqueens complete` among the subcommands `sub` (`add_subparsers`)."""
    p = sub.add_parser(
        "complete",
        help="decide / count constrained instances exactly (completion, excluded diagonals)",
        description="Decide (first solution or UNSAT), count or enumerate every instance "
        "exactly with a batched bitmask search: n-Queens Completion, CSPLib prob079 excluded "
        "diagonals (FILE.param:d uses the first d diagonals), blocked squares, toroidal "
        "queens. Folders and .tar.gz sets are searched for instance files. Prints one "
        "CSV row per instance (file, d, n, status, solutions, nodes, seconds).",
    )
    p.add_argument(
        "inputs",
        nargs="+",
        metavar="FILE_OR_DIR",
        help="instance files (.param, .jsonl, text boards with '.' gaps), FILE.param:d, "
        "folders or .tar.gz sets",
    )
    what = p.add_mutually_exclusive_group()
    what.add_argument("--count", action="store_true", help="count every solution (exact)")
    what.add_argument(
        "--enumerate",
        action="store_true",
        help="count and list solutions (up to --cap per instance) in solutions.jsonl",
    )
    p.add_argument(
        "--cap",
        type=int,
        metavar="K",
        help="--enumerate: solutions listed per instance (default 1000)",
    )
    p.add_argument(
        "--diags",
        type=int,
        metavar="D",
        help="use the first D diagonals of every .param file without its own :d "
        "(files of a folder or set listing fewer are skipped, and counted)",
    )
    p.add_argument("--toroidal", action="store_true", help="queens attack along diagonals modulo n")
    p.add_argument(
        "--one-based",
        action="store_true",
        help="rows in text boards are written 1..n instead of 0..n-1",
    )
    p.add_argument(
        "--max-nodes",
        type=int,
        metavar="K",
        help="give an instance up after about K tree nodes (status unknown)",
    )
    options.add_out(
        p,
        "write DIR/results.csv, DIR/solutions.jsonl and DIR/summary.json; keep "
        "DIR/checkpoint.npz while running (resumable)",
    )
    options.add_checkpoint(p)
    options.add_quiet(p)
    p.set_defaults(func=cmd_complete, data_stdout=True)  # stdout is the CSV table, nothing else


def _check(args) -> None:
    if args.diags is not None and args.diags < 0:
        raise QueensError(f"--diags must be 0 or more, got {args.diags}")
    if args.cap is not None and not args.enumerate:
        raise QueensError("--cap applies to --enumerate only; add --enumerate or drop --cap")


def _cap(args) -> int:
    """Solutions listed per instance: `--cap`, checked by the driver (0 is refused, not the
    default)."""
    return complete.ENUMERATE_CAP if args.cap is None else args.cap


def _report(args, loaded, res, mode: str) -> None:
    """The results table on stdout, a summary line on stderr and, with `--out`, the files
    (written by the writing process only)."""
    with writing.final_write(args.out):
        if not writing.is_writer():
            return
        w = tables.writer(sys.stdout)  # the one CSV dialect (formula cells neutralised)
        w.writerow(outputs.HEADER)
        w.writerows(res.rows(loaded.instances))
        extra = {"mode": mode, "seconds": res.seconds, "compile_seconds": res.compile_seconds}
        total = res.summary(**extra, skipped=len(loaded.skipped))
        skipped = f"; {loaded.skipped_note()}: skipped" if loaded.skipped else ""
        print(
            f"{total['instances']} instances: {total['sat']} SAT, {total['unsat']} UNSAT, "
            f"{total['unknown']} unknown{skipped}; every solution verified; "
            f"{res.seconds:.2f} s (compile {res.compile_seconds:.2f} s excluded)",
            file=sys.stderr,
        )
        if args.out:
            written = outputs.write_outputs(
                args.out, loaded.instances, res, args.record, **extra, skipped=len(loaded.skipped)
            )
            print(f"wrote {written[0]} and {written[-1].name}", file=sys.stderr)


def cmd_complete(args) -> int:
    """The `complete` command; its exit code."""
    args = options.resume_folder(args)  # --resume DIR writes to DIR (a new namespace)
    _check(args)
    path, resume = options.checkpoint_target(args, per_process=True)
    loaded = instio.load_instances(
        args.inputs, args.diags, one_based=args.one_based, toroidal=args.toroidal
    )
    loaded.require_some()
    if args.out:  # before any search: the disk must hold every listed board
        listed = _cap(args) if args.enumerate else 1
        writing.prepare_out(args.out, need=outputs.written_bytes(loaded.instances, listed))
    big = [i for i in loaded.instances if i.model.n > MAX_N]
    if big:
        raise QueensError(
            f"{big[0].source}: n = {big[0].model.n} is too large; exact search "
            f"supports n <= {MAX_N}"
        )
    mode = "enumerate" if args.enumerate else "count" if args.count else "decide"
    try:
        res = complete.solve_instances(
            [i.model for i in loaded.instances],
            mode,
            cap=_cap(args),
            max_nodes=args.max_nodes,
            control=options.control(args, path, resume),
        )
    except KeyboardInterrupt:  # before the chunked loop (compilation)
        return options.report_interrupt("the finished chunks", args.out)
    if res.stopped_by == "interrupted":
        return options.report_interrupt(
            f"{res.settled} of {len(res.instances)} instances", args.out
        )
    _report(args, loaded, res, mode)
    return 0
