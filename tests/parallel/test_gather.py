"""parallel.gather in a single-process run: every helper is the identity (multi-process runs are
covered by tests/test_scaleout.py, which starts real process pairs)."""

import numpy as np
import pytest

from jaxqueens.parallel import gather


def test_single_process_identity():
    x = np.arange(6).reshape(3, 2)
    assert gather.process_count() == 1 and gather.process_index() == 0 and gather.is_writer()
    np.testing.assert_array_equal(gather.allgather(x), x[None])
    np.testing.assert_array_equal(gather.concat(x, axis=1), x)
    np.testing.assert_array_equal(gather.ragged(x), x)


def test_defect_4_failed_gather_is_one_line_peer_lost(monkeypatch):
    """In a multi-process run a gather whose peer has died fails at once (gloo's connection
    breaks): that is a one-line PeerLostError, a QueensError, never a traceback."""
    import jax
    import pytest
    from jax.experimental import multihost_utils

    from jaxqueens import errors

    def broken(x):
        raise ValueError(
            "UNKNOWN: Gloo AllGather failed: [external/gloo/gloo/transport/tcp/pair.cc:538]"
            " Read error [127.0.0.1]:37606: Connection reset by peer"
        )

    monkeypatch.setattr(jax, "process_count", lambda: 2)
    monkeypatch.setattr(jax, "process_index", lambda: 0)
    monkeypatch.setattr(multihost_utils, "process_allgather", broken)
    for call in (
        lambda: gather.allgather(np.int32(1)),
        lambda: gather.concat(np.zeros(3)),
        lambda: gather.ragged(np.zeros((2, 4))),
    ):
        with pytest.raises(errors.PeerLostError) as caught:
            call()
        message = str(caught.value)
        assert isinstance(caught.value, errors.QueensError) and "\n" not in message
        assert "process 0 of 2" in message and "Connection reset by peer" in message
        assert "--resume" in message and len(message) < 300


def test_exact_ints_round_trip_through_words():
    """Counts past 2^31, 2^32 and 2^64 travel as uint32 words and come back as the same ints."""
    values = [[2**100 + 7, 3], [0, 2**64], [2**32 - 1, 2**63 + 2**32 - 1]]
    words = gather.int_words(values)
    assert words.shape == (3, 2, gather.INT_WORDS) and words.dtype == np.uint32
    back = gather.word_ints(words)
    assert back == values and all(type(v) is int for row in back for v in row)
    # the kernels' two-word counts (low, high) read the same way
    assert gather.word_ints(np.array([[5, 1], [2**32 - 1, 2**31]], np.uint32)) == [
        2**32 + 5,
        2**63 + 2**32 - 1,
    ]
    assert (
        gather.int_words([]).shape == (0, gather.INT_WORDS)
        and gather.word_ints(gather.int_words([])) == []
    )
    assert gather.word_ints(gather.int_words(np.array([7, 8], np.int64))) == [7, 8]
    for bad in (-1, 2 ** (32 * gather.INT_WORDS)):
        with pytest.raises(ValueError, match="exact counts"):
            gather.int_words([bad])


def test_allgather_keeps_float64_and_int64_exact_across_processes(monkeypatch):
    """JAX without 64-bit mode carried a gathered float64 as float32: an estimate on two processes
    differed from one process in the 8th digit. A stand-in gather that converts as JAX does."""
    import jax
    import jax.numpy as jnp
    from jax.experimental import multihost_utils

    monkeypatch.setattr(jax, "process_count", lambda: 2)
    monkeypatch.setattr(
        multihost_utils, "process_allgather", lambda x: np.stack([np.asarray(jnp.asarray(x))] * 2)
    )
    for x in (np.array([[1 / 3, 1e300], [-2.5e-300, np.pi]]), np.float64(733.6653958834135)):
        np.testing.assert_array_equal(gather.allgather(x), np.stack([x, x]))
        assert gather.allgather(x).dtype == np.float64
    big = np.array([2**40 + 1, -(2**62)], np.int64)
    np.testing.assert_array_equal(gather.concat(big), np.concatenate([big, big]))
    np.testing.assert_array_equal(gather.allgather(np.int32(7)), [7, 7])
