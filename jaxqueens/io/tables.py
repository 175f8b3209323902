"""The one writer of tables: CSV files and JSON documents, always written atomically.

Every command's ``--out`` files go through here (or through :mod:`jaxqueens.io.boards` for
boards), so a reader never sees a half-written table and every CSV has the same dialect:
a header row, ``\\n`` line ends, empty cells for missing values.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from jaxqueens.io.atomic import write_text


def _cell(value: Any) -> Any:
    return "" if value is None else value


def write_csv(path: str | Path, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
    """Write ``header`` then ``rows`` (sequences; None becomes an empty cell) to ``path``."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows([_cell(v) for v in row] for row in rows)
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
