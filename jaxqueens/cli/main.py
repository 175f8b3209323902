"""The `jaxqueens` command line: a thin driver over the package.

Start-up is instant: the command modules load JAX at first use (`jaxqueens._lazy`), so `--help`,
every argument error and the commands that need no JAX never import it. Every command first sets
JAX up for jaxqueens (`jaxqueens.parallel.devices.configure`), which importing the package does
not do. One handler (`main`) decides every command's exit code: 0 success, 1 not a solution or
none found, 2 a user error (one line naming the problem and the fix), 3 an internal error, 130
and 143 interrupted (`jaxqueens.io.interrupts`); the docs' guarantees page gives the details.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import difflib
import functools
import hashlib
import os
import sys
import time
import traceback
from collections.abc import Sequence
from typing import NoReturn

from jaxqueens import _lazy
from jaxqueens.cli import (
    anneal,
    compare,
    complete,
    count,
    estimate,
    evolve,
    options,
    render,
    run,
    schema,
    show,
    solve,
    stats,
)
from jaxqueens.errors import InstanceUnsat, QueensError
from jaxqueens.io import (
    atomic,
    console,
    interrupts,
    progress,
    provenance,
    report,
    writing,
)
from jaxqueens.parallel import cache, devices, processes

jax = _lazy.load("jax")  # only asked, in _write_report, once a command has imported it


EXIT_OK, EXIT_NOT_SOLVED, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
DOCS_URL = "https://jaxqueens.github.io/jaxqueens/"
"""The documentation site (its CLI reference is generated from `build_parser`)."""
MAIN_COMMANDS = (solve, anneal, evolve, count, complete, estimate, stats, compare)
"""The commands that run solvers, in the order `jaxqueens --help` lists them."""
ENV_DEBUG = "JAXQUEENS_DEBUG"
"""Set to 1 to print the traceback of an internal error (exit code 3)."""


class _Parser(schema.Parser):
    """argparse with a one-line error message (exit code 2, as argparse has) and no abbreviations:
    `--n` must never be read as `--num-processes`, nor `--c` as `--coordinator`. Every
    integer option is range-checked to fit 32 bits (`jaxqueens.cli.options.int_range_error`),
    so a huge value is refused naming the option, not deep inside JAX."""

    def __init__(self, *args, strict: bool = True, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.strict = strict

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")

    def _unknown_options(self, args) -> None:
        """A command's parser (`strict`, no subcommands) names an option it does not have
        first: otherwise argparse hands the option's value to a positional argument and blames
        that (`evolve --file B` said "argument N: invalid int value: 'B'")."""
        for word in args or ():
            if word == "--":
                break
            name = word.split("=", 1)[0]
            if word.startswith("--") and name not in self.flags:
                known = [o for o in self.flags if o.startswith("--")]
                near = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
                hint = f"; did you mean {near[0]}?" if near else ""
                self.error(f"{self.prog.split()[-1]} has no option {name}{hint}")

    def parse_known_args(self, args=None, namespace=None):
        if self.strict and self.commands is None:
            self._unknown_options(sys.argv[1:] if args is None else args)
        namespace, extras = super().parse_known_args(args, namespace)
        for action in self.defined:  # this parser's own options (a subparser checks its own)
            value = getattr(namespace, action.dest, None)
            if action.type in (int, options.Integer) and isinstance(value, int):
                why = options.int_range_error(value)
                if why is not None:
                    flag = next(
                        (o for o in action.option_strings if o.startswith("--")),
                        (action.option_strings or [_metavar(action)])[0],
                    )
                    self.error(f"argument {flag}: {why}")
        return namespace, extras


def _metavar(action: argparse.Action) -> str:
    """How an argument without an option string is named in an error: its metavar or dest."""
    return action.metavar if isinstance(action.metavar, str) and action.metavar else action.dest


def build_parser() -> schema.Parser:
    """The argument parser with every subcommand."""
    parser = _Parser(
        prog="jaxqueens",
        description="Array-parallel N-Queens on JAX: batched solvers, exact counts, "
        "constrained boards, statistics, and board files.",
        epilog="Run 'jaxqueens COMMAND --help' for the options of a command. Anywhere on the line: "
        "--log-json (structured logs on stderr); --no-cache (no persistent compilation "
        f"cache; it lives in ${cache.ENV_CACHE_DIR} or the XDG cache folder); multi-process "
        "runs: --coordinator HOST:PORT --num-processes P --process-id I "
        f"[--coordinator-timeout SECONDS, default {processes.COORDINATOR_TIMEOUT:g}, or "
        f"${processes.ENV_COORDINATOR_TIMEOUT}]. Documentation: {DOCS_URL} (CLI reference: "
        f"{DOCS_URL}reference/cli/).",
    )
    parser.add_argument(
        "--version", action=_Version, help="print the versions of jaxqueens, JAX and Python, exit"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    for command in MAIN_COMMANDS:  # the solvers first, then experiments and board files
        command.add_command(sub)
    run.add_command(sub, build_parser)
    for command in (show, render):
        command.add_command(sub)
    for command_parser in (parser.commands or {}).values():
        schema.add_force(command_parser)
    return parser


class _Version(argparse.Action):
    """`--version`: jaxqueens, then the versions it runs with (installed metadata, read only
    when asked: nothing is imported)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        found = provenance.versions()
        rest = ", ".join(f"{k} {v}" for k, v in found.items() if k != "jaxqueens" and v)
        print(f"jaxqueens {found['jaxqueens']} ({rest})")
        parser.exit()


