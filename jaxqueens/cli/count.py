"""`jaxqueens count`: count every solution exactly
(`jaxqueens.drivers.count.count_solutions`), or list them all for n <= 14
(`jaxqueens.drivers.count.enumerate_solutions`); `--toroidal` counts on the torus, `--plan`
predicts a count's time. Outputs: `jaxqueens.io.count`; `--resume DIR` continues an
interrupted count from `DIR/checkpoint.npz` (one `checkpoint.process<p>of<P>.npz` per process in
a multi-process run), which goes once `DIR/summary.json` is written.
"""

from __future__ import annotations

from pathlib import Path

from jaxqueens import _lazy
from jaxqueens.cli import options
from jaxqueens.cli.boards import add_size, board_size
from jaxqueens.core import symmetry
from jaxqueens.core.constraints import Constraints
from jaxqueens.core.oeis import A000170, A002562, A051906
from jaxqueens.drivers import count_setup
from jaxqueens.errors import QueensError
from jaxqueens.io import checkpoint, writing
from jaxqueens.io import count as outputs
from jaxqueens.solvers.variants import COUNT_MAX_N

# JAX and the counter load at their first use (jaxqueens._lazy): --help and argument errors never do
count = _lazy.load("jaxqueens.drivers.count")
count_plan = _lazy.load("jaxqueens.drivers.count_plan")
complete = _lazy.load("jaxqueens.drivers.complete")
gather = _lazy.load("jaxqueens.parallel.gather")


def add_command(sub) -> None:
    """Register `jaxqueens count` among the subcommands `sub` (`add_subparsers`)."""
    p = sub.add_parser(
        "count",
        help="count all solutions exactly (and list them for n <= 14)",
        description="Count every n-queens solution exactly: one border "
        "configuration per class under the 8 symmetries of the square "
        "(constellations), each completed by a bitmask DFS and weighted "
        "by its class size; optionally the fundamental solutions (same "
        "search), and every solution written to .npy (n <= 14).",
    )
    add_size(p, default=None, required=True, help=f"board size, 1..{COUNT_MAX_N}")
    options.add_fields(p, [count_setup.CountSettings], " ".join(count_setup.SWITCHES))
    options.add_out(
        p,
        "count: keep DIR/checkpoint.npz while counting (resumable) and write "
        "DIR/summary.json when done (the checkpoint is removed then); "
        "with --enumerate: FILE.npy gets all solutions [S, n] uint8 and "
        "FILE_fundamental.npy the fundamental representatives (a DIR gets "
        "solutions.npy and solutions_fundamental.npy; a file suffix other than .npy, such "
        "as .txt, is refused)",
    )
    options.add_checkpoint(p)
    shown = p.add_mutually_exclusive_group()
    shown.add_argument(
        "--progress", action="store_true", help="progress line with time left, even off a terminal"
    )
    options.add_quiet(shown)
    p.add_argument(
        "--checkpoint",
        default=None,
        metavar="FILE.json",
        help="no longer supported: use --out DIR and --resume DIR",
    )
    p.set_defaults(func=cmd_count)


def _known(value: int, table: dict[int, int], n: int, name: str) -> str:
    if n not in table:
        return ""
    return (
        f" (OEIS {name}: {'agrees' if table[n] == value else f'MISMATCH, expected {table[n]:,}'})"
    )


def _enumerate(args, n: int) -> int:
    if args.resume:
        raise QueensError("--enumerate runs in one go (n <= 14) and cannot resume; drop --resume")
    if not args.out:
        raise QueensError(
            "--enumerate needs --out FILE.npy (or a folder) to write the solutions to"
        )
    suffix = Path(args.out).suffix
    # a file type's suffix has a letter: `x_1.5` or `run.2` name a folder
    typed = any(c.isalpha() for c in suffix)
    if typed and suffix != ".npy" and not Path(args.out).is_dir():
        raise QueensError(
            f"--out {args.out}: --enumerate writes .npy files; give --out FILE.npy, "
            f"or a folder without a suffix (it gets {outputs.SOLUTIONS} and the "
            "fundamental ones beside it)"
        )
    writing.prepare_out(
        args.out,
        kind="file" if suffix == ".npy" else "dir",
        need=2 * n * A000170.get(n, 0),  # (n <= 14: checked)
    )
    boards = count.enumerate_solutions(n)
    reps = symmetry.fundamental(boards)
    every, fund = outputs.solution_paths(args.out)
    with writing.final_write(args.out):
        if writing.is_writer():  # several processes: process 0 writes
            outputs.write_solutions(args.out, boards, reps)
        print(
            f"n = {n}: {len(boards):,} solutions{_known(len(boards), A000170, n, 'A000170')}, "
            f"{len(reps):,} fundamental{_known(len(reps), A002562, n, 'A002562')}; "
            f"all verified; wrote {every} and {fund}"
        )
        return 0


