"""The pieces `report.html` is made of: escaped cells, tables, key/value pairs, a CSV file as a
table and an embedded figure (`jaxqueens.io.report` puts them in order)."""

from __future__ import annotations

import base64
import csv
import html
import io
import struct
import urllib.parse
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from jaxqueens.io.atomic import recorded

MAX_ROWS = 20
"""Rows of a CSV shown in the page (the file holds them all)."""
MAX_COLUMNS = 24
MAX_CELL = 200
"""Characters of a cell shown (longer values are cut with an ellipsis)."""
MAX_FIGURES = 60
MAX_FIGURE_BYTES = 8 << 20
"""Figures embedded at most, and the largest PNG embedded (others are listed, not embedded)."""
MAX_SUMMARY_ROWS = 200


def cell(value: Any) -> str:
    """A value as escaped HTML text (as `str` shows it), cut to `MAX_CELL` characters with an
    ellipsis."""
    text = str(value)
    if len(text) > MAX_CELL:
        text = text[:MAX_CELL] + "…"
    return html.escape(text, quote=True)


def _td(value: Any) -> str:
    """A table cell: right-aligned when its text reads as a number (`True` does not)."""
    try:
        float(str(value))
    except ValueError:
        return f"<td>{cell(value)}</td>"
    return f'<td class="num">{cell(value)}</td>'


def table(header: Sequence[str] | None, rows: Iterable[Sequence[Any]]) -> str:
    """An HTML table, numbers right-aligned (`header` None: no header row)."""
    head = "<tr>" + "".join(f"<th>{cell(h)}</th>" for h in header) + "</tr>" if header else ""
    body = "".join("<tr>" + "".join(map(_td, row)) + "</tr>" for row in rows)
    return f'<div class="wide"><table>{head}{body}</table></div>'