def _distributed_parser() -> argparse.ArgumentParser:
    """The options read anywhere on the line, before the command's own parser (exact spellings
    only)."""
    p = _Parser(prog="jaxqueens", add_help=False, strict=False)  # the rest is the command's
    options.add_distributed(p)
    return p


def _leaves_cleanly(entry):
    """In a multi-process run, a process that stops on an error or Ctrl-C leaves at once with its
    exit code (`jaxqueens.parallel.processes.leave`), rather than wait in JAX's exit barrier
    for peers that wait for it in turn."""

    @functools.wraps(entry)
    def wrapped(argv: Sequence[str] | None = None) -> int:
        return processes.leave(entry(argv))

    return wrapped


@_leaves_cleanly
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `jaxqueens` console script: `argv` is the command line after the
    program name (None: `sys.argv[1:]`); returns the exit code.

    `--coordinator HOST:PORT --num-processes P --process-id I` (anywhere on the line, or
    `JAX_COORDINATOR_ADDRESS` / `JAX_NUM_PROCESSES` / `JAX_PROCESS_ID`) join a
    multi-process run: each process works on its share and process 0 writes the results. The
    processes wait `--coordinator-timeout` seconds (`JAXQUEENS_COORDINATOR_TIMEOUT`, default
    60) for each other, then stop with one line and exit 2; when another process is lost mid-run,
    process 0 saves its checkpoint and stops with one line and exit 2 (docs: multi-process runs)."""
    dist, rest = _distributed_parser().parse_known_args(
        sys.argv[1:] if argv is None else list(argv)
    )
    parser = build_parser()
    args = parser.parse_args(rest)
    if dist.log_json:
        progress.enable()
    t0 = time.perf_counter()
    progress.log("start", command=args.command, argv=rest)
    interrupts.reset()
    interrupts.install()  # SIGINT and SIGTERM: one policy, for the command's whole run
    try:
        if getattr(args, "config", None):  # evolve and compare --config FILE: options as flags
            args = schema.apply_config(args, (parser.commands or {})[args.command])
        args = options.resume_folder(args)  # --resume DIR writes to DIR
        return _run(args, parser, dist, argv, t0)
    except InstanceUnsat as err:  # a result, not an error: no solution exists (exit 1)
        spec = getattr(args, "instance", None)
        print(f"instance {spec + ': ' if spec else ''}{err}; no search run")
        progress.log("end", command=args.command, code=EXIT_NOT_SOLVED, status="UNSAT")
        return EXIT_NOT_SOLVED
    except QueensError as err:  # the drivers name parameters; the command line, its flags
        command = (parser.commands or {}).get(args.command)
        return _fail(args.command, EXIT_USAGE, f"error: {options.in_flags(err, command)}")
    except KeyboardInterrupt:
        print(f"jaxqueens {args.command}: interrupted", file=sys.stderr)
        progress.log("end", command=args.command, code=interrupts.exit_code())
        return interrupts.exit_code()
    except BrokenPipeError:  # output piped into e.g. `head`, which has closed it
        sys.stderr.close()
        return 0
    except MemoryError:
        return _fail(
            args.command,
            EXIT_USAGE,
            "error: out of memory; use a smaller size, --batch or --depth (or free memory)",
        )
    except OSError as err:  # the machine refused (disk full, read-only, permissions): not a bug
        if err.strerror is None:
            return _internal(args.command, err)
        where = f"{err.filename}: " if err.filename else ""
        return _fail(
            args.command,
            EXIT_USAGE,
            f"error: {where}{err.strerror}; free space, fix "
            "the permissions or pick another path, then run again",
        )
    except Exception as err:  # anything else is a bug
        return _internal(args.command, err)
    finally:
        interrupts.uninstall()
        writing.release_all()  # the --out folder's lock (jaxqueens.io.writing)


def _run(args, parser: schema.Parser, dist, argv: Sequence[str] | None, t0: float) -> int:
    """Set the process up for a parsed command (devices, processes, the --out folder), run it
    and write its report; its exit code."""
    # First, before JAX is imported: one CPU device per core, the XLA:CPU loop flags and the
    # compilation cache (JAXQUEENS_CPU_DEVICES, JAXQUEENS_XLA_FLAGS, JAXQUEENS_CACHE_DIR);
    # a command may turn off LLVM's loop unrolling (evolve: parallel.devices says why).
    devices.configure(cache=not dist.no_cache, loop_unrolling=getattr(args, "loop_unrolling", True))
    if getattr(args, "uses_jax", True):  # check, show and render never import JAX
        cache.warn_cache()
    processes.init_distributed(
        dist.coordinator,
        dist.num_processes,
        dist.process_id,
        dist.coordinator_timeout,
        _join_settings(args),
    )
    out = _out_folder(args)
    _take_folder(args, out)
    # `| head`: a closed stdout costs no file; the files the command writes are kept in
    # memory as written, and its report is built from them (atomic.recording)
    with console.pipe_safe_stdout() as shown, atomic.recording():
        before = {} if getattr(args, "resume", None) or not out else report.snapshot(out)
        defined = schema.options_of((parser.commands or {})[args.command])
        given = schema.given(args, defined)
        words = sys.argv[1:] if argv is None else argv
        args.record = provenance.begin(  # the command gives it to its summary.json's writer
            args.command,
            report.command_words(words),
            {k: getattr(args, opt.action.dest, None) for k, opt in defined.items()},
        )
        # the command's final write and its report are one end: a signal there waits for
        # both, and its checkpoint goes only after them (jaxqueens.io.writing.ending)
        with writing.ending(out):
            code = args.func(args)
            if code in (EXIT_OK, EXIT_NOT_SOLVED):  # the one hook: every --out gets a report
                with writing.final_write(out):
                    _write_report(args, out, words, given, shown.text(), before)
    progress.log("end", command=args.command, code=code, seconds=time.perf_counter() - t0)
    return code


PER_PROCESS = frozenset({"out", "resume", "quiet", "progress"})  # where each writes, what it shows


def _join_settings(args: argparse.Namespace) -> dict:
    """What the processes of a multi-process run compare when they meet
    (`jaxqueens.parallel.processes.init_distributed`), setting name -> value (JSON-able; other
    values by `str`): the command and every setting, seed included, but not `PER_PROCESS`; a
    config file by its content (its path may differ)."""
    settings = {}
    for key, value in sorted(vars(args).items()):
        if key in PER_PROCESS or callable(value):
            continue
        if key == "config" and isinstance(value, str) and os.path.isfile(value):
            with open(value, "rb") as file:
                value = "sha256:" + hashlib.sha256(file.read()).hexdigest()
        settings[key] = (
            value if isinstance(value, (int, float, str, bool, type(None))) else str(value)
        )
    return settings


def _take_folder(args, out: str | None) -> None:
    """A run's output folder `out` holds this run's outputs alone: one holding the outputs of an
    earlier finished run (`jaxqueens.io.writing.earlier_run`) is refused in one line,
    or with `--force` its files are removed first (by process 0). `--resume` continues the
    folder's own run."""
    if out is None or getattr(args, "resume", None):
        return
    found = writing.earlier_run(out)
    if found is None or writing.unfinished(out):  # an unfinished run: claim_out says how on
        return
    if not getattr(args, "force", False):
        raise writing.refuse_earlier(found)
    if not _lazy.is_loaded("jax") or jax.process_index() == 0:  # JAX is loaded when distributed
        writing.clear_earlier(found)


