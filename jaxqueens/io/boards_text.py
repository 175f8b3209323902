"""The classic text board format: one integer per line, the row of the queen in column 0, 1,
2, ...; parsed by a vectorised pass over the bytes when every line is plain digits, else by a
careful line scan that names the first bad line (`jaxqueens.io.boards` reads the file)."""

from __future__ import annotations

import array
import io
import re

import numpy as np

from jaxqueens.core import arguments
from jaxqueens.errors import BoardFileError, clip

_CHUNK = 1 << 22  # bytes per vectorised parsing chunk
_INT = re.compile(arguments.WHOLE_NUMBER)
_FORMAT_HINT = "each line must hold one integer: the row of the queen in that column"
_BIG = 1 << 62  # stands in for values that do not fit in int64 (always out of range)
# Byte classes for the fast text parser: 0 other, 1 space/tab/CR, 3 LF, 2 | digit << 4 for '0'..'9'.
_BYTE_KIND = np.zeros(256, dtype=np.uint8)
_BYTE_KIND[[32, 9, 13]] = 1
_BYTE_KIND[10] = 3
_BYTE_KIND[48:58] = 2 | (np.arange(10, dtype=np.uint8) << 4)


def not_text(name: str, lineno: int, data: bytes) -> BoardFileError:
    """The error for a file that is not UTF-8 text: a NumPy file named as one, else the line
    `lineno` that does not decode."""
    if data.startswith(b"\x93NUMPY"):
        return BoardFileError(
            f"{name}: is a NumPy .npy file; give it a .npy suffix to read it as one"
        )
    return BoardFileError(f"{name}:{lineno}: not UTF-8 text (a binary file?); {_FORMAT_HINT}")


def _parse_fast(data: bytes, end: int) -> np.ndarray | None:
    """Parse `data[:end]` (no trailing whitespace) if every line is plain digits: int64
    `[lines]` (value i from line i + 1), or None when some line needs the careful scan: signs,
    other characters, blank lines, two numbers on a line, or more than 18 digits."""
    parts, start = [], 0
    while start < end:
        stop = end if end - start <= _CHUNK else data.rfind(b"\n", start, start + _CHUNK)
        if stop <= start:  # a blank line, or one line longer than a chunk
            return None
        kind = _BYTE_KIND[np.frombuffer(data, np.uint8, count=stop - start, offset=start)]
        if not kind.all():  # a byte other than a digit, space, tab, CR or LF
            return None
        digit, newline = (kind & 15) == 2, np.flatnonzero(kind == 3)
        # starts and stops of digit runs, alternating
        edges = np.flatnonzero(digit[1:] != digit[:-1]) + 1
        edges = np.concatenate(
            [[0] if digit[0] else [], edges, [len(digit)] if digit[-1] else []]
        ).astype(np.int64)
        starts, stops = edges[0::2], edges[1::2]
        # Exactly one digit run per line <=> each newline falls between consecutive runs.
        if len(starts) != len(newline) + 1 or not (
            np.all(stops[:-1] <= newline) and np.all(newline < starts[1:])
        ):
            return None
        length = stops - starts
        if length.max() > 18:
            return None
        value = np.zeros(len(starts), dtype=np.int64)
        for k in range(int(length.max())):
            live = length > k
            d = kind[np.where(live, starts + k, 0)].astype(np.int64) >> 4
            value = np.where(live, value * 10 + d, value)
        parts.append(value)
        start = stop + 1
    return np.concatenate(parts)


def _parse_lines(name: str, data: bytes) -> tuple[np.ndarray, tuple[int, str] | None]:
    """Line-by-line scan: parse every line or raise for the first bad one. Returns the int64
    values (out-of-int64 ones replaced by +-`_BIG`) and `(index, text)` of the first replaced
    value, if any."""
    values, huge, blank = array.array("q"), None, None
    for lineno, raw in enumerate(io.BytesIO(data), start=1):
        if b"\x00" in raw:
            raise not_text(name, lineno, data)
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise not_text(name, lineno, data) from None
        if not line:
            blank = blank or lineno
            continue
        if blank is not None:
            raise BoardFileError(
                f"{name}:{blank}: blank line inside the board; delete it (only trailing blank "
                "lines are allowed)"
            )
        if not _INT.fullmatch(line):
            raise BoardFileError(
                f"{name}:{lineno}: {clip(line, 40)!r} is not an integer ({_FORMAT_HINT})"
            )
        if len(line.lstrip("+-").lstrip("0")) > 18:  # beyond int64 (and maybe int()'s digit limit)
            huge = huge or (len(values), line)
            value = -_BIG if line.startswith("-") else _BIG
        else:
            value = int(line)
        values.append(value)
    return np.frombuffer(values, dtype=np.int64), huge


def parse(name: str, data: bytes, one_based: bool = False) -> np.ndarray:
    """Parse a text board file's bytes (without a byte-order mark; `name` for messages; rows
    counted from 1 when `one_based`) as int32 `[n]` 0-based rows.

    Raises:
      BoardFileError: the file is not text, empty, or has a bad line (the message names it).
    """
    end = len(data)
    while end and data[end - 1 : end].isspace():
        end -= 1
    if not end:
        what = "is empty" if not data else "has only blank lines"
        raise BoardFileError(
            f"{name}: file {what}; a board file holds one integer per line (the queen's row)"
        )
    values, huge = _parse_fast(data, end), None
    if values is None:
        values, huge = _parse_lines(name, data)
    n, low = len(values), int(one_based)
    bad = np.flatnonzero((values < low) | (values > n - 1 + low))
    if len(bad):
        i = int(bad[0])
        text = clip(huge[1]) if huge and huge[0] == i else str(values[i])
        fix = f"each line must hold the queen's row, {low} to {n - 1 + low}"
        if not one_based and values[i] == n:
            fix = "if the file counts rows from 1, pass --one-based"
        elif one_based and values[i] == 0:
            fix = "the file counts rows from 0, so drop --one-based"
        raise BoardFileError(
            f"{name}:{i + 1}: row {text} out of range {low}..{n - 1 + low} (the file has {n} "
            f"lines); {fix}"
        )
    return (values - low).astype(np.int32)
