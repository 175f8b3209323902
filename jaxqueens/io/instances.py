"""Instance files for `jaxqueens complete`: constrained boards to decide, count or enumerate.

`load_instances` reads files, folders and tar archives of the formats of
`jaxqueens.io.instances_formats` (CSPLib prob079 `.param`, Essence' completion parameters, JSON
lines, text boards with gaps), each into a `jaxqueens.core.constraints.Constraints`. The readers
are strict: every bad file gets one line naming the file and the line (`BoardFileError`). The
docs' core page gives the formats in full.
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
from jaxqueens.errors import BoardFileError, QueensError
from jaxqueens.io import files
from jaxqueens.io.instances_formats import PAIRS, Instance, parse

SUFFIXES = (".param", ".jsonl", ".ndjson", ".json", ".txt", ".essence", ".eprime-param")
ARCHIVES = (".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tbz", ".tar.xz", ".txz", ".tar")
MAX_BYTES = 64 << 20  # one instance file; larger is refused (instances are small)
MAX_ARCHIVE_BYTES = 1 << 30  # one archive (compressed); the members are each MAX_BYTES at most
_COMPRESSED = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"PK\x03\x04", "zip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)


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
    negative number (`FILE:-1`) is read as d too, so its range check names it."""
    m = re.fullmatch(r"(.+):(" + arguments.WHOLE_NUMBER + ")", spec)
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
    skipped: list[str]  #: excluded-diagonals files listing fewer than the d asked for
    skipped_d: tuple[int, ...] = ()  #: the d each skipped file was asked for

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
                if pairs and len(PAIRS.findall(pairs.group(1))) < d:
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
