"""Gathers across the processes of a multi-process run (``jax.distributed``), on the host.

Each helper is the identity in a single-process run, so drivers call them unconditionally.
"""

from __future__ import annotations

import jax
import numpy as np
from jax.experimental import multihost_utils


def process_count() -> int:
    return jax.process_count()


def process_index() -> int:
    return jax.process_index()


def is_writer() -> bool:
    """Only process 0 writes files when several processes share a run."""
    return jax.process_index() == 0


def allgather(x) -> np.ndarray:
    """``[P, ...]``: every process's ``x`` (same shape everywhere), in process order."""
    x = np.asarray(x)
    if jax.process_count() == 1:
        return x[None]
    return np.asarray(multihost_utils.process_allgather(x))


def concat(x, axis: int = 0) -> np.ndarray:
    """Every process's ``x`` joined along ``axis``, in process order."""
    g = allgather(x)
    return g[0] if len(g) == 1 else np.concatenate(list(g), axis=axis)


def ragged(rows: np.ndarray) -> np.ndarray:
    """Every process's ``rows`` ``[k_p, ...]`` (``k_p`` may differ), concatenated in process order."""
    rows = np.asarray(rows)
    if jax.process_count() == 1:
        return rows
    sizes = allgather(np.int32(len(rows)))
    padded = np.zeros((int(sizes.max()),) + rows.shape[1:], rows.dtype)
    padded[:len(rows)] = rows
    every = allgather(padded)
    return np.concatenate([every[p, :sizes[p]] for p in range(len(sizes))])
