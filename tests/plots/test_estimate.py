"""The figure of `jaxqueens estimate` (`jaxqueens.plots.estimate`): the estimates in, a PNG out
(a size estimated at 0 has no point on the log scale but still widens the axis)."""

from jaxqueens.drivers.estimate_result import Estimate
from jaxqueens.plots import estimate as figures


def _estimate(n, q, se):
    return Estimate(n, 1024, 0, 1, q, se, 1.0, 0.0, 0.99, 0.1, 1.0, 0.0, None, [1])


def test_log_q_plot(tmp_path):
    results = [_estimate(8, 92.0, 3.0), _estimate(30, 2.0e21, 1.0e19), _estimate(40, 0.0, 0.0)]
    path = figures.log_q_plot(results, tmp_path / "log_q_over_n.png")
    assert path.name == "log_q_over_n.png" and path.stat().st_size > 1000
