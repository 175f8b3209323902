"""`jaxqueens estimate`: Knuth's random-probe estimate of Q(n) and of the backtrack tree's size.

One line per size (estimate, standard error, confidence interval, the exact value where OEIS
A000170 has it); with `--out DIR`: `summary.json`, `estimates.csv`
(`jaxqueens.io.estimate`) and `log_q_over_n.png` (`jaxqueens.plots.estimate`).
Checkpoints are one file per size, `DIR/checkpoint-n<N>.npz`, removed when the run is done.
"""

from __future__ import annotations

from pathlib import Path

from jaxqueens import _lazy
from jaxqueens.cli import options
from jaxqueens.core import arguments
from jaxqueens.drivers import settings
from jaxqueens.drivers.estimate_result import Estimate, EstimateSettings, estimate_settings
from jaxqueens.errors import QueensError, clip
from jaxqueens.io import estimate as outputs
from jaxqueens.io import writing
from jaxqueens.plots import estimate as figures
from jaxqueens.solvers.variants import ESTIMATE_MAX_N as MAX_N

# JAX and the estimator load at their first use (jaxqueens._lazy): --help and argument errors
# never do
knuth = _lazy.load("jaxqueens.drivers.estimate")


def _quote(text: str) -> str:
    """The start of a user's text for a one-line message, quoted."""
    return repr(clip(text))


def parse_sizes(text: str, low: int = 1, high: int = MAX_N) -> list[int]:
    """`-n`'s `"27"`, `"20-27"`, `"8,12,20-24"` -> sorted distinct sizes, each in `low..high`.

    Every part is range-checked before a range is expanded, so `1-10000000000` costs nothing, and
    a message quotes at most the start of the text."""
    try:
        arguments.ascii_number(text)
    except QueensError as err:
        raise QueensError(f"-n {err}") from None
    sizes: set[int] = set()
    for part in text.split(",") if text.strip() else []:
        part = part.strip()
        if not part:
            raise QueensError(
                f"-n {_quote(text)}: an empty item between commas; give sizes as 8,12,20-24"
            )
        try:
            lo, hi = (int(x) for x in part.split("-", 1)) if "-" in part[1:] else (int(part),) * 2
        except ValueError:
            raise QueensError(
                f"-n {_quote(text)}: give a size (27), a range (20-27) or a list (8,12,20-24)"
            ) from None
        if not (low <= lo <= high and low <= hi <= high):
            which = f" ({_quote(part)} is not)" if part != text.strip() else ""
            raise QueensError(
                f"-n {_quote(text)}: sizes must lie in {low}..{high}{which}; pick sizes in range"
            )
        if lo > hi:
            raise QueensError(
                f"-n {_quote(text)}: the range {_quote(part)} runs backwards; write it as {hi}-{lo}"
            )
        sizes.update(range(lo, hi + 1))
    if not sizes:
        raise QueensError(f"-n {_quote(text)}: give at least one board size")
    return sorted(sizes)


def add_command(sub) -> None:
    """Register `jaxqueens estimate` among the subcommands `sub` (`add_subparsers`)."""
    p = sub.add_parser(
        "estimate",
        help="estimate Q(n) and the backtrack tree's size with Knuth's random probes",
        description="Knuth's (1975) random-probe estimator: walk from the root choosing a "
        "uniformly random safe row per column, multiply the branching factors. The top levels "
        "are enumerated exactly (strata) to cut the variance. Reports the estimate, "
        "its standard error and a confidence interval, against OEIS A000170 for n <= 27.",
    )
    p.add_argument(
        "n_pos",
        nargs="*",
        default=[],
        metavar="N",
        help="board sizes, each a size, a range or a list (estimate 8 10 20-24; same as -n)",
    )
    p.add_argument(
        "-n",
        "--n",
        dest="n",
        default=None,
        metavar="N",
        help=f"board size 1..{MAX_N}, a range 20-27 or a list 8,12,32 (default 27)",
    )
    options.add_fields(p, [EstimateSettings], "probes depth level", level=settings.CONFIDENCE)
    options.add_seed(p)
    options.add_out(p, "write summary.json, estimates.csv and log_q_over_n.png here")
    options.add_quiet(p)
    options.add_checkpoint(p)
    p.set_defaults(func=cmd_estimate)


