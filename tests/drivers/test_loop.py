"""drivers.loop: `run_chunks` stops at the budget, saves on a cadence and on Ctrl-C; a
`RunControl` checks its interval once, where it is made."""

import dataclasses
import math

import pytest

from jaxqueens.drivers.loop import RunControl, Tick, run_chunks
from jaxqueens.drivers.settings import CHECKPOINT_EVERY
from jaxqueens.errors import QueensError


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
    assert run_chunks(chunk, total=5, unit="chunks") is False
    assert state["done"] == 5


def test_periodic_saves_and_none_after_the_last_chunk():
    state, chunk = _counter(stop_at=4)
    interrupted = run_chunks(
        chunk,
        total=4,
        unit="chunks",
        control=RunControl(checkpoint_every=0.0),
        save=lambda: state["saved"].append(state["done"]),
    )
    assert not interrupted and state["saved"] == [1, 2, 3]


def test_ctrl_c_inside_a_chunk_saves_what_was_recorded():
    state, chunk = _counter(interrupt_at=3)
    interrupted = run_chunks(
        chunk,
        total=None,
        unit="chunks",
        control=RunControl(checkpoint_every=1e9),
        save=lambda: state["saved"].append("final"),
    )
    assert interrupted and state["saved"] == ["final"]


def test_other_errors_propagate():
    def chunk():
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        run_chunks(chunk, total=1, unit="chunks", save=lambda: None)


def test_defect_2_a_failing_periodic_checkpoint_warns_once_and_the_run_goes_on(capsys):
    """A full disk (or any OSError) at a periodic checkpoint must not kill the run."""
    import errno

    state, chunk = _counter(stop_at=6)
    tries = []

    def save():
        tries.append(state["done"])
        raise OSError(errno.ENOSPC, "No space left on device")

    every_chunk = RunControl(checkpoint_every=0.0)
    assert run_chunks(chunk, total=6, unit="chunks", control=every_chunk, save=save) is False
    assert state["done"] == 6 and len(tries) == 5  # it kept trying: the disk may free up
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "checkpoint" in err and "No space left" in err


def test_defect_2_a_failing_checkpoint_on_ctrl_c_still_reports_the_interrupt(capsys):
    _state, chunk = _counter(interrupt_at=2)

    def save():
        raise OSError(28, "No space left on device")

    rarely = RunControl(checkpoint_every=1e9)
    assert run_chunks(chunk, total=None, unit="chunks", control=rarely, save=save) is True
    assert "checkpoint" in capsys.readouterr().err


def test_defect_4_lost_peer_saves_then_raises():
    """A gather that finds a peer gone (issue 13, defect 4) ends the loop like Ctrl-C does -- the
    finished chunks are saved -- but raises the one-line error instead of returning."""
    from jaxqueens import errors

    state = {"done": 0, "saved": []}

    def chunk():
        state["done"] += 1
        if state["done"] == 3:
            raise errors.PeerLostError("process 0 of 2 lost contact with the others mid-run")
        return Tick(state["done"])

    with pytest.raises(errors.PeerLostError, match="lost contact"):
        run_chunks(
            chunk,
            total=10,
            unit="chunks",
            control=RunControl(checkpoint_every=1e9),
            save=lambda: state["saved"].append(state["done"]),
        )
    assert state["saved"] == [3]


def test_defect_18_the_progress_line_never_shows_more_done_than_the_total(capsys):
    # Whatever a driver reports (a last chunk past the budget), the line stops at the total.
    ticks = iter([Tick(1), Tick(3, finished=True)])
    shown = RunControl(quiet=False)
    assert run_chunks(lambda: next(ticks), total=2, unit="chains solved", control=shown) is False
    err = capsys.readouterr().err
    assert "2/2 chains solved" in err and "3/2" not in err


def test_issue28_item3_a_signal_during_the_last_chunk_is_not_dropped():
    """Ctrl-C that arrives while the last chunk runs: the loop still reports the interruption
    (after saving everything, the last chunk included), so a sweep or a comparison stops."""
    import signal

    state = {"done": 0, "saved": []}

    def chunk():
        state["done"] += 1
        if state["done"] == 3:
            signal.raise_signal(signal.SIGINT)  # deferred: the chunk finishes first
        return Tick(state["done"], finished=state["done"] >= 3)

    interrupted = run_chunks(
        chunk,
        total=3,
        unit="chunks",
        control=RunControl(checkpoint_every=1e9),
        save=lambda: state["saved"].append(state["done"]),
    )
    assert interrupted and state["saved"] == [3]


def test_issue28_item3_a_library_caller_keeps_its_own_sigint_handler():
    """Outside the command line the loop handles SIGINT only while it runs, and SIGTERM not at
    all: importing or calling the package leaves the process's handlers as they were."""
    import signal

    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    seen = []

    def chunk():
        seen.append(signal.getsignal(signal.SIGTERM))
        return Tick(1, finished=True)

    assert run_chunks(chunk, total=1, unit="chunks") is False
    assert seen == [before[1]]
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


@pytest.mark.parametrize("every", [-1.0, math.nan, math.inf, "30", True])
def test_run_control_checks_its_checkpoint_interval_once_where_it_is_made(every):
    with pytest.raises(QueensError, match=r"^checkpoint_every "):
        RunControl(checkpoint_every=every)


def test_run_control_defaults_and_the_interval_as_a_float():
    control = RunControl(checkpoint_every=0)
    assert control.checkpoint_every == 0.0 and isinstance(control.checkpoint_every, float)
    assert (RunControl().quiet, RunControl().checkpoint, RunControl().resume) == (True, None, None)
    assert RunControl().checkpoint_every == CHECKPOINT_EVERY
    with pytest.raises(dataclasses.FrozenInstanceError):
        control.quiet = False  # type: ignore[misc]
