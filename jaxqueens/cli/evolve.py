"""`jaxqueens evolve`: GA experiments (`jaxqueens.evolve`) from flags or a TOML config.

A config file (`--config FILE`, the `jaxqueens run` format with `command = "evolve"`) sets the
options under `[options]` by their command-line names; flags override it. The docs' commands page
describes the fitnesses, constrained boards, outputs and memory estimate.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

from jaxqueens import _lazy
from jaxqueens.cli import options, schema
from jaxqueens.cli.boards import add_instance, add_size, board_size, load_instance
from jaxqueens.drivers import settings
from jaxqueens.errors import QueensError
from jaxqueens.io import checkpoint, writing
from jaxqueens.io import ga as ga_io
from jaxqueens.parallel import memory
from jaxqueens.plots import ga as ga_plots

# JAX and the solver load at their first use (jaxqueens._lazy): --help and argument errors never do
ga = _lazy.load("jaxqueens.drivers.ga")

GA = settings.GA_SCHEMES.values()  # the classes whose fields are options (and `GARun`'s)
NOT_SETTINGS = ("config", "quiet", "resume", "checkpoint_every", "one_based", "history", "force")
"""Options of the command itself, not of the run: everything else the command line (or its
config, `jaxqueens.cli.schema.apply_config`) gives is a setting of the GA."""


def add_command(sub) -> None:
    """Register `jaxqueens evolve` among the subcommands `sub` (`add_subparsers`)."""
    p = sub.add_parser(
        "evolve",
        help="genetic algorithms: many trials and islands at once",
        description="Evolve N-Queens populations (permutation or combination encoding, "
        "steady-state or generational), many independent trials in one call; record Best/Avg/Worst "
        "attacking pairs per generation and every distinct verified solution.",
    )
    p.add_argument(
        "--config", default=None, metavar="TOML", help="experiment file (flags override it)"
    )
    add_size(p, default=None, help=f"board size (default: the config's n, else {settings.GARun.n})")
    _add_population_options(p)
    _add_problem_and_out_options(p)
    # the GA's kernels run faster without LLVM's loop unrolling (jaxqueens.parallel.devices)
    p.set_defaults(func=cmd_evolve, loop_unrolling=False)


def _add_population_options(p) -> None:
    """The preset, the population, its operators, islands and the fitness."""
    options.add_fields(
        p,
        [*GA, settings.GARun],
        "preset pop generations trials encoding scheme crossover mutation tournament cxpb mutpb "
        "indpb elite islands migrate_every migrants fitness",
    )


def _add_problem_and_out_options(p) -> None:
    """The instance, the seed, the score and the outputs (--out, --plot, --history, checkpoints)."""
    add_instance(p)
    p.add_argument("--one-based", action="store_true", help="rows in a text --instance are 1..n")
    options.add_seed(p, default=None)
    p.add_argument(
        "--score",
        choices=ga_io.SCORES,
        default=None,
        help="CSV/plots: attacking pairs (default, minimised) or non-attacking pairs (maximised)",
    )
    options.add_out(p, "write CSVs, .npy files and summary.json here")
    p.add_argument(
        "--plot",
        action="store_true",
        default=None,
        help="with --out: best/avg/worst/success figures",
    )
    p.add_argument(
        "--history",
        choices=ga_io.HISTORIES,
        default=None,
        help="history.csv: per generation, statistics over the trials (summary, default) or "
        "every trial's row (per-trial: generations x trials rows, streamed to disk)",
    )
    options.add_quiet(p)
    options.add_checkpoint(p)


def parser() -> schema.Parser:
    """The `evolve` command's own parser (built once): its options are what a config may set."""
    return schema.command_parser(add_command)


def _settings(args) -> dict:
    """The run's settings: the options given (on the command line, or by the config file that
    `jaxqueens.cli.schema.apply_config` merged in)."""
    conf = {
        key: value
        for key, value in schema.given(args, parser().options).items()
        if key not in NOT_SETTINGS
    }
    n = board_size(args)  # None unless given: evolve's own default 8
    if n is not None:
        conf["n"] = n
    return conf


def _values(conf: dict) -> dict:
    """The run's settings `conf` (None: not given) filled in with `jaxqueens.evolve`'s defaults:
    the settings classes' (`settings.GARun`, `GA`), the preset's population."""
    fields = [f for c in (settings.GARun, *GA) for f in dataclasses.fields(c)]
    v = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    v.update((k, value) for k, value in conf.items() if value is not None)
    return {"pop": settings.ga_settings(v["preset"], v["encoding"], v["scheme"]).pop, **v}


def _keep_or_discard(stream, target) -> None:
    """After a failed or interrupted run: the streamed rows stay where a checkpoint points into
    them (`--resume` goes on from there), else they are removed (no half-written file)."""
    if stream is not None:
        if target is not None and checkpoint.any_saved(target):
            stream.close()
        else:
            stream.discard()


def plan_line(plan: dict) -> str:
    """The memory estimate printed before the first generation, one line (total, parts,
    available), from what `evolve` passes its `plan` (parts, available, bytes per solution)."""
    parts, available = plan["memory"], plan["available"]
    total = sum(parts.values())
    shown = ", ".join(f"{k} {memory.format_bytes(v)}" for k, v in parts.items())
    room = "unknown" if available is None else memory.format_bytes(available)
    return (
        f"memory: about {memory.format_bytes(total)} at peak ({shown}), plus about "
        f"{plan['per_solution']} bytes per distinct solution found; {room} available"
    )


