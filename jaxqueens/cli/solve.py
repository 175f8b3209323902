"""``jaxqueens solve``: min-conflicts chains (batched, or the large-n path) or classic backtracking.

- ``--method minconflicts --mode batched``: many independent chains
  (:func:`jaxqueens.drivers.minconflicts.solve`), outputs by :mod:`jaxqueens.io.chains`;
- ``--mode large``: one or a few chains on huge boards in linear time
  (:func:`jaxqueens.drivers.large.solve_large`), outputs by :mod:`jaxqueens.io.large`;
- ``--method backtrack``: the classic first solution (:func:`jaxqueens.drivers.backtrack.first_solution`),
  outputs by :mod:`jaxqueens.io.backtrack`.

``--mode auto`` (default) takes the large-n path from ``LARGE_AUTO_N`` on when at most
``LARGE_AUTO_CHAINS`` chains are asked for. Only process 0 writes files.
"""

from __future__ import annotations

import time
from pathlib import Path

import jax

from jaxqueens.cli import options
from jaxqueens.drivers import backtrack as backtracking
from jaxqueens.drivers import large as large_solve
from jaxqueens.drivers import minconflicts as mcsolve
from jaxqueens.errors import QueensError
from jaxqueens.io import backtrack as backtrack_out
from jaxqueens.io import boards as boardio
from jaxqueens.io import chains as chain_out
from jaxqueens.io import large as large_out
from jaxqueens.io import logs
from jaxqueens.parallel.gather import is_writer
from jaxqueens.plots import chains as plots
from jaxqueens.plots import render
from jaxqueens.solvers.minconflicts import INITS


def add_command(sub) -> None:
    """Register ``jaxqueens solve``."""
    p = sub.add_parser(
        "solve", help="batched min-conflicts: many independent chains at once",
        description="Run independent min-conflicts chains (chain i seeded from fold_in(seed, i)) "
                    "until --chains have solved, --solutions distinct solutions are found, or "
                    "--time seconds pass; every solution is verified by the independent checker.")
    options.add_size(p)
    p.add_argument("--chains", type=int, default=None, help="solved chains to collect (default 1000)")
    p.add_argument("--solutions", type=int, default=None, help="stop at this many distinct solutions")
    p.add_argument("--time", type=float, default=None, metavar="SECONDS",
                   help="stop after this much kernel time (checked between kernel calls, each bounded "
                        "to about a second of work; chains still running then count as unsolved)")
    # Defaults of the options below are filled in by _check_options (None: not given), so that
    # a path that does not use an option can refuse it instead of ignoring it.
    p.add_argument("--maxsteps", type=int, default=None, help="steps before a restart (default 4000)")
    p.add_argument("--init", choices=INITS, default=None, help="initial boards (default permutation)")
    p.add_argument("--tabu", type=int, default=None, help="plateau tabu tenure, 0 = off (default)")
    options.add_seed(p, default=None)
    p.add_argument("--batch", type=int, default=None, help="chains per kernel call (default: automatic)")
    p.add_argument("--file", default=None, help="start every chain from this board file")
    p.add_argument("--one-based", action="store_true", help="rows in --file are 1..n")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write solutions.npy, runs.csv, summary.json (and plots) here")
    p.add_argument("--plot", action="store_true", help="with --out: trace and histogram figures")
    options.add_checkpoint(p)
    p.add_argument("--method", choices=("minconflicts", "backtrack"), default="minconflicts",
                   help="minconflicts (default) or backtrack: the classic first solution, rows "
                        "tried in increasing order, with placement and backtrack counts")
    p.add_argument("--mode", choices=("auto", "batched", "large"), default="auto",
                   help=f"batched: many chains in parallel; large: linear-time QS4 path for huge "
                        f"boards; auto (default): large when n >= {mcsolve.LARGE_AUTO_N} and at most "
                        f"{mcsolve.LARGE_AUTO_CHAINS} chains are asked for")
    p.add_argument("--device", choices=("cpu", "gpu"), default=None,
                   help="run on this backend (default: the best one available)")
    options.add_quiet(p)
    p.set_defaults(func=cmd_solve)


