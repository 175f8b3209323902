"""Instance files for `jaxqueens complete`: constrained boards to decide, count or enumerate.

Each format is read into a `jaxqueens.core.constraints.Constraints`: CSPLib prob079 excluded
diagonals (`.param`, Gent, Jefferson & Nightingale 2017; `FILE:d` keeps the first d pairs),
n-Queens Completion as Essence' parameters, JSON lines (one instance per line, or a board line:
every queen fixed), and text boards with gaps (`.` for a column without a queen). A folder or a
tar archive is searched for such files. The readers are strict: every bad file gets one line
naming the file and the line (`BoardFileError`). The docs' core page gives the formats in full.
"""

from __future__ import annotations

import os
import re
import tarfile
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from jaxqueens.core import arguments
from jaxqueens.core.constraints import Constraints, completion, excluded_diagonals, from_dict
from jaxqueens.errors import BoardFileError, QueensError
from jaxqueens.io import files, jsonl

SUFFIXES = (".param", ".jsonl", ".ndjson", ".json", ".txt", ".essence", ".eprime-param")
ARCHIVES = (".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tbz", ".tar.xz", ".txz", ".tar")
GAP = (".", "-", "?")
MAX_BYTES = 64 << 20  # one instance file; larger is refused (instances are small)
MAX_ARCHIVE_BYTES = 1 << 30  # one archive (compressed); the members are each MAX_BYTES at most
PROB079_KEYS = ("n", "numdiags", "diags")
ESSENCE_KEYS = ("n", "init", "given_queens")
_COMPRESSED = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"PK\x03\x04", "zip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)


class Instance(NamedTuple):
    """One instance: where it came from, the d used (excluded-diagonals files) and the model."""

    source: str  # file (archive member: ARCHIVE/member; JSON lines: FILE:LINE)
    d: int | None
    model: Constraints


_NUM = arguments.WHOLE_NUMBER  # ASCII digits only, as every format reads numbers
_PAIRS = re.compile(r"\[\s*(" + _NUM + r")\s*,\s*(" + _NUM + r")\s*\]")


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
    pairs = [(int(a), int(b)) for a, b in _PAIRS.findall(body)]
    rest = _PAIRS.sub("", body).replace(",", "").strip()
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
    start: int  # offset of the value in the text
    end: int
    line: int  # line of the key


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


