"""io.interrupts: one policy for SIGINT and SIGTERM, installed only by the command line."""

import signal
import subprocess
import sys
import textwrap

import pytest

from jaxqueens.io import interrupts
from jaxqueens.io.interrupts import SafePoints


@pytest.fixture
def policy():
    interrupts.reset()
    interrupts.install()
    yield
    interrupts.uninstall()
    interrupts.reset()


def test_importing_the_package_installs_no_handler():
    code = textwrap.dedent(
        """
        import signal
        before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
        import jaxqueens, jaxqueens.cli.main, jaxqueens.drivers.loop, jaxqueens.io.interrupts
        assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
        """
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_first_signal_in_a_region_waits_for_the_check_and_sets_the_exit_code(policy, sig):
    with SafePoints() as safe:
        signal.raise_signal(sig)  # recorded only
        assert safe.requested == sig
        with pytest.raises(KeyboardInterrupt):
            safe.check()
    assert interrupts.exit_code() == 128 + sig
    assert interrupts.is_interrupt(interrupts.exit_code())


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_second_signal_stops_at_once(policy, sig):
    with pytest.raises(KeyboardInterrupt), SafePoints():
        signal.raise_signal(sig)
        signal.raise_signal(sig)
        pytest.fail("the second signal must raise at once")


def test_sigterm_outside_a_region_stops_at_once(policy):
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGTERM)
    assert interrupts.exit_code() == 143 and interrupts.signal_name() == "SIGTERM"


def test_a_request_is_never_dropped_by_leaving_a_region(policy):
    """An inner region left with an unanswered request hands it to the outer one; the outermost
    raises as it closes."""
    with SafePoints() as outer:
        with SafePoints():
            signal.raise_signal(signal.SIGTERM)
        assert outer.requested == signal.SIGTERM
        with pytest.raises(KeyboardInterrupt):
            outer.check()
    with pytest.raises(KeyboardInterrupt), SafePoints():
        signal.raise_signal(signal.SIGINT)


def test_uninstall_puts_the_handlers_back():
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    interrupts.install()
    assert interrupts.installed()
    interrupts.uninstall()
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
