"""The instance formats of `jaxqueens complete`, each read into a
`jaxqueens.core.constraints.Constraints`: CSPLib prob079 excluded diagonals (`.param`, Gent,
Jefferson & Nightingale 2017; `FILE:d` keeps the first d pairs), n-Queens Completion as Essence'
parameters, JSON lines (one instance per line, or a board line: every queen fixed), and text
boards with gaps (`.` for a column without a queen). Every bad file gets one line naming the file
and the line (`BoardFileError`); `jaxqueens.io.instances` finds the files. `name` is the
file's name (in messages and the instance's); under `toroidal` queens attack along diagonals
modulo n.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from jaxqueens.core import arguments
from jaxqueens.core.constraints import Constraints, completion, excluded_diagonals, from_dict
from jaxqueens.errors import BoardFileError, QueensError
from jaxqueens.io import jsonl

GAP = (".", "-", "?")
PROB079_KEYS = ("n", "numdiags", "diags")
ESSENCE_KEYS = ("n", "init", "given_queens")


class Instance(NamedTuple):
    """One instance: where it came from, the d used (excluded-diagonals files) and the model."""

    source: str  #: file (archive member: ARCHIVE/member; JSON lines: FILE:LINE)
    d: int | None  #: the d used (excluded-diagonals files), else None
    model: Constraints  #: the instance


_NUM = arguments.WHOLE_NUMBER  # ASCII digits only, as every format reads numbers
PAIRS = re.compile(r"\[\s*(" + _NUM + r")\s*,\s*(" + _NUM + r")\s*\]")


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _pairs(name: str, text: str, start: int, end: int | None = None) -> list[tuple[int, int]]:
    """The `[[a, b], ...]` list that is `text[start:end]` (after `=`/`be`): nothing but
    blanks may stand before its `[` or after its closing `]`."""
    end = len(text) if end is None else end
    i = text.find("[", start, end)
    if i < 0 or text[start:i].strip():
        where = start if i < 0 else start + len(text[start:i]) - len(text[start:i].lstrip())
        raise BoardFileError(f"{name}:{_line_of(text, where)}: expected a list [[a, b], ...] here")
    depth, j = 0, i
    while j < end:
        depth += {"[": 1, "]": -1}.get(text[j], 0)
        if depth == 0:
            break
        j += 1
    if depth:
        raise BoardFileError(
            f"{name}:{_line_of(text, i)}: the list opened here is never closed with ']'"
        )
    body = text[i + 1 : j].strip()
    pairs = [(int(a), int(b)) for a, b in PAIRS.findall(body)]
    rest = PAIRS.sub("", body).replace(",", "").strip()
    if rest:
        raise BoardFileError(
            f"{name}:{_line_of(text, i)}: {rest[:30]!r} is not an [a, b] pair of whole numbers; "
            "write the list as [[a, b], [c, d], ...]"
        )
    after = text[j + 1 : end]
    if after.strip():
        at = j + 1 + len(after) - len(after.lstrip())
        raise BoardFileError(
            f"{name}:{_line_of(text, at)}: {after.strip()[:30]!r} after the list; one value per key"
        )
    return pairs


class _Value(NamedTuple):
    start: int  #: offset of the value in the text
    end: int
    line: int  #: line of the key


def _statements(name: str, text: str, pattern: re.Pattern, known: tuple, what: str) -> dict:
    """`key -> _Value` of every `key = value` statement `pattern` finds (a value runs to the
    next statement): an unknown key, a key given twice, or text outside any statement is an
    error naming its line."""
    found = list(pattern.finditer(text))
    head = text[: found[0].start()] if found else text
    if head.strip():
        at = len(head) - len(head.lstrip())
        raise BoardFileError(
            f"{name}:{_line_of(text, at)}: {head.strip().splitlines()[0][:30]!r} is not a "
            f"'{what}' line"
        )
    out: dict[str, _Value] = {}
    for k, m in enumerate(found):
        key, line = m.group("key"), _line_of(text, m.start())
        if key not in known:
            raise BoardFileError(
                f"{name}:{line}: unknown key {key!r}; this file holds {', '.join(known)}"
            )
        if key in out:
            raise BoardFileError(
                f"{name}:{line}: {key!r} is given a second time (first on line {out[key].line}); "
                "keep one"
            )
        stop = found[k + 1].start() if k + 1 < len(found) else len(text)
        out[key] = _Value(m.end(), stop, line)
    return out


def _integer(name: str, text: str, key: str, value: _Value) -> int:
    """A statement's value that must be a whole number (`8.5`, `8e1`, `8 9` are errors)."""
    raw = text[value.start : value.end].strip()
    if not re.fullmatch(_NUM, raw):
        raise BoardFileError(
            f"{name}:{value.line}: {key} = {raw[:30]!r} is not a whole number; write e.g. {key} = 8"
        )
    return int(raw)


def _wrap(name: str, text: str, pos: int, err: QueensError) -> BoardFileError:
    return BoardFileError(f"{name}:{_line_of(text, pos)}: {err}")