def _out_folder(args) -> str | None:
    """The folder the command writes: `--out` (which `--resume DIR` has set to DIR), or what
    the command says (`run`: its config's `out`)."""
    out = args.out_folder(args) if hasattr(args, "out_folder") else getattr(args, "out", None)
    return out if isinstance(out, str) and out else None


def _write_report(
    args, out: str | None, argv: Sequence[str], given: dict, result: str, before: dict
) -> None:
    """`report.html` in the output folder `out` a command wrote (`jaxqueens.io.report`), by
    process 0, after `report.MANIFEST` (the files this run wrote, new or changed since
    `before`, what it held before the command ran, nothing with `--resume`: the page shows only
    those): what the command printed (`result`) first, the options the user gave (`given`), the
    devices JAX ran on (none if the command never imported JAX). A report that cannot be
    written is a warning: the command's own outputs are complete."""
    if out is None or not os.path.isdir(out):
        return
    if _lazy.is_loaded("jax") and jax.process_index() != 0:
        return
    where = provenance.devices()
    try:
        mine = report.write_manifest(out, before, args.command)
        path = report.write_report(
            out,
            command_line=report.command_words(argv),
            settings=given,
            devices=where,
            result=result,
            only=mine,
        )
    except OSError as err:
        print(
            f"jaxqueens {args.command}: warning: {os.path.join(out, report.FILENAME)} not written "
            f"({err.strerror or err}); the other outputs are complete",
            file=sys.stderr,
        )
        return
    # a command whose stdout is data (complete's CSV) keeps it clean: the line goes to stderr
    print(f"report: {path}", file=sys.stderr if getattr(args, "data_stdout", False) else sys.stdout)


