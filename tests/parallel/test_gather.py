"""parallel.gather in a single-process run: every helper is the identity (multi-process runs are
covered by tests/test_scaleout.py, which starts real process pairs)."""

import numpy as np

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