_ESSENCE = re.compile(r"^[ \t]*letting[ \t]+(?P<key>[A-Za-z_]\w*)[ \t]*(?:\bbe\b|=)", re.M)
_PROB079 = re.compile(r"^[ \t]*(?P<key>[A-Za-z_]\w*)[ \t]*=", re.M)


def _agree(name: str, text: str, st: dict, key: str, count: int, found: str) -> None:
    """Refuse a statement `key` (a count, if given) other than the `count` of what was `found`."""
    if key in st and (given := _integer(name, text, key, st[key])) != count:
        raise BoardFileError(f"{name}:{st[key].line}: {key} = {given} but {found}; make them agree")


def parse_param(name: str, text: str, d: int | None = None, toroidal: bool = False) -> Instance:
    """A CSPLib `.param` file: excluded diagonals (`n`, `numdiags`, `diags`, each once), or Essence'
    `letting` completion (`letting n be N`, `letting init be [[x, y], ...]`); `d`: use only the
    first d excluded diagonals (None: all)."""
    text = "\n".join(line.split("$", 1)[0] for line in text.splitlines())  # Essence' comments
    if re.search(r"^\s*letting\b", text, re.M):
        text = re.sub(r"(?m)^[ \t]*language\b.*$", "", text)  # "language ESSENCE' 1.0"
        st = _statements(name, text, _ESSENCE, ESSENCE_KEYS, "letting NAME be VALUE")
        if "n" not in st:
            raise BoardFileError(f"{name}: no 'letting n be N' line; an Essence' instance names n")
        n = _integer(name, text, "n", st["n"])
        placed = _pairs(name, text, st["init"].start, st["init"].end) if "init" in st else []
        _agree(name, text, st, "given_queens", len(placed), f"init places {len(placed)} queens")
        if d is not None:
            raise BoardFileError(
                f"{name}: a completion instance takes no diagonal count; drop ':{d}'"
            )
        try:
            return Instance(name, None, completion(n, placed, toroidal))
        except QueensError as err:
            pos = st["init"].start if "init" in st else st["n"].start
            raise _wrap(name, text, pos, err) from None
    st = _statements(name, text, _PROB079, PROB079_KEYS, "key = value")
    if "n" not in st:
        raise BoardFileError(
            f"{name}: no 'n = N' line; a prob079 .param file holds n, numdiags "
            "and diags (or Essence' 'letting' lines)"
        )
    n = _integer(name, text, "n", st["n"])
    if "diags" not in st:
        raise BoardFileError(f"{name}: no 'diags = [[k, t], ...]' line; add the excluded diagonals")
    pairs = _pairs(name, text, st["diags"].start, st["diags"].end)
    _agree(name, text, st, "numdiags", len(pairs), f"diags lists {len(pairs)} pairs")
    if not 1 <= n <= 64:
        raise BoardFileError(f"{name}:{st['n'].line}: n = {n} is out of range 1..64")
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
        raise _wrap(name, text, st["diags"].start, err) from None


def parse_jsonl(name: str, text: str, toroidal: bool = False) -> list[Instance]:
    """One instance per non-blank line (`{"n": ..., ...}`, optional `"name"`); a board line
    (`{"n": 8, "rows": [...]}`) is a completion instance with every queen fixed."""
    out = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{name}:{lineno}"
        doc = jsonl.parse(line, where)
        tag = jsonl.label(doc)
        if jsonl.kind(doc, where) == "board":
            rows = jsonl.board_rows(doc, where)
            model = completion(len(rows), list(enumerate(rows)), toroidal)
        else:
            doc.pop(jsonl.LABEL, None)
            if toroidal:
                doc["toroidal"] = True
            try:
                model = from_dict(doc)
            except (QueensError, TypeError) as err:
                raise BoardFileError(f"{where}: {err}") from None
        out.append(Instance(where if tag is None else tag, None, model))
    if not out:
        raise BoardFileError(f"{name}: holds no instance; write one JSON object per line")
    return out


def parse_gaps(name: str, text: str, one_based: bool = False, toroidal: bool = False) -> Instance:
    """A text board with `.` (or `-`, `?`) where a column has no queen yet (rows numbered from
    1 when `one_based`)."""
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
    """Every instance of one file's text, in file order (format by suffix, then content); `d`
    applies to `.param` files, `one_based` to text boards."""
    low = name.lower()
    if low.endswith((".jsonl", ".ndjson", ".json")):
        if d is not None:
            raise BoardFileError(f"{name}: ':{d}' applies to excluded-diagonals .param files only")
        return parse_jsonl(name, text, toroidal)
    if low.endswith((".param", ".essence", ".eprime-param")) or re.search(
        r"^\s*(letting|diags\s*=|n\s*=)", text, re.M
    ):
        return [parse_param(name, text, d, toroidal)]
    if d is not None:
        raise BoardFileError(f"{name}: ':{d}' applies to excluded-diagonals .param files only")
    return [parse_gaps(name, text, one_based, toroidal)]
