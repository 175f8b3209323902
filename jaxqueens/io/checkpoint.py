"""Checkpoint files: arrays plus a fingerprint of the settings, written atomically.

Every resumable command (chunked chains, GA generations, stats rounds, estimator calls) saves
what it has finished with :func:`save` and reads it back with :func:`load`, which refuses a file
written with other settings and names the settings that differ.
"""

from __future__ import annotations

import json
import zipfile
import zlib
from pathlib import Path

import numpy as np

from jaxqueens import _lazy
from jaxqueens.errors import QueensError
from jaxqueens.io import files
from jaxqueens.io.atomic import atomic_path

FILENAME = "checkpoint.npz"
"""The checkpoint inside a run's ``--out`` folder (``--resume DIR`` reads it back)."""

gather = _lazy.load("jaxqueens.parallel.gather")  # JAX loads only when process_path asks


def process_path(path: str | Path) -> Path:
    """This process's checkpoint file where each process keeps its own (``count``, ``complete``):
    ``path`` itself in a single-process run, else ``<stem>.process<p>of<P><suffix>`` beside it."""
    path, procs = Path(path), gather.process_count()
    if procs == 1:
        return path
    return path.with_name(f"{path.stem}.process{gather.process_index()}of{procs}{path.suffix}")


def any_saved(path: str | Path) -> bool:
    """Whether ``path`` or a per-process file beside it (:func:`process_path`) exists, without
    asking JAX how many processes run."""
    path = Path(path)
    return path.exists() or any(path.parent.glob(f"{path.stem}.process*of*{path.suffix}"))


def _canonical(fingerprint: dict) -> str:
    return json.dumps(fingerprint, sort_keys=True, default=str)


def save(path: str | Path, fingerprint: dict, **arrays) -> None:
    """Write ``arrays`` and ``fingerprint`` to ``path`` (``.npz``) atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        np.savez(f, **arrays, fingerprint=_canonical(fingerprint))


def _unreadable(path, reason: str) -> QueensError:
    reason = (reason.splitlines() or [""])[0][:120]
    return QueensError(f"{path}: not a readable checkpoint ({reason}); start without --resume")


def load(
    path: str | Path, fingerprint: dict, shapes: dict[str, tuple[int | None, ...]] | None = None
) -> dict[str, np.ndarray]:
    """The arrays of a checkpoint made with the same ``fingerprint`` (QueensError otherwise).

    Args:
      shapes: the shape each named array must have (None: any length on that axis); a missing
        array or another shape is refused like a damaged file, so a driver never indexes past
        what it planned.

    Every way a file can be damaged (truncated, overwritten, not a checkpoint, a folder) is a
    one-line QueensError naming the file.
    """
    try:
        with files.open_input(path, QueensError) as (f, _), np.load(f, allow_pickle=False) as z:
            saved = json.loads(str(z["fingerprint"]))
            arrays = {k: z[k] for k in z.files if k != "fingerprint"}
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
    if not isinstance(saved, dict):
        raise _unreadable(path, "its fingerprint is not a table of settings")
    want = json.loads(_canonical(fingerprint))
    if saved != want:
        diff = sorted(k for k in set(saved) | set(want) if saved.get(k) != want.get(k))
        raise QueensError(
            f"{path}: the checkpoint was written with other settings "
            f"({', '.join(diff)} differ); resume with the same options"
        )
    for name, shape in (shapes or {}).items():
        if name not in arrays:
            raise _unreadable(path, f"no array '{name}'")
        got = arrays[name].shape
        if len(got) != len(shape) or any(
            w is not None and g != w for g, w in zip(got, shape, strict=True)
        ):
            raise _unreadable(path, f"{name} has shape {got}, expected {shape}")
    return arrays
