"""Gathers across the processes of a multi-process run (`jax.distributed`), on the host.

Each helper is the identity in a single-process run, so drivers call them unconditionally.

Every cross-process transfer goes through `allgather`. When another process has died (or
left on an error), gloo's connection to it breaks and the transfer fails at once; that becomes a
one-line `PeerLostError`, on which the chunked loop saves what is finished
(`loop`) and the command line exits 2 without waiting for JAX's shutdown
(`leave`). A peer that is alive but silent (frozen, cut off) is
given up by JAX's heartbeat after the coordinator timeout, which ends the process from C++.

Exact counts (Python ints, past 2^64) cross processes and go into checkpoints as uint32 words
(`int_words`, `word_ints`): one encoding for every driver.
"""

from __future__ import annotations

import jax
import numpy as np
from jax.experimental import multihost_utils

from jaxqueens.errors import PeerLostError


def process_count() -> int:
    """The number of processes in the run.

    Returns:
      `jax.process_count()`.
    """
    return jax.process_count()


def process_index() -> int:
    """This process's index in the run.

    Returns:
      `jax.process_index()`.
    """
    return jax.process_index()


def is_writer() -> bool:
    """Whether this process writes files: only process 0 does when several share a run.

    Returns:
      True on process 0.
    """
    return jax.process_index() == 0


INT_WORDS = 4
"""uint32 words per exact count: `int_words` holds every int below 2^128."""


def int_words(values, width: int = INT_WORDS) -> np.ndarray:
    """Non-negative Python ints as 32-bit words, exactly (the inverse of `word_ints`).

    Args:
      values: the ints, in any nesting of sequences, or an array.
      width: words per value, lowest word first.

    Returns:
      uint32 `[..., width]`.

    Raises:
      ValueError: a value is negative or does not fit `width` words.
    """
    ints = np.asarray(values, dtype=object)
    if ints.size and (min(ints.flat) < 0 or max(ints.flat) >> (32 * width)):
        raise ValueError(f"exact counts must lie in 0..2^{32 * width} - 1")
    words = [(ints >> (32 * k)) & 0xFFFFFFFF for k in range(width)]
    return np.stack([np.asarray(w, object).astype(np.uint32) for w in words], axis=-1)


def word_ints(words) -> list:
    """The Python ints of 32-bit words (the inverse of `int_words`).

    Args:
      words: uint32 `[..., width]`, lowest word first.

    Returns:
      Nested lists of the leading shape (a single int for `[width]`).
    """
    w = np.asarray(words).astype(object)  # Python ints: the shifts below never wrap
    ints = np.zeros(w.shape[:-1], object)
    for k in range(w.shape[-1]):
        ints = ints + (w[..., k] << (32 * k))
    return np.asarray(ints, object).tolist()


def allgather(x) -> np.ndarray:
    """`[P, ...]`: every process's `x` (same shape everywhere), in process order, exactly.

    JAX without 64-bit mode would carry float64 and int64 as 32 bits, so 8-byte values travel as
    their uint32 words and come back bit for bit.

    Args:
      x: this process's array (or scalar).

    Returns:
      The processes' arrays stacked, `x`'s dtype.
    """
    x = np.asarray(x)
    if jax.process_count() == 1:
        return x[None]
    wide = x.dtype.itemsize == 8
    send = np.ascontiguousarray(x).reshape(-1).view(np.uint32) if wide else x
    try:
        got = np.asarray(multihost_utils.process_allgather(send))
    except Exception as err:  # gloo: "Connection reset by peer", "Connection closed by peer", ...
        raise PeerLostError(_lost(err)) from err
    if wide:
        return np.ascontiguousarray(got).view(x.dtype).reshape((len(got), *x.shape))
    return got


def _lost(err: Exception) -> str:
    """One line: which process lost whom, why (the last part of gloo's message), and what to do."""
    procs, me = jax.process_count(), jax.process_index()
    reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
    reason = reason.rsplit(": ", 1)[-1][:120] if len(reason) > 120 else reason
    return (
        f"process {me} of {procs} lost contact with the others mid-run ({reason}): start all "
        f"{procs} processes again, with --resume DIR to go on from the last checkpoint in --out DIR"
    )


def concat(x, axis: int = 0) -> np.ndarray:
    """Every process's array joined along an axis, in process order.

    Args:
      x: this process's array (the same shape on every process).
      axis: the axis to join along.

    Returns:
      The joined array, on every process.
    """
    g = allgather(x)
    return g[0] if len(g) == 1 else np.concatenate(list(g), axis=axis)


def ragged(rows: np.ndarray) -> np.ndarray:
    """Every process's rows concatenated in process order (the row counts may differ).

    Args:
      rows: this process's `[k_p, ...]`.

    Returns:
      `[sum of k_p, ...]`, on every process.
    """
    rows = np.asarray(rows)
    if jax.process_count() == 1:
        return rows
    sizes = allgather(np.int32(len(rows)))
    padded = np.zeros((int(sizes.max()), *rows.shape[1:]), rows.dtype)
    padded[: len(rows)] = rows
    every = allgather(padded)
    return np.concatenate([every[p, : sizes[p]] for p in range(len(sizes))])
