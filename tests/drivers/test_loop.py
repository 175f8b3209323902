"""drivers.loop.run_chunks: stops at the budget, saves on a cadence and on Ctrl-C."""

import pytest

from jaxqueens.drivers.loop import Tick, run_chunks


def _counter(stop_at=None, interrupt_at=None):
    state = {"done": 0, "saved": []}

    def chunk():
        state["done"] += 1
        if interrupt_at is not None and state["done"] == interrupt_at:
            raise KeyboardInterrupt
        return Tick(state["done"], finished=stop_at is not None and state["done"] >= stop_at)

    return state, chunk


def test_runs_until_finished_without_saving_when_not_asked():
    state, chunk = _counter(stop_at=5)
    assert run_chunks(chunk, total=5, unit="chunks", quiet=True) is False
    assert state["done"] == 5


def test_periodic_saves_and_none_after_the_last_chunk():
    state, chunk = _counter(stop_at=4)
    interrupted = run_chunks(chunk, total=4, unit="chunks", quiet=True,
                             save=lambda: state["saved"].append(state["done"]), every=0.0)
    assert not interrupted and state["saved"] == [1, 2, 3]


def test_ctrl_c_inside_a_chunk_saves_what_was_recorded():
    state, chunk = _counter(interrupt_at=3)
    interrupted = run_chunks(chunk, total=None, unit="chunks", quiet=True,
                             save=lambda: state["saved"].append("final"), every=1e9)
    assert interrupted and state["saved"] == ["final"]


def test_other_errors_propagate():
    def chunk():
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        run_chunks(chunk, total=1, unit="chunks", quiet=True, save=lambda: None)
