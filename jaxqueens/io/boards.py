"""Board files: the classic text format, `.npy` batches and JSON lines.

Text (any other suffix) holds one integer per line, the row of the queen in column 0, 1, 2, ...;
`.npy` an integer array `[B, n]` (or `[n]`); `.jsonl` / `.ndjson` one object per line,
`{"n": 8, "rows": [0, 4, 7, 5, 2, 6, 1, 3]}`. Every reader raises `BoardFileError` with a
one-line message naming the file, the line where it applies, and the fix; every writer goes
through `io.atomic`, so a failed write leaves the target untouched. The docs' core page
gives the formats in full.
"""

from __future__ import annotations

import io
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.lib.format as npformat

from jaxqueens.errors import BoardFileError, QueensError, clip
from jaxqueens.io import boards_text, files, jsonl
from jaxqueens.io.atomic import atomic_path, write_bytes
from jaxqueens.parallel import memory
from jaxqueens.parallel.memory import format_bytes

# Bytes of memory needed per byte of file, by format. Text: the bytes, int64
# values (4 per 2-byte line), the int32 result. npy: the bytes, the array, an
# int32 copy (4x a uint8 array). JSON lines: Python lists of ints.
MEMORY_PER_FILE_BYTE = {"text": 8, "npy": 6, "jsonl": 16}
# Bytes of memory a reader may use; None asks the OS for the available memory.
MEMORY_LIMIT: int | None = None
_JSON_HINT = 'each line must be one JSON object like {"n": 8, "rows": [0, 4, 7, 5, 2, 6, 1, 3]}'


def _read_all(path: str | os.PathLike, kind: str, memory_limit: int | None = None) -> bytes:
    """Read a whole file of a `kind` of `MEMORY_PER_FILE_BYTE`, turning every OS problem into a
    `BoardFileError`; `memory_limit` as `read_board`'s."""
    name = os.fspath(path)
    factor = MEMORY_PER_FILE_BYTE[kind]
    with files.open_input(name) as (f, size):  # regular files only; every failure names the file
        limit = memory_limit if memory_limit is not None else MEMORY_LIMIT
        limit = limit if limit is not None else memory.available_memory()
        if limit is not None and size * factor > limit:
            raise BoardFileError(
                f"{name}: too large for memory: reading {format_bytes(size)} needs about "
                f"{format_bytes(size * factor)} but only {format_bytes(limit)} is available; "
                "free memory or use a machine with more"
            )
        try:
            return f.read()
        except OSError as exc:
            raise BoardFileError(
                f"{name}: cannot read ({exc.strerror or exc}); check the path"
            ) from None


def read_board(
    path: str | os.PathLike, one_based: bool = False, *, memory_limit: int | None = None
) -> np.ndarray:
    """Read a text board file (one integer per line: the row of the queen in column 0, 1, ...;
    counted from 1 when `one_based`) as int32 `[n]` 0-based rows. A file larger than
    `memory_limit` allows (bytes; default `MEMORY_LIMIT`, else the memory the OS reports
    available) is refused before reading.

    Raises:
      BoardFileError: the file is missing, unreadable, too large, not text,
        empty, or has a bad line (the message names the line).
    """
    name = os.fspath(path)
    return boards_text.parse(
        name, files.without_bom(_read_all(name, "text", memory_limit)), one_based
    )


def _as_boards(boards: Any, what: str) -> np.ndarray:
    """Validate boards for writing: integer `[B, n]` (or `[n]`), values in 0..n-1."""
    arr = np.asarray(boards)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or not np.issubdtype(arr.dtype, np.integer):
        raise QueensError(
            f"cannot write {what}: expected integer boards [B, n], got {arr.dtype} {arr.shape}"
        )
    n = arr.shape[1]
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise QueensError(f"cannot write {what}: rows must lie in 0..{n - 1}; pass 0-based rows")
    return arr


def write_board(path: str | os.PathLike, rows: Any, one_based: bool = False) -> None:
    """Write one board `[n]` as text, one row per line (atomically).

    Args:
      path: Target file.
      rows: int `[n]`, 0-based rows.
      one_based: Write rows as 1..n.

    Raises:
      QueensError: `rows` is not one non-empty board of whole rows in 0..n-1.
    """
    arr = np.asarray(rows)
    if arr.ndim != 1 or arr.size == 0:
        raise QueensError(
            f"cannot write a board file: expected one board rows[n], got shape {arr.shape}"
        )
    arr = _as_boards(arr, "a board file")[0].astype(np.int64) + int(one_based)
    write_bytes(path, ("\n".join(map(str, arr.tolist())) + "\n").encode())


