"""``jaxqueens count``: count every solution exactly (:func:`jaxqueens.drivers.count.count_solutions`),
or list them all for n <= 14 (:func:`jaxqueens.drivers.count.enumerate_solutions`).

Outputs (:mod:`jaxqueens.io.count`): with ``--out DIR``, ``DIR/checkpoint.npz`` while counting
(one ``checkpoint.process<p>of<P>.npz`` per process in a multi-process run) and
``DIR/summary.json`` when done; ``--resume DIR`` continues an interrupted count. With
``--enumerate --out FILE.npy``: ``FILE.npy`` and ``FILE_fundamental.npy`` (``--out DIR``:
``DIR/solutions.npy`` and ``DIR/solutions_fundamental.npy``).
"""

from __future__ import annotations

from pathlib import Path

from jaxqueens.cli import options
from jaxqueens.core import symmetry
from jaxqueens.core.oeis import A000170, A002562
from jaxqueens.drivers import count
from jaxqueens.errors import QueensError
from jaxqueens.io import checkpoint
from jaxqueens.io import count as outputs
from jaxqueens.parallel import gather


def add_command(sub) -> None:
    """Register ``jaxqueens count`` on an argparse subparsers object."""
    p = sub.add_parser("count", help="count all solutions exactly (and list them for n <= 14)",
                       description="Count every n-queens solution exactly with bitmask DFS over "
                                   "independent prefixes (mirror symmetry used); optionally the "
                                   "fundamental solutions, and every solution written to .npy.")
    options.add_size(p, default=None, required=True, help=f"board size, 1..{count.MAX_N}")
    p.add_argument("--unique", action="store_true",
                   help=f"also count solutions distinct under the 8 symmetries (n <= {count.UNIQUE_MAX_N})")
    p.add_argument("--enumerate", action="store_true",
                   help=f"write every solution to --out (n <= {count.ENUMERATE_MAX_N})")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="count: keep DIR/checkpoint.npz (resumable) and write DIR/summary.json; "
                        "with --enumerate: FILE.npy gets all solutions [S, n] uint8 and "
                        "FILE_fundamental.npy the fundamental representatives (a DIR gets "
                        "solutions.npy and solutions_fundamental.npy; another suffix is refused)")
    options.add_checkpoint(p)
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--progress", action="store_true",
                       help="progress line with time left, even off a terminal")
    options.add_quiet(shown)
    p.add_argument("--checkpoint", default=None, metavar="FILE.json",
                   help="no longer supported: use --out DIR and --resume DIR")
    p.set_defaults(func=cmd_count)


def _known(value: int, table: dict[int, int], n: int, name: str) -> str:
    if n not in table:
        return ""
    return f" (OEIS {name}: {'agrees' if table[n] == value else f'MISMATCH, expected {table[n]:,}'})"


def _checkpoint_target(args) -> tuple[Path | None, bool]:
    """:func:`options.checkpoint_target`; in a multi-process run ``--resume DIR`` finds this
    process's own checkpoint (:func:`count.process_checkpoint`)."""
    if args.resume and gather.process_count() > 1:
        own = count.process_checkpoint(Path(args.resume) / checkpoint.FILENAME)
        if own.exists():
            if args.out and Path(args.out) != Path(args.resume):
                raise QueensError("--resume DIR writes to DIR; drop --out or give the same folder")
            args.out = args.resume
            return Path(args.resume) / checkpoint.FILENAME, True
    return options.checkpoint_target(args)


def _enumerate(args, n: int) -> int:
    if args.resume:
        raise QueensError("--enumerate runs in one go (n <= 14) and cannot resume; drop --resume")
    if not args.out:
        raise QueensError("--enumerate needs --out FILE.npy (or a folder) to write the solutions to")
    suffix = Path(args.out).suffix
    if suffix and suffix != ".npy" and not Path(args.out).is_dir():
        raise QueensError(f"--out {args.out}: --enumerate writes .npy files; give --out FILE.npy, "
                          f"or a folder without a suffix (it gets {outputs.SOLUTIONS} and the "
                          "fundamental ones beside it)")
    options.prepare_out(args.out, kind="file" if suffix == ".npy" else "dir",
                        need=2 * n * A000170.get(n, 0) if n <= count.ENUMERATE_MAX_N else 0)
    boards = count.enumerate_solutions(n)
    reps = symmetry.fundamental(boards)
    every, fund = outputs.solution_paths(args.out)
    with options.final_write(args.out):
        if gather.is_writer():  # several processes: process 0 writes
            outputs.write_solutions(args.out, boards, reps)
        print(f"n = {n}: {len(boards):,} solutions{_known(len(boards), A000170, n, 'A000170')}, "
              f"{len(reps):,} fundamental{_known(len(reps), A002562, n, 'A002562')}; "
              f"all verified; wrote {every} and {fund}")
        return 0


def cmd_count(args) -> int:
    """The ``count`` command."""
    if args.checkpoint:
        raise QueensError(f"--checkpoint {args.checkpoint}: JSON checkpoints are no longer "
                          "supported; give --out DIR (checkpoint in DIR/checkpoint.npz) and, "
                          "after an interruption, --resume DIR")
    n = options.board_size(args)
    if args.enumerate:
        return _enumerate(args, n)
    if args.out and Path(args.out).suffix == ".npy":
        raise QueensError(f"--out {args.out} is a solutions file: add --enumerate to list the "
                          "solutions, or give --out DIR to keep a count's checkpoint and summary")
    path, resume = _checkpoint_target(args)
    options.prepare_out(args.out)
    try:
        res = count.count_solutions(n, unique=args.unique, checkpoint=path, resume=resume,
                                    quiet=False if args.progress else options.quiet(args),
                                    checkpoint_every=args.checkpoint_every)
    except KeyboardInterrupt as err:
        return options.report_interrupt(str(err) or "the finished chunks", args.out)
    with options.final_write(args.out):
        print(f"n = {res.n}: {res.total:,} solutions{_known(res.total, A000170, res.n, 'A000170')}")
        if res.unique is not None:
            print(f"fundamental (distinct under rotations and reflections): {res.unique:,}"
                  f"{_known(res.unique, A002562, res.n, 'A002562')}")
        resumed = (f", {res.resumed_chunks} of {res.chunks} chunks resumed from checkpoint"
                   if res.resumed_chunks else "")
        print(f"{res.seconds:.2f} s ({res.prefixes:,} prefixes of depth {res.depth}, "
              f"compile {res.compile_seconds:.2f} s excluded{resumed})")
        if args.out and gather.is_writer():
            written = outputs.write_summary(args.out, res, processes=gather.process_count())
            print(f"wrote {written}")
        bad = (res.n in A000170 and res.total != A000170[res.n]) or (
            res.unique is not None and res.n in A002562 and res.unique != A002562[res.n])
        return 1 if bad else 0
