"""Option groups and checks that several commands share, so every command spells them alike.

`--seed`, `--quiet`, the checkpoint and `--out` options, the 32-bit range of every integer
option, the message after Ctrl-C, and the options read anywhere on the line; the board-size and
board-file options are `jaxqueens.cli.boards`'. No JAX is imported: every argument check runs
before it.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from collections.abc import Iterable
from pathlib import Path

from jaxqueens import _lazy
from jaxqueens.core import arguments
from jaxqueens.drivers.loop import RunControl
from jaxqueens.drivers.settings import CHECKPOINT_EVERY
from jaxqueens.errors import QueensError, clip
from jaxqueens.io import checkpoint, interrupts
from jaxqueens.io.writing import acquire, is_writer, prepare_out, resume_advice, unfinished
from jaxqueens.parallel import cache, processes

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
"""Range of every plain integer option: sizes, steps, chains, batches and indices all end in
32-bit arrays (JAX's default integers), where a larger value would overflow or be refused with a
message that names no option. The parser (`jaxqueens.cli.main`) and `run` configs apply
it through `int_range_error`."""


def int_range_error(value: int) -> str | None:
    """Why an integer option's value does not fit 32 bits (a message part), or None if it fits."""
    if INT_MIN <= value <= INT_MAX:
        return None
    return f"{clip(str(value), 30)} is out of range: integer options lie in {INT_MIN}..{INT_MAX}"


def in_flags(err: QueensError, parser: argparse.ArgumentParser | None) -> str:
    """`err`'s message as the command line says it: the parameter it names (`err.param`: the
    drivers name their parameters), at its start or as `NAME=VALUE` (a call's keyword), is the
    command's flag for it instead (`jaxqueens.core.arguments.flag_of`: `--NAME VALUE`), when
    the command's `parser` (None: the message as it is) has that flag."""
    text, param = str(err), getattr(err, "param", None)
    if not param or parser is None:
        return text
    name = arguments.flag_of(param)
    if name not in getattr(parser, "flags", {}):
        return text
    text = re.sub(rf"(?<![\w-]){re.escape(param)}=", name + " ", text)
    return name + text[len(param) :] if text.startswith(param) else text


def _ascii(text):
    """An option's text for `int`/`float` to read: ASCII only
    (`jaxqueens.core.arguments.ascii_number`), else argparse's one-line error naming it."""
    if not isinstance(text, str):
        return text
    try:
        return arguments.ascii_number(text)
    except QueensError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


class Integer(int):
    """argparse type of every integer option (a `jaxqueens.cli.schema.Parser` reads
    `type=int` as this): `int` of ASCII text only, so `-n ８` is refused by name, as a
    board file refuses it; the value is a plain int."""

    def __new__(cls, text):
        return int(_ascii(text))  # int's ValueError: argparse says "invalid int value"


class Real(float):
    """argparse type of every number option (`type=float`): `float` of ASCII text only, as
    `Integer`; the value is a plain float."""

    def __new__(cls, text):
        return float(_ascii(text))


# argparse names a type in its message ("invalid int value: 'x'") by its __name__
Integer.__name__, Real.__name__ = "int", "float"

SEED_MAX = arguments.SEED_MAX


class Seed(int):
    """argparse type of `--seed`: an integer in `0..SEED_MAX` (the value is a plain int)."""

    def __new__(cls, text):
        try:
            value = Integer(text)  # (its ArgumentTypeError for other scripts' digits passes)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(
                f"must be an integer, got {str(text)[:40]!r}"
            ) from None
        if not 0 <= value <= SEED_MAX:
            raise argparse.ArgumentTypeError(
                f"must be between 0 and 2^32-1 ({SEED_MAX}), got {clip(str(value), 30)}"
            )
        return value


def add_seed(p: argparse.ArgumentParser, default: int | None = 0, help: str | None = None) -> None:
    """`--seed S`: the random seed, range-checked (`Seed`), `default` when none is given;
    `help` replaces the usual help."""
    p.add_argument(
        "--seed",
        type=Seed,
        default=default,
        metavar="S",
        help=help or f"random seed, 0..2^32-1 (default {default if default is not None else 0})",
    )