def _fail(command: str, code: int, message: str) -> int:
    """One line on stderr (never a traceback) and the exit code."""
    message = " ".join(message.split("\n"))  # one line, whatever the message held
    print(f"jaxqueens {command}: {message}", file=sys.stderr)
    progress.log("end", command=command, code=code, error=message)
    return code


def _internal(command: str, err: BaseException) -> int:
    """An unexpected exception is a bug: a short line with a bug-report hint and exit code 3
    (the traceback too with `JAXQUEENS_DEBUG=1`)."""
    debug = os.environ.get(ENV_DEBUG, "") not in ("", "0")
    if debug:
        traceback.print_exception(err)
    what = (str(err).strip().splitlines() or [""])[0][:200]
    hint = "the traceback is above" if debug else f"rerun with {ENV_DEBUG}=1 for the traceback"
    return _fail(
        command,
        EXIT_INTERNAL,
        f"internal error ({type(err).__name__}{': ' + what if what else ''}); this is a "
        f"bug, not your input: please report it with the command line ({hint})",
    )


def entry() -> NoReturn:
    """The `jaxqueens` process: `main`, then the end of the process with its exit code (it
    never returns).

    Once a command has imported JAX, tearing the interpreter down (JAX's and XLA's objects, the
    CPU client and its threads) takes a noticeable share of a short run after the work is done.
    So the process ends there: the output streams flushed and the exit handlers run (JAX's, a
    multi-process run's shutdown included), then `os._exit`. Every file a command writes is
    closed before it returns. A command that never imported JAX exits as usual."""
    code = main()
    if not _lazy.is_loaded("jax"):
        sys.exit(code)
    _flush()
    atexit._run_exitfuncs()
    _flush()
    os._exit(code)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed, or a pipe the reader closed
            stream.flush()


if __name__ == "__main__":
    entry()
