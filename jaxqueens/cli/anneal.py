"""`jaxqueens anneal`: LS, TA and SA chains (`jaxqueens.drivers.anneal.anneal`), method by
method, with a summary line each; `--out` holds what `jaxqueens.io.anneal` describes.

`--toroidal` makes queens attack along diagonals modulo n; `--instance FILE` runs the chains on
one constrained instance (any format of `jaxqueens.io.instances`): fixed queens never move,
forbidden squares are never used, every solution is checked against the instance, and a run
that solves no chain reports the instance unknown (local search proves no UNSAT; `jaxqueens
complete` decides it; a plainly unsatisfiable instance is UNSAT before any chain runs). The
route is an option of `anneal`, not a method of `complete`, because annealing runs many chains
on one board: the instance only replaces the board, and every option keeps its meaning."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from jaxqueens import _lazy
from jaxqueens.cli import options
from jaxqueens.cli.boards import add_instance, add_size, board_size, start_and_instance
from jaxqueens.core import arguments
from jaxqueens.drivers import settings
from jaxqueens.errors import QueensError
from jaxqueens.io import anneal as anneal_io
from jaxqueens.io import checkpoint, interrupts, progress, provenance, writing
from jaxqueens.io.writing import is_writer
from jaxqueens.plots import chains as chain_plots
from jaxqueens.solvers.variants import METHODS

annealing = _lazy.load("jaxqueens.drivers.anneal")  # JAX: loaded at the first run (jaxqueens._lazy)

OBJECTIVE_NAMES = {"attacks": "attack count", "pairs": "attacking pairs"}

TRACE_CHAINS = 50  # chains per method whose best-so-far trace `--plot` draws


def add_command(sub) -> None:
    """Register `jaxqueens anneal` among the subcommands `sub` (`add_subparsers`)."""
    p = sub.add_parser(
        "anneal",
        help="stochastic local search, threshold accepting, simulated annealing",
        description="Run independent LS / TA / SA chains (NMOF's LSopt, TAopt, SAopt) with a fixed "
        "step budget each; chains stop early when solved.",
    )
    p.add_argument(
        "--method", default="ta", help="ls, ta, sa, a comma list (ls,ta,sa) or 'all' (default ta)"
    )
    add_size(p, default=8)
    p.add_argument("--chains", type=int, default=1000, help="chains per method (default 1000)")
    p.add_argument(
        "--steps", type=int, default=10_000, help="step budget per chain (default 10000)"
    )
    options.add_fields(p, settings.ANNEAL_METHODS.values(), preset="default")
    p.add_argument(
        "--file",
        default=None,
        help="start every chain from this board (any board: rows may repeat, e.g. all "
        "queens on one row as NMOF's vignette); default: random permutations",
    )
    p.add_argument(
        "--one-based", action="store_true", help="rows in --file (or a text --instance) are 1..n"
    )
    add_instance(p)
    options.add_seed(p)
    options.add_batch(p)
    options.add_out(
        p, "write outputs here (one folder per method), with the best board of every unsolved chain"
    )
    p.add_argument(
        "--plot", action="store_true", help="with --out: best-so-far traces, one line per method"
    )
    options.add_checkpoint(p)
    options.add_quiet(p)
    p.set_defaults(func=cmd_anneal)


EFFECTIVE = (
    "method",
    "preset",
    "steps_budget",
    "rounds",
    "neighbour",
    "step",
    "objective",
    "edge",
    "t0",
    "q",
    "init_prob",
    "alpha",
    "t_end",
    "chunk",
)
"""A method's effective settings (its summary's values: defaults and preset filled in), recorded
in every `summary.json`'s run record."""


def parse_methods(text: str) -> list[str]:
    """`--method` (ls, ta, sa, a comma list of them, or `all`) as the methods, in the order
    given."""
    methods = list(METHODS) if text == "all" else [m.strip() for m in text.split(",") if m.strip()]
    bad = [m for m in methods if m not in METHODS]
    if bad or not methods:
        raise QueensError(f"--method {text!r}: use ls, ta, sa, a comma list of them, or all")
    return methods


def _summary_line(method: str, n: int, s: dict) -> str:
    lowest = (
        f"lowest {OBJECTIVE_NAMES[s['objective']]} {s['best_objective_min']} "
        f"(mean {s['best_objective_mean']:.2f})"
    )
    if not s["solved"] and "status" in s:
        return (
            f"{method.upper()}: n = {n}, instance unknown: no chain solved it after "
            f"{s['steps_budget']:,} steps in each of {s['chains']} chains (local search proves "
            f"no UNSAT; jaxqueens complete decides it); {lowest}"
        )
    if not s["solved"]:
        return (
            f"{method.upper()}: n = {n}, no solution found after {s['steps_budget']:,} steps in "
            f"each of {s['chains']} chains; {lowest}"
        )
    return (
        f"{method.upper()}: n = {n}, {s['solved']} of {s['chains']} chains solved "
        f"({100 * s['success_rate']:.1f}%), {s['distinct_solutions']} distinct, all verified; "
        f"mean best objective {s['best_objective_mean']:.2f}; "
        f"{(s['solutions_per_s'] or 0):,.0f} solutions/s"
    )


