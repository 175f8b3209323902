"""`jaxqueens compare`: several solvers on the same n, step budget and seed, and which is fastest.

Checks the run before JAX loads (`jaxqueens.drivers.compare_setup.check_compare`), runs it
(`jaxqueens.drivers.compare.run`), prints one line per solver and the recommendation from its
result, and with `--out DIR` writes the tables (`jaxqueens.io.compare`) and the figures
(`jaxqueens.plots.compare`) of that result as PNG, SVG or PDF (`--format`, `--dpi`). The
solvers come from `--solvers` (a comma list) or a `--config` file (the `jaxqueens run`
format with `command = "compare"`; flags override it); each solver's own settings from
`--set SOLVER.KEY=VALUE` or the config's `[solvers.SOLVER]` tables, read against the options
of the solver's family's command (`solver_options`) and checked by
`jaxqueens.drivers.compare_setup.compare_settings` before any solver runs.
"""

from __future__ import annotations

import sys
from pathlib import Path

from jaxqueens import _lazy
from jaxqueens.cli import anneal, evolve, options, schema, solve
from jaxqueens.cli.boards import add_size, board_size
from jaxqueens.drivers import compare_setup
from jaxqueens.errors import QueensError
from jaxqueens.io import interrupts, writing
from jaxqueens.plots import base as plot_base

comparing = _lazy.load("jaxqueens.drivers.compare")
outputs = _lazy.load("jaxqueens.io.compare")
figures = _lazy.load("jaxqueens.plots.compare")

DEFAULTS = {
    "n": 8,
    "chains": 1000,
    "steps": 10_000,
    "seed": 0,
    "repeats": 1,
    "solvers": "all",
    "format": "png",
    "dpi": 110,
}


def add_command(sub) -> None:
    """Register `jaxqueens compare` among the subcommands `sub` (`add_subparsers`)."""
    p = sub.add_parser(
        "compare",
        help="several solvers on the same n, budget and seeds: which is fastest?",
        description="Run several solvers on the same n, the same chains and the same step "
        "budget per chain (a step: one min-conflicts move, one LS/TA/SA neighbour move, one GA "
        "evaluation), and report for each the success rate, run-time distributions of "
        "steps and seconds to solution, success rate vs step budget, solutions per "
        "second, distinct and fundamental solutions and the sampling-bias test; then "
        "name the fastest solver by expected seconds per solution, with its margin over "
        "the runner-up and a bootstrap confidence interval.",
    )
    add_size(p, default=None, help=f"board size (default {DEFAULTS['n']})")
    p.add_argument(
        "--chains",
        type=int,
        default=None,
        help=f"chains (GA: trials) per solver (default {DEFAULTS['chains']})",
    )
    p.add_argument(
        "--steps",
        type=int,
        default=None,
        help=f"step budget per chain, the same for every solver (default {DEFAULTS['steps']})",
    )
    p.add_argument(
        "--solvers",
        default=None,
        metavar="LIST",
        help=f"comma list of {', '.join(compare_setup.COMPARE_SOLVERS)}, or all (default all)",
    )
    p.add_argument(
        "--config",
        default=None,
        metavar="TOML",
        help='experiment file: command = "compare", [options] n, chains, steps, seed, '
        "solvers (a list or comma string), ..., and [solvers.NAME] tables of each solver's "
        "settings (as --set); flags override it",
    )
    keys = {  # each family's keys beside the step budget (`compare_setup.COMPARE_KEYS`)
        family: ", ".join(k for k in names if k not in ("steps", "generations"))
        for family, names in compare_setup.COMPARE_KEYS.items()
    }
    p.add_argument(
        "--set",
        action="append",
        default=None,
        metavar="SOLVER.KEY=VALUE",
        help="a setting of one solver, repeatable: its own step budget (sa.steps=50000; the "
        "GA: or ga-permutation.generations=20000) or an option of its command with the same "
        f"name (min-conflicts: solve's {keys['minconflicts']}; ls/ta/sa: anneal's "
        f"{keys['anneal']}; GA: evolve's {keys['ga']}); a config gives them as [solvers.sa] tables",
    )
    _add_run_and_out_options(p)
    p.set_defaults(func=cmd_compare)
    if isinstance(p, schema.Parser):  # [solvers.NAME] in a config: the --set words
        p.tables["solvers"] = schema.Table("set", solver_options)


def _add_run_and_out_options(p) -> None:
    """The seed, the timed repeats and the outputs (--out, --no-plots, --format, --dpi)."""
    options.add_seed(p, default=None)
    p.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="timed runs of each solver's same chains (default 1): the spread of their "
        "expected seconds per solution is shown beside the bootstrap CI, and a difference is "
        "called clear only when both agree",
    )
    options.add_out(p, "write summary.json, one CSV per measure, figures and report.html here")
    p.add_argument(
        "--no-plots", action="store_true", default=None, help="with --out: tables only, no figures"
    )
    p.add_argument(
        "--format",
        choices=plot_base.FORMATS,
        default=None,
        help="with --out: the figures' format, svg or pdf (vector, for papers) or png (default)",
    )
    p.add_argument(
        "--dpi",
        type=int,
        default=None,
        help=f"with --out: resolution of PNG figures and of the raster parts of vector ones "
        f"(default {DEFAULTS['dpi']})",
    )
    options.add_quiet(p)


