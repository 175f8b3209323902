"""`jaxqueens solve`: min-conflicts chains (batched, or the large-n path) or classic backtracking.

`--mode auto` takes the path predicted faster for the chains asked for (`solve_setup.auto_path`).
The batched path runs `jaxqueens.drivers.minconflicts.solve` (Minton et al. 1992) and writes
through `jaxqueens.io.chains`; the large path is `jaxqueens.cli.solve_large`; `--method
backtrack` runs `jaxqueens.drivers.backtrack.first_solution`. The docs' commands page describes
the options, the constrained boards and the outputs.
"""

from __future__ import annotations

import time
from pathlib import Path

from jaxqueens import _lazy
from jaxqueens.cli import options
from jaxqueens.cli.boards import add_instance, add_size, board_size, start_and_instance
from jaxqueens.cli.solve_large import cmd_large as _cmd_large
from jaxqueens.drivers import solve_setup
from jaxqueens.errors import QueensError
from jaxqueens.io import backtrack as backtrack_out
from jaxqueens.io import chains as chain_out
from jaxqueens.io import progress, provenance, writing
from jaxqueens.io.writing import is_writer
from jaxqueens.plots import chains as plots
from jaxqueens.plots import render

# JAX and the solvers load at their first use (jaxqueens._lazy): --help and argument errors never do
jax = _lazy.load("jax")
backtracking = _lazy.load("jaxqueens.drivers.backtrack")
mcsolve = _lazy.load("jaxqueens.drivers.minconflicts")


def add_command(sub) -> None:
    """Register `jaxqueens solve` among the subcommands `sub` (`add_subparsers`)."""
    p = sub.add_parser(
        "solve",
        help="batched min-conflicts: many independent chains at once",
        description="Run independent min-conflicts chains (chain i seeded from fold_in(seed, i)) "
        "until --chains have solved, --solutions distinct solutions are found, or "
        "--time seconds pass; every solution is verified by the independent checker.",
    )
    add_size(p)
    options.add_budget(
        p,
        "solved chains to collect (with --max-restarts: chains to run); default 1000 for n <= "
        "632, then 4e8 / n^2 (16 at n = 5000, 1 from n = 20,000)",
        "the search loop's wall time (host work between kernel calls included; checked between "
        "calls, each bounded to about a second of work, so start-up, compilation and the final "
        "writing come on top); chains still running then count as unsolved",
    )
    _add_search_options(p)
    _add_start_and_out_options(p)
    _add_path_options(p)
    p.set_defaults(func=cmd_solve)


def _add_search_options(p) -> None:
    """The search options (defaults filled in by the path that uses them) and --show-initial."""
    # Their defaults are filled in by drivers.solve_setup (None: not given), so that a path
    # that does not use an option can refuse it instead of ignoring it.
    options.add_fields(p, [solve_setup.SolveSettings], "max_steps max_restarts init tabu move")
    p.add_argument(
        "--show-initial",
        action="store_true",
        help="print chain 0's initial board (n <= 64), its attacking pairs and its "
        "generation time, apart from the search time (CP468)",
    )


def _add_start_and_out_options(p) -> None:
    """The seed, the start (--file, --instance), the output folder and the checkpoints."""
    options.add_seed(p, default=None)
    options.add_batch(p)
    p.add_argument("--file", default=None, help="start every chain from this board file")
    p.add_argument(
        "--one-based", action="store_true", help="rows in --file (or a text --instance) are 1..n"
    )
    add_instance(p, extra="; bounded: --max-restarts 99 and 100 chains run by default")
    options.add_out(p, "write solutions.npy, runs.csv, summary.json (and plots) here")
    p.add_argument("--plot", action="store_true", help="with --out: trace and histogram figures")
    options.add_checkpoint(p)


def _add_path_options(p) -> None:
    """Which method, mode and device run the search; --quiet."""
    p.add_argument(
        "--method",
        choices=("minconflicts", "backtrack"),
        default="minconflicts",
        help="minconflicts (default) or backtrack: the classic first solution, rows "
        "tried in increasing order, with placement and backtrack counts",
    )
    p.add_argument(
        "--mode",
        choices=("auto", "batched", "large"),
        default="auto",
        help="batched: many chains in parallel; large: linear-time QS4 path for huge "
        "boards, chains one after another; auto (default): the path predicted "
        "faster for the chains asked for (large from n ~ 5,900; batched below, or "
        "with --solutions or --time)",
    )
    p.add_argument(
        "--device",
        choices=("cpu", "gpu"),
        default=None,
        help="run on this backend (default: the best one available)",
    )
    options.add_quiet(p)