def cmd_solve(args) -> int:
    """The ``solve`` command: run, print the summary, write the outputs."""
    if args.device == "gpu" and jax.default_backend() != "gpu":
        raise QueensError("--device gpu: no GPU is visible to JAX; install jaxqueens[gpu] "
                          "(see README) or use --device cpu")
    if args.plot and not args.out:
        raise QueensError("--plot needs --out DIR to write the figures into")
    start = None
    if args.file:
        boards = boardio.load_boards(args.file, one_based=args.one_based)
        if boards.shape[0] != 1:
            raise QueensError(f"--file {args.file} holds {boards.shape[0]} boards; give a file with one")
        start = boards[0]
    n = options.board_size(args, start)
    _check_options(args, _path(args, n))
    options.prepare_out(args.out or args.resume, need=_out_bytes(args, n))
    if args.method == "backtrack":
        return _cmd_backtrack(args, n)
    if _path(args, n) == "large":
        return _cmd_large(args, n)
    chains = args.chains if args.chains is not None or args.solutions or args.time else 1000
    checkpoint, resume = options.checkpoint_target(args)
    result = mcsolve.solve(n, chains, solutions=args.solutions, seconds=args.time,
                           max_steps=args.maxsteps, init=args.init, tabu=args.tabu, seed=args.seed,
                           batch=args.batch, start=start,
                           trace_steps=min(args.maxsteps, 100_000) if args.plot else 0,
                           quiet=options.quiet(args), checkpoint=checkpoint, resume=resume,
                           checkpoint_every=args.checkpoint_every)
    if result.run.stopped_by == "interrupted":
        return options.report_interrupt(f"{len(result.run.chain_id)} finished chains", args.out)
    with options.final_write(args.out):
        s = result.summary
        logs.log("summary", **s)
        st = {k: "-" if v is None else f"{v:g}" for k, v in s["steps"].items()}
        print(f"n = {n}: {s['solved']} of {s['chains']} chains solved, {s['distinct_solutions']} distinct "
              f"solutions, all verified; steps median {st['median']}, p99 {st['p99']}, max {st['max']}")
        if s.get("unfinished"):
            print(f"{s['unfinished']} of these chains were still running when the --time budget "
                  "ran out: counted unsolved")
        if s["solutions_per_s"]:
            print(f"{s['solutions_per_s']:,.0f} solutions/s over {s['wall_s']:.2f} s "
                  f"(compile {s['compile_s']:.2f} s excluded); stopped by {s['stopped_by']} budget")
        if len(result.solutions) and n <= 16:
            print(render.ascii_board(result.solutions[0]))
        if args.out and is_writer():
            out = Path(args.out)
            written = chain_out.write_outputs(result.run, out, s)
            if len(result.solutions) and n <= render.MAX_PNG_N:
                render.render_png(result.solutions[0], out / "solution.png", title="chain 0")
                written.append(out / "solution.png")
            if args.plot:
                written += _solve_plots(result.trace, result.run.steps[result.run.solved], n, out)
            print(f"wrote {', '.join(p.name for p in written)} to {out}")
        return 0 if s["solved"] else 1


DEFAULTS = {"maxsteps": 4000, "init": "permutation", "tabu": 0, "seed": 0}
"""Defaults of the options that only some paths use (the parser leaves them None)."""

UNUSED = {
    "large": ("resume", "solutions", "time", "maxsteps", "init", "tabu", "batch", "file"),
    "backtrack": ("resume", "solutions", "time", "maxsteps", "init", "tabu", "batch", "file",
                  "chains", "seed", "plot"),
}
"""Options a path does not use: given anyway, they are refused (never ignored silently)."""


def _path(args, n: int) -> str:
    """Which path runs: "backtrack", "large" (``--mode large``, or ``auto`` from
    ``LARGE_AUTO_N`` on with at most ``LARGE_AUTO_CHAINS`` chains and no ``--solutions``) or
    "batched"."""
    if args.method == "backtrack":
        return "backtrack"
    few = args.chains is None or args.chains <= mcsolve.LARGE_AUTO_CHAINS
    auto_large = n >= mcsolve.LARGE_AUTO_N and few and not args.solutions
    return "large" if args.mode == "large" or (args.mode == "auto" and auto_large) else "batched"


def _check_options(args, path: str) -> None:
    """Before any work: every count in range, and no option that ``path`` would not use (one
    line naming the option and the fix); then fill in the defaults."""
    for flag, value, low in (("--chains", args.chains, 1), ("--maxsteps", args.maxsteps, 1),
                             ("--batch", args.batch, 1), ("--tabu", args.tabu, 0)):
        if value is not None and value < low:
            raise QueensError(f"{flag} must be at least {low}, got {value}")
    given = [name for name in UNUSED.get(path, ()) if getattr(args, name) not in (None, False)]
    if given:
        flag = "--" + given[0]
        if path == "backtrack":
            raise QueensError(f"{flag} is not used by --method backtrack (one first solution from "
                              f"an empty board); drop {flag}")
        raise QueensError(f"{flag} is not used by the large-n path (--mode large, or auto for n >= "
                          f"{mcsolve.LARGE_AUTO_N:,} with at most {mcsolve.LARGE_AUTO_CHAINS} chains); "
                          f"drop {flag} or give --mode batched")
    for name, value in DEFAULTS.items():
        if getattr(args, name) is None:
            setattr(args, name, value)


