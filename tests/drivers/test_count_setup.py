"""`CountSettings` (drivers/count_setup.py): each value checked once, where the settings are
built, by the name of its parameter; a count on the torus takes no other switch."""

import pytest

from jaxqueens.drivers.count_setup import CountSettings, check_count_n
from jaxqueens.errors import QueensError


def test_count_settings_are_checked_once_where_they_are_built():
    s = CountSettings(unique=True, depth=3, chunk=16, budget=1000, kernel="items")
    assert (s.unique, s.depth, s.chunk, s.budget, s.kernel) == (True, 3, 16, 1000, "items")
    assert CountSettings() == CountSettings(unique=False, depth=None, kernel=None)
    for given, match in [
        ({"unique": "yes"}, "unique must be True or False"),
        ({"enumerate": 1}, "enumerate must be True or False"),
        ({"depth": 0}, "depth must be at least 1"),
        ({"chunk": 2.0}, "chunk must be an integer"),
        ({"budget": 2**31}, "budget must be at most"),
        ({"kernel": "gpu"}, "kernel must be 'threads' or 'items'"),
    ]:
        with pytest.raises(QueensError, match=match):
            CountSettings(**given)


def test_a_toroidal_count_refuses_the_other_switches_by_their_flags():
    assert CountSettings(toroidal=True).toroidal
    with pytest.raises(QueensError, match=r"torus only: drop --unique and --enumerate$"):
        CountSettings(toroidal=True, unique=True, enumerate=True)
    assert CountSettings(plan=True, unique=True).plan  # only the torus refuses them


def test_sizes_of_a_count_and_of_an_enumeration():
    assert check_count_n(32) == 32 and check_count_n(14, listed=True) == 14
    with pytest.raises(QueensError, match="n <= 14"):
        check_count_n(15, listed=True)
    with pytest.raises(QueensError, match="out of range"):
        check_count_n(33)
