"""`jaxqueens stats`: solution-count statistics of a solver (coverage, sampling bias, steps).

Runs `jaxqueens.drivers.stats.collect` and `jaxqueens.drivers.stats.analyse`,
prints the summary, and with `--out DIR` writes the tables (`jaxqueens.io.stats`) and,
unless `--no-plots`, the figures (`jaxqueens.plots.stats`).
"""

from __future__ import annotations

from jaxqueens import _lazy
from jaxqueens.cli import options
from jaxqueens.cli.boards import add_size, board_size
from jaxqueens.core import arguments
from jaxqueens.drivers import settings, solve_setup, stats_setup
from jaxqueens.io import provenance, writing
from jaxqueens.io import stats as outputs
from jaxqueens.plots import stats as figures
from jaxqueens.solvers import variants

# JAX and the solvers load at their first use (jaxqueens._lazy): --help and argument errors never do
solstats = _lazy.load("jaxqueens.drivers.stats")


def add_command(sub) -> None:
    """Register `jaxqueens stats` among the subcommands `sub` (`add_subparsers`)."""
    p = sub.add_parser(
        "stats",
        help="solution-count statistics of a solver: coverage, sampling bias, steps",
        description="Run chains of a solver until a budget and report the distinct solutions and "
        "fundamental classes found (against OEIS for n <= 27), the coverage curve with "
        "the coupon-collector expectation, every solution's sampling frequency with a "
        "chi-square test of uniformity, and the steps-to-solution distribution.",
    )
    add_size(p, default=8)
    p.add_argument(
        "--solver",
        choices=stats_setup.STATS_SOLVERS,
        default="minconflicts",
        help="minconflicts (default), anneal (--method ls|ta|sa) or ga",
    )
    options.add_budget(
        p,
        "chains to run (GA: trials; min-conflicts: chains solved); default 10000",
        "the sampling loop's wall time (checked between kernel calls; start-up, compilation and "
        "the final analysis come on top)",
    )
    options.add_seed(p)
    options.add_batch(p, "chains per kernel call (GA: trials per round); default automatic")
    options.add_out(p, "write summary.json, CSV tables and PNG figures here")
    p.add_argument("--no-plots", action="store_true", help="with --out: tables only, no figures")
    options.add_quiet(p)
    _add_solver_options(p)
    p.set_defaults(func=cmd_stats)


def _add_solver_options(p) -> None:
    """The options of each solver family, grouped as in their own commands."""
    g = p.add_argument_group("min-conflicts (as 'jaxqueens solve')")
    helps = {
        "max_steps": "steps per attempt before a restart (default: solve's measured restart "
        "period, min(n^2/2, max(500, 2n)))",
        "init": "initial boards (default permutation)",
        "tabu": "plateau tabu tenure (default 0 = off)",
    }
    options.add_fields(g, [solve_setup.SolveSettings], "max_steps init tabu", helps)
    g = p.add_argument_group("annealing (as 'jaxqueens anneal')")
    g.add_argument(
        "--method", choices=variants.METHODS, default=None, help="ls, ta or sa (default ta)"
    )
    g.add_argument("--steps", type=int, default=None, help="step budget per chain (default 10000)")
    options.add_fields(
        g,
        settings.ANNEAL_METHODS.values(),
        "rounds neighbour step objective preset q init_prob t_end alpha",
        {
            **dict.fromkeys(("rounds", "neighbour"), "(default: the preset's)"),
            "step": "step neighbour only (default 3)",
            "objective": "(default attacks)",
            "preset": "anneal and ga: settings not given: default (measured), classic (NMOF's "
            "and the course GA's) or nmof (anneal only), as in 'jaxqueens anneal' and 'evolve'",
            "q": "TA only (default: the preset's)",
            **dict.fromkeys(("init_prob", "alpha"), "SA only (default: the preset's)"),
            "t_end": "SA only: last temperature relative to the first (default: the preset's)",
        },
    )
    g = p.add_argument_group("genetic algorithm (as 'jaxqueens evolve'; defaults as there)")
    ga = [*settings.GA_SCHEMES.values(), settings.GARun]
    names = "pop generations encoding scheme crossover mutation tournament cxpb mutpb indpb elite"
    options.add_fields(g, ga, f"{names} islands migrate_every migrants", {})
    options.add_checkpoint(p)


