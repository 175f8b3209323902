"""The one writer of tables: CSV files and JSON documents, always written atomically.

Every command's `--out` files go through here (or through `boards` for
boards), so a reader never sees a half-written table and every CSV has the same dialect:
a header row, `\\n` line ends, empty cells for missing values.

Text cells that a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`,
or a tab or carriage return: CSV injection, OWASP) are written with a leading `'`, which
spreadsheets show as text; numbers (ints, floats, NumPy scalars) stay numbers, negative ones
included. `csv_cell` is the one rule, also used for the CSV `complete` prints.
"""

from __future__ import annotations

import csv
import io
import json
import math
import numbers
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from jaxqueens.io import provenance
from jaxqueens.io.atomic import write_text

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """One CSV cell: "" for None, numbers as they are, anything else as text, prefixed with `'`
    when it starts like a formula (OWASP's neutralisation)."""
    kind = type(value)
    if kind is int or kind is float or kind is bool:  # most cells: no ABC check
        return value
    if value is None:
        return ""
    if isinstance(value, numbers.Number):
        return value
    text = value if isinstance(value, str) else str(value)
    return "'" + text if text.startswith(FORMULA_START) else text


class writer:  # lowercase: called like `csv.writer`
    """A CSV writer in the package's dialect on a text stream: `writerow` and `writerows`, whose
    cells pass through `csv_cell`."""

    def __init__(self, stream):
        self._w = csv.writer(stream, lineterminator="\n")

    def writerow(self, row: Sequence[Any]) -> None:
        self._w.writerow([csv_cell(v) for v in row])

    def writerows(self, rows: Iterable[Sequence[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def write_csv(path: str | Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
    """Write a CSV table atomically (a None cell is empty); returns `path`."""
    buf = io.StringIO()
    w = writer(buf)
    w.writerow(header)
    w.writerows(rows)
    write_text(path, buf.getvalue())
    return Path(path)


def write_dict_csv(
    path: str | Path, rows: Sequence[dict], keys: Sequence[str] | None = None
) -> Path:
    """Write dicts as the rows of a CSV table, a key a row lacks an empty cell; the columns are
    `keys` (None: every key, in order of first appearance). Returns `path`."""
    keys = list(keys) if keys is not None else list(dict.fromkeys(k for row in rows for k in row))
    return write_csv(path, keys, ([row.get(k) for k in keys] for row in rows))


SUMMARY = "summary.json"  # every command's summary, the one file with a run's record
NULL_REASON = "_null_reason"  # suffix of the key that says why a value is null


def _reason(x: float) -> str:
    what = "not a number" if math.isnan(x) else "+infinity" if x > 0 else "-infinity"
    return f"{what}, which JSON cannot hold (e.g. nothing solved)"


def _number(value: Any) -> Any:
    """`value` as a plain Python value if it is a NumPy scalar or array, else itself."""
    kind = type(value).__module__
    if kind == "numpy":
        return value.tolist() if hasattr(value, "tolist") else value
    return value


def strict(doc: Any, reasons: bool = True) -> Any:
    """A JSON-like document (dicts, lists, scalars, NumPy values) as strict JSON data: a copy
    with NumPy values as Python ones and every non-finite float (inf, -inf, NaN) as null, with a
    `<key>_null_reason` beside it in its object (for a list, beside the list's key) unless
    `reasons` is False."""
    doc = _number(doc)
    if isinstance(doc, (list, tuple)):
        return [strict(v, reasons) for v in doc]
    if not isinstance(doc, dict):
        return None if _non_finite(doc) else doc
    out: dict = {}
    for key, value in doc.items():
        value = _number(value)
        out[key] = strict(value, reasons)
        if not reasons:
            continue
        if _non_finite(value):
            out[f"{key}{NULL_REASON}"] = _reason(value)
        elif isinstance(value, (list, tuple)):
            bad = next((v for v in map(_number, value) if _non_finite(v)), None)
            if bad is not None:
                out[f"{key}{NULL_REASON}"] = f"holds {_reason(bad)}: written as null"
    return out


def _non_finite(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


def write_json(path: str | Path, doc: Any, record: provenance.Record | None = None) -> Path:
    """Write `doc` atomically as indented `strict` JSON (no Infinity or NaN, which JSON parsers
    refuse; other values JSON cannot hold as strings) with a final newline; returns `path`.
    A run's `record` (a command's summary) adds its block under `"run"` (`Record.block`).
    """
    if record is not None:
        doc = {**doc, "run": record.block(doc)}
    text = json.dumps(strict(doc), indent=2, default=str, allow_nan=False)
    write_text(path, text + "\n")
    return Path(path)
