"""What ``jaxqueens stats`` writes (:mod:`jaxqueens.io.stats`): file names, columns and
counts."""

import json

import numpy as np

from jaxqueens.drivers import stats
from jaxqueens.drivers import stats_samples as sampling
from jaxqueens.io import schema
from jaxqueens.io import stats as outputs

SOLUTIONS6 = np.array(
    [[1, 3, 5, 0, 2, 4], [2, 5, 1, 4, 0, 3], [3, 0, 4, 1, 5, 2], [4, 2, 0, 5, 3, 1]], np.int32
)


def _result():
    solved = np.array([True, False, True, True, True, True])
    rows = SOLUTIONS6[[0, 1, 1, 3, 0]]
    samples = sampling.Samples(
        6,
        "minconflicts",
        {},
        solved,
        np.array([3, 50, 7, 1, 9, 2]),
        rows,
        "steps",
        1.0,
        0.5,
        "chains",
    )
    return stats.analyse(samples)


def test_tables(tmp_path):
    res = _result()
    files = outputs.write_outputs(res, tmp_path)
    assert [f.name for f in files] == [
        "summary.json",
        "distinct.npy",
        "frequencies.csv",
        "classes.csv",
        "coverage.csv",
        "runs.csv",
        "success.csv",
    ]
    assert json.loads((tmp_path / "summary.json").read_text())["distinct_solutions"] == 3
    freq = (tmp_path / "frequencies.csv").read_text().splitlines()
    assert freq[0] == "solution,count,canonical,class_size" and len(freq) == 5  # all 4 solutions
    assert sorted(int(line.split(",")[1]) for line in freq[1:]) == [0, 1, 2, 2]
    assert (tmp_path / "classes.csv").read_text().splitlines() == [
        "canonical,class_size,count",
        "1 3 5 0 2 4,4,5",
    ]
    cov = (tmp_path / "coverage.csv").read_text().splitlines()
    assert (
        cov[0].startswith("chains,solved,distinct_solutions,fundamental_classes") and len(cov) == 7
    )
    assert cov[-1].split(",")[:4] == ["6", "5", "3", "1"]
    steps = (tmp_path / "runs.csv").read_text().splitlines()
    assert steps[0] == ",".join(schema.CORE) and steps[2] == "mc-permutation,1,0,50,,,,"
    success = (tmp_path / "success.csv").read_text().splitlines()
    assert success[0] == "solver,steps_budget,success_rate"
    assert success[-1] == "mc-permutation,9,0.833333"


def test_coverage_rows_are_thinned():
    keep = outputs._thin(10 * outputs.CURVE_POINTS)
    c = 10 * outputs.CURVE_POINTS
    assert len(keep) <= outputs.CURVE_POINTS + 1 and keep[0] == 0 and keep[-1] == c - 1
    np.testing.assert_array_equal(outputs._thin(5), np.arange(5))