def _options(args) -> dict:
    """Every solver option given on the command line (None: not given), by the drivers' names;
    `jaxqueens.drivers.stats_setup.check_stats` refuses those of another solver."""
    names = dict.fromkeys(o for opts in stats_setup.STATS_OPTIONS.values() for o in opts)
    flags = {k: arguments.flag_of(k).lstrip("-").replace("-", "_") for k in names}
    return {k: getattr(args, flag, None) for k, flag in flags.items()}  # (some are library-only)


def _p(test: dict | None) -> str:
    if test is None:
        return "n/a (exact total unknown)"
    p = test["p_value"]
    if p is None:
        return f"n/a ({test['cells']} cell)"
    shown = f"p = {p:.3g}" if p > 0 else "p < 1e-300"
    text = f"chi2 = {test['statistic']:.1f}, dof = {test['dof']:,}, {shown}"
    if not test["valid"]:
        text += f" (only {test['expected_per_cell_mean']:.2g} expected per cell: not meaningful)"
    return text


def cmd_stats(args) -> int:
    """The `stats` command: run, print the statistics, write tables and figures; its exit
    code."""
    args = options.resume_folder(args)  # --resume DIR writes to DIR (a new namespace)
    n = board_size(args)
    budget = {"chains": args.chains, "solutions": args.solutions, "seconds": args.time}
    settings = stats_setup.check_stats(  # before JAX is imported
        n, args.solver, **budget, seed=args.seed, batch=args.batch, **_options(args)
    )
    checkpoint, resume = options.checkpoint_target(args)
    writing.prepare_out(args.out, need=options.out_bytes(args, n, 10_000))
    samples = solstats.collect(settings, options.control(args, checkpoint, resume))
    if samples.stopped_by == "interrupted":
        return options.report_interrupt(f"{len(samples.solved):,} finished chains", args.out)
    provenance.settle(args.record, seed=args.seed, solver_settings=samples.options)
    with writing.final_write(args.out):
        res = solstats.analyse(samples)
        s = res.summary
        name = samples.name
        ex = lambda v: f" of {v:,}" if v else ""
        print(
            f"{name}, n = {n}: {s['solved']:,} of {s['chains']:,} chains solved; "
            f"{s['distinct_solutions']:,}{ex(s['exact_solutions'])} distinct solutions, "
            f"{s['fundamental_classes']:,}{ex(s['exact_classes'])} fundamental classes; all "
            "verified"
        )
        if s["expected_distinct_if_uniform"] is not None:
            print(
                "if every solution were equally likely: "
                f"{s['expected_distinct_if_uniform']:,.1f} distinct "
                f"expected after {s['solved']:,} samples"
            )
        print(f"uniformity over solutions: {_p(s['chi2_solutions'])}")
        print(f"uniformity over classes:   {_p(s['chi2_classes'])}")
        st = s["steps"]
        if st["median"] is not None:
            print(
                f"{s['step_unit']} to solution: mean {st['mean']:.1f}, median {st['median']:g}, "
                f"p90 {st['p90']:g}, p99 {st['p99']:g}, max {st['max']}"
            )
        if args.out and writing.is_writer():
            files = outputs.write_outputs(res, args.out, args.record)
            if not args.no_plots:
                files += figures.write_plots(res, args.out)
            if checkpoint is not None:
                writing.retire(checkpoint)
            print(f"wrote {', '.join(f.name for f in files)} to {args.out}")
        return 0 if s["solved"] else 1