def _check_npy_header(name: str, data: bytes) -> None:
    """Refuse a header whose shape needs more bytes than the file holds, before `np.load`
    allocates the array it claims (a damaged or hostile header must not exhaust memory)."""
    buf = io.BytesIO(data)
    version = npformat.read_magic(buf)
    readers = {(1, 0): npformat.read_array_header_1_0, (2, 0): npformat.read_array_header_2_0}
    if version in readers:
        shape, _, dtype = readers[version](buf)
    else:  # 3.0 (utf-8 field names): NumPy's own reader
        # NumPy's private reader: its stubs leave it out
        shape, _, dtype = npformat._read_array_header(buf, version)  # type: ignore[attr-defined]
    need = math.prod(shape) * dtype.itemsize
    have = len(data) - buf.tell()
    if need > have:
        raise BoardFileError(
            f"{name}: not a valid .npy array (the header claims shape {shape}, "
            f"{format_bytes(need)}, but the file holds only {format_bytes(have)} of data: "
            "truncated or damaged); write boards with numpy.save"
        )


def read_boards_npy(path: str | os.PathLike) -> np.ndarray:
    """Read boards from a `.npy` file holding an integer `[B, n]` array (or `[n]`: one board)
    as int32 `[B, n]`.

    Raises:
      BoardFileError: unreadable file, not a plain `.npy` array, non-integer
        dtype, wrong ndim, or rows outside 0..n-1.
    """
    name = os.fspath(path)
    data = _read_all(name, "npy")
    if data.startswith(b"PK\x03\x04"):
        raise BoardFileError(
            f"{name}: is a .npz archive; save a single [B, n] array with numpy.save"
        )
    if not data.startswith(b"\x93NUMPY"):
        raise BoardFileError(
            f"{name}: not a .npy file (no NumPy header); write boards with numpy.save"
        )
    try:
        _check_npy_header(name, data)
        arr = np.load(io.BytesIO(data), allow_pickle=False)
    except BoardFileError:
        raise
    except (ValueError, OSError, EOFError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise BoardFileError(
            f"{name}: not a valid .npy array ({reason}); write boards with numpy.save"
        ) from None
    if not np.issubdtype(arr.dtype, np.integer):
        raise BoardFileError(
            f"{name}: dtype {arr.dtype} is not an integer type; save boards with .astype(np.int32)"
        )
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise BoardFileError(
            f"{name}: array of shape {arr.shape}; expected boards [B, n] (or one board [n]), n >= 1"
        )
    n = arr.shape[1]
    bad = np.argwhere((arr < 0) | (arr >= n))
    if len(bad):
        b, c = (int(i) for i in bad[0])
        raise BoardFileError(
            f"{name}: board {b}, column {c}: row {arr[b, c]} out of range 0..{n - 1}; rows must "
            "be 0-based"
        )
    return arr.astype(np.int32)


def write_npy(path: str | os.PathLike, arr: np.ndarray) -> None:
    """Write any array to `.npy` atomically (no pickled objects)."""
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        np.save(f, arr, allow_pickle=False)


def write_boards_npy(path: str | os.PathLike, boards: Any, dtype: Any = np.int32) -> None:
    """Write boards `[B, n]` (or one board `[n]`) to `.npy` atomically.

    Args:
      path: Target file.
      boards: int `[B, n]`, 0-based rows.
      dtype: Stored integer dtype; e.g. `np.uint8` for compact files when n <= 256.

    Raises:
      QueensError: `boards` is not boards of whole rows in 0..n-1, or `dtype` cannot hold them.
    """
    arr = _as_boards(boards, "a .npy file")
    dtype = np.dtype(dtype)
    if not np.issubdtype(dtype, np.integer) or (arr.size and arr.max() > np.iinfo(dtype).max):
        raise QueensError(
            f"cannot write {path}: dtype {dtype} cannot hold rows up to {arr.shape[1] - 1}"
        )
    write_npy(path, arr.astype(dtype))


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def write_jsonl(
    path: str | os.PathLike,
    boards: Any,
    extra: Sequence[Mapping[str, Any]] | Mapping[str, Any] | None = None,
) -> None:
    """Write boards as JSON lines, `{"n": ..., "rows": [...], **extra[i]}` per board (atomically).

    Args:
      path: Target file.
      boards: int `[B, n]` (or one board `[n]`), 0-based rows.
      extra: One dict per board merged into its line, or one dict for every line.

    Raises:
      QueensError: `boards` is not boards of whole rows in 0..n-1, `extra` has another length,
        or an extra key would replace `n` or `rows` or is an instance key.
    """
    arr = _as_boards(boards, "a JSON lines file")
    if extra is None or isinstance(extra, Mapping):
        extra = [extra or {}] * len(arr)
    if len(extra) != len(arr):
        raise QueensError(f"cannot write {path}: {len(extra)} extra dicts for {len(arr)} boards")
    n = arr.shape[1]
    lines = []
    for rows, more in zip(arr.tolist(), extra, strict=True):
        if "n" in more or "rows" in more:
            raise QueensError(f"cannot write {path}: extra keys must not replace 'n' or 'rows'")
        clash = [k for k in more if k in jsonl.INSTANCE_KEYS]
        if clash:
            raise QueensError(
                f"cannot write {path}: extra key {clash[0]!r} is an instance key; a board line "
                "with it would read as neither a board nor an instance (jaxqueens.io.jsonl)"
            )
        lines.append(json.dumps({"n": n, "rows": rows, **more}, default=_json_default) + "\n")
    write_bytes(path, "".join(lines).encode())


def read_jsonl(path: str | os.PathLike) -> np.ndarray:
    """Read boards from a JSON lines file, one `{"n": ..., "rows": [...]}` object per line
    (blank lines skipped; other keys are labels, ignored, but never an instance key: `jsonl`),
    as int32 `[B, n]`; `[0, 0]` for a file without boards.

    Raises:
      BoardFileError: naming the line with bad JSON, an instance line (or one that mixes board
        and instance keys), a missing or malformed "rows", an "n" that disagrees with the rows
        or with earlier lines, or rows outside 0..n-1.
    """
    name = os.fspath(path)
    data = files.without_bom(_read_all(name, "jsonl"))
    boards: list[list[int]] = []
    first = None  # (lineno, n) of the first board
    for lineno, raw in enumerate(io.BytesIO(data), start=1):
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise boards_text.not_text(name, lineno, data) from None
        if not line:
            continue
        where = f"{name}:{lineno}"
        obj = jsonl.parse(line, where)
        if jsonl.kind(obj, where) != "board":
            keys = [k for k in obj if k in jsonl.INSTANCE_KEYS]
            if keys:
                raise BoardFileError(
                    f'{where}: is an instance (key "{keys[0]}"), not a board; decide instances '
                    f"with jaxqueens complete, or give boards like {jsonl.BOARD_EXAMPLE}"
                )
            raise BoardFileError(f'{where}: no "rows" in {clip(line, 40)!r}; {_JSON_HINT}')
        rows = jsonl.board_rows(obj, where)
        n = len(rows)
        if first is not None and first[1] != n:
            raise BoardFileError(
                f"{where}: board has n = {n} but line {first[0]} has n = {first[1]}; keep one "
                "board size per file"
            )
        first = first or (lineno, n)
        boards.append(rows)
    if not boards:
        return np.zeros((0, 0), dtype=np.int32)
    return np.array(boards, dtype=np.int32)


def load_boards(path: str | os.PathLike, one_based: bool = False) -> np.ndarray:
    """Read boards from any supported file, choosing the format by suffix.

    Args:
      path: `.npy`, `.jsonl`/`.ndjson`, or anything else as a text board.
      one_based: The text board counts rows from 1 (text files only).

    Returns:
      int32 `[B, n]` (`[1, n]` for a text board).

    Raises:
      BoardFileError: the file cannot be read or is not a valid board file (one line naming the
        file and, where it applies, the line).
    """
    suffix = Path(path).suffix.lower()
    if suffix in (".npy", ".jsonl", ".ndjson"):
        if one_based:
            raise BoardFileError(
                f"{os.fspath(path)}: --one-based applies to text board files only; drop it"
            )
        return read_boards_npy(path) if suffix == ".npy" else read_jsonl(path)
    return read_board(path, one_based)[None, :]
