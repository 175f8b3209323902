"""parallel.rendezvous: the processes of a run meet on the coordinator's port before JAX joins them,
within a timeout, and every misconfiguration is one QueensError naming it (issue 13, defect 4).
Threads stand in for processes; nothing here starts JAX's distributed service."""

import contextlib
import socket
import threading
import time

import pytest

from jaxqueens.errors import QueensError
from jaxqueens.parallel import rendezvous


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _meet_all(specs, timeout=3.0, settings=None):
    """Run ``meet`` for each (process_id, num_processes[, own timeout]) in a thread (with
    ``settings[k]``, when given); their errors (None: met)."""
    address = f"127.0.0.1:{_free_port()}"
    errors = [None] * len(specs)

    def one(k, pid, count, own=timeout):
        try:
            rendezvous.meet(address, count, pid, own, settings[k] if settings else None)
        except QueensError as err:
            errors[k] = str(err)

    threads = [threading.Thread(target=one, args=(k, *spec)) for k, spec in enumerate(specs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max([timeout] + [spec[2] for spec in specs if len(spec) > 2]) + 10)
    assert not any(t.is_alive() for t in threads)
    return address, errors


def test_defect_4_everyone_meets():
    t0 = time.monotonic()
    _, errors = _meet_all([(2, 3), (0, 3), (1, 3)])
    assert errors == [None, None, None] and time.monotonic() - t0 < 3


def test_defect_4_misconfigured_runs_fail_on_every_process_in_time():
    t0 = time.monotonic()
    _, errors = _meet_all([(0, 2), (1, 3)])
    assert all("--num-processes" in e for e in errors) and time.monotonic() - t0 < 3
    _, errors = _meet_all([(0, 3), (1, 3), (1, 3)], timeout=2.0)
    assert (
        all("--process-id 1" in e for e in errors if e) and sum(e is not None for e in errors) >= 2
    )
    _, errors = _meet_all([(0, 2), (0, 2)], timeout=1.5)  # two process 0 on one machine
    assert all(errors) and any("cannot listen" in e for e in errors)


def test_defect_4_missing_process_and_missing_coordinator():
    # process 2 waits longer than process 0, so it is still there to hear process 0's reason (with
    # equal timeouts the two race, and on a loaded machine process 2 may give up first)
    address, errors = _meet_all([(0, 3), (2, 3, 6.0)], timeout=1.5)
    assert (
        "--process-id 1" in errors[0]
        and address in errors[0]
        and "--coordinator-timeout" in errors[0]
    )
    assert "refused process 2" in errors[1]  # it hears process 0's reason
    address, errors = _meet_all([(1, 2)], timeout=1.0)
    assert address in errors[0] and "process 0" in errors[0] and "Connection refused" in errors[0]


def test_defect_4_strangers_are_ignored_and_a_busy_port_is_named():
    port = _free_port()
    with (
        socket.create_server(("127.0.0.1", port)),  # something else holds the port
        pytest.raises(QueensError, match=f"cannot listen on port {port}"),
    ):
        rendezvous.meet(f"127.0.0.1:{port}", 2, 0, 1.0)
    address = f"127.0.0.1:{port}"
    errors = []
    host = threading.Thread(target=lambda: errors.append(rendezvous.meet(address, 2, 0, 4.0)))
    host.start()
    time.sleep(0.5)
    with socket.create_connection(("127.0.0.1", port)) as stranger:  # a port scanner, say
        stranger.sendall(b"GET / HTTP/1.0\r\n\r\n")
        # closed without a word; a reset (unread bytes left) is closed all the same
        with contextlib.suppress(ConnectionResetError):
            assert stranger.recv(100) == b""
    rendezvous.meet(address, 2, 1, 4.0)
    host.join(10)
    assert errors == [None]


def test_defect_4_addresses():
    assert rendezvous.split_address(" 127.0.0.1:80 ") == ("127.0.0.1", 80)
    assert rendezvous.split_address("[::1]:12355") == ("::1", 12355)
    for bad in (
        "notanaddress",
        "127.0.0.1",
        "127.0.0.1:",
        ":80",
        "::1:80",
        "h:0",
        "h:65536",
        "h:８０",
        "no-such-host.invalid:80",
    ):
        with pytest.raises(QueensError, match="--coordinator"):
            rendezvous.split_address(bad)


def test_processes_with_different_settings_are_refused_at_the_join():
    """Every process compares the command and its settings with process 0's when they meet: a
    different size or seed (silently ignored before: seed 0's result) stops every process with
    one line naming the first difference; equal settings meet."""
    solve = {"command": "solve", "n": 8, "seed": 0}
    _, errors = _meet_all([(0, 3), (1, 3), (2, 3)], settings=[solve, solve, solve])
    assert errors == [None, None, None]
    t0 = time.monotonic()
    _, errors = _meet_all([(0, 2), (1, 2)], settings=[solve, {**solve, "n": 10}])
    assert all("process 1 has n=10 but process 0 has n=8" in e for e in errors), errors
    assert "refused process 1" in errors[1] and time.monotonic() - t0 < 3
    _, errors = _meet_all([(1, 2), (0, 2)], settings=[{**solve, "seed": 1}, solve])
    assert all("seed=1 but process 0 has seed=0" in e for e in errors), errors
    _, errors = _meet_all([(0, 2), (1, 2)], settings=[solve, {"command": "count", "n": 8}])
    assert all('command="count" but process 0 has command="solve"' in e for e in errors)