def _resume_states(resume: str, methods: list[str]) -> dict[str, str]:
    """`--resume DIR`: where each method stands (`jaxqueens.io.anneal.method_state`);
    a folder with nothing to resume, or a method with incomplete outputs, is refused."""
    states = {m: anneal_io.method_state(f) for m, f in anneal_io.folders(resume, methods).items()}
    bad = [m for m, state in states.items() if state == "incomplete"]
    if bad or all(state == "not started" for state in states.values()):
        which = f" for {bad[0]}" if bad else ""
        raise QueensError(
            f"--resume {resume}: no checkpoint or finished run{which} there; check the "
            "folder, or start without --resume"
        )
    return states


def _report_interrupt(out, method: str, before: list[str], chains: int, ckpt) -> int:
    """After Ctrl-C in `method` (`before`: the methods finished earlier): the checkpoint that
    holds its finished chains, or what else is kept, and how to resume; exit code 130 (143 after
    SIGTERM)."""
    if ckpt is not None and ckpt.exists():
        return options.report_interrupt(
            f"{chains} finished chains of {method.upper()}", out, saved=ckpt
        )
    if out is not None and before and is_writer():
        print(
            f"interrupted before {method.upper()} finished any chain; {', '.join(before).upper()} "
            f"finished and kept in {out}; resume with {writing.resume_advice(out)}",
            file=sys.stderr,
        )
        return interrupts.exit_code()
    if out is not None and is_writer():
        print(f"interrupted before any chain finished; nothing saved in {out}", file=sys.stderr)
        return interrupts.exit_code()
    return options.report_interrupt("", None)


def cmd_anneal(args: argparse.Namespace) -> int:
    """The `anneal` command: each method in turn, a summary line each, outputs and plot
    (`--resume DIR`: the methods as they stand, `_resume_states`); its exit code."""
    methods = parse_methods(args.method)
    start, instance = start_and_instance(args)
    n = board_size(args, start) if instance is None else instance.n
    if args.plot and not args.out and not args.resume:
        raise QueensError("--plot needs --out DIR to write the figure into")
    arguments.seconds(args.checkpoint_every, "--checkpoint-every")
    chosen, numbers = _settings(args, methods, n, start, instance)
    args = options.resume_folder(args)
    writing.prepare_out(args.out, need=options.out_bytes(args, n, args.chains, len(methods)))
    options.claim_out(args.out, resume=bool(args.resume))
    states = _resume_states(args.resume, methods) if args.resume else {}
    results, solved = {}, 0
    per_method: dict[str, dict] = {}  # each method's effective settings (the run record)
    folders = anneal_io.folders(args.out, methods)
    for i, method in enumerate(methods):
        folder = folders.get(method)
        ckpt = None if folder is None else folder / checkpoint.FILENAME
        if states.get(method) == "finished":
            solved += anneal_io.solved_before(folders[method])
            continue  # this method had finished before the interruption
        try:
            res = annealing.run(
                chosen[method],
                numbers,
                start,
                instance,
                args.toroidal,
                best_boards=folder is not None,
                trace_chains=TRACE_CHAINS if args.plot else 0,
                control=options.control(args, ckpt, states.get(method) == "saved"),
                announce=print,
            )
        except KeyboardInterrupt:  # before the chunked loop (calibration, compilation)
            res = None
        if res is None or res.run.stopped_by == "interrupted":
            return _report_interrupt(
                args.out, method, methods[:i], 0 if res is None else len(res.run.chain_id), ckpt
            )
        per_method[method] = {k: res.summary.get(k) for k in EFFECTIVE}
        provenance.settle(args.record, seed=res.summary.get("seed"), methods=per_method)
        with writing.final_write(args.out):
            progress.log("summary", **res.summary)
            results[method] = res
            solved += int(res.summary["solved"])
            _method_outputs(method, n, res, folder, args.record)
    with writing.final_write(args.out):
        if args.out and args.plot and is_writer() and len(results) == len(methods):
            path = chain_plots.method_traces(
                {m: r.traces for m, r in results.items()},
                Path(args.out) / anneal_io.TRACES,
                n=n,
                every=results[methods[0]].trace_every,
            )
            print(f"wrote {path}")
    return 0 if solved else 1  # as solve and evolve: 1 when no chain of any method solved


def _settings(args: argparse.Namespace, methods: list[str], n: int, start, instance) -> tuple:
    """Each method's settings and the run's numbers (`settings.anneal_settings`,
    `settings.check_anneal`), checked once, before JAX is imported: an option no method of the
    run uses is refused, one not given takes the preset's value."""
    given = {k: getattr(args, k) for k in settings.ANNEAL_SETTINGS}
    needs_step = (instance is not None and not instance.plain) or settings.has_repeated_rows(start)
    numbers = {"chains": args.chains, "steps": args.steps, "walk": 2000, "seed": args.seed}
    chosen, checked = {}, {}
    for m in methods:
        s = settings.anneal_settings(m, args.preset, needs_step=needs_step, also=methods, **given)
        chosen[m], checked = s, settings.check_anneal(s, n=n, batch=args.batch, **numbers)
    return chosen, checked


def _method_outputs(method: str, n: int, res, folder, record) -> None:
    """One method's summary lines and, with --out, its files (`jaxqueens.io.anneal.write`, with
    the run's `record`)."""
    saved = anneal_io.write(folder, res, record) if folder is not None and is_writer() else []
    line = _summary_line(method, n, res.summary)
    if saved and not res.summary["solved"]:  # one line: no solution, and where the best are
        print(f"{line}; best boards in {saved[0]}")
    else:
        print(line)
        if saved:
            print(
                f"{method.upper()}: best board of each of {len(res.best_boards)} unsolved "
                f"chains in {saved[0]} (attacking pairs in {saved[1].name})"
            )
