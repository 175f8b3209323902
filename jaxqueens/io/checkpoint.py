"""Checkpoint files: a tree of host arrays plus a fingerprint of the settings, as one `.npz`.

Every resumable driver keeps what it has finished as a tree of nested dicts and NamedTuples
whose leaves are NumPy arrays or scalars. `save` flattens it to `.npz` entries named by their
path (`done.rows`) beside a header (the format, the settings, a digest of the arrays) and writes
the file atomically. `load` reads it back against a schema (the same tree with a `Spec` at every
leaf) and refuses, in one line naming the file, a file that is not a whole checkpoint, another
format, other settings, or arrays altered or not fitting the schema; so a driver never indexes
past what it planned, whatever the file holds.
"""

from __future__ import annotations

import hashlib
import json
import zipfile
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from jaxqueens import _lazy
from jaxqueens.errors import QueensError
from jaxqueens.io import files, jsonl
from jaxqueens.io.atomic import atomic_path

FILENAME = "checkpoint.npz"
"""The checkpoint inside a run's `--out` folder (`--resume DIR` reads it back)."""

FORMAT = 2
"""The layout this version writes and reads (1: each driver's own flat arrays beside a
`fingerprint` entry; 2: one header and a tree of arrays). Raise it whenever the layout or the
meaning of a saved tree changes, so that older files are refused rather than misread."""

HEADER = "header"  # the `.npz` entry holding the JSON header (`format`, `settings`, `digest`)
SEP = "."  # joins the keys of a leaf's path into its entry name (`done.rows`)

gather = _lazy.load("jaxqueens.parallel.gather")  # JAX loads only when process_path asks


class Spec(NamedTuple):
    """What one saved array must be (a leaf of a schema)."""

    #: a dtype (`np.uint32`: exactly that) or an abstract kind (`np.integer`, `np.floating`,
    #: `np.str_`: any width of it).
    dtype: Any
    #: per axis, an int (that size), a name (a size that is the same wherever the name stands in the
    #: schema, e.g. `"chains"`), or None (any size).
    shape: tuple[int | str | None, ...] = ()
    optional: bool = False  #: the leaf may be absent (it loads as None).


Tree = Any
"""Nested dicts (str keys) and NamedTuples; leaves are arrays, scalars or None (left out)."""


def like(tree: Tree) -> Tree:
    """The schema a tree of arrays itself fits, each leaf's exact dtype and shape in its place
    (a run's fresh state checks the state it resumes)."""
    children = _children(tree)
    if children is None:
        leaf = np.asarray(tree) if not hasattr(tree, "dtype") else tree
        return Spec(np.dtype(leaf.dtype), tuple(leaf.shape))
    return {key: like(child) for key, child in children.items() if child is not None}


def process_path(path: str | Path) -> Path:
    """This process's checkpoint file, where each process keeps its own (`count`, `complete`,
    `evolve`): `path` itself in a single-process run, else `<stem>.process<p>of<P><suffix>`
    beside it."""
    path, procs = Path(path), gather.process_count()
    if procs == 1:
        return path
    return path.with_name(f"{path.stem}.process{gather.process_index()}of{procs}{path.suffix}")


def saved(path: str | Path) -> list[Path]:
    """The files of the checkpoint `path` that exist: `path` itself and the per-process files
    beside it (`process_path`), `path` first, found without asking JAX how many processes
    run."""
    path = Path(path)
    each = sorted(path.parent.glob(f"{path.stem}.process*of*{path.suffix}"))
    return [path, *each] if path.exists() else each


def any_saved(path: str | Path) -> bool:
    """Whether `path` or a per-process file beside it (`process_path`) exists, without asking
    JAX how many processes run."""
    return bool(saved(path))


def _canonical(fingerprint: dict) -> str:
    return json.dumps(fingerprint, sort_keys=True, default=str)


def _children(node: Tree) -> Mapping[str, Tree] | None:
    """The named children of an inner node (dict or NamedTuple), None for a leaf."""
    if isinstance(node, tuple) and hasattr(node, "_asdict"):
        return node._asdict()
    if isinstance(node, Mapping):
        return node
    return None


def _flatten(tree: Tree, prefix: str = "") -> dict[str, Any]:
    """`{entry name: leaf}` of a tree (None leaves left out)."""
    children = _children(tree)
    if children is None or isinstance(tree, Spec):
        return {} if tree is None else {prefix: tree}
    flat: dict[str, Any] = {}
    for key, child in children.items():
        if not isinstance(key, str) or not key or SEP in key:
            raise TypeError(f"checkpoint key {key!r}: use a non-empty str without {SEP!r}")
        flat.update(_flatten(child, f"{prefix}{SEP}{key}" if prefix else key))
    if not prefix and HEADER in flat:
        raise TypeError(f"checkpoint key {HEADER!r} is the header's")
    return flat