def _out_bytes(args, n: int) -> int:
    """Roughly what ``--out`` receives: boards (.npy, text), runs.csv, the checkpoint and its
    temporary copy, for the chains asked for (unknown under --time alone)."""
    chains = args.chains if args.chains is not None else args.solutions or (0 if args.time else 1000)
    return max(chains, 1) * (12 * max(n, 1) + 100)


def _solve_plots(trace, solved_steps, n: int, out: Path) -> list[Path]:
    """Chain 0's trace (conflicted queens, attacking pairs) and the steps histogram."""
    files = []
    if trace is not None:
        files.append(plots.trace_plot(trace["conflicted"], out / "trace_conflicted_queens.png",
                                      "conflicting queens", f"min-conflicts, n = {n}, chain 0"))
        files.append(plots.trace_plot(trace["pairs"], out / "trace_conflicting_pairs.png",
                                      "conflicting pairs", f"min-conflicts, n = {n}, chain 0"))
    files.append(plots.steps_histogram(solved_steps, out / "steps_hist.png",
                                       f"steps to solution, n = {n}, {solved_steps.size} chains"))
    return files


def _cmd_large(args, n: int) -> int:
    """``solve`` on the large-n path: ``--chains`` (default 1) chains one after another."""
    chains = args.chains or 1
    for chain in range(chains):
        res = large_solve.solve_large(n, seed=args.seed, chain=chain, quiet=options.quiet(args))
        with options.final_write(args.out):
            s = res.summary
            logs.log("summary", **s)
            print(f"n = {n:,}{f' chain {chain}' if chains > 1 else ''}: solved and verified; "
                  f"init {s.get('init_s', 0):.2f} s ({s.get('conflicted_after_init', 0)} conflicted queens "
                  f"left), search {s.get('search_s', 0):.2f} s ({s['steps']} steps, {s.get('moves', 0)} "
                  f"moves, {s.get('restarts', 0)} restarts), verify {s.get('verify_s', 0):.2f} s; "
                  f"compile {s.get('compile_s', 0):.2f} s excluded")
            if n <= 16:
                print(render.ascii_board(res.rows))
            if args.out and is_writer():
                out = Path(args.out) / f"chain-{chain}" if chains > 1 else Path(args.out)
                files = large_out.write_outputs(res, out)
                if n <= render.MAX_PNG_N:
                    render.render_png(res.rows, out / "solution.png")
                    files.append(out / "solution.png")
                if args.plot:
                    files.append(plots.trace_plot(res.trace_pairs, out / "trace_conflicting_pairs.png",
                                                  "conflicting pairs",
                                                  f"large-n repair, n = {n:,} (recorded steps)"))
                    files.append(plots.trace_plot(res.round_conflicted, out / "trace_conflicted_queens.png",
                                                  "conflicting queens", f"large-n repair, n = {n:,}: per round",
                                                  xlabel="repair round"))
                print(f"wrote {', '.join(f.name for f in files)} to {out}")
    return 0


def _cmd_backtrack(args, n: int) -> int:
    """``solve --method backtrack``: the classic first solution with its search figures."""
    t0 = time.perf_counter()
    rows, placements, backtracks = backtracking.first_solution(n)
    seconds = time.perf_counter() - t0
    if rows is None:
        raise QueensError(f"n = {n} has no solution (the search tried {placements} placements)")
    with options.final_write(args.out):
        print(f"n = {n}: first solution {rows.tolist() if n <= 64 else '(see --out)'}, verified; "
              f"{placements} placements, {backtracks} backtracks, {seconds:.2f} s")
        if n <= 16:
            print(render.ascii_board(rows))
        if args.out and is_writer():
            summary = {"n": n, "method": "backtrack", "rows": rows.tolist(), "placements": placements,
                       "backtracks": backtracks, "seconds": seconds}
            files = backtrack_out.write_outputs(args.out, rows, summary)
            print(f"wrote {', '.join(f.name for f in files)} to {Path(args.out)}")
    return 0