def cmd_solve(args) -> int:
    """The `solve` command: run, print the summary, write the outputs; exit code 0 when a chain
    solved, else 1."""
    args = options.resume_folder(args)  # --resume DIR writes to DIR (a new namespace)
    start, instance = _checked_start(args)
    n = board_size(args, start) if instance is None else instance.n
    path = solve_setup.solve_path(n, vars(args))
    need = options.out_bytes(args, n, solve_setup.default_chains(n))  # what --out receives
    if path != "backtrack":  # the drivers' check, before JAX is imported
        solve_setup.check_solvable(n)
    if path != "batched":
        setting = solve_setup.solve_setting(vars(args), path)
        recorded = {k: setting.get(k) for k in ("seed", "maxsteps", "max_restarts", "init")}
    else:
        settings, capped = solve_setup.batched_setting(n, vars(args))
        recorded = {"seed": settings.seed, "maxsteps": settings.max_steps}
        recorded.update({k: getattr(settings, k) for k in ("max_restarts", "init", "tabu", "move")})
    provenance.settle(args.record, path=path, **recorded)
    writing.prepare_out(args.out or args.resume, need=need)
    if path != "batched":
        return _cmd_large(args, n, setting) if path == "large" else _cmd_backtrack(args, n)
    checkpoint, resume = options.checkpoint_target(args)
    chains, max_chains = _chain_budget(args, n, instance, capped)
    provenance.settle(args.record, chains=chains, max_chains=max_chains)
    if args.show_initial:
        _show_initial(settings, n, start)
    budget = (chains, args.solutions, args.time, max_chains)
    problem = mcsolve.problem(n, *budget, start, instance, bool(args.toroidal))
    result = mcsolve.run(problem, settings, options.control(args, checkpoint, resume))
    if result.run.stopped_by == "interrupted":
        return options.report_interrupt(f"{len(result.run.chain_id)} finished chains", args.out)
    provenance.settle(args.record, batch=result.summary.get("chunk"))
    with writing.final_write(args.out):
        progress.log("summary", **result.summary)
        _print_summary(result, n, args, settings)
        if args.out and is_writer():
            _write_outputs(result, n, args)
        return 0 if result.run.solved_count else 1


def _checked_start(args):
    """`solve`'s flags that exclude each other refused (in this order); (start board, instance)."""
    if args.device == "gpu" and jax.default_backend() != "gpu":
        raise QueensError(
            "--device gpu: no GPU is visible to JAX; install jaxqueens[gpu] "
            "(see the install docs) or use --device cpu"
        )
    if args.plot and not args.out:
        raise QueensError("--plot needs --out DIR to write the figures into")
    if args.instance and args.show_initial:
        raise QueensError("--show-initial shows plain boards; drop it with --instance")
    start, instance = start_and_instance(args)
    if args.toroidal and args.show_initial:
        raise QueensError("--show-initial shows plain boards; drop it with --toroidal")
    return start, instance


def _chain_budget(args, n: int, instance, capped: bool) -> tuple[int | None, int | None]:
    """(chains to solve, chains to run) of a batched `solve`: a capped run runs its chains."""
    chains = args.chains
    if chains is None and not (args.solutions or args.time):
        chains = solve_setup.default_chains(n) if instance is None else solve_setup.INSTANCE_CHAINS
    return (None, chains) if capped else (chains, None)  # capped: chains run, not awaited


def _print_summary(result, n: int, args, settings: solve_setup.SolveSettings) -> None:
    """`solve`'s lines on standard output: the run's figures, the instance's status, a board."""
    s, run = result.summary, result.run  # printed from the run itself (the summary's source)
    st = {k: "-" if v is None else f"{v:g}" for k, v in run.step_quantiles().items()}
    print(
        f"n = {n}: {run.solved_count} of {run.chains} chains solved, "
        f"{len(run.distinct_solutions)} distinct "
        f"solutions, all verified; steps median {st['median']}, p99 {st['p99']}, max "
        f"{st['max']}"
    )
    if run.stopped_by == "kept_chains":
        print(
            f"stopped after {run.chains:,} chains, the most one run keeps in memory (every "
            "chain is kept for the summary and --out): give --chains with --max-restarts to "
            "bound the run, or a larger --maxsteps so that chains solve"
        )
    if run.unfinished_count:
        print(
            f"{run.unfinished_count} of these chains were still running when the --time "
            "budget ran out: counted unsolved"
        )
    if run.solutions_per_s:
        rate = run.solutions_per_s
        rate = f"{rate:,.0f}" if rate >= 10 else f"{rate:.3g}"
        print(
            f"{rate} solutions/s in {run.wall_s:.2f} s of search (the chains' kernel calls; "
            f"compile {run.compile_s:.2f} s, start-up and writing excluded); stopped by "
            f"{run.stopped_by} budget"
        )
    if run.chains - run.solved_count:
        print(_no_solution_line(run, settings, args.out))
    if s.get("status") == "unknown" and args.instance:
        print(
            f"instance {args.instance}: unknown (no chain solved it; local search proves no "
            "UNSAT: jaxqueens complete decides it exactly)"
        )
    elif s.get("status") == "SAT" and args.instance:
        print(f"instance {args.instance}: SAT, every solution checked against the instance")
    if len(result.solutions) and n <= 16:
        print(render.ascii_board(result.solutions[0]))