def add_fields(
    p, classes: Iterable[type], names: str | None = None, helps=None, **defaults
) -> None:
    """One option per field of the settings `classes` (`jaxqueens.drivers.settings`) named
    in `names` (space-separated, in that order; None: every field, in the classes' order), its
    flag `jaxqueens.core.arguments.flag_of`'s (`--NAME`, `--maxsteps`): an `int` or `float`
    field reads a number, another text; the field's metadata
    (`jaxqueens.drivers.settings.flag`) gives the help (`helps`: this command's own by
    field instead, None where absent) and other keywords; the default is None (a `bool` field:
    a switch, False) unless `defaults` gives one."""
    fields: dict[str, dataclasses.Field] = {}
    for field in (f for cls in classes for f in dataclasses.fields(cls)):
        fields.setdefault(field.name, field)
    for name in names.split() if names is not None else fields:
        option = dict(fields[name].metadata)
        if helps is not None:
            option["help"] = helps.get(name)
        kind = fields[name].type  # text under `from __future__ import annotations`
        kind = kind if isinstance(kind, str) else getattr(kind, "__name__", str(kind))
        if kind == "bool":  # a switch, off unless given
            option.setdefault("action", "store_true")
        else:
            option.setdefault("type", {"int": int, "float": float}.get(kind.split(" |")[0]))
        default = defaults.get(name, False if kind == "bool" else None)
        p.add_argument(arguments.flag_of(name), default=default, **option)


def add_budget(p, chains: str, time: str) -> None:
    """`--chains`, `--solutions` and `--time SECONDS`: when a run of chains stops; `chains`:
    `--chains`' help, `time`: what `--time`'s seconds count."""
    p.add_argument("--chains", type=int, default=None, help=chains)
    p.add_argument(
        "--solutions", type=int, default=None, help="stop at this many distinct solutions"
    )
    p.add_argument(
        "--time",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"stop after this many seconds of {time}",
    )


def add_batch(p, help: str = "chains per kernel call (default: automatic)") -> None:
    """`--batch B`: chains per kernel call (None: automatic), as `help` says."""
    p.add_argument("--batch", type=int, default=None, help=help)


def add_out(p: argparse.ArgumentParser, help: str) -> None:
    """`--out DIR`: the folder (or file) a command writes, as `help` says; beside it the
    namespace's `record`, the run's provenance record that `main` begins (None without it)."""
    p.add_argument("--out", default=None, metavar="DIR", help=help)
    p.set_defaults(record=None)


def out_bytes(args, n: int, default_chains: int, runs: int = 1) -> int:
    """Roughly what `--out` receives from `runs` runs of the chains asked for (`--chains`, else
    `--solutions`, else `default_chains`; unknown under `--time` alone): per chain its boards
    (.npy, text), its runs.csv row, the checkpoint and its temporary copy."""
    chains = args.chains
    if chains is None:
        chains = getattr(args, "solutions", None) or (0 if args.time else default_chains)
    return runs * max(chains, 1) * (12 * max(n, 1) + 100)


def add_quiet(p: argparse.ArgumentParser) -> None:
    """`--quiet`: no progress line."""
    p.add_argument(
        "--quiet",
        action="store_true",
        help="no progress line (without it: a progress line on a terminal only)",
    )


def quiet(args) -> bool | None:
    """Whether a command draws its progress line: False with `--progress` (`count`: always a
    line); True with `--quiet`; otherwise None: progress on a terminal, quiet off one."""
    if getattr(args, "progress", False):
        return False
    return True if getattr(args, "quiet", False) else None


def control(args, checkpoint: Path | None = None, resume: bool | None = False) -> RunControl:
    """The `RunControl` a command hands its driver: progress (`quiet`), the `checkpoint` file
    (None: none), whether to `resume` from it (None: the driver's default) and
    `--checkpoint-every` (the driver's default where the command has none)."""
    every = getattr(args, "checkpoint_every", CHECKPOINT_EVERY)
    return RunControl(quiet(args), checkpoint, resume, every)


def add_checkpoint(p: argparse.ArgumentParser) -> None:
    """`--resume DIR` and `--checkpoint-every SECONDS` for resumable commands."""
    p.add_argument(
        "--resume",
        default=None,
        metavar="DIR",
        help="continue an interrupted run from DIR/checkpoint.npz (same options; "
        "results equal an uninterrupted run); outputs go to DIR",
    )
    p.add_argument(
        "--checkpoint-every",
        type=float,
        default=CHECKPOINT_EVERY,
        metavar="SECONDS",
        help=f"with --out: save finished work this often (default {CHECKPOINT_EVERY:g})",
    )


def resume_folder(args: argparse.Namespace) -> argparse.Namespace:
    """`--resume DIR` continues the run of DIR and writes there: `args` with `out` set to
    DIR (a new namespace, `args` is not changed; the command line applies it once, before the
    command runs). `--out` naming another folder is one line."""
    resume = getattr(args, "resume", None)
    if not isinstance(resume, str) or not resume or not hasattr(args, "out"):
        return args
    if args.out and Path(args.out) != Path(resume):
        raise QueensError("--resume DIR writes to DIR; drop --out or give the same folder")
    return argparse.Namespace(**{**vars(args), "out": resume})


