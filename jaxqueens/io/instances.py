"""Instance files for ``jaxqueens complete``: constrained boards to decide, count or enumerate.

Formats (chosen by content and suffix; each read into a
:class:`jaxqueens.core.constraints.Constraints`):

- **CSPLib prob079 excluded diagonals** (``.param``, Gent, Jefferson & Nightingale 2017)::

      n =  10
      numdiags =  14
      diags =  [[4, 1], [2, 1], [14, 0], ...]

  ``[k, 1]`` excludes x + y = k, ``[k, 0]`` excludes x - y = k - (n - 1). An instance is a file
  and a number d: only the FIRST d pairs are used, given as ``FILE:d`` or ``diags=d`` (default:
  every pair).
- **n-Queens Completion, Essence' parameters** (the same site's style; ``$`` starts a comment)::

      language ESSENCE' 1.0
      letting n be 8            (or: letting n = 8)
      letting init be [[1, 3], [3, 4]]

  ``init`` lists placed queens as ``[x, y]`` (column, row), 0-based.
- **JSON lines** (``.jsonl``/``.ndjson``/``.json``): one instance per line,
  ``{"n": 8, "fixed": [[1, 3]], "blocked": [], "rows": [], "columns": [], "sums": [],
  "diffs": [], "toroidal": false}`` (every key but ``n`` optional; a ``"name"`` key labels it).
- **Text board with gaps** (any other suffix): one line per column, the row of a placed queen or
  ``.`` (also ``-``, ``?``) for "no queen yet in this column": a completion instance (rows 0-based,
  or 1-based with ``one_based``; the board file format of :mod:`jaxqueens.io.boards` plus a marker).

A folder is searched for such files (sorted; ``.param``, ``.jsonl``, ``.ndjson``, ``.json``,
``.txt``, ``.essence`` files), a ``.tar.gz``/``.tgz`` archive likewise. Every bad file gets one
line naming the file and the line (:class:`~jaxqueens.errors.BoardFileError`).
"""

from __future__ import annotations

import json
import os
import re
import tarfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from jaxqueens.core.constraints import Constraints, completion, excluded_diagonals, from_dict
from jaxqueens.errors import BoardFileError, QueensError

SUFFIXES = (".param", ".jsonl", ".ndjson", ".json", ".txt", ".essence", ".eprime-param")
ARCHIVES = (".tar.gz", ".tgz")
GAP = (".", "-", "?")
MAX_BYTES = 64 << 20  # one instance file; larger is refused (instances are small)


class Instance(NamedTuple):
    """One instance: where it came from, the d used (excluded-diagonals files) and the model."""

    source: str  # file (archive member: ARCHIVE/member; JSON lines: FILE:LINE)
    d: int | None
    model: Constraints


_NUM = r"[+-]?\d+"
_PAIRS = re.compile(r"\[\s*(" + _NUM + r")\s*,\s*(" + _NUM + r")\s*\]")


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _pairs(name: str, text: str, start: int) -> list[tuple[int, int]]:
    """The ``[[a, b], ...]`` list that starts at ``text[start:]`` (after ``=``/``be``)."""
    i = text.find("[", start)
    if i < 0:
        raise BoardFileError(f"{name}:{_line_of(text, start)}: expected a list [[a, b], ...] here")
    depth, j = 0, i
    while j < len(text):
        depth += {"[": 1, "]": -1}.get(text[j], 0)
        if depth == 0:
            break
        j += 1
    if depth:
        raise BoardFileError(
            f"{name}:{_line_of(text, i)}: the list opened here is never closed with ']'"
        )
    body = text[i + 1 : j].strip()
    pairs = [(int(a), int(b)) for a, b in _PAIRS.findall(body)]
    rest = _PAIRS.sub("", body).replace(",", "").strip()
    if rest:
        raise BoardFileError(
            f"{name}:{_line_of(text, i)}: {rest[:30]!r} is not an [a, b] pair; "
            "write the list as [[a, b], [c, d], ...]"
        )
    return pairs


def _number(name: str, text: str, key: str, pattern: str) -> tuple[int, int] | None:
    m = re.search(pattern, text, re.M)
    if m is None:
        return None
    return int(m.group(1)), m.start()


def _wrap(name: str, text: str, pos: int, err: QueensError) -> BoardFileError:
    return BoardFileError(f"{name}:{_line_of(text, pos)}: {err}")