def flatten(doc: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Nested dicts as `(dotted.key, value)` pairs under `prefix` (the dotted key of `doc`
    itself): a list of plain values stays one value, a list of dicts is numbered
    (`per_solver.0.solver`); floats keep 6 significant digits."""
    if isinstance(doc, dict) or _records_list(doc):
        keyed = doc.items() if isinstance(doc, dict) else enumerate(doc)
        items = [item for key, value in keyed for item in flatten(value, f"{prefix}{key}.")]
        return items or [(prefix[:-1], "{}")]
    if isinstance(doc, list):
        more = f", … ({len(doc)} in all)" if len(doc) > 50 else ""
        doc = ", ".join(str(_show(x)) for x in doc[:50]) + more
    return [(prefix[:-1], _show(doc))]


def _show(value: Any) -> Any:
    if value is None:
        return ""
    return f"{value:.6g}" if isinstance(value, float) else value


def _records_list(value: Any) -> bool:
    """A non-empty list of dicts: a table of records."""
    return isinstance(value, list) and bool(value) and all(isinstance(x, dict) for x in value)


def _records(name: str, items: list[dict]) -> str:
    """A list of dicts as one table: a row per item, a column per (flattened) key."""
    rows = [dict(flatten(item)) for item in items]
    keys = list(dict.fromkeys(k for row in rows for k in row))
    note = f"{len(rows)} rows"
    if len(keys) > MAX_COLUMNS:
        note += f"; first {MAX_COLUMNS} of {len(keys)} columns (all of them are in the file)"
    keys = keys[:MAX_COLUMNS]
    return _titled(
        name, keys, ([row.get(k, "") for k in keys] for row in rows[:MAX_SUMMARY_ROWS]), note
    )


def _titled(title: str, header: Sequence[str], rows: Iterable[Sequence[Any]], note: str) -> str:
    """A table under its own heading, with a note below it."""
    return f'<h3>{cell(title)}</h3>{table(header, rows)}<p class="note">{cell(note)}</p>'


def pairs(doc: dict) -> str:
    """A document as a key/value table, and its lists of dicts (one record per solver, per
    method, a ranking), at any depth, as tables of their own below it."""
    lists: dict[str, list] = {}
    rows = _pairs(doc, "", lists) or [("", "{}")]
    note = ""
    if len(rows) > MAX_SUMMARY_ROWS:
        note = f'<p class="note">first {MAX_SUMMARY_ROWS} of {len(rows)} entries</p>'
        rows = rows[:MAX_SUMMARY_ROWS]
    return table(("key", "value"), rows) + note + "".join(_records(k, v) for k, v in lists.items())


def _pairs(doc: dict, prefix: str, lists: dict[str, list]) -> list[tuple[str, Any]]:
    """`flatten`'s pairs of `doc` under `prefix`, its lists of dicts set apart in `lists` by
    dotted name (`per_solver`, `recommendation.ranking`); a dict holding only those is left out."""
    rows: list[tuple[str, Any]] = []
    for key, value in doc.items():
        if _records_list(value):
            lists[f"{prefix}{key}"] = value
        elif isinstance(value, dict) and value:
            rows += _pairs(value, f"{prefix}{key}.", lists)
        else:
            rows += flatten(value, f"{prefix}{key}.")
    return rows


def png_size(data: bytes) -> tuple[int, int] | None:
    """The `(width, height)` of a PNG, from its header; None if `data` is not a PNG."""
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", data[16:24])


def content(path: Path) -> bytes:
    """A file's bytes as the run wrote them: those `recorded` kept in memory while the command
    line ran the command, else those read from the folder (a page written for any folder, or a
    file too large to keep)."""
    kept = recorded(path)
    return kept if kept is not None else path.read_bytes()


def csv_table(path: Path, rows_shown: int = MAX_ROWS, title: str | None = None) -> str:
    """A CSV file as a table: its first `rows_shown` rows, with a note of how many there are,
    under `title` (default: the file's name)."""
    reader = csv.reader(io.StringIO(content(path).decode("utf-8", errors="replace"), newline=""))
    header = next(reader, None)
    rows = [row for _, row in zip(range(rows_shown), reader, strict=False)]
    more = sum(1 for _ in reader)
    title = path.name if title is None else title
    if header is None:
        return f'<h3>{cell(title)}</h3><p class="note">empty</p>'
    cut = len(header) > MAX_COLUMNS
    header, rows = header[:MAX_COLUMNS], [r[:MAX_COLUMNS] for r in rows]
    total = len(rows) + more
    note = (
        f"first {len(rows)} of {total:,} rows; the whole table is {path.name}"
        if more
        else f"{total:,} row{'s' if total != 1 else ''}"
    )
    if cut:
        note += f"; first {MAX_COLUMNS} columns"
    return _titled(title, header, rows, note)


def figure(path: Path, shown: int) -> tuple[str, bool]:
    """A figure file as `(HTML, whether it embeds the image)`: a PNG or SVG embedded as a
    `data:` image, a PDF linked; `shown` figures were embedded so far (at most `MAX_FIGURES`
    are)."""
    size = path.stat().st_size
    name = cell(path.name)
    if shown >= MAX_FIGURES or size > MAX_FIGURE_BYTES:
        why = "too many figures" if shown >= MAX_FIGURES else f"{size:,} bytes, too large to embed"
        return f'<p class="note">{name}: not embedded ({cell(why)})</p>', False
    if path.suffix.lower() == ".pdf":  # no browser shows a PDF as an image: a link beside it
        href = urllib.parse.quote(path.name)
        return (
            f'<figure><p><a href="{href}">{name}</a> (PDF, {size:,} bytes, in this '
            "folder)</p></figure>"
        ), False
    data = content(path)
    if path.suffix.lower() == ".svg":  # an <img> runs no script an SVG might hold
        kind, caption = ("svg+xml", "SVG") if b"<svg" in data[:4096] else (None, "an SVG")
    else:
        dims = png_size(data)
        kind, caption = ("png", f"{dims[0]}x{dims[1]} px") if dims else (None, "a PNG")
    if kind is None:
        return f'<p class="note">{name}: not {caption} image, not embedded</p>', False
    uri = f"data:image/{kind};base64," + base64.b64encode(data).decode("ascii")
    return (
        f'<figure><img src="{uri}" alt="{name}"><figcaption>{name} ({caption})'
        "</figcaption></figure>"
    ), True
