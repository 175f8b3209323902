"""The figure of ``jaxqueens estimate`` (:mod:`jaxqueens.plots.estimate`): tuples in, a PNG
out."""

from jaxqueens.plots import estimate as figures


def test_log_q_plot(tmp_path):
    path = figures.log_q_plot(
        [(8, 92.0, 3.0, 2.58), (30, 2.0e21, 1.0e19, 2.58), (40, 0.0, 0.0, 2.58)],
        tmp_path / "log_q_over_n.png",
        alpha=1.942,
    )
    assert path.name == "log_q_over_n.png" and path.stat().st_size > 1000