def parse_param(name: str, text: str, d: int | None = None, toroidal: bool = False) -> Instance:
    """A CSPLib ``.param`` file: excluded diagonals, or Essence' ``letting`` completion."""
    text = "\n".join(line.split("$", 1)[0] for line in text.splitlines())  # Essence' comments
    if re.search(r"^\s*letting\b", text, re.M):
        got = _number(name, text, "n", r"^\s*letting\s+n\s+(?:be|=)\s*(" + _NUM + r")")
        if got is None:
            raise BoardFileError(f"{name}: no 'letting n be N' line; an Essence' instance names n")
        n, npos = got
        m = re.search(r"^\s*letting\s+init\s+(?:be|=)", text, re.M)
        placed = _pairs(name, text, m.end()) if m else []
        if d is not None:
            raise BoardFileError(
                f"{name}: a completion instance takes no diagonal count; drop ':{d}'"
            )
        try:
            return Instance(name, None, completion(n, placed, toroidal))
        except QueensError as err:
            raise _wrap(name, text, m.start() if m else npos, err) from None
    got = _number(name, text, "n", r"^\s*n\s*=\s*(" + _NUM + r")")
    if got is None:
        raise BoardFileError(
            f"{name}: no 'n = N' line; a prob079 .param file holds n, numdiags "
            "and diags (or Essence' 'letting' lines)"
        )
    n, npos = got
    m = re.search(r"^\s*diags\s*=", text, re.M)
    if m is None:
        raise BoardFileError(f"{name}: no 'diags = [[k, t], ...]' line; add the excluded diagonals")
    pairs = _pairs(name, text, m.end())
    nd = _number(name, text, "numdiags", r"^\s*numdiags\s*=\s*(" + _NUM + r")")
    if nd is not None and nd[0] != len(pairs):
        raise BoardFileError(
            f"{name}:{_line_of(text, nd[1])}: numdiags = {nd[0]} but diags lists "
            f"{len(pairs)} pairs; make them agree"
        )
    if not 1 <= n <= 64:
        raise BoardFileError(f"{name}:{_line_of(text, npos)}: n = {n} is out of range 1..64")
    if d is not None and not 0 <= d <= len(pairs):
        raise BoardFileError(
            f"{name}: d = {d} is out of range: the file lists {len(pairs)} diagonals "
            f"(use 0..{len(pairs)})"
        )
    try:
        return Instance(
            name, len(pairs) if d is None else d, excluded_diagonals(n, pairs, d, toroidal)
        )
    except QueensError as err:
        raise _wrap(name, text, m.start(), err) from None


def parse_jsonl(name: str, text: str, toroidal: bool = False) -> list[Instance]:
    """One instance per non-blank line (``{"n": ..., ...}``, optional ``"name"``)."""
    out = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except (json.JSONDecodeError, RecursionError, ValueError) as err:
            raise BoardFileError(
                f"{name}:{lineno}: not valid JSON ({str(err)[:60]}); each line is "
                'one instance like {"n": 8, "fixed": [[1, 3], [3, 4]]}'
            ) from None
        if not isinstance(doc, dict):
            raise BoardFileError(f"{name}:{lineno}: expected a JSON object per line")
        label = doc.pop("name", None)
        if toroidal:
            doc["toroidal"] = True
        try:
            model = from_dict(doc)
        except (QueensError, TypeError) as err:
            raise BoardFileError(f"{name}:{lineno}: {err}") from None
        out.append(Instance(f"{name}:{lineno}" if label is None else str(label), None, model))
    if not out:
        raise BoardFileError(f"{name}: holds no instance; write one JSON object per line")
    return out


def parse_gaps(name: str, text: str, one_based: bool = False, toroidal: bool = False) -> Instance:
    """A text board with ``.`` (or ``-``, ``?``) where a column has no queen yet."""
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        raise BoardFileError(f"{name}: file is empty; write one line per column: a row or '.'")
    n, low, placed = len(lines), int(one_based), []
    for x, raw in enumerate(lines):
        s = raw.strip()
        if s in GAP:
            continue
        if not re.fullmatch(_NUM, s):
            raise BoardFileError(
                f"{name}:{x + 1}: {s[:30]!r} is neither a row nor '.'; each line holds "
                "the queen's row, or '.' for a column without a queen yet"
            )
        y = int(s) - low
        if not 0 <= y < n:
            raise BoardFileError(
                f"{name}:{x + 1}: row {s} out of range {low}..{n - 1 + low} "
                f"(the file has {n} lines)"
            )
        placed.append((x, y))
    return Instance(name, None, completion(n, placed, toroidal))