def duration(seconds: float) -> str:
    """`seconds` for a reader: "0.4 s", "3 min 20 s", "5 h 12 min", "3.2 days", "4.1e+08 years"."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{int(seconds // 60)} min {int(seconds % 60)} s"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60)} min"
    if seconds < 365 * 86400:
        return f"{seconds / 86400:,.1f} days"
    years = seconds / (365.25 * 86400)
    return f"{years:,.1f} years" if years < 1e4 else f"{years:.2g} years"


def _plan(args, n: int) -> int:
    """`count --plan`: the tasks and the predicted run time, nothing counted or written."""
    why = "--plan only predicts a count and writes nothing"
    count_setup.refuse(why, enumerate=args.enumerate, out=args.out, resume=args.resume)
    plan = count_plan.plan_count(n)
    if plan.tasks == 0:
        print(f"n = {n}: solved by brute force at once (no tasks)")
        return 0
    print(
        f"n = {n}: {plan.constellations:,} constellations (classes of border queens), "
        f"{plan.tasks:,} tasks of depth {plan.depth} in {plan.chunks:,} chunks on "
        f"{plan.devices} device(s)"
    )
    least = "at least " if plan.lower_bound else ""
    print(
        f"estimated run time: {least}{duration(plan.estimate_seconds)} (95%: "
        f"{duration(plan.low_seconds)} to {duration(plan.high_seconds)} from the tree's size; "
        f"the machine's load moves it too): {plan.edges:.3g} tree edges (Knuth's estimate from "
        f"{plan.sampled:,} random probes) at {plan.edge_rate:.3g} edges/s (timed now on "
        f"{plan.timed_edges:,} edges{', every lane taken as busy' if plan.lower_bound else ''}); "
        f"sampled in {plan.sample_seconds:.1f} s; compile {plan.compile_seconds:.2f} s and "
        "start-up not included; --unique takes about as long"
    )
    known = f", A000170: {A000170[n]:.4g}" if n in A000170 else ""
    print(
        f"check of the estimator: the same probes give {plan.solutions:.4g} solutions "
        f"(95% CI +- {1.96 * plan.solutions_error:.2g}{known})"
    )
    return 0


def _toroidal(args, n: int) -> int:
    """`count --toroidal`: `jaxqueens.drivers.complete.toroidal_count`, resumable."""
    if n > complete.MAX_N:
        raise QueensError(
            f"--toroidal: n = {n} is too large for the constrained search; give n <= "
            f"{complete.MAX_N}"
        )
    path, resume = options.checkpoint_target(args, per_process=True)
    writing.prepare_out(args.out)
    try:
        res = complete.solve_instances(
            [Constraints(n, toroidal=True)],
            mode="count",
            control=options.control(args, path, resume),
        )
    except KeyboardInterrupt:  # before the chunked loop (planning, compilation)
        return options.report_interrupt("the finished chunks", args.out)
    if res.stopped_by == "interrupted":
        return options.report_interrupt(
            f"{res.settled} of {len(res.instances)} instances", args.out
        )
    total = res.instances[0].solutions
    with writing.final_write(args.out):
        print(f"n = {n}, toroidal: {total:,} solutions{_known(total, A051906, n, 'A051906')}")
        print(f"{res.seconds:.3f} s (compile {res.compile_seconds:.2f} s excluded)")
        _write(args, outputs.write_toroidal_summary, n, total, res.seconds, res.compile_seconds)
        return 1 if n in A051906 and total != A051906[n] else 0


def _write(args, write, *values) -> None:
    """With `--out`, on process 0: `write(args.out, *values, args.record)`, the summary, then
    retire the finished count's checkpoint, every process's file (`jaxqueens.io.writing.retire`)."""
    if args.out and writing.is_writer():
        written = write(args.out, *values, args.record)
        for saved in checkpoint.saved(Path(args.out) / checkpoint.FILENAME):
            writing.retire(saved)
        print(f"wrote {written}")


def cmd_count(args) -> int:
    """The `count` command; its exit code."""
    args = options.resume_folder(args)  # --resume DIR writes to DIR (a new namespace)
    if args.checkpoint:
        raise QueensError(
            f"--checkpoint {args.checkpoint}: JSON checkpoints are no longer "
            "supported; give --out DIR (checkpoint in DIR/checkpoint.npz) and, "
            "after an interruption, --resume DIR"
        )
    n = board_size(args)
    settings = count_setup.CountSettings(**{k: getattr(args, k) for k in count_setup.SWITCHES})
    if settings.toroidal:
        return _toroidal(args, n)
    # the driver's size checks, before JAX is imported
    count_setup.check_count_n(n, listed=settings.enumerate)
    if settings.plan:
        return _plan(args, n)
    if settings.enumerate:
        return _enumerate(args, n)
    if args.out and Path(args.out).suffix == ".npy":
        raise QueensError(
            f"--out {args.out} is a solutions file: add --enumerate to list the "
            "solutions, or give --out DIR to keep a count's checkpoint and summary"
        )
    path, resume = options.checkpoint_target(args, per_process=True)
    writing.prepare_out(args.out)
    try:
        res = count.count_solutions(
            n,
            unique=settings.unique,
            control=options.control(args, path, resume),
        )
    except KeyboardInterrupt:  # before the chunked loop (planning, compilation)
        return options.report_interrupt("the finished chunks", args.out)
    if res.stopped_by == "interrupted":
        return options.report_interrupt(f"{res.done_chunks} of {res.chunks} chunks", args.out)
    with writing.final_write(args.out):
        print(f"n = {res.n}: {res.total:,} solutions{_known(res.total, A000170, res.n, 'A000170')}")
        if res.unique is not None:
            print(
                f"fundamental (distinct under rotations and reflections): {res.unique:,}"
                f"{_known(res.unique, A002562, res.n, 'A002562')}"
            )
        resumed = (
            f", {res.resumed_chunks} of {res.chunks} chunks resumed from checkpoint"
            if res.resumed_chunks
            else ""
        )
        print(
            f"{res.seconds:.3f} s ({res.prefixes:,} tasks from {res.constellations:,} "
            f"constellations, depth {res.depth}, compile {res.compile_seconds:.2f} s "
            f"excluded{resumed})"
        )
        _write(args, outputs.write_summary, res, gather.process_count())
        bad = (res.n in A000170 and res.total != A000170[res.n]) or (
            res.unique is not None and res.n in A002562 and res.unique != A002562[res.n]
        )
        return 1 if bad else 0
