"""Option groups and checks that several commands share, so every command spells them alike.

- board size: ``-n N``, ``--n N`` or a bare ``N`` (:func:`add_size`, :func:`board_size`);
- board files: ``FILE [--one-based]`` (:func:`add_file`, :func:`boards_of`);
- long runs: ``--out DIR``, ``--resume DIR``, ``--checkpoint-every S`` (:func:`add_checkpoint`,
  :func:`checkpoint_target`) and the message after Ctrl-C (:func:`report_interrupt`);
- ``--seed S``, checked to lie in 0..2^32-1 (:func:`add_seed`), and every other integer option
  to fit 32 bits (:func:`int_range_error`, applied by the parser);
- ``--quiet``: no progress line; without it, a progress line is drawn on a terminal and never off
  one (:func:`quiet`);
- the output folder a run takes (:func:`claim_out`); the output preflight and the final write
  are io's (:mod:`jaxqueens.io.writing`).

This module imports no JAX (``tests/test_startup.py``): the parser and every argument check run
before JAX is imported; a command module loads what needs JAX through :mod:`jaxqueens._lazy`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from jaxqueens import _lazy
from jaxqueens.core import arguments
from jaxqueens.drivers.settings import CHECKPOINT_EVERY, flag
from jaxqueens.errors import QueensError, clip
from jaxqueens.io import boards as boardio
from jaxqueens.io import checkpoint, interrupts, ownership
from jaxqueens.io import instances as instio
from jaxqueens.io.writing import is_writer, prepare_out, resume_advice


def add_size(
    p: argparse.ArgumentParser,
    default: int | None = 8,
    required: bool = False,
    help: str | None = None,
) -> None:
    """``N``, ``-n N`` and ``--n N`` (the classic solvers' spelling): the board size."""
    what = help or (f"board size (default {default})" if default is not None else "board size")
    p.add_argument("n_pos", nargs="?", type=int, metavar="N", help="board size (same as -n)")
    p.add_argument("-n", "--n", dest="n", type=int, default=None, help=what)
    p.set_defaults(n_default=default, n_required=required)


def board_size(args, start: np.ndarray | None = None) -> int:
    """The board size from ``-n``/``N`` (they must agree) or from a ``--file`` start board."""
    if args.n is not None and args.n_pos is not None and args.n != args.n_pos:
        raise QueensError(f"two board sizes given (-n {args.n} and {args.n_pos}); give one")
    n = args.n if args.n is not None else args.n_pos
    if n is not None and n < 1:  # before JAX is imported (each solver checks its own upper limit)
        raise QueensError(
            f"n must be a positive integer, got {n}: give the board size as -n N, N >= 1"
        )
    if start is not None:
        if n is not None and n != start.shape[0]:
            raise QueensError(
                f"--file {args.file} holds a board of n = {start.shape[0]} but "
                f"n = {n} was given; drop -n or pass -n {start.shape[0]}"
            )
        return start.shape[0]
    if n is None:
        if getattr(args, "n_required", False):
            raise QueensError("give the board size: -n N (or N)")
        return getattr(args, "n_default", 8)
    return n


def add_file(p: argparse.ArgumentParser) -> None:
    """``FILE [--one-based]``: a board file of any supported format."""
    p.add_argument(
        "file",
        metavar="FILE",
        help="board file: text (one row per line, column 0 first), .npy [B, n] or .jsonl",
    )
    p.add_argument(
        "--one-based",
        action="store_true",
        help="rows in a text file are written 1..n instead of 0..n-1",
    )


def boards_of(args) -> np.ndarray:
    """The boards of ``args.file`` ([B, n]); a file with no board is an error."""
    boards = boardio.load_boards(args.file, one_based=args.one_based)
    if boards.shape[0] == 0:
        raise QueensError(f"{args.file}: holds no boards (write at least one board into it)")
    return boards


def add_instance(p, extra: str = "") -> None:
    """``--instance FILE`` and ``--toroidal``: local search on one constrained board
    (:mod:`jaxqueens.core.constraints`), for every command that runs chains on one board."""
    p.add_argument(
        "--instance",
        default=None,
        metavar="FILE",
        help="solve one constrained instance (FILE.param:d, completion parameters, one JSON "
        "line, a text board with '.' gaps): fixed queens never move, forbidden "
        f"squares are never used; unsolved means unknown, not UNSAT{extra}",
    )
    p.add_argument(
        "--toroidal",
        action="store_true",
        help="queens attack along diagonals modulo n (n prime to 6: OEIS A051906)",
    )


def load_instance(spec: str, one_based: bool = False, toroidal: bool = False):
    """``--instance FILE``: the one instance the file holds (a ``Constraints``)."""
    loaded = instio.load_instances([spec], one_based=one_based, toroidal=toroidal, skip_short=False)
    if len(loaded.instances) != 1:
        raise QueensError(
            f"--instance {spec} holds {len(loaded.instances)} instances; give a file "
            "with one (jaxqueens complete takes many)"
        )
    return loaded.instances[0].model


def start_and_instance(args):
    """``(start, instance)`` of a command that runs chains on one board: ``--file``'s one board
    ([n] array, or None) and ``--instance``'s model (or None), with the checks they share (one
    board in the file, not both, ``-n`` agreeing with the instance)."""
    start = None
    if args.file:
        boards = boards_of(args)
        if boards.shape[0] != 1:
            raise QueensError(
                f"--file {args.file} holds {boards.shape[0]} boards; give a file with one"
            )
        start = boards[0]
    if not args.instance:
        return start, None
    if args.file:
        raise QueensError("--instance sets every chain's start itself; drop --file")
    instance = load_instance(args.instance, args.one_based, args.toroidal)
    if (args.n is not None or args.n_pos is not None) and board_size(args) != instance.n:
        raise QueensError(
            f"--instance {args.instance} has n = {instance.n} but n = {board_size(args)} "
            f"was given; drop -n or pass -n {instance.n}"
        )
    return start, instance


def pick(boards: np.ndarray, index: int, file: str) -> np.ndarray:
    """Board ``index`` of a file's boards (negative counts from the end)."""
    if not -boards.shape[0] <= index < boards.shape[0]:
        raise QueensError(
            f"--index {index} is out of range: {file} holds {boards.shape[0]} board(s) "
            f"(use 0..{boards.shape[0] - 1})"
        )
    return boards[index]


INT_MIN, INT_MAX = -(2**31), 2**31 - 1
"""Range of every plain integer option: sizes, steps, chains, batches and indices all end in
32-bit arrays (JAX's default integers), where a larger value would overflow or be refused with a
message that names no option. The parser (:mod:`jaxqueens.cli.main`) and ``run`` configs apply
it through :func:`int_range_error`."""


def int_range_error(value: int) -> str | None:
    """Why an integer option's value does not fit 32 bits (a message part), or None if it does."""
    if INT_MIN <= value <= INT_MAX:
        return None
    return f"{clip(str(value), 30)} is out of range: integer options lie in {INT_MIN}..{INT_MAX}"


def in_flags(err: QueensError, parser: argparse.ArgumentParser | None) -> str:
    """`err`'s message as the command line says it: one that starts with a parameter's name
    (`err.param`: the drivers name their parameters) starts with the command's flag for it
    instead (`jaxqueens.drivers.settings.flag`), when the command has that flag.

    Args:
      err: the error a command raised.
      parser: the command's parser (None: the message as it is).

    Returns:
      The message for the command line.
    """
    text, param = str(err), getattr(err, "param", None)
    if not param or not text.startswith(param) or parser is None:
        return text
    name = flag(param)
    known = getattr(parser, "flags", {})
    return name + text[len(param) :] if name in known else text


def _ascii(text):
    """An option's text for ``int``/``float`` to read: ASCII only
    (:func:`jaxqueens.core.arguments.ascii_number`), else argparse's one-line error naming it."""
    if not isinstance(text, str):
        return text
    try:
        return arguments.ascii_number(text)
    except QueensError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


class Integer(int):
    """argparse type of every integer option (a :class:`~jaxqueens.cli.schema.Parser` reads
    ``type=int`` as this): ``int`` of ASCII text only, so ``-n ８`` is refused by name, as a
    board file refuses it; the value is a plain int."""

    def __new__(cls, text):
        return int(_ascii(text))  # int's ValueError: argparse says "invalid int value"


class Real(float):
    """argparse type of every number option (``type=float``): ``float`` of ASCII text only, as
    :class:`Integer`; the value is a plain float."""

    def __new__(cls, text):
        return float(_ascii(text))


# argparse names a type in its message ("invalid int value: 'x'") by its __name__
Integer.__name__, Real.__name__ = "int", "float"

SEED_MAX = 2**32 - 1
"""Seeds are 32-bit: ``jax.random.key`` keeps 32 bits without x64 (key(2^32) is key(0)) and the
estimator's streams are seeded with ``seed & 0xFFFFFFFF``, so every seed that ever gave its own
results lies in 0..2^32-1."""


class Seed(int):
    """argparse type of ``--seed``: an integer in ``0..SEED_MAX`` (the value is a plain int)."""

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
    """``--seed S``: the random seed, range-checked (:class:`Seed`)."""
    p.add_argument(
        "--seed",
        type=Seed,
        default=default,
        metavar="S",
        help=help or f"random seed, 0..2^32-1 (default {default if default is not None else 0})",
    )


def add_quiet(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--quiet",
        action="store_true",
        help="no progress line (without it: a progress line on a terminal only)",
    )


def quiet(args) -> bool | None:
    """``True`` with ``--quiet``; otherwise None: progress on a terminal, quiet off one."""
    return True if getattr(args, "quiet", False) else None


def add_checkpoint(p: argparse.ArgumentParser) -> None:
    """``--resume DIR`` and ``--checkpoint-every SECONDS`` for resumable commands."""
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
    """``--resume DIR`` continues the run of DIR and writes there: ``args`` with ``out`` set to
    DIR (a new namespace, ``args`` is not changed; the command line applies it once, before the
    command runs). ``--out`` naming another folder is one line."""
    resume = getattr(args, "resume", None)
    if not isinstance(resume, str) or not resume or not hasattr(args, "out"):
        return args
    if args.out and Path(args.out) != Path(resume):
        raise QueensError("--resume DIR writes to DIR; drop --out or give the same folder")
    return argparse.Namespace(**{**vars(args), "out": resume})


def checkpoint_target(args, per_process: bool = False) -> tuple[Path | None, bool]:
    """(checkpoint file or None, resume?) from ``--out``/``--resume`` (:func:`resume_folder` has
    made ``--out`` the folder of ``--resume``). ``per_process``: each process of a multi-process
    run keeps its own file beside it (:func:`jaxqueens.io.checkpoint.process_path`; ``count``,
    ``complete``)."""
    if args.resume:
        if args.out and Path(args.out) != Path(args.resume):
            raise QueensError("--resume DIR writes to DIR; drop --out or give the same folder")
        path = Path(args.resume) / checkpoint.FILENAME
        if not (checkpoint.any_saved(path) if per_process else path.exists()):
            raise QueensError(
                f"--resume {args.resume}: no {checkpoint.FILENAME} there; "
                "check the folder, or start without --resume"
            )
        claim_out(args.out, resume=True)
        return path, True
    check_seconds(args.checkpoint_every, "--checkpoint-every")
    claim_out(args.out, resume=False)
    return (Path(args.out) / checkpoint.FILENAME if args.out else None), False


def claim_out(out, resume: bool) -> None:
    """The run takes its ``--out`` folder (:mod:`jaxqueens.io.ownership`): without ``--resume``
    a folder holding an unfinished run's checkpoint is refused (it would start from nothing and
    overwrite it), and a folder another live process writes to is refused; then the folder's
    lock is taken (released as the command ends). In a multi-process run process 0 takes it.

    Raises:
      QueensError: one line naming the folder and the ways on.
    """
    if not out:
        return
    prepare_out(out)  # a folder that can be made and written (before the lock makes it)
    if not resume:
        left = ownership.unfinished(out)
        if left:
            raise QueensError(
                f"--out {out} holds an unfinished run ({left[0]}); continue it with "
                f"{resume_advice(out).removeprefix('the same command and ')}, or give a new "
                f"folder (or delete {left[0].name} there to start over)"
            )
    if _lazy.is_loaded("jax") and not is_writer():  # the other processes of a multi-process run
        return
    ownership.acquire(out, "--resume" if resume else "--out")


def check_seconds(value, option: str) -> float:
    """A positive, finite number of seconds (:func:`jaxqueens.core.arguments.seconds`: ``nan``
    and ``inf`` are refused, a checkpoint interval of inf would never save)."""
    return arguments.seconds(value, option)


def report_interrupt(what: str, out, saved=None) -> int:
    """After Ctrl-C or SIGTERM: say what was kept (``what``) and where (``saved``: the checkpoint
    file, default ``out/checkpoint.npz``), and how to resume, only if that file exists; exit
    code 128 + the signal (130 after Ctrl-C, 143 after SIGTERM:
    :func:`jaxqueens.io.interrupts.exit_code`)."""
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
