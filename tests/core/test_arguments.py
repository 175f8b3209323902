"""core/arguments.py: the one boundary check of API numbers (issue 28, item 16)."""

import math

import numpy as np
import pytest

from jaxqueens.core import arguments as A
from jaxqueens.errors import QueensError


@pytest.mark.parametrize("value", [2.5, 2.0, True, np.bool_(True), 1 + 0j, "3", None, [3]])
def test_defect_28_16_integers_must_be_integers(value):
    with pytest.raises(QueensError, match=r"chains must be an integer \(1\.\.2,147,483,647\)"):
        A.integer(value, "chains", 1)


def test_defect_28_16_integer_ranges_and_numpy_integers():
    assert A.integer(np.int64(5), "chains", 1) == 5 and type(A.integer(np.uint8(5), "x")) is int
    assert A.integer(None, "batch", 1, optional=True) is None
    with pytest.raises(QueensError, match="chains must be at least 1, got 0: give a positive"):
        A.integer(0, "chains", 1)
    with pytest.raises(QueensError, match="pop must be at most 2,147,483,647, got 2147483648"):
        A.integer(2**31, "pop", 2)
    assert A.integer(2**40, "nodes", 1, None) == 2**40


@pytest.mark.parametrize("value, ok", [(0, True), (2**32 - 1, True), (-1, False), (2**32, False)])
def test_defect_28_16_seeds_are_32_bit(value, ok):
    if ok:
        assert A.seed(value) == value
    else:
        with pytest.raises(QueensError, match=r"seed must be at (least 0|most 4,294,967,295)"):
            A.seed(value)
    with pytest.raises(QueensError, match="seed must be an integer"):
        A.seed(1.5)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, True, 1j, "1"])
def test_defect_28_msg_seconds_refuse_nan_inf_and_non_numbers(value):
    with pytest.raises(QueensError, match="checkpoint_every must be a finite number"):
        A.seconds(value, "checkpoint_every")


def test_reals_and_seconds():
    assert A.seconds(0.5, "t") == 0.5 and A.seconds(None, "t", optional=True) is None
    with pytest.raises(QueensError, match=r"t = 0 is out of range: give a number above 0"):
        A.seconds(0, "t")
    with pytest.raises(QueensError, match=r"in \(0\.0, 1\.0\)"):
        A.real(1.0, "init_prob", 0.0, 1.0, lo_open=True, hi_open=True)
    assert A.real(np.float32(0.25), "q", 0.0, 1.0) == 0.25


def test_flags_and_choices():
    assert A.flag(np.bool_(False), "toroidal") is False
    for value in ("no", 0, 1, None):
        with pytest.raises(QueensError, match="toroidal must be True or False"):
            A.flag(value, "toroidal")
    assert A.choice("ta", "method", ("ls", "ta")) == "ta"
    with pytest.raises(QueensError, match="method 'xx' is unknown; use one of ls, ta"):
        A.choice("xx", "method", ("ls", "ta"))


@pytest.mark.parametrize(
    "text, fix", [("\uff18", "write 8"), ("\uff10.5", "write 0.5"), ("\uff18-\uff11\uff10", "0-9")]
)
def test_number_text_with_fullwidth_digits_is_refused(text, fix):
    with pytest.raises(QueensError, match="is not written with the ASCII digits 0-9") as err:
        A.ascii_number(text)
    assert fix in str(err.value)
    assert A.ascii_number("-12") == "-12"


def test_flag_of_spells_a_parameter_as_the_command_line_does():
    assert A.flag_of("max_steps") == "--maxsteps" and A.flag_of("max_nodes") == "--max-nodes"
    assert A.flag_of("cap (the enumeration cap)") == "--cap"  # a gloss is not the name
    with pytest.raises(QueensError, match=r"^cap \(the enumeration cap\) must be") as err:
        A.integer(0, "cap (the enumeration cap)", 1)
    assert A.flag_of(err.value.param) == "--cap"
