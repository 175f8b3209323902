"""The settings and the result of Knuth's estimator (`jaxqueens.drivers.estimate_result`): the
settings checked once in order, the intervals cut at what is known."""

import dataclasses
import math

import pytest

from jaxqueens.drivers import estimate_result as ER
from jaxqueens.errors import QueensError


def test_defect_28_msg_ci_lower_bounds_are_cut_at_what_is_known():
    """Q(n) >= 0 and the tree holds at least its exactly counted levels: the normal interval
    is cut there (it went negative for a few probes)."""
    r = ER.Estimate(
        n=20,
        probes=60,
        depth=1,
        strata=20,
        solutions=5e10,
        solutions_se=4e10,
        nodes=1e6,
        nodes_se=1e6,
        level=0.99,
        hit_rate=0.01,
        seconds=1.0,
        compile_s=0.0,
        exact=None,
        top_nodes=[1, 20],
    )
    assert r.ci[0] == 0.0 and r.ci[1] == pytest.approx(5e10 + r.z * 4e10)
    assert r.nodes_ci[0] == 21.0
    assert r.as_dict()["ci_low"] == 0.0 and r.as_dict()["nodes_ci_low"] == 21.0


def test_estimate_settings_are_checked_once_in_the_order_given():
    """`EstimateSettings` checks probes, level, seed, lanes and depth in that order (a float's
    probes taken whole); `estimate_settings` checks n first and depth against the board last."""
    s = ER.estimate_settings(8, probes=2e4, depth=8)
    assert (s.probes, s.depth, s.seed, s.level, s.lanes) == (20_000, 8, 0, 0.95, None)
    bad = {"probes": math.nan, "level": 1.0, "seed": -1, "lanes": 0, "depth": 9}
    for name, pattern in [("n", r"n = 65"), *((k, k) for k in bad)]:
        with pytest.raises(QueensError, match=pattern):
            ER.estimate_settings(8 if name != "n" else 65, **bad)
        bad.pop(name, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.probes = 1  # type: ignore[misc]
