"""The kernel contract's boundary checks (jaxqueens.solvers.base), one helper per kind."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxqueens.errors import QueensError
from jaxqueens.solvers import base
from jaxqueens.solvers import minconflicts as mc


@pytest.mark.parametrize("value", [8.0, 8.5, True, "8", None, np.float32(8)])
def test_whole_refuses_what_is_not_a_whole_number(value):
    with pytest.raises(QueensError, match="n must be a whole number"):
        base.check_whole("n", value, 1)


def test_whole_takes_numpy_integers_and_names_the_range():
    assert base.check_whole("n", np.int64(8), 1, 10) == 8
    with pytest.raises(QueensError, match=r"n must be in \[1, 10\], got 11"):
        base.check_whole("n", 11, 1, 10)
    with pytest.raises(QueensError, match="at least 1"):
        base.check_whole("n", 0, 1)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1.0, True, "1"])
def test_real_refuses_nan_infinite_out_of_range_and_non_numbers(value):
    with pytest.raises(QueensError, match="t0 must be"):
        base.check_real("t0", value, 0)


def test_real_open_ends():
    assert base.check_real("alpha", 1.0, 0, 1, lo_open=True) == 1.0
    with pytest.raises(QueensError, match=r"\(0, 1\]"):
        base.check_real("alpha", 0.0, 0, 1, lo_open=True)


@pytest.mark.parametrize(
    "kw, needle",
    [
        ({"t0": -1.0}, r"^t0 = -1\.0 is out of range: give a number at least 0"),
        ({"t0": float("nan")}, "^t0 must be a finite number"),
        ({"alpha": 0.0}, r"^alpha = 0\.0 is out of range: give a number in \(0, 1\]"),
        ({"alpha": True}, "^alpha must be a finite number"),
    ],
)
def test_anneal_schedule_numbers_are_checked_as_every_api_number(kw, needle):
    """anneal's `t0` and `alpha` go through `core.arguments.real`, as the drivers' do."""
    from jaxqueens.solvers import anneal

    config = anneal.Config(n=8, method="sa", rounds=4, steps_per_round=10)
    with pytest.raises(QueensError, match=needle) as err:
        anneal.default_params(config, **kw)
    assert err.value.param == next(iter(kw))
    assert anneal.default_params(config, t0=0, alpha=1).schedule.shape == (4,)


def test_rows_are_checked_statically_and_where_concrete():
    assert base.check_rows("start", np.arange(4), 4).dtype == jnp.int32
    for bad, needle in ((np.arange(3), "shape"), (np.ones(4), "whole row"), ([0, 1, 2, 4], "off")):
        with pytest.raises(QueensError, match=needle):
            base.check_rows("start", jnp.asarray(bad), 4)
    traced = jax.jit(lambda r: base.check_rows("start", r, 4))(jnp.asarray([0, 1, 2, 9]))
    assert traced.tolist() == [0, 1, 2, 9]  # a traced board cannot be read: on_board guards it
    fixed = base.on_board(jnp.asarray([0, -1, 2, 9]), jnp.asarray([3, 3, 3, 3]), 4)
    assert fixed.tolist() == [0, 3, 2, 3]


def test_params_are_compared_with_the_family_template():
    config = mc.Config(n=8)
    good = mc.default_params(config)
    template = mc.default_params(config)
    assert base.check_params(good, mc.Params, template, "minconflicts") is good
    with pytest.raises(QueensError, match=r"params must be a minconflicts\.Params, got a dict"):
        base.check_params({"max_steps": 1}, mc.Params, template, "minconflicts")
    with pytest.raises(QueensError, match=r"params\.tabu is missing"):
        base.check_params(good._replace(tabu=None), mc.Params, template, "minconflicts")
    with pytest.raises(QueensError, match=r"params.max_steps must be integer of shape \[\]"):
        base.check_params(good._replace(max_steps=np.zeros(3, np.int32)), mc.Params, template, "m")
    assert base.concrete(np.int32(3)) == 3
    assert jax.jit(lambda x: base.concrete(x) is None)(1)


def test_kernel_args_check_values_where_concrete_and_name_the_family():
    config = mc.Config(n=8)
    params = mc.default_params(config)
    seen = []
    base.check_kernel_args("minconflicts", config, mc.Config, params, params, seen.append)
    assert seen == [list(params)]  # the values, once all are concrete
    jax.jit(
        lambda p: base.check_kernel_args("minconflicts", config, mc.Config, p, params, seen.append)
    )(params)
    assert len(seen) == 1  # traced values are not read
    with pytest.raises(
        QueensError, match=r"state must be a minconflicts\.State, got a dict: make it"
    ):
        base.check_kernel_args("minconflicts", config, mc.Config, params, params, len, {}, mc.State)
    assert base.int32_params(mc.Params, [1, 2, 3, 4]).tabu.dtype == np.int32
