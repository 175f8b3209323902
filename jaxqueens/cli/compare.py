"""``jaxqueens compare``: several solvers on the same n, step budget and seed, and which is fastest.

Runs :func:`jaxqueens.drivers.compare.compare`, prints one line per solver and the
recommendation, and with ``--out DIR`` writes the tables (:mod:`jaxqueens.io.compare`) and the
figures (:mod:`jaxqueens.plots.compare`). The solvers come from ``--solvers`` (a comma list) or a
``--config`` file (the ``jaxqueens run`` format with ``command = "compare"``; flags override it).
"""

from __future__ import annotations

from pathlib import Path

from jaxqueens import _lazy
from jaxqueens.cli import options
from jaxqueens.cli import run as experiment
from jaxqueens.drivers import settings
from jaxqueens.errors import QueensError

comparing = _lazy.load("jaxqueens.drivers.compare")
outputs = _lazy.load("jaxqueens.io.compare")
figures = _lazy.load("jaxqueens.plots.compare")
gather = _lazy.load("jaxqueens.parallel.gather")

SOLVER_NAMES = (
    "mc-random",
    "mc-permutation",
    "mc-greedy",
    "mc-qs4",
    "mc-tabu",
    "ls",
    "ta",
    "sa",
    "ga-permutation",
    "ga-combination",
)
"""The names ``--solvers`` takes (:data:`jaxqueens.drivers.compare.SOLVERS`, spelled out here so
that ``--help`` needs no JAX; a test keeps the two equal)."""
DEFAULTS = {"n": 8, "chains": 1000, "steps": 10_000, "seed": 0, "solvers": "all"}
CONFIG_KEYS: dict[str, type | tuple[type, ...]] = {
    "n": int,
    "chains": int,
    "steps": int,
    "seed": int,
    "solvers": (str, list),
    "out": str,
    "no_plots": bool,
    "quiet": bool,
}


def add_command(sub) -> None:
    """Register ``jaxqueens compare``."""
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
    options.add_size(p, default=None, help=f"board size (default {DEFAULTS['n']})")
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
        help=f"comma list of {', '.join(SOLVER_NAMES)}, or all (default all)",
    )
    p.add_argument(
        "--config",
        default=None,
        metavar="TOML",
        help='experiment file: command = "compare" and [options] n, chains, steps, seed, '
        "solvers (a list or comma string); flags override it",
    )
    options.add_seed(p, default=None)
    p.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="write summary.json, one CSV per measure, figures and report.html here",
    )
    p.add_argument(
        "--no-plots", action="store_true", default=None, help="with --out: tables only, no figures"
    )
    options.add_quiet(p)
    p.set_defaults(func=cmd_compare)


def load_config(path: str | Path) -> dict:
    """The options of a ``command = "compare"`` experiment file; a bad key or value is one line."""
    data = experiment.command_options(path, "compare")
    for key, value in data.items():
        if key not in CONFIG_KEYS:
            raise QueensError(f"{path}: unknown key {key!r}; known keys: {', '.join(CONFIG_KEYS)}")
        kind = CONFIG_KEYS[key]
        if isinstance(value, bool) != (kind is bool) or not isinstance(value, kind):
            raise QueensError(f"{path}: key {key!r} has the wrong type ({value!r})")
    return data


def _settings(args) -> dict:
    """Defaults, then the config file, then the flags given."""
    conf = {**DEFAULTS, **(load_config(args.config) if args.config else {})}
    n = options.board_size(args) if (args.n is not None or args.n_pos is not None) else None
    flags = {
        "n": n,
        "chains": args.chains,
        "steps": args.steps,
        "seed": args.seed,
        "solvers": args.solvers,
        "out": args.out,
        "no_plots": args.no_plots,
    }
    conf.update({k: v for k, v in flags.items() if v is not None})
    for flag in ("n", "chains", "steps"):
        if conf[flag] < 1:
            raise QueensError(f"--{flag} must be at least 1, got {conf[flag]}")
    return conf


def _line(p: dict) -> str:
    ert = "-" if p["ert_s"] is None else f"{p['ert_s'] * 1e3:.3g} ms"
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
    """The ``compare`` command: run every solver, print the lines and the recommendation, write."""
    conf = _settings(args)
    # the driver's checks, before JAX: names, ranges and each solver's least step budget
    _, _, names, _, _ = settings.check_compare(
        conf["n"], conf["chains"], conf["solvers"], conf["steps"], conf["seed"]
    )
    args.out = conf.get("out")  # the report hook reads args.out
    options.prepare_out(args.out, need=len(names) * conf["chains"] * 60 + (1 << 20))
    quiet = True if conf.get("quiet") else options.quiet(args)
    res = comparing.compare(
        conf["n"],
        conf["chains"],
        solvers=names,
        steps=conf["steps"],
        seed=conf["seed"],
        quiet=quiet,
        announce=None if quiet else lambda line: print(line, flush=True),
    )
    with options.final_write(args.out):
        print(
            f"n = {res.n}, {res.chains:,} chains per solver, {res.steps:,} steps per chain, "
            f"seed {res.seed}; every solution verified"
        )
        print(f"({res.summary['defaults_note']})")
        for p in res.summary["per_solver"]:
            print(_line(p))
        print(res.recommendation["line"])
        if args.out and gather.is_writer():
            out = Path(args.out)
            files = outputs.write_outputs(res, out)
            if not conf.get("no_plots"):
                files += figures.write_plots(
                    out,
                    n=res.n,
                    budget=res.steps,
                    curves=res.curves,
                    families={r.name: r.family for r in res.runs},
                    ert={p["solver"]: p["ert_s"] for p in res.summary["per_solver"]},
                )
            print(f"wrote {', '.join(f.name for f in files)} to {out}")
    return 0 if res.recommendation["solver"] is not None else 1
