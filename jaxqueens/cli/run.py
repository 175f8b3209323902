"""`jaxqueens run CONFIG.toml`: experiments from config files, with overrides and sweeps.

A config names a command and its options, exactly the command line's long options with `_` for
`-`; an optional `[sweep]` table runs every combination. Keys are checked against the command's
own parser (one line naming a bad key), `--set key=value` overrides them, and the output folder
receives `run.json`: the resolved options, versions, devices and seed. The docs' configs page
gives the format.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

from jaxqueens import _lazy
from jaxqueens._version import __version__
from jaxqueens.cli import schema
from jaxqueens.cli.options import resume_folder
from jaxqueens.errors import QueensError
from jaxqueens.io import interrupts, jsonl
from jaxqueens.io.config import apply_overrides, check_command, load_config
from jaxqueens.io.tables import write_dict_csv, write_json
from jaxqueens.io.writing import checkpoints, prepare_out, resumed_by, unfinished

jax = _lazy.load("jax")  # for run.json's versions and devices, after a run

DESCRIPTION = (
    "Run the command a TOML config names, with its options: the command's long options with _ "
    "for - (maxsteps, init_prob) under [options]; an optional [sweep] table runs every "
    "combination of its lists, each setting in its own folder under out, one row each in "
    "results.csv. Keys are checked against the command's own parser; --set key=value "
    "overrides one; the output folder receives run.json (the resolved options, versions, "
    "devices and seed). Every command but complete, show, check and render runs from a "
    "config. Example: configs/sweep_minconflicts.toml. Given a run's output folder (or its "
    "summary.json) instead, it runs that command again with the options its command line "
    "gave: the same results for the same seed (--set changes one, --out says where)."
)


def resolve(cfg: dict, parser: schema.Parser, overrides: list[str], where: str):
    """A config's `(command, options, sweep, the command's options by key)`, every key and type
    checked against the command's own definitions in `parser` (`jaxqueens.cli.schema`),
    the `--set key=value` words `overrides` applied; `where`: the config, as messages name it."""
    subs = parser.commands or {}
    command = cfg["command"]
    check_command(command, where, subs)
    options = schema.options_of(subs[command])
    opts = schema.config_values(cfg, subs[command], where, command, convert=False)
    sweep = dict(cfg.get("sweep", {}))
    table = next(iter(getattr(subs[command], "tables", {}).values()), None)
    entries, plain = [], []  # compare's --set SOLVER.KEY=VALUE, and the others
    for text in overrides:
        if table is not None and "." in text.partition("=")[0]:
            schema.parse_entry(text, table)  # checked now, one line
            entries.append(text.strip())
        else:
            plain.append(text)
    opts = apply_overrides(
        opts, sweep, dict(schema.parse_set(text, options) for text in plain), where
    )
    if table is not None and entries:
        opts[table.option] = opts.get(table.option, []) + entries
    if "out" in cfg:
        opts.setdefault("out", cfg["out"])
    for key, values in sweep.items():
        if key not in options:
            raise QueensError(f"{where}: unknown sweep key '{key}' for {command}")
        if not isinstance(values, list) or not values:
            raise QueensError(f"{where}: sweep '{key}' must be a non-empty list")
        for value in values:
            schema.check(key, value, options, where)
    return command, opts, sweep, options


def _record(out: Path, command: str, opts: dict, setting: dict, code: int) -> None:
    write_json(
        out / "run.json",
        {
            "command": command,
            "options": opts,
            "setting": setting,
            "exit_code": code,
            "finished": not interrupts.is_interrupt(code),
            "jaxqueens": __version__,
            "jax": jax.__version__,
            "python": sys.version.split()[0],
            "backend": jax.default_backend(),
            "devices": [str(d) for d in jax.devices()],
            "process_count": jax.process_count(),
            "seed": opts.get("seed", 0),
        },
    )


def _finished(out: Path, command: str, opts: dict) -> dict | None:
    """The run.json of a finished run of `command` with exactly `opts` in `out`, or None."""
    try:
        rec = jsonl.loads((out / "run.json").read_text())
    except (OSError, ValueError):
        return None
    same = rec.get("command") == command and rec.get("options") == json.loads(json.dumps(opts))
    return rec if same and rec.get("finished") is True else None


def _saved_work(out: Path) -> bool:
    """`out` holds saved work of an interrupted run: a checkpoint, or finished parts in
    subfolders (`anneal`'s methods), which the command's own `--resume` continues."""
    return out.is_dir() and (bool(checkpoints(out)) or any(out.glob("*/summary.json")))


PER_SOLVER = ("success_rate", "ert_s")
"""The figures of each solver of a `compare` summary (its `per_solver` records) that a
sweep's results.csv row carries, as `SOLVER.FIGURE` columns, beside the recommendation."""


def _row(out: Path, setting: dict) -> dict:
    """The results.csv row of a finished setting: its values, the flat figures of its summary,
    and a comparison's figures per solver and recommendation (`_compared`)."""
    summary = out / "summary.json"
    doc = jsonl.loads(summary.read_text()) if summary.exists() else {}
    flat = {k: v for k, v in doc.items() if not isinstance(v, (dict, list))}
    return {**setting, **flat, **_compared(doc)}


def _compared(doc: dict) -> dict:
    """`compare`'s summary as flat columns: the recommended solver (empty when none solved),
    the recommendation's line, and `PER_SOLVER` of every solver; none for another
    command's summary."""
    rec, per_solver = doc.get("recommendation"), doc.get("per_solver")
    if not isinstance(rec, dict) or not isinstance(per_solver, list):
        return {}
    row = {"recommended": rec.get("solver"), "recommendation": rec.get("line")}
    for record in per_solver:
        for figure in PER_SOLVER:
            row[f"{record['solver']}.{figure}"] = record.get(figure)
    return row


def _resume_command(args) -> str:
    """How to continue this run or sweep: its own `--resume` (a setting's command's
    `--resume` would run that setting alone, outside the sweep's results)."""
    where = f" --out {args.out}" if args.out else ""
    again = " (and the same --set)" if args.set else ""
    return f"jaxqueens run {args.config}{where} --resume{again}"


RECORD = "summary.json"  # where every command records its run (its `run` block: argv)
NOT_REPEATED = ("out", "resume", "force", "config")  # where a recorded run wrote, how it met it


def config_of(path: str | Path, parser: schema.Parser) -> dict:
    """The config at `path`: a TOML config (`load_config`), or, for `DIR` or `DIR/summary.json`,
    the recorded run's `{"command": ..., "options": {...}}`: the options its command line gave
    (read by `parser`'s commands; the rest take their defaults as in that run), less
    `NOT_REPEATED`. A summary.json without a command line `run` can repeat is a QueensError."""
    summary = Path(path) / RECORD if Path(path).is_dir() else Path(path)
    if summary.name != RECORD or not summary.is_file():
        return load_config(path)  # (which says what is wrong with anything else)
    try:
        doc = jsonl.loads(summary.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise QueensError(f"{summary}: not a readable summary.json ({err})") from None
    run = doc.get("run") if isinstance(doc, dict) else None
    argv = run.get("argv") if isinstance(run, dict) else None
    command = run.get("command") if isinstance(run, dict) else None
    subs = parser.commands or {}
    if not isinstance(argv, list) or command not in subs or command not in argv:
        raise QueensError(
            f"{summary}: records no command line to run again (every command's summary.json "
            "written with --out has one)"
        )
    sub = subs[command]
    words = [str(w) for w in argv[argv.index(command) + 1 :]]
    ns, _ = sub.parse_known_args(words)  # the options read anywhere on the line are not its own
    given = schema.given(ns, schema.options_of(sub))
    if "config" in given:  # evolve/compare --config FILE, or a run of `jaxqueens run`
        raise QueensError(
            f"{summary}: that run read its options from {given['config']}; run that again "
            f"(jaxqueens run {given['config']})"
        )
    return {"command": command, "options": {k: given[k] for k in given if k not in NOT_REPEATED}}


def cmd_run(args) -> int:
    """Run the config's command once, or once per sweep setting; the exit code."""
    parser = args.build_parser()
    cfg = config_of(args.config, parser)
    command, opts, sweep, options = resolve(cfg, parser, args.set or [], str(args.config))
    if args.out:
        opts["out"] = args.out
    prepare_out(opts.get("out"))  # run.json, results.csv: checked before the first run
    if args.resume and "out" not in opts:
        raise QueensError(
            f"--resume: {args.config} names no output folder to resume from; "
            "give --out DIR (the folder of the interrupted run)"
        )
    left = [] if args.resume or "out" not in opts else unfinished(opts["out"])
    if left:  # before the first setting runs: later ones would be refused after it
        raise QueensError(
            f"{opts['out']} holds an unfinished {'sweep' if sweep else 'run'} ({left[0]}); "
            f"continue it with: {_resume_command(args)}, or give a new folder (or delete "
            f"{left[0]} to start that setting over)"
        )
    settings = [
        dict(zip(sweep, combo, strict=True)) for combo in itertools.product(*sweep.values())
    ] or [{}]
    rows, code = [], 0
    for i, setting in enumerate(settings):
        run_opts = {**opts, **setting}
        if sweep and "out" in run_opts:
            run_opts["out"] = str(Path(opts["out"]) / f"run-{i:03d}")
        out = Path(run_opts["out"]) if "out" in run_opts else None
        label = f"== {command} {' '.join(f'{k}={v}' for k, v in setting.items())}".rstrip()
        done = _finished(out, command, run_opts) if args.resume and out is not None else None
        if done is not None and out is not None:  # (done is only read from an out folder)
            print(f"{label}: finished before in {out}, skipped")
            code = max(code, int(done.get("exit_code", 0)))
            rows.append(_row(out, setting))
            continue
        words = dict(run_opts)
        if args.resume and out is not None and "resume" in options and _saved_work(out):
            words["resume"] = words.pop("out")  # the command continues its own checkpoint
        argv = [command, *schema.argv_of(words, options, str(args.config))]
        if sweep:
            print(label)
        sub_args = schema.apply_config(parser.parse_args(argv), (parser.commands or {})[command])
        sub_args = resume_folder(sub_args)
        sub_args.record = getattr(args, "record", None)  # one record: `run`'s command line
        try:
            with resumed_by(_resume_command(args)):  # its messages name the run's own --resume
                result = sub_args.func(sub_args)
        except KeyboardInterrupt:
            result = interrupts.exit_code()
        if out is not None:
            _record(out, command, run_opts, setting, result)
        if interrupts.is_interrupt(result):  # a sweep stops; finished settings keep their rows
            _write_results(opts, sweep, rows)
            print(
                f"jaxqueens run: interrupted after {i} of {len(settings)} settings; "
                f"resume with: {_resume_command(args)}"
                if out is not None
                else "jaxqueens run: interrupted",
                file=sys.stderr,
            )
            return result
        code = max(code, result)
        if out is not None:
            rows.append(_row(out, setting))
    _write_results(opts, sweep, rows)
    return code


def _write_results(opts: dict, sweep: dict, rows: list[dict]) -> None:
    """`results.csv` of a sweep: one row per finished setting."""
    if sweep and "out" in opts and rows:
        write_dict_csv(Path(opts["out"]) / "results.csv", rows)
        print(f"wrote {Path(opts['out']) / 'results.csv'} ({len(rows)} settings)")


def add_command(sub, build_parser) -> None:
    """Register `jaxqueens run` among the subcommands `sub`; `build_parser` makes the parser
    whose commands configs name."""
    p = sub.add_parser(
        "run",
        help="run an experiment from a TOML config (with --set overrides)",
        description=DESCRIPTION,
    )
    p.add_argument(
        "config",
        metavar="CONFIG",
        help="TOML file (e.g. configs/solve_n32.toml), or a run's output folder or its "
        "summary.json: the same command with the options its command line gave",
    )
    p.add_argument(
        "--set",
        action="append",
        metavar="KEY=VALUE",
        help="override an option of the config (repeatable)",
    )
    p.add_argument("--out", default=None, help="output folder (overrides the config's)")
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted run or sweep (Ctrl-C stops a sweep, exit 130) in "
        "its output folder: a setting whose folder holds a finished run of the same "
        "options (its run.json) is skipped, one with saved work continues from it "
        "(the command's own --resume), the others run",
    )
    p.set_defaults(func=cmd_run, build_parser=build_parser, out_folder=out_folder)


def out_folder(args) -> str | None:
    """The folder a run writes (`--out`, else the config's `out`; None: none): its report.html
    goes there."""
    if args.out:
        return args.out
    try:
        out = config_of(args.config, args.build_parser()).get("out")
    except QueensError:
        return None
    return out if isinstance(out, str) else None
