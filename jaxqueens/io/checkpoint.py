"""Checkpoint files: arrays plus a fingerprint of the settings, written atomically.

Every resumable command (chunked chains, GA generations, stats rounds, estimator calls) saves
what it has finished with :func:`save` and reads it back with :func:`load`, which refuses a file
written with other settings and names the settings that differ.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from jaxqueens.io.atomic import atomic_path
from jaxqueens.errors import QueensError

FILENAME = "checkpoint.npz"
"""The checkpoint inside a run's ``--out`` folder (``--resume DIR`` reads it back)."""


def _canonical(fingerprint: dict) -> str:
    return json.dumps(fingerprint, sort_keys=True, default=str)


def save(path: str | Path, fingerprint: dict, **arrays) -> None:
    """Write ``arrays`` and ``fingerprint`` to ``path`` (``.npz``) atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        np.savez(f, **arrays, fingerprint=_canonical(fingerprint))


def load(path: str | Path, fingerprint: dict) -> dict[str, np.ndarray]:
    """The arrays of a checkpoint made with the same ``fingerprint`` (QueensError otherwise)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            saved, want = json.loads(str(z["fingerprint"])), json.loads(_canonical(fingerprint))
            if saved != want:
                diff = sorted(k for k in set(saved) | set(want) if saved.get(k) != want.get(k))
                raise QueensError(f"{path}: the checkpoint was written with other settings "
                                  f"({', '.join(diff)} differ); resume with the same options")
            return {k: z[k] for k in z.files if k != "fingerprint"}
    except (OSError, ValueError, KeyError) as err:
        raise QueensError(f"{path}: not a readable checkpoint ({err}); start without --resume") from None
