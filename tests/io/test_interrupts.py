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
        import jaxqueens, jaxqueens.cli.main, jaxqueens.drivers.loop
        import jaxqueens.io.interrupts
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


def test_a_region_opened_under_a_pending_request_stops_at_its_first_check(policy):
    """Work after a deferring region's start (a command's next method after its first final
    write) does not run on as if no stop had been asked."""
    with SafePoints() as outer:
        signal.raise_signal(signal.SIGINT)
        with pytest.raises(KeyboardInterrupt), SafePoints() as inner:
            inner.check()
        assert outer.requested == signal.SIGINT
        with pytest.raises(KeyboardInterrupt):
            outer.check()


def test_uninstall_puts_the_handlers_back():
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    interrupts.install()
    assert interrupts.installed()
    interrupts.uninstall()
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


_BLOCKING = """
import sys, time
import jax, jax.numpy as jnp
from jax import lax
from jaxqueens.io import interrupts

interrupts.install()

@jax.jit
def spin(rounds):  # minutes of XLA work in one call: the main thread waits in C++ throughout
    def lcg(j, x):
        return x * jnp.uint32(1664525) + j.astype(jnp.uint32)

    def outer(i, c):
        return lax.fori_loop(0, 1 << 28, lcg, c)
    return lax.fori_loop(0, rounds, outer, jnp.uint32(1))

spin(0).block_until_ready()
print("ready", flush=True)
with interrupts.SafePoints() as safe:
    t = time.perf_counter()
    spin(1 << 20).block_until_ready()
print(f"the call returned after {time.perf_counter() - t:.0f} s", flush=True)
"""


@pytest.mark.parametrize("second", [signal.SIGINT, signal.SIGTERM])
def test_a_second_signal_during_a_blocking_call_ends_the_process_at_once(second):
    """Python runs a handler only when the main thread is back in the interpreter: before the
    watcher, a second Ctrl-C took effect only when the XLA call returned (minutes here)."""
    import time

    proc = subprocess.Popen(
        [sys.executable, "-c", _BLOCKING],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(0.5)  # inside the call
        proc.send_signal(signal.SIGINT)  # recorded: acted on at the next safe point
        time.sleep(0.3)
        t0 = time.perf_counter()
        proc.send_signal(second)
        try:
            out, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            pytest.fail("the process outlived a second signal by 20 s")
        took = time.perf_counter() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + second, (out, err)
    assert took < interrupts.GRACE + 3.0
    assert "stopped at once" in err and "returned" not in out