def throughput_line(result) -> str:
    """One line: the evaluations of every trial and generation, and the rate of this process's
    generations over this process's time (the generations of earlier sessions of a resumed run
    are not counted in it); after a resume, also the rate over the time of every session,
    labelled."""
    line = (
        f"{result.evaluations_total:,} evaluations; this process: {result.evals_here:,} in "
        f"{result.wall_s:.3f} s of generations ({result.evals_per_s:,.0f}/s; "
        f"compile {result.compile_s:.2f} s and init {result.init_s:.2f} s excluded)"
    )
    if result.sessions > 1:
        line += (
            f"; all {result.sessions} sessions of the resumed run: "
            f"{result.wall_total_s:.3f} s of generations ({result.evals_per_s_total:,.0f}/s)"
        )
    return line


def cmd_evolve(args) -> int:
    """The `evolve` command: run, print the summary, write the outputs; exit code 0 when some
    trial solved, 1 when none did."""
    args = options.resume_folder(args)  # --resume DIR writes to DIR (a new namespace)
    conf = _settings(args)
    out, plot, score, history = _checked(args, conf)
    target, resume = options.checkpoint_target(args)
    v = _values(conf)  # (with --instance: n None, the instance's size)
    n = conf["instance"].n if conf.get("instance") is not None else v["n"]
    need = ga_io.out_bytes(n, v["pop"], v["trials"], v["islands"], v["generations"], history)
    writing.prepare_out(out, need=need)
    control = options.control(args, target, resume)
    stream = None
    if history == "per-trial" and writing.is_writer():
        stream = ga_io.HistoryStream(out, n, v["fitness"], score)
    announce = (
        None if control.quiet is True else lambda plan: print(plan_line(plan), file=sys.stderr)
    )
    try:
        result = ga.evolve(**conf, control=control, records="summary", sink=stream, plan=announce)
        if result.interrupted:
            if stream is not None:
                stream.close()
            kept = " (and the per-trial history streamed so far)" if stream is not None else ""
            return options.report_interrupt(f"{result.generations} finished generations{kept}", out)
        with writing.final_write(out):
            return _report(result, out, plot, score, history, stream, args.record)
    except BaseException:
        _keep_or_discard(stream, target)
        raise


def _checked(args, conf: dict) -> tuple:
    """`evolve`'s command-line checks before JAX is imported, in order; takes --out, --plot and
    --score out of `conf` and loads --instance into it: (out, plot, score, history)."""
    out, plot = conf.pop("out", None), conf.pop("plot", False)
    score = conf.pop("score", "attacking")
    v = _values(conf)
    if score == "nonattacking" and v["fitness"] != "pairs":
        raise QueensError(
            "--score nonattacking needs --fitness pairs (it is n(n-1)/2 minus attacking pairs)"
        )
    if plot and not out and not args.resume:
        raise QueensError("--plot needs --out DIR to write the figures into")
    settings.ga_unused(  # options the scheme, mutation or islands do not use: refused before JAX
        conf,
        scheme=v["scheme"],
        mutation=conf.get("mutation"),
        islands=v["islands"],
        migrate_every=conf.get("migrate_every"),
    )
    spec = conf.pop("instance", None)
    if spec:
        instance = load_instance(spec, args.one_based, bool(conf.get("toroidal")))
        if conf.get("n") is not None and conf["n"] != instance.n:
            raise QueensError(
                f"--instance {spec} has n = {instance.n} but n = {conf['n']} "
                f"was given; drop -n or pass -n {instance.n}"
            )
        conf["n"], conf["instance"] = None, instance
    history = getattr(args, "history", None) or "summary"
    if history == "per-trial" and not out:
        raise QueensError("--history per-trial streams history.csv into --out DIR; give --out")
    return out, plot, score, history


def _report(result, out, plot: bool, score: str, history: str, stream, record) -> int:
    """`evolve`'s lines and, with --out, its files and figures; the exit code."""
    s = ga_io.summary(result)
    c = result.config
    print(
        f"n = {c.n}, {c.encoding} encoding, {c.scheme} GA, pop {c.pop}, {s['generations']} "
        "generations: "
        f"{s['solved']} of {s['trials']} trials solved, median first solved generation "
        f"{s['first_solved_median']}, {len(result.solutions)} distinct verified solutions"
    )
    if c.fitness == ga_io.REPORT_FITNESS:
        print(ga_io.report_line(s))
    if result.instance is not None and not s["solved"]:
        print(
            "instance unknown: no trial solved it (a GA proves no UNSAT; jaxqueens "
            f"complete decides it); lowest fitness {int(result.summary[:, 0].min())}"
        )
    print(throughput_line(result))
    if out and writing.is_writer():
        written = ga_io.write_outputs(result, Path(out), s, score, history, stream, record)
        if plot:
            written += ga_plots.write_plots(Path(out), result, score)
        writing.retire(Path(out) / checkpoint.FILENAME)  # once the report is written
        print(f"wrote {', '.join(p.name for p in written)} to {out}")
    return 0 if s["solved"] else 1