def solver_options(name: str) -> dict[str, schema.Option]:
    """The settings compare's solver `name` takes, key -> `schema.Option`, as its family's
    command defines them (`jaxqueens.drivers.compare_setup.COMPARE_KEYS`; `steps`:
    compare's own `--steps`); an unknown solver is one line naming the solvers."""
    if name not in compare_setup.COMPARE_SOLVERS:
        raise QueensError(
            f"no solver {name!r}; use one of {', '.join(compare_setup.COMPARE_SOLVERS)}"
        )
    family = compare_setup.COMPARE_SOLVERS[name]["family"]
    add = {"minconflicts": solve, "anneal": anneal, "ga": evolve}[family].add_command
    defined = {**schema.command_parser(add).options, "steps": parser().options["steps"]}
    return {key: defined[key] for key in compare_setup.COMPARE_KEYS[family]}


def solver_settings(words) -> dict[str, dict]:
    """`--set SOLVER.KEY=VALUE` words (None: none; the config's `[solvers.NAME]` tables first)
    as solver -> key -> value, converted by the solvers' own options; a later word wins."""
    table = schema.Table("set", solver_options)
    out: dict[str, dict] = {}
    for text in words or ():
        name, key, value = schema.parse_entry(text, table)
        out.setdefault(name, {})[key] = value
    return out


def parser() -> schema.Parser:
    """The `compare` command's own parser: its options are what a config may set."""
    return schema.command_parser(add_command)


def _settings(args) -> dict:
    """Defaults, then the options given (on the command line, or by the config file that
    `jaxqueens.cli.schema.apply_config` merged in)."""
    conf = {**DEFAULTS, **schema.given(args, parser().options)}
    conf.pop("config", None)
    if args.n is not None or args.n_pos is not None:
        conf["n"] = board_size(args)
    if not 10 <= conf["dpi"] <= 2400:
        raise QueensError(f"--dpi must lie in 10..2400, got {conf['dpi']}")
    conf["settings"] = solver_settings(conf.pop("set", None))
    return conf


def _line(p: dict) -> str:
    if not p["solved"]:  # ert_note: "not solved (0 of K chains within B steps)"
        return f"{p['solver']:>15}: {p['ert_note']}"
    ert = "-" if p["ert_s"] is None else f"{p['ert_s'] * 1e3:.3g} ms"
    ci = p.get("ert_s_ci")
    if ci and ci[0] is not None:  # an open upper end: "X ms or more"
        hi = " or more" if ci[1] is None else f" to {ci[1] * 1e3:.3g}"
        ert += f" (95% CI {ci[0] * 1e3:.3g}{hi})"
    spread = p.get("ert_s_spread")
    if spread and None not in spread:
        ert += f" (repeats {spread[0] * 1e3:.3g} to {spread[1] * 1e3:.3g})"
    med = p["steps"]["median"]
    rate = "-" if p["solutions_per_s"] is None else f"{p['solutions_per_s']:,.0f}"
    return (
        f"{p['solver']:>15}: {p['solved']:,} of {p['chains']:,} solved "
        f"({100 * p['success_rate']:.1f}%), "
        f"median {'-' if med is None else f'{med:g}'} steps, {ert} per solution, {rate} "
        "solutions/s, "
        f"{p['distinct_solutions']:,} distinct, {p['fundamental_classes']:,} classes"
    )


def cmd_compare(args) -> int:
    """The `compare` command: run every solver, print the lines and the recommendation, write;
    its exit code."""
    conf = _settings(args)
    # the driver's checks, before JAX: names, ranges and each solver's least step budget
    keys = ("n", "chains", "solvers", "steps", "seed", "settings", "repeats")
    setup = compare_setup.check_compare(*(conf[key] for key in keys))
    figure_flags = [
        f"--{k}" for k in ("format", "dpi") if k in schema.given(args, parser().options)
    ]
    if figure_flags and (conf.get("out") is None or conf.get("no_plots")):
        raise QueensError(
            f"{' and '.join(figure_flags)} set the figures written with --out DIR (not with "
            "--no-plots); give --out DIR or drop them"
        )
    out = conf.get("out")
    writing.prepare_out(out, need=len(setup.names) * setup.chains * 60 + (1 << 20))
    control = options.control(args)
    announce = None if control.quiet else lambda line: print(line, flush=True)
    res = comparing.run(setup, control, announce)
    with writing.final_write(out):
        print(
            f"n = {res.n}, {res.chains:,} chains per solver, {res.steps:,} steps per chain, "
            f"seed {res.seed}; every solution verified"
        )
        print(f"({res.summary['defaults_note']})")
        for p in res.summary["per_solver"]:
            print(_line(p))
        print(res.recommendation["line"])
        if out and writing.is_writer():
            files = outputs.write_outputs(res, Path(out), args.record)
            if not conf.get("no_plots"):
                files += figures.write_plots(res, Path(out), conf["format"], conf["dpi"])
            print(f"wrote {', '.join(f.name for f in files)} to {out}")
        if res.missing:
            kept = f"; the finished solvers' tables are in {out}" if out else ""
            print(
                f"interrupted after {len(res.runs)} of {len(setup.names)} solvers: "
                f"{', '.join(res.missing)} did not run to the end (the recommendation covers the "
                f"finished ones){kept}; run the command again to compare them all",
                file=sys.stderr,
            )
            return interrupts.exit_code()
    return 0 if res.recommendation["solver"] is not None else 1