def _digest(arrays: Mapping[str, np.ndarray]) -> str:
    """A digest of every entry's name, dtype, shape and bytes (altered arrays change it; SHA-1
    for its speed, about twice BLAKE2's here: it guards against edits, not against forgers)."""
    h = hashlib.sha1(usedforsecurity=False)
    for key in sorted(arrays):
        a = np.ascontiguousarray(arrays[key])
        h.update(f"{key}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.data if a.size else b"")
    return h.hexdigest()


def save(path: str | Path, tree: Tree, fingerprint: dict) -> None:
    """Write a tree of host arrays and the `fingerprint` of the settings a resumed run must
    match, atomically (TypeError for an array of Python objects)."""
    arrays = {key: np.asarray(leaf) for key, leaf in _flatten(tree).items()}
    for key, a in arrays.items():
        if a.dtype.hasobject:
            raise TypeError(f"checkpoint entry {key!r} holds Python objects; save arrays")
    header = {"format": FORMAT, "settings": fingerprint, "digest": _digest(arrays)}
    entries: dict[str, Any] = {**arrays, HEADER: _canonical(header)}
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        np.savez(f, **entries)


def _unreadable(path, reason: str) -> QueensError:
    reason = (reason.splitlines() or [""])[0][:120]
    return QueensError(f"{path}: not a readable checkpoint ({reason}); start without --resume")


def _read(path) -> tuple[dict, dict[str, np.ndarray]]:
    """(header, arrays) of a checkpoint file; QueensError for any file that is not one."""
    try:
        with files.open_input(path, QueensError) as (f, _), np.load(f, allow_pickle=False) as z:
            names = set(z.files)
            text = str(z[HEADER]) if HEADER in names else None
            arrays = {k: z[k] for k in names - {HEADER}}
        header = None if text is None else jsonl.loads(text)
    except QueensError as err:  # not a regular file, missing, unreadable: named by open_input
        raise _unreadable(path, str(err).split(": ", 1)[-1]) from None
    except (
        OSError,
        ValueError,
        KeyError,
        EOFError,
        RecursionError,
        zipfile.BadZipFile,
        zlib.error,
    ) as err:
        raise _unreadable(path, str(err) or type(err).__name__) from None
    if header is None:
        if "fingerprint" in names:  # the flat layout of format 1
            raise QueensError(
                f"{path}: a checkpoint of an older version of jaxqueens (format 1; this version "
                f"reads format {FORMAT}); resume it with the version that wrote it, or delete it "
                "to start over"
            )
        raise _unreadable(path, "no header")
    if not isinstance(header, dict) or not isinstance(header.get("settings"), dict):
        raise _unreadable(path, "its header is not a table of settings")
    if header.get("format") != FORMAT:
        raise QueensError(
            f"{path}: a checkpoint of another version of jaxqueens (format "
            f"{header.get('format')}; this version reads format {FORMAT}); resume it with the "
            "version that wrote it, or delete it to start over"
        )
    if header.get("digest") != _digest(arrays):
        raise _unreadable(path, "its arrays were changed after it was written")
    return header, arrays


def _shown(shape: tuple) -> str:
    """A shape as Python writes a tuple, names unquoted: `(chains, 8)`, `(5,)`."""
    parts = ["?" if s is None else str(s) for s in shape]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _check(path, key: str, a: np.ndarray, spec: Spec, sizes: dict[str, tuple[int, str]]) -> None:
    """Refuse an entry whose dtype or shape the schema does not allow (`sizes`: the named
    sizes met so far, with the entry that fixed each)."""
    if not np.issubdtype(a.dtype, spec.dtype):
        want = getattr(spec.dtype, "__name__", str(spec.dtype))
        raise _unreadable(path, f"{key} has dtype {a.dtype}, expected {want}")
    bad = len(a.shape) != len(spec.shape) or any(
        isinstance(w, int) and g != w for g, w in zip(a.shape, spec.shape, strict=False)
    )
    if bad:
        raise _unreadable(path, f"{key} has shape {a.shape}, expected {_shown(spec.shape)}")
    for got, want in zip(a.shape, spec.shape, strict=True):
        if isinstance(want, str):
            size, where = sizes.setdefault(want, (got, key))
            if got != size:
                raise _unreadable(
                    path, f"{key} has {want} = {got} on shape {a.shape}, but {where} has {size}"
                )


def _unflatten(schema: Tree, flat: Mapping[str, Any], prefix: str = "") -> Any:
    """The tree of `schema`'s shape (dicts for its inner nodes) with the leaves of `flat`."""
    if isinstance(schema, Spec):
        return flat.get(prefix)
    children = _children(schema)
    assert children is not None, f"schema leaf {prefix!r} is not a Spec"
    return {
        key: _unflatten(child, flat, f"{prefix}{SEP}{key}" if prefix else key)
        for key, child in children.items()
    }


def load(path: str | Path, fingerprint: dict, schema: Tree) -> dict[str, Any]:
    """The tree of a checkpoint written with the same `fingerprint` (one of other settings is
    refused with the names of those that differ), checked against `schema` (nested dicts or
    NamedTuples with a `Spec` at every leaf): nested dicts shaped like `schema` (a NamedTuple
    node becomes a dict of its fields), leaves NumPy arrays (None for an absent optional leaf).

    Raises:
      QueensError: one line naming the file and the way on (module docstring).
    """
    header, arrays = _read(path)
    saved, want = header["settings"], json.loads(_canonical(fingerprint))
    if saved != want:
        diff = sorted(k for k in set(saved) | set(want) if saved.get(k) != want.get(k))
        raise QueensError(
            f"{path}: the checkpoint was written with other settings "
            f"({', '.join(diff)} differ); resume with the same options"
        )
    specs: dict[str, Spec] = _flatten(schema)
    extra = sorted(set(arrays) - set(specs))
    if extra:
        raise _unreadable(path, f"an unexpected array '{extra[0]}'")
    sizes: dict[str, tuple[int, str]] = {}
    for key, spec in specs.items():
        if key not in arrays:
            if spec.optional:
                continue
            raise _unreadable(path, f"no array '{key}'")
        _check(path, key, arrays[key], spec, sizes)
    return _unflatten(schema, arrays)