def parse(
    name: str, text: str, d: int | None = None, one_based: bool = False, toroidal: bool = False
) -> list[Instance]:
    """Every instance of one file's text (format by suffix, then content)."""
    low = name.lower()
    if low.endswith((".jsonl", ".ndjson", ".json")):
        return parse_jsonl(name, text, toroidal)
    if low.endswith((".param", ".essence", ".eprime-param")) or re.search(
        r"^\s*(letting|diags\s*=|n\s*=)", text, re.M
    ):
        return [parse_param(name, text, d, toroidal)]
    if d is not None:
        raise BoardFileError(f"{name}: ':{d}' applies to excluded-diagonals .param files only")
    return [parse_gaps(name, text, one_based, toroidal)]


def _decode(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise BoardFileError(
            f"{name}: not UTF-8 text (a binary file?); give instance files"
        ) from None


def split_spec(spec: str) -> tuple[str, int | None]:
    """``FILE:d`` -> (FILE, d); a spec without a numeric ``:d`` tail is (spec, None)."""
    m = re.fullmatch(r"(.+):(\d+)", spec)
    if m and not os.path.exists(spec):
        return m.group(1), int(m.group(2))
    return spec, None


def _members(path: Path) -> Iterator[tuple[str, bytes]]:
    try:
        with tarfile.open(path, "r:*") as tar:
            for member in sorted(tar.getmembers(), key=lambda m: m.name):
                if member.isfile() and member.name.lower().endswith(SUFFIXES):
                    if member.size > MAX_BYTES:
                        raise BoardFileError(
                            f"{path}/{member.name}: {member.size} bytes is too large "
                            "for an instance file"
                        )
                    f = tar.extractfile(member)
                    yield f"{path}/{member.name}", f.read() if f else b""
    except (tarfile.TarError, OSError, EOFError) as err:
        raise BoardFileError(
            f"{path}: not a readable .tar.gz archive ({str(err)[:80]}); check the file"
        ) from None


def _files(path: Path) -> Iterator[tuple[str, bytes]]:
    if path.is_dir():
        found = sorted(
            p
            for p in path.rglob("*")
            if p.is_file()
            and (p.name.lower().endswith(SUFFIXES) or p.name.lower().endswith(ARCHIVES))
        )
        for p in found:
            yield from _files(p)
        return
    if path.name.lower().endswith(ARCHIVES):
        yield from _members(path)
        return
    try:
        if path.stat().st_size > MAX_BYTES:
            raise BoardFileError(f"{path}: too large for an instance file; check the path")
        yield str(path), path.read_bytes()
    except FileNotFoundError:
        raise BoardFileError(f"{path}: no such file or folder; check the path") from None
    except PermissionError:
        raise BoardFileError(f"{path}: permission denied; make it readable") from None
    except IsADirectoryError:
        raise BoardFileError(f"{path}: cannot read this folder") from None


class Loaded(NamedTuple):
    instances: list[Instance]
    skipped: list[str]  # excluded-diagonals files listing fewer than the d asked for


def load_instances(
    specs: Sequence[str],
    diags: int | None = None,
    *,
    one_based: bool = False,
    toroidal: bool = False,
    skip_short: bool = True,
) -> Loaded:
    """Every instance named by ``specs`` (files, ``FILE:d``, folders, ``.tar.gz`` archives).

    Args:
      diags: d for every excluded-diagonals file without its own ``:d``.
      skip_short: a file of a folder or archive listing fewer than d diagonals is skipped (and
        named in ``skipped``) instead of being an error; a file named alone is always an error.
      toroidal: read every instance as toroidal.
    """
    out, skipped = [], []
    for spec in specs:
        path, d = split_spec(str(spec))
        d = diags if d is None else d
        many = Path(path).is_dir() or path.lower().endswith(ARCHIVES)
        count = 0
        for name, data in _files(Path(path)):
            text = _decode(name, data)
            letting = re.search(r"^\s*letting\b", text, re.M) is not None
            if (
                d is not None
                and many
                and skip_short
                and name.lower().endswith(".param")
                and not letting
            ):
                pairs = re.search(r"^\s*diags\s*=(.*)", text, re.M | re.S)
                if pairs and len(_PAIRS.findall(pairs.group(1))) < d:
                    skipped.append(name)
                    continue
            try:
                got = parse(
                    name,
                    text,
                    None if many and (letting or not name.lower().endswith(".param")) else d,
                    one_based,
                    toroidal,
                )
            except QueensError as err:
                raise (
                    err if isinstance(err, BoardFileError) else BoardFileError(f"{name}: {err}")
                ) from None
            out.extend(got)
            count += len(got)
        if many and not count and not skipped:
            raise BoardFileError(f"{path}: holds no instance files ({', '.join(SUFFIXES)})")
    return Loaded(out, skipped)
