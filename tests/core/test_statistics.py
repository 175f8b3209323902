"""Chi-square machinery (`jaxqueens.core.statistics`): gamma function, tail, uniformity test."""

import math

import numpy as np
import pytest

from jaxqueens.core import statistics as stats


@pytest.mark.parametrize(
    "a,x",
    [
        (0.5, 0.1),
        (1.0, 2.0),
        (2.5, 2.5),
        (5.0, 20.0),
        (45.5, 40.0),
        (45.5, 60.0),
        (1e4, 1.01e4),
        (1.8e5, 1.79e5),
        (3.0, 1e-8),
    ],
)
def test_gamma_q_against_scipy(a, x):
    special = pytest.importorskip("scipy.special")
    assert stats.gamma_q(a, x) == pytest.approx(float(special.gammaincc(a, x)), rel=1e-9, abs=1e-14)


def test_chi2_sf_closed_forms_and_table_values():
    for x in (0.0, 0.5, 3.0, 17.0):  # 2 dof: exp(-x / 2)
        assert stats.chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)
    for k in (1, 3, 6):  # even dof 2k: Poisson tail
        x = 7.3
        want = math.exp(-x / 2) * sum((x / 2) ** j / math.factorial(j) for j in range(k))
        assert stats.chi2_sf(x, 2 * k) == pytest.approx(want, rel=1e-12)
    assert stats.chi2_sf(18.307, 10) == pytest.approx(0.05, abs=1e-4)  # textbook critical values
    assert stats.chi2_sf(6.635, 1) == pytest.approx(0.01, abs=1e-4)
    assert stats.chi2_sf(124.342, 100) == pytest.approx(0.05, abs=1e-4)
    assert stats.chi2_sf(1e4, 10) == 0.0


def test_uniformity_test_counts_unseen_cells():
    observed = np.array([5, 0, 3, 0, 12])
    expected = np.full(5, 4.0)
    full = stats.uniformity_test(observed, expected)
    seen = observed > 0
    short = stats.uniformity_test(observed[seen], expected[seen], unseen_expected=8.0, cells=5)
    assert short["statistic"] == pytest.approx(full["statistic"])
    assert short["dof"] == full["dof"] == 4 and short["p_value"] == pytest.approx(full["p_value"])


def test_uniform_samples_pass_and_biased_samples_fail():
    rng = np.random.default_rng(0)
    q, s = 92, 50_000
    uni = np.bincount(rng.integers(0, q, s), minlength=q)
    assert stats.uniformity_test(uni, np.full(q, s / q))["p_value"] > 0.01
    p = rng.dirichlet(np.full(q, 20.0))
    biased = np.bincount(rng.choice(q, s, p=p), minlength=q)
    assert stats.uniformity_test(biased, np.full(q, s / q))["p_value"] < 1e-6


def test_wilson_interval_closed_forms_and_coverage():
    """Success rates had no interval: Wilson's, checked at its closed forms (0 and all of n
    successes) and by its coverage of a known rate over many simulated runs."""
    z2 = stats.Z95**2
    lo, hi = stats.wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(z2 / (10 + z2))
    lo, hi = stats.wilson_interval(10, 10)
    assert lo == pytest.approx(10 / (10 + z2)) and hi == pytest.approx(1.0)
    lo, hi = stats.wilson_interval(np.array([0, 5, 20]), 20)
    assert lo.shape == (3,) and np.all(lo <= np.array([0, 5, 20]) / 20)
    assert np.all(np.array([0, 5, 20]) / 20 <= hi)
    for n, p in ((40, 0.2), (100, 0.5), (300, 0.05)):  # exact coverage: near 95%, never far off
        k = np.arange(n + 1)
        lo, hi = stats.wilson_interval(k, n)
        pmf = np.array([math.comb(n, j) * p**j * (1 - p) ** (n - j) for j in k])
        assert 0.92 <= pmf[(lo <= p) & (p <= hi)].sum() <= 0.98, (n, p)
    with pytest.raises(ValueError, match="successes <= trials"):
        stats.wilson_interval(3, 2)
