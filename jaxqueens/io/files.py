"""The one way an input file is opened: regular files only, every failure one line with its name.

Every reader opens its input through `open_input`, which opens without blocking and then refuses
anything but a regular file (a named pipe would block forever), reading the type from the open
descriptor so that a file replaced between a check and the open cannot slip through, and turns
every OS failure into one `BoardFileError` (or the caller's error type) naming the file. Every
text format reads its bytes through `without_bom`, so a UTF-8 byte-order mark at the start of a
file is accepted alike everywhere.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import stat
from collections.abc import Iterator
from typing import BinaryIO

from jaxqueens.errors import BoardFileError, QueensError

_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _kind(mode: int) -> str:
    return next((what for test, what in _KINDS if test(mode)), "not a regular file")


@contextlib.contextmanager
def open_input(
    path: str | os.PathLike, error: type[QueensError] = BoardFileError
) -> Iterator[tuple[BinaryIO, int]]:
    """Open a regular input file for reading, closed on exit: yields `(binary file, size in
    bytes)`.

    Raises:
      QueensError: of class `error` (default BoardFileError), one line naming the file and the
        problem.
    """
    name = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(name, flags)
    except FileNotFoundError:
        raise error(f"{name}: no such file; check the path") from None
    except IsADirectoryError:
        raise error(f"{name}: is a directory, not a file; pass the path of a file") from None
    except PermissionError:
        raise error(f"{name}: permission denied; make the file readable (chmod u+r)") from None
    except OSError as exc:
        raise error(f"{name}: cannot open ({exc.strerror or exc}); check the path") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise error(f"{name}: is a directory, not a file; pass the path of a file")
        if not stat.S_ISREG(info.st_mode):
            raise error(
                f"{name}: is {_kind(info.st_mode)}, not a regular file (reading it could block "
                "or never end); save its contents to a file and pass that"
            )
        os.set_blocking(fd, True)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        yield f, info.st_size


def read_input(
    path: str | os.PathLike,
    error: type[QueensError] = BoardFileError,
    max_bytes: int | None = None,
    too_large: str = "too large for this kind of file; check the path",
) -> bytes:
    """The bytes of a regular input file (`open_input`); a file over `max_bytes` (None: no
    limit) is refused before it is read, with `too_large` ending the message.

    Raises:
      QueensError: of class `error`, one line naming the file and the problem.
    """
    name = os.fspath(path)
    with open_input(path, error) as (f, size):
        if max_bytes is not None and size > max_bytes:
            raise error(f"{name}: {size:,} bytes is {too_large}")
        try:
            data = f.read() if max_bytes is None else f.read(max_bytes + 1)
        except OSError as exc:
            raise error(f"{name}: cannot read ({exc.strerror or exc}); check the file") from None
    if max_bytes is not None and len(data) > max_bytes:
        raise error(f"{name}: more than {max_bytes:,} bytes is {too_large}")
    return data


BOM = codecs.BOM_UTF8


def without_bom(data: bytes) -> bytes:
    """`data` without a UTF-8 byte-order mark at its start: the one place every text reader
    drops it, so a file saved "with BOM" reads alike as a board, an instance or a config."""
    return data[len(BOM) :] if data.startswith(BOM) else data