def _write_outputs(result, n: int, args) -> None:
    """`solve`'s files in `--out` (this process writes them), and the line naming them."""
    out = Path(args.out)
    written = chain_out.write_outputs(result.run, out, result.summary, None, args.record, True)
    if len(result.solutions) and n <= render.MAX_PNG_N:
        render.board_png(result.solutions[0], out / "solution.png")
        written.append(out / "solution.png")
    if args.plot:
        written += _solve_plots(result.trace, result.run.steps[result.run.solved], n, out)
    print(f"wrote {', '.join(p.name for p in written)} to {out}")


def _no_solution_line(run, settings: solve_setup.SolveSettings, out) -> str:
    """One line for the chains that ended unsolved: steps spent, the limits, the best board."""
    unsolved = ~run.solved
    steps = int(run.steps[unsolved].sum())
    best = int(run.best[unsolved].min()) if run.best is not None else None
    why = (
        "the --time budget ran out"
        if run.unfinished_count
        else f"each gave up after {settings.max_restarts + 1:,} attempt"
        f"{'s' * (settings.max_restarts > 0)} of {settings.max_steps:,} steps"
    )
    saved = (
        " (their best boards: best_boards.npy in --out)"
        if out
        else " (--out DIR saves their best boards)"
    )
    fewest = f"; best board {best} attacking pairs" if best is not None else ""
    return (
        f"no solution found after {steps:,} steps by {int(unsolved.sum())} of {run.chains} chains "
        f"({why}{fewest}){saved}"
    )


def _show_initial(settings: solve_setup.SolveSettings, n: int, start) -> None:
    """`--show-initial`: chain 0's first board (printed for n <= 64), its attacking pairs and
    the time to generate it, compiled and timed apart from the search."""
    rows, pairs, gen_s, compile_s = mcsolve.initial_board(n, start=start, **settings.search())
    init = settings.init if start is None else "from --file"
    print(
        f"initial board of chain 0 (--init {init}): "
        f"{pairs} attacking pairs, generated in {1e3 * gen_s:.3f} ms (compile {compile_s:.2f} s "
        "excluded; the search time below is apart)"
    )
    if n <= 16:
        print(render.ascii_board(rows))
    if n <= 64:
        print(f"rows {rows.tolist()}")


def _solve_plots(trace, solved_steps, n: int, out: Path) -> list[Path]:
    """Chain 0's trace (conflicted queens, attacking pairs) and the steps histogram."""
    files = []
    for key, name, label in (
        ("conflicted", "trace_conflicted_queens.png", "conflicting queens"),
        ("pairs", "trace_conflicting_pairs.png", "conflicting pairs"),
    ):
        if trace is not None:
            title = f"min-conflicts, n = {n}, chain 0"
            files.append(plots.trace_plot(trace[key], out / name, label, title))
    files.append(
        plots.steps_histogram(
            solved_steps,
            out / "steps_hist.png",
            f"steps to solution, n = {n}, {solved_steps.size} chains",
        )
    )
    return files


def _cmd_backtrack(args, n: int) -> int:
    """`solve --method backtrack`: the classic first solution with its search figures."""
    t0 = time.perf_counter()
    rows, placements, backtracks = backtracking.first_solution(n)
    seconds = time.perf_counter() - t0
    if rows is None:
        raise QueensError(f"n = {n} has no solution (the search tried {placements} placements)")
    with writing.final_write(args.out):
        print(
            f"n = {n}: first solution {rows.tolist() if n <= 64 else '(see --out)'}, verified; "
            f"{placements} placements, {backtracks} backtracks, {seconds:.2f} s"
        )
        if n <= 16:
            print(render.ascii_board(rows))
        if args.out and is_writer():
            summary = {
                "n": n,
                "method": "backtrack",
                "rows": rows.tolist(),
                "placements": placements,
                "backtracks": backtracks,
                "seconds": seconds,
            }
            files = backtrack_out.write_outputs(args.out, rows, summary, args.record)
            print(f"wrote {', '.join(f.name for f in files)} to {Path(args.out)}")
    return 0