def _fmt(x: float) -> str:
    return f"{x:.6g}" if abs(x) < 1e15 else f"{x:.5e}"


def _checkpoints(args) -> bool:
    """Resume? (`--resume DIR` needs a checkpoint there; it writes to DIR:
    `jaxqueens.cli.options.resume_folder`.)"""
    if args.resume:
        if not any(Path(args.resume).glob("checkpoint-n*.npz")):
            raise QueensError(
                f"--resume {args.resume}: no checkpoint there; check the folder, or "
                "start without --resume"
            )
        return True
    arguments.seconds(args.checkpoint_every, "--checkpoint-every")
    return False


def _report(r: Estimate) -> None:
    lo, hi = r.ci
    line = (
        f"n = {r.n}: Q(n) ~ {_fmt(r.solutions)}, se {_fmt(r.solutions_se)} "
        f"({100 * r.level:g}% CI {_fmt(lo)} .. {_fmt(hi)})"
    )
    if r.exact is not None:
        inside = "inside" if lo <= r.exact <= hi else "OUTSIDE"
        error = f", error {100 * r.rel_error:+.3f}%" if r.rel_error is not None else ""
        line += f"; exact {r.exact:,} ({inside} the CI{error})"
    print(line)
    how = (
        "every walk enumerated: exact"
        if r.exhaustive
        else (
            f"{r.probes:,} probes below {r.strata:,} strata of depth {r.depth}, "
            f"{r.hit_rate:.2%} reach depth n, {r.probes_per_s or 0:,.0f} probes/s "
            f"(compile {r.compile_s:.2f} s excluded)"
        )
    )
    print(f"    backtrack tree: {_fmt(r.nodes)} nodes, se {_fmt(r.nodes_se)}; {how}")


def _saved(out, ckpt: Path | None) -> Path | None:
    """The checkpoint an interrupted run leaves: the size's own (`ckpt`), else an earlier
    size's, else `ckpt` (none exists: nothing to resume)."""
    if out is None or ckpt is None or ckpt.exists():
        return ckpt
    return next(iter(sorted(Path(out).glob("checkpoint-n*.npz"))), ckpt)


def cmd_estimate(args) -> int:
    """The `estimate` command: one line per size, a table file and the log Q(n)/n plot; its
    exit code."""
    args = options.resume_folder(args)  # --resume DIR writes to DIR (a new namespace)
    positional = ",".join(args.n_pos) if args.n_pos else None
    if args.n is not None and positional is not None and args.n != positional:
        raise QueensError(f"two board sizes given (-n {args.n} and {positional}); give one")
    sizes = parse_sizes(args.n or positional or "27")
    probes = args.probes  # a float (2e4); checked (nan, inf, < 1) before JAX is imported
    estimate_settings(sizes[0], probes=probes, depth=args.depth, seed=args.seed, level=args.level)
    resume = _checkpoints(args)
    writing.prepare_out(args.out)
    options.claim_out(args.out, resume=resume)
    results: list[Estimate] = []
    for n in sizes:
        ckpt = Path(args.out) / f"checkpoint-n{n}.npz" if args.out else None
        try:
            r = knuth.estimate(
                n,
                probes,
                depth=args.depth,
                seed=args.seed,
                level=args.level,
                control=options.control(args, ckpt, resume),
            )
        except KeyboardInterrupt:  # before the calls began (compiling)
            r = None
        if r is None or r.stopped_by == "interrupted":
            return options.report_interrupt(
                f"{len(results)} finished sizes", args.out, _saved(args.out, ckpt)
            )
        results.append(r)
        _report(r)
    with writing.final_write(args.out):
        if args.out and writing.is_writer():
            out = Path(args.out)
            outputs.write_outputs(out, knuth.run_summary(results, args.seed), args.record)
            path = figures.log_q_plot(results, out / "log_q_over_n.png")
            for ckpt in out.glob("checkpoint-n*.npz"):
                writing.retire(ckpt)
            print(f"wrote summary.json, estimates.csv, {path.name} to {out}")
    return 0