def checkpoint_target(args, per_process: bool = False) -> tuple[Path | None, bool]:
    """`(checkpoint file or None, resume?)` of a run from `--out`/`--resume` (`resume_folder`
    has made `--out` the folder of `--resume`); `per_process`: each process of a multi-process
    run keeps its own file beside it (`jaxqueens.io.checkpoint.process_path`; `count`,
    `complete`)."""
    if args.resume:
        resume_folder(args)  # (refuses an --out naming another folder)
        path = Path(args.resume) / checkpoint.FILENAME
        if not (checkpoint.any_saved(path) if per_process else path.exists()):
            raise QueensError(
                f"--resume {args.resume}: no {checkpoint.FILENAME} there; "
                "check the folder, or start without --resume"
            )
        claim_out(args.out, resume=True)
        return path, True
    arguments.seconds(args.checkpoint_every, "--checkpoint-every")
    claim_out(args.out, resume=False)
    return (Path(args.out) / checkpoint.FILENAME if args.out else None), False


def claim_out(out, resume: bool) -> None:
    """The run takes its `--out` folder `out` (None: none; `jaxqueens.io.writing`):
    without `resume` a folder holding an unfinished run's checkpoint is refused (it would start
    from nothing and overwrite it), and a folder another live process writes to is refused; then
    the folder's lock is taken (released as the command ends). In a multi-process run process 0
    takes it. A refusal is a QueensError: one line naming the folder and the ways on."""
    if not out:
        return
    prepare_out(out)  # a folder that can be made and written (before the lock makes it)
    if not resume:
        left = unfinished(out)
        if left:
            raise QueensError(
                f"--out {out} holds an unfinished run ({left[0]}); continue it with "
                f"{resume_advice(out).removeprefix('the same command and ')}, or give a new "
                f"folder (or delete {left[0].name} there to start over)"
            )
    if _lazy.is_loaded("jax") and not is_writer():  # the other processes of a multi-process run
        return
    acquire(out, "--resume" if resume else "--out")


def report_interrupt(what: str, out, saved=None) -> int:
    """After Ctrl-C or SIGTERM: say what was kept (`what`) and where (`saved`: the checkpoint
    file, default `out/checkpoint.npz`; `out` None: no folder), and how to resume, only if that
    file exists; returns the exit code, 128 + the signal (130 after Ctrl-C, 143 after SIGTERM:
    `jaxqueens.io.interrupts.exit_code`)."""
    saved = Path(out) / checkpoint.FILENAME if saved is None and out is not None else saved
    if out is not None and is_writer() and checkpoint.any_saved(saved):
        print(
            f"interrupted after {what}, saved in {saved}; resume with {resume_advice(out)}",
            file=sys.stderr,
        )
    elif out is not None and is_writer():  # stopped before its first checkpoint
        print(
            f"interrupted before any work was saved in {out}; nothing to resume: run the "
            "command again",
            file=sys.stderr,
        )
    else:
        print("interrupted; nothing saved (give --out DIR to make runs resumable)", file=sys.stderr)
    return interrupts.exit_code()


def add_distributed(p: argparse.ArgumentParser) -> None:
    """The options read anywhere on the line, before the command's own parser: a multi-process
    run's coordinator, process count, index and timeout, `--log-json` and `--no-cache`."""
    p.add_argument(
        "--coordinator",
        default=None,
        metavar="HOST:PORT",
        help="join a multi-process run coordinated by process 0 at HOST:PORT "
        "(or $JAX_COORDINATOR_ADDRESS)",
    )
    p.add_argument(
        "--num-processes",
        type=int,
        default=None,
        metavar="P",
        help="processes in the run (or $JAX_NUM_PROCESSES)",
    )
    p.add_argument(
        "--process-id",
        type=int,
        default=None,
        metavar="I",
        help="this process's index, 0 to P-1; process 0 writes the outputs (or $JAX_PROCESS_ID)",
    )
    p.add_argument(
        "--coordinator-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="how long the processes wait for each other before stopping with exit 2 "
        f"(default {processes.COORDINATOR_TIMEOUT:g}, or ${processes.ENV_COORDINATOR_TIMEOUT})",
    )
    p.add_argument("--log-json", action="store_true", help="structured JSON log lines on stderr")
    p.add_argument(
        "--no-cache",
        action="store_true",
        help=f"no persistent compilation cache (it lives in ${cache.ENV_CACHE_DIR} or the "
        "XDG cache folder)",
    )
