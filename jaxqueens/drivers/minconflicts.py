"""``jaxqueens.solve`` and ``jaxqueens solve``: batched min-conflicts, the main job.

Thousands of independent min-conflicts chains (Minton et al. 1992; kernel in
:mod:`jaxqueens.solvers.minconflicts`) run per call; the driver (:mod:`jaxqueens.drivers.chains`)
gathers verified solutions and statistics until a budget is met.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import jax
import numpy as np

from jaxqueens.parallel import gather
from jaxqueens.parallel import devices as backend

from jaxqueens.drivers import chains as driver, mc_batch

from jaxqueens.io import logs

from jaxqueens.solvers import minconflicts
from jaxqueens.errors import QueensError

MAX_BATCHED_N = 46340
"""Largest n of the batched kernel (square index c * n + r fits int32)."""

LARGE_AUTO_N = 5000
"""From this n on, a run of a few chains (<= ``LARGE_AUTO_CHAINS``) takes the linear-time large-n
path (:mod:`jaxqueens.solvers.large`): one batched min-conflicts step scans a whole column, O(n)."""
LARGE_AUTO_CHAINS = 4


@dataclasses.dataclass
class SolveResult:
    """What :func:`solve` returns: per-chain arrays, the summary and an optional trace."""

    run: driver.ChainRun
    summary: dict
    config: minconflicts.Config | None
    trace: dict[str, np.ndarray] | None = None  # "conflicted", "pairs": [T] per step of chain 0

    @property
    def solutions(self) -> np.ndarray:
        """[S, n] verified solutions, one per solved chain, in chain order."""
        return self.run.solutions


def check_n(n: int) -> None:
    """Reject sizes without solutions or beyond the batched kernel, with the fix."""
    if n < 1:
        raise QueensError(f"n must be a positive integer, got {n}")
    if n in (2, 3):
        raise QueensError(f"n = {n} has no solution (N-Queens is solvable for n = 1 and every n >= 4)")
    if n > MAX_BATCHED_N:
        raise QueensError(f"n = {n} is above the batched solver's limit of {MAX_BATCHED_N}; "
                          "use --mode large (one or a few chains) or a smaller n")


def default_chunk(n: int, chains: int | None) -> int:
    """Chains per kernel call: about 2^21 queens, split evenly over the chains asked for."""
    devices = jax.local_device_count()
    cap = max(devices, min(8192, (1 << 21) // n))
    if chains is not None:
        calls = -(-chains // cap)
        cap = -(-chains // calls)
    return -(-cap // devices) * devices


def _start_rows(start, n: int) -> np.ndarray | None:
    if start is None:
        return None
    rows = np.asarray(start, dtype=np.int32).reshape(-1)
    if rows.shape[0] != n:
        raise QueensError(f"the start board has {rows.shape[0]} columns but n = {n}; "
                          f"pass -n {rows.shape[0]} or another board")
    return rows


def solve(n: int = 8, chains: int | None = 1000, *, solutions: int | None = None,
          seconds: float | None = None, max_steps: int = 4000, init: str = "permutation",
          tabu: int = 0, seed: int = 0, batch: int | None = None, start=None,
          max_restarts: int = 1_000_000, trace_steps: int = 0, quiet: bool = True,
          checkpoint: str | Path | None = None, resume: bool = False,
          checkpoint_every: float = 30.0) -> SolveResult:
    """Run min-conflicts chains until ``chains`` solved, ``solutions`` distinct, or ``seconds``.

    Args:
      n: board size (1 or >= 4).
      chains: stop once this many chains have solved (None: no chain budget).
      solutions: stop once this many distinct solutions are found.
      seconds: stop once this much kernel time is spent.
      max_steps: steps per attempt before a restart from a fresh board.
      init: initial boards: "random", "permutation", "greedy" or "qs4".
      tabu: plateau tabu tenure (0 disables).
      seed: chain i uses ``fold_in(key(seed), i)``: results do not depend on ``batch``.
      batch: chains per kernel call (default: sized from n and ``chains``).
      start: a board [n]; every chain's first attempt starts from it.
      max_restarts: restarts before a chain gives up (reported unsolved).
      trace_steps: if > 0, also trace chain 0 for up to this many steps (for plots).
      quiet: no progress line.
      checkpoint: file for checkpoints of finished chunks (every ``checkpoint_every`` seconds
        and on Ctrl-C); ``resume`` continues from it, with the same results as a run that was
        never interrupted.

    Returns:
      SolveResult with every chain's board, steps, restarts, and the summary.
    """
    check_n(n)
    budget = driver.Budget(chains=chains, solutions=solutions, seconds=seconds)
    for flag, value, low in (("--batch", batch, 1), ("--maxsteps", max_steps, 1), ("--tabu", tabu, 0)):
        if value is not None and value < low:
            raise QueensError(f"{flag} must be at least {low}, got {value}")
    start_rows = _start_rows(start, n)
    if n == 1:
        return _solve_trivial(budget, seed)
    try:
        config = minconflicts.Config(n=n, max_steps=max_steps, init=init, tabu=tabu,
                                     max_restarts=max_restarts)
    except ValueError as err:
        raise QueensError(str(err)) from None
    key = jax.random.key(seed)
    chunk = batch or default_chunk(n, chains if solutions is None and seconds is None else None)
    t0 = time.perf_counter()
    runner = mc_batch.compile_runner(key, config, chunk, start_rows)
    compile_s = time.perf_counter() - t0
    fingerprint = {"solver": "min-conflicts", "init": init, "tabu": tabu, "max_steps": max_steps,
                   "seed": seed, "max_restarts": max_restarts,
                   "start": None if start_rows is None else start_rows.tolist()}
    run = driver.run_chains(runner, n, budget, chunk, what="min-conflicts", compile_s=compile_s,
                            quiet=quiet, checkpoint=None if checkpoint is None else Path(checkpoint),
                            fingerprint=fingerprint, resume=resume, checkpoint_every=checkpoint_every)
    trace = None
    if trace_steps > 0:
        metrics = mc_batch.trace_chain(key, config, trace_steps, start_rows)
        trace = {"conflicted": metrics.conflicted, "pairs": metrics.pairs}
    summary = driver.summarize(run, solver="min-conflicts", init=init, tabu=tabu, max_steps=max_steps,
                               seed=seed, chunk=chunk, backend=jax.default_backend(),
                               devices=jax.local_device_count())
    return SolveResult(run=run, summary=summary, config=config, trace=trace)


def _solve_trivial(budget: driver.Budget, seed: int) -> SolveResult:
    """n = 1: the one queen is a solution; every chain solves in 0 steps."""
    count = budget.chains or 1

    def run_chunk(offset, k):
        return driver.ChunkResult(np.zeros((k, 1), np.int32), np.ones(k, bool),
                                  np.zeros(k, np.int32), np.zeros(k, np.int32))

    run = driver.run_chains(run_chunk, 1, budget, count, what="min-conflicts")
    return SolveResult(run=run, summary=driver.summarize(run, solver="min-conflicts", seed=seed), config=None)


# ----------------------------------------------------------------------------- command line


def add_command(sub) -> None:
    """Register ``jaxqueens solve``."""
    p = sub.add_parser(
        "solve", help="batched min-conflicts: many independent chains at once",
        description="Run independent min-conflicts chains (chain i seeded from fold_in(seed, i)) "
                    "until --chains have solved, --solutions distinct solutions are found, or "
                    "--time seconds pass; every solution is verified by the independent checker.")
    p.add_argument("n_pos", nargs="?", type=int, metavar="N", help="board size (same as -n)")
    p.add_argument("-n", type=int, default=None, help="board size (default 8)")
    p.add_argument("--chains", type=int, default=None, help="solved chains to collect (default 1000)")
    p.add_argument("--solutions", type=int, default=None, help="stop at this many distinct solutions")
    p.add_argument("--time", type=float, default=None, metavar="SECONDS", help="stop after this time")
    p.add_argument("--maxsteps", type=int, default=4000, help="steps before a restart (default 4000)")
    p.add_argument("--init", choices=minconflicts.INITS, default="permutation",
                   help="initial boards (default permutation)")
    p.add_argument("--tabu", type=int, default=0, help="plateau tabu tenure, 0 = off (default)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--batch", type=int, default=None, help="chains per kernel call (default: automatic)")
    p.add_argument("--file", default=None, help="start every chain from this board file")
    p.add_argument("--one-based", action="store_true", help="rows in --file are 1..n")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write solutions.npy, runs.csv, summary.json (and plots) here")
    p.add_argument("--plot", action="store_true", help="with --out: trace and histogram figures")
    add_checkpoint_args(p)
    p.add_argument("--method", choices=("minconflicts", "backtrack"), default="minconflicts",
                   help="minconflicts (default) or backtrack: the classic first solution, rows "
                        "tried in increasing order, with placement and backtrack counts")
    p.add_argument("--mode", choices=("auto", "batched", "large"), default="auto",
                   help=f"batched: many chains in parallel; large: linear-time QS4 path for huge "
                        f"boards; auto (default): large when n >= {LARGE_AUTO_N} and at most "
                        f"{LARGE_AUTO_CHAINS} chains are asked for")
    p.add_argument("--device", choices=("cpu", "gpu"), default=None,
                   help="run on this backend (default: the best one available)")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=cmd_solve)


def add_checkpoint_args(p) -> None:
    """``--resume`` and ``--checkpoint-every`` for chunked commands."""
    p.add_argument("--resume", default=None, metavar="DIR",
                   help="continue an interrupted run from DIR/checkpoint.npz (same options; "
                        "results equal an uninterrupted run); outputs go to DIR")
    p.add_argument("--checkpoint-every", type=float, default=30.0, metavar="SECONDS",
                   help="with --out: save finished chains this often (default 30)")


def checkpoint_target(args) -> tuple[Path | None, bool]:
    """(checkpoint file or None, resume?) from ``--out``/``--resume``; sets ``args.out``."""
    if args.resume:
        if args.out and Path(args.out) != Path(args.resume):
            raise QueensError("--resume DIR writes to DIR; drop --out or give the same folder")
        args.out = args.resume
        path = Path(args.resume) / driver.CHECKPOINT
        if not path.exists():
            raise QueensError(f"--resume {args.resume}: no {driver.CHECKPOINT} there; "
                              "check the folder, or start without --resume")
        return path, True
    if args.checkpoint_every <= 0:
        raise QueensError(f"--checkpoint-every must be positive, got {args.checkpoint_every}")
    return (Path(args.out) / driver.CHECKPOINT if args.out else None), False


def report_interrupt(run: driver.ChainRun, out) -> int:
    """After Ctrl-C: say what was kept and how to resume; exit code 130."""
    return report_interrupt_message(f"{len(run.chain_id)} finished chains", out)


def report_interrupt_message(what: str, out) -> int:
    """After Ctrl-C: say what was kept (``what``) and how to resume; exit code 130."""
    import sys

    if out is not None and gather.is_writer():
        print(f"interrupted after {what}, saved in {Path(out) / driver.CHECKPOINT}; resume with "
              f"the same command and --resume {out}", file=sys.stderr)
    else:
        print("interrupted; nothing saved (give --out DIR to make runs resumable)", file=sys.stderr)
    return 130


def _board_size(args, start) -> int:
    if args.n is not None and args.n_pos is not None and args.n != args.n_pos:
        raise QueensError(f"two board sizes given (-n {args.n} and {args.n_pos}); give one")
    n = args.n if args.n is not None else args.n_pos
    if start is not None:
        if n is not None and n != start.shape[0]:
            raise QueensError(f"--file {args.file} holds a board of n = {start.shape[0]} but "
                              f"n = {n} was given; drop -n or pass -n {start.shape[0]}")
        return start.shape[0]
    return 8 if n is None else n


def cmd_solve(args) -> int:
    """The ``solve`` command: run, print the summary, write the outputs."""
    from jaxqueens.io import boards as boardio
    from jaxqueens.plots import figures as plots, render

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
    n = _board_size(args, start)
    if args.method == "backtrack":
        return _cmd_backtrack(args, n)
    few = args.chains is None or args.chains <= LARGE_AUTO_CHAINS
    if args.mode == "large" or (args.mode == "auto" and n >= LARGE_AUTO_N and few and not args.solutions):
        from jaxqueens.drivers import large as large_solve

        if start is not None:
            raise QueensError("--file is not supported by the large-n path; use --mode batched")
        return large_solve.cmd_large(args, n)
    chains = args.chains if args.chains is not None or args.solutions or args.time else 1000
    checkpoint, resume = checkpoint_target(args)
    result = solve(n, chains, solutions=args.solutions, seconds=args.time, max_steps=args.maxsteps,
                   init=args.init, tabu=args.tabu, seed=args.seed, batch=args.batch, start=start,
                   trace_steps=min(args.maxsteps, 100_000) if args.plot else 0, quiet=args.quiet,
                   checkpoint=checkpoint, resume=resume, checkpoint_every=args.checkpoint_every)
    if result.run.stopped_by == "interrupted":
        return report_interrupt(result.run, args.out)
    s = result.summary
    logs.log("summary", **s)
    st = {k: "-" if v is None else f"{v:g}" for k, v in s["steps"].items()}
    print(f"n = {n}: {s['solved']} of {s['chains']} chains solved, {s['distinct_solutions']} distinct "
          f"solutions, all verified; steps median {st['median']}, p99 {st['p99']}, max {st['max']}")
    if s["solutions_per_s"]:
        print(f"{s['solutions_per_s']:,.0f} solutions/s over {s['wall_s']:.2f} s "
              f"(compile {s['compile_s']:.2f} s excluded); stopped by {s['stopped_by']} budget")
    if len(result.solutions) and n <= 16:
        print(render.ascii_board(result.solutions[0]))
    if args.out and gather.is_writer():
        out = Path(args.out)
        written = driver.write_outputs(result.run, out, s)
        if len(result.solutions) and n <= render.MAX_PNG_N:
            render.render_png(result.solutions[0], out / "solution.png", title="chain 0")
            written.append(out / "solution.png")
        if args.plot:
            written += _write_plots(result, out, plots)
        print(f"wrote {', '.join(p.name for p in written)} to {out}")
    return 0 if s["solved"] else 1


def _cmd_backtrack(args, n: int) -> int:
    """``solve --method backtrack``: the classic first solution with its search figures."""
    import json

    from jaxqueens.solvers import backtrack

    from jaxqueens.io import boards as boardio

    from jaxqueens.core import checker

    from jaxqueens.plots import render
    from jaxqueens.io.atomic import write_text

    t0 = time.perf_counter()
    rows, placements, backtracks = backtrack.first_solution(n)
    seconds = time.perf_counter() - t0
    if rows is None:
        raise QueensError(f"n = {n} has no solution (the search tried {placements} placements)")
    checker.require_solutions(rows[None], what="backtracking", n=n)
    print(f"n = {n}: first solution {rows.tolist() if n <= 64 else '(see --out)'}, verified; "
          f"{placements} placements, {backtracks} backtracks, {seconds:.2f} s")
    if n <= 16:
        print(render.ascii_board(rows))
    if args.out:
        out = Path(args.out)
        boardio.write_board(out / "solution.txt", rows)
        write_text(out / "summary.json", json.dumps(
            {"n": n, "method": "backtrack", "rows": rows.tolist(), "placements": placements,
             "backtracks": backtracks, "seconds": seconds}, indent=2) + "\n")
        print(f"wrote solution.txt, summary.json to {out}")
    return 0


def _write_plots(result: SolveResult, out: Path, plots) -> list[Path]:
    files = []
    n = result.run.n
    if result.trace is not None:
        files.append(plots.trace_plot(result.trace["conflicted"], out / "trace_conflicted_queens.png",
                                      "conflicting queens", f"min-conflicts, n = {n}, chain 0"))
        files.append(plots.trace_plot(result.trace["pairs"], out / "trace_conflicting_pairs.png",
                                      "conflicting pairs", f"min-conflicts, n = {n}, chain 0"))
    files.append(plots.steps_histogram(result.run.steps[result.run.solved], out / "steps_hist.png",
                                       f"steps to solution, n = {n}, {result.run.solved.sum()} chains"))
    return files

