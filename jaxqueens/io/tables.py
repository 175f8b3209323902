"""The one writer of tables: CSV files and JSON documents, always written atomically.

Every command's ``--out`` files go through here (or through :mod:`jaxqueens.io.boards` for
boards), so a reader never sees a half-written table and every CSV has the same dialect:
a header row, ``\\n`` line ends, empty cells for missing values.

Text cells that a spreadsheet would run as a formula (starting with ``=``, ``+``, ``-``, ``@``,
or a tab or carriage return: CSV injection, OWASP) are written with a leading ``'``, which
spreadsheets show as text; numbers (ints, floats, NumPy scalars) stay numbers, negative ones
included. :func:`csv_cell` is the one rule, also used for the CSV ``complete`` prints.
"""

from __future__ import annotations

import csv
import io
import json
import numbers
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from jaxqueens.io.atomic import write_text

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula (OWASP, CSV injection)."""


def csv_cell(value: Any) -> Any:
    """One CSV cell: None is empty, numbers stay numbers, and text that starts like a formula is
    prefixed with ``'`` (OWASP's neutralisation)."""
    if value is None:
        return ""
    if isinstance(value, (bool, int, float, numbers.Number)):
        return value
    text = value if isinstance(value, str) else str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


def writer(stream) -> Any:
    """A CSV writer in the package's dialect whose rows pass through :func:`csv_cell`."""
    return _Writer(stream)


class _Writer:
    def __init__(self, stream):
        self._w = csv.writer(stream, lineterminator="\n")

    def writerow(self, row: Sequence[Any]) -> None:
        self._w.writerow([csv_cell(v) for v in row])

    def writerows(self, rows: Iterable[Sequence[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def write_csv(path: str | Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
    """Write ``header`` then ``rows`` (sequences; None becomes an empty cell) to ``path``."""
    buf = io.StringIO()
    w = writer(buf)
    w.writerow(header)
    w.writerows(rows)
    write_text(path, buf.getvalue())
    return Path(path)


def write_dict_csv(
    path: str | Path, rows: Sequence[dict], keys: Sequence[str] | None = None
) -> Path:
    """Write dicts as rows; the columns are ``keys`` or every key in order of first appearance."""
    keys = list(keys) if keys is not None else list(dict.fromkeys(k for row in rows for k in row))
    return write_csv(path, keys, ([row.get(k) for k in keys] for row in rows))


def write_json(path: str | Path, doc: Any) -> Path:
    """Write ``doc`` as indented JSON with a final newline (values JSON cannot hold become
    strings)."""
    write_text(path, json.dumps(doc, indent=2, default=str) + "\n")
    return Path(path)
