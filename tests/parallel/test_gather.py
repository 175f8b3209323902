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