def parse_param(name: str, text: str, d: int | None = None, toroidal: bool = False) -> Instance:
    """A CSPLib `.param` file: excluded diagonals (`n`, `numdiags`, `diags`, each once), or Essence'
    `letting` completion (`letting n be N`, `letting init be [[x, y], ...]`).

    Args:
      name: the file's name (in messages and the instance's name).
      text: its text.
      d: use only the first d excluded diagonals (None: all).
      toroidal: queens attack along diagonals modulo n.

    Returns:
      The `Instance`.
    """
    text = "\n".join(line.split("$", 1)[0] for line in text.splitlines())  # Essence' comments
    if re.search(r"^\s*letting\b", text, re.M):
        text = re.sub(r"(?m)^[ \t]*language\b.*$", "", text)  # "language ESSENCE' 1.0"
        st = _statements(name, text, _ESSENCE, ESSENCE_KEYS, "letting NAME be VALUE")
        if "n" not in st:
            raise BoardFileError(f"{name}: no 'letting n be N' line; an Essence' instance names n")
        n = _integer(name, text, "n", st["n"])
        placed = _pairs(name, text, st["init"].start, st["init"].end) if "init" in st else []
        if "given_queens" in st:
            given = _integer(name, text, "given_queens", st["given_queens"])
            if given != len(placed):
                raise BoardFileError(
                    f"{name}:{st['given_queens'].line}: given_queens = {given} but init places "
                    f"{len(placed)} queens; make them agree"
                )
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
    if "numdiags" in st:
        nd = _integer(name, text, "numdiags", st["numdiags"])
        if nd != len(pairs):
            raise BoardFileError(
                f"{name}:{st['numdiags'].line}: numdiags = {nd} but diags lists "
                f"{len(pairs)} pairs; make them agree"
            )
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
    (`{"n": 8, "rows": [...]}`) is a completion instance with every queen fixed.

    Args:
      name: the file's name.
      text: its text.
      toroidal: queens attack along diagonals modulo n.

    Returns:
      The instances, in file order.
    """
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
    """A text board with `.` (or `-`, `?`) where a column has no queen yet.

    Args:
      name: the file's name.
      text: its text.
      one_based: rows are numbered from 1.
      toroidal: queens attack along diagonals modulo n.

    Returns:
      The `Instance`.
    """
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
    """Every instance of one file's text (format by suffix, then content).

    Args:
      name: the file's name.
      text: its text.
      d: `.param` files: use only the first d excluded diagonals.
      one_based: text boards: rows are numbered from 1.
      toroidal: queens attack along diagonals modulo n.

    Returns:
      The instances, in file order.
    """
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


def _decode(name: str, data: bytes) -> str:
    try:
        return files.without_bom(data).decode("utf-8")
    except UnicodeDecodeError:
        packed = next((what for magic, what in _COMPRESSED if data.startswith(magic)), None)
        if packed is not None:
            raise BoardFileError(
                f"{name}: is {packed}-compressed, not instance text; instance sets are read "
                f"from tar archives named {', '.join(ARCHIVES)}"
            ) from None
        raise BoardFileError(
            f"{name}: not UTF-8 text (a binary file?); give instance files"
        ) from None


def split_spec(spec: str) -> tuple[str, int | None]:
    """`FILE:d` -> (FILE, d); a spec without a numeric `:d` tail is (spec, None). A tail that is a
    negative number (`FILE:-1`) is read as d too, so its range check names it.

    Args:
      spec: the command line's instance argument.

    Returns:
      `(path, d)`.
    """
    m = re.fullmatch(r"(.+):(" + _NUM + ")", spec)
    if m and not os.path.exists(spec):
        return m.group(1), int(m.group(2))
    return spec, None


def _member_kind(member: tarfile.TarInfo) -> str:
    for test, what in (
        (member.ischr, "a character device"),
        (member.isblk, "a block device"),
        (member.isfifo, "a named pipe"),
    ):
        if test():
            return what
    return "not a regular file"


def _members(path: Path) -> Iterator[tuple[str, bytes]]:
    """`(ARCHIVE/member, bytes)` of every instance file of a tar archive (any compression
    tarfile reads), hard and symbolic links to members read as their target."""
    with files.open_input(path) as (f, size):
        if size > MAX_ARCHIVE_BYTES:
            raise BoardFileError(f"{path}: {size:,} bytes is too large for an instance archive")
        try:
            with tarfile.open(fileobj=f, mode="r:*") as tar:
                for member in sorted(tar.getmembers(), key=lambda m: m.name):
                    if member.isdir() or not member.name.lower().endswith(SUFFIXES):
                        continue
                    where = f"{path}/{member.name}"
                    if not (member.isfile() or member.islnk() or member.issym()):
                        raise BoardFileError(
                            f"{where}: is {_member_kind(member)} in the archive, not a file; "
                            "remove it from the archive"
                        )
                    try:
                        data = tar.extractfile(member)
                    except KeyError:  # a link whose target is not in the archive
                        raise BoardFileError(
                            f"{where}: links to {member.linkname!r}, which the archive does not "
                            "hold; add it or remove the link"
                        ) from None
                    if data is None:
                        raise BoardFileError(f"{where}: cannot be read from the archive")
                    content = data.read(MAX_BYTES + 1)
                    if len(content) > MAX_BYTES:
                        raise BoardFileError(
                            f"{where}: more than {MAX_BYTES:,} bytes is too large for an "
                            "instance file"
                        )
                    yield where, content
        except (tarfile.TarError, EOFError, OSError, zlib.error) as err:
            reason = (str(err).splitlines() or [""])[0].rstrip(":")[:80] or type(err).__name__
            raise BoardFileError(
                f"{path}: not a readable tar archive ({reason}); check the file"
            ) from None


def _files(path: Path) -> Iterator[tuple[str, bytes]]:
    if path.is_dir():
        try:
            found = sorted(
                p
                for p in path.rglob("*")
                if (p.name.lower().endswith(SUFFIXES) or p.name.lower().endswith(ARCHIVES))
                and not p.is_dir()
            )
        except OSError as err:
            raise BoardFileError(
                f"{path}: cannot list the folder ({err.strerror or err}); check it"
            ) from None
        for p in found:
            yield from _files(p)
        return
    if path.name.lower().endswith(ARCHIVES):
        yield from _members(path)
        return
    data = files.read_input(path, max_bytes=MAX_BYTES, too_large="too large for an instance file")
    yield str(path), data


class Loaded(NamedTuple):
    instances: list[Instance]
    skipped: list[str]  # excluded-diagonals files listing fewer than the d asked for
    skipped_d: tuple[int, ...] = ()  # the d each skipped file was asked for

    def skipped_note(self) -> str:
        """`"K files list fewer than D diagonals"` (each d named) or `""`."""
        if not self.skipped:
            return ""
        ds = sorted(set(self.skipped_d))
        asked = " or ".join(map(str, ds)) if ds else "the d asked for"
        return f"{len(self.skipped)} files list fewer than {asked} diagonals"

    def require_some(self) -> None:
        """Raise unless at least one instance was read (naming why, when files were skipped)."""
        if not self.instances:
            note = self.skipped_note()
            raise BoardFileError(
                "no instance to solve" + (f": all {note}; ask for fewer diagonals" if note else "")
            )


def load_instances(
    specs: Sequence[str],
    diags: int | None = None,
    *,
    one_based: bool = False,
    toroidal: bool = False,
    skip_short: bool = True,
) -> Loaded:
    """Every instance named by `specs` (files, `FILE:d`, folders, tar archives).

    Args:
      specs: the files, `FILE:d` specs, folders and tar archives to read, in order.
      diags: d for every excluded-diagonals file without its own `:d` (`FOLDER:d` sets it for
        the files of a folder or archive).
      one_based: text boards with gaps count rows from 1.
      toroidal: read every instance as toroidal.
      skip_short: a file of a folder or archive listing fewer than d diagonals is skipped (and
        named in `skipped`) instead of being an error; a file named alone is always an error.

    Returns:
      A `Loaded`: the instances read, in order, and the files skipped.

    Raises:
      BoardFileError: a file that cannot be read or is not a valid instance file (one line
        naming the file and, where it applies, the line), or a d out of range.
    """
    out, skipped, skipped_d = [], [], []
    for spec in specs:
        path, spec_d = split_spec(str(spec))
        d = diags if spec_d is None else spec_d
        if d is not None and d < 0:
            raise BoardFileError(
                f"{spec}: d = {d} is out of range; give the number of diagonals to use, 0 or more"
            )
        named = f":{d}" if spec_d is not None else f"--diags {d}"
        many = Path(path).is_dir() or path.lower().endswith(ARCHIVES)
        count = 0
        for name, data in _files(Path(path)):
            text = _decode(name, data)
            letting = re.search(r"^\s*letting\b", text, re.M) is not None
            prob079 = name.lower().endswith(".param") and not letting
            if d is not None and many and skip_short and prob079:
                pairs = re.search(r"^\s*diags\s*=(.*)", text, re.M | re.S)
                if pairs and len(_PAIRS.findall(pairs.group(1))) < d:
                    skipped.append(name)
                    skipped_d.append(d)
                    continue
            try:
                got = parse(name, text, None if many and not prob079 else d, one_based, toroidal)
            except QueensError as err:
                if not isinstance(err, BoardFileError):
                    err = BoardFileError(f"{name}: {err}")
                raise BoardFileError(str(err).replace(f"':{d}'", f"'{named}'")) from None
            out.extend(got)
            count += len(got)
        if many and not count and not skipped:
            raise BoardFileError(f"{path}: holds no instance files ({', '.join(SUFFIXES)})")
    return Loaded(out, skipped, tuple(skipped_d))
