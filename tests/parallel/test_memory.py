"""The one memory check before large allocations (:mod:`jaxqueens.parallel.memory`)."""

import pytest

from jaxqueens.errors import QueensError
from jaxqueens.parallel import memory


def test_defect_7_check_memory_names_the_option_and_the_need():
    with pytest.raises(QueensError) as err:
        memory.check_memory(
            10 * 2**30, "--depth 18 (n = 18)", "use a smaller --depth", available=2**30
        )
    text = str(err.value)
    assert "--depth 18" in text and "10.0 GiB" in text and "1.0 GiB" in text and "\n" not in text
    memory.check_memory(2**20, "x", "y", available=2**30)  # fits


def test_defect_7_unknown_memory_is_no_check(monkeypatch):
    monkeypatch.setattr(memory, "available_memory", lambda: None)
    memory.check_memory(2**60, "x", "y")


def test_available_memory_is_positive():
    assert (memory.available_memory() or 1) > 0
    assert memory.format_bytes(512) == "512 bytes" and memory.format_bytes(3 * 2**20) == "3.0 MiB"
