"""The processes of a multi-process run meet before JAX joins them: bounded, with one-line errors.

`jax.distributed.initialize` waits for every peer for its whole timeout and, when one is
missing, aborts the process from C++ instead of raising. The processes therefore meet first, with
plain sockets and a deadline, on the coordinator's own port; whatever is wrong (no coordinator, a
missing or duplicate process id, different settings, a port in use) becomes a `QueensError`
naming the coordinator and the fix. The protocol is one ASCII line each way:
`jaxqueens-join I P TOKEN SETTINGS` from process I, then `go` or `refuse REASON` from process 0.
"""

from __future__ import annotations

import json
import secrets
import socket
import sys
import time

from jaxqueens.errors import QueensError, clip

GREETING = "jaxqueens-join"
NOTICE_AFTER = 2.0  # seconds of waiting before saying so on stderr
_POLL = 0.25  # seconds between accept() checks and connection attempts
_LINE = 512  # longest line read
_HELLO = 1 << 16  # longest hello read (it carries the settings)


def split_address(coordinator: str) -> tuple[str, int]:
    """A coordinator's address, `HOST:PORT` (`[IPv6]:PORT` too), split, the host resolved once.

    Args:
      coordinator: the address.

    Returns:
      `(host, port)`.

    Raises:
      QueensError: naming `--coordinator` and the expected form.
    """
    text = coordinator.strip()
    host, sep, port = text.rpartition(":")
    bracketed = host.startswith("[") and host.endswith("]")
    host = host[1:-1] if bracketed else host
    if (
        not sep
        or not host
        or (":" in host and not bracketed)
        or not port.isascii()
        or not port.isdigit()
        or not 0 < int(port) < 65536
    ):
        raise QueensError(
            f"--coordinator {text!r} is not HOST:PORT with a port from 1 to 65535 "
            "(e.g. 10.0.0.1:12355, [fd00::1]:12355): give process 0's address"
        )
    try:
        socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as err:
        reason = getattr(err, "strerror", None) or str(err)
        raise QueensError(
            f"--coordinator {text}: cannot resolve host {host!r} ({reason}); give "
            "process 0's address or host name"
        ) from None
    return host, int(port)


def meet(
    coordinator: str,
    num_processes: int,
    process_id: int,
    timeout: float,
    settings: dict | None = None,
) -> None:
    """Wait (at most `timeout` seconds) until all `num_processes` processes are there.

    Process 0 listens on the coordinator's port; every other process connects to it.

    Args:
      coordinator: `HOST:PORT` of process 0.
      num_processes: processes in the run.
      process_id: this process's id.
      timeout: seconds to wait for every process.
      settings: what every process must agree on (the command and its settings, JSON values);
        process 0 refuses a process whose settings differ from its own, naming the first.

    Raises:
      QueensError: one line naming the coordinator, what is missing or differs, and the fix.
    """
    host, port = split_address(coordinator)
    deadline = time.monotonic() + timeout
    run = _Meeting(coordinator.strip(), host, port, num_processes, process_id, timeout, deadline)
    run.settings = json.dumps(settings or {}, sort_keys=True, separators=(",", ":"), default=str)
    run.host() if process_id == 0 else run.join()


class _Meeting:
    def __init__(self, coordinator, host, port, num_processes, process_id, timeout, deadline):
        self.coordinator, self.address = coordinator, (host, port)
        self.processes, self.me, self.timeout, self.deadline = (
            num_processes,
            process_id,
            timeout,
            deadline,
        )
        self.start, self.noticed = time.monotonic(), False
        self.settings = "{}"  # compact JSON, ASCII (json.dumps escapes the rest)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def notice(self, what: str) -> None:
        """Say once on stderr what this process waits for, when it has waited a while."""
        if not self.noticed and time.monotonic() - self.start >= NOTICE_AFTER:
            self.noticed = True
            print(
                f"jaxqueens: process {self.me} of {self.processes}: waiting up to "
                f"{self.timeout:g} s "
                f"for {what} at {self.coordinator} (--coordinator-timeout)",
                file=sys.stderr,
                flush=True,
            )

    def hello(self, token: str) -> bytes:
        return f"{GREETING} {self.me} {self.processes} {token} {self.settings}\n".encode()

    # Every process but 0: connect, say hello, wait for "go".
    def join(self) -> None:
        hello, last = self.hello(secrets.token_hex(8)), "nothing listens there"
        while (left := self.left()) > 0:
            self.notice("process 0")
            try:
                with socket.create_connection(self.address, timeout=min(left, 5.0)) as sock:
                    sock.sendall(hello)
                    reply = _read_line(sock, self.left())
            except OSError as err:
                last = err.strerror or str(err) or "no answer"
                time.sleep(min(_POLL, max(self.left(), 0)))
                continue
            if reply == "go":
                return
            if reply is not None and reply.startswith("refuse "):
                raise QueensError(
                    f"process 0 at {self.coordinator} refused process {self.me}: "
                    f"{reply[len('refuse ') :]}"
                )
            if reply is None and self.left() <= 0:
                last = "process 0 is there, but not every process joined in time"
            else:
                last = "something answers there, but not a jaxqueens process 0"
                time.sleep(min(_POLL, max(self.left(), 0)))
        raise QueensError(
            f"no run started at {self.coordinator} within {self.timeout:g} s ({last}): start "
            "process 0 "
            "on that machine and every process with the same --coordinator and --num-processes, "
            "check "
            "HOST:PORT, or raise --coordinator-timeout"
        )

    # Process 0: listen, check its own address, wait for every other process, then say "go".
    def host(self) -> None:
        token = secrets.token_hex(8)
        waiting = set(range(self.processes))  # 0: our own hello, through HOST:PORT
        joined: dict[int, socket.socket] = {}
        strays: list[socket.socket] = []  # connections that told of a problem: they hear it too
        with _listen(self.address[1], self.coordinator) as server:
            own = self._reach_self(token)
            try:
                while waiting:
                    if (left := self.left()) <= 0:
                        raise QueensError(self._missing(waiting))
                    self.notice(f"{len(waiting - {0})} more process(es) to join")
                    server.settimeout(min(left, _POLL))
                    try:
                        conn, _ = server.accept()
                    except OSError:  # timeout: look at the clock again
                        continue
                    parts = (_read_line(conn, min(self.left(), 5.0), _HELLO) or "").split(" ", 4)
                    if (
                        len(parts) != 5
                        or parts[0] != GREETING
                        or not all(p.isascii() and p.isdigit() for p in parts[1:3])
                    ):
                        conn.close()  # not one of ours
                        continue
                    pid, count = int(parts[1]), int(parts[2])
                    if pid == 0 and parts[3] == token:  # our own hello: the address reaches us
                        own.close()  # this end first, so that no TIME_WAIT holds the port
                        conn.close()
                        waiting.discard(0)
                        continue
                    if reason := self._problem(pid, count, waiting) or self._differs(pid, parts[4]):
                        strays.append(conn)
                        raise QueensError(reason)
                    joined[pid] = conn
                    waiting.discard(pid)
                    if (
                        not waiting
                    ):  # a process that gave up meanwhile has closed: wait for it again
                        for gone in [i for i, c in joined.items() if not _alive(c)]:
                            joined.pop(gone).close()
                            waiting.add(gone)
            except QueensError as err:
                for conn in [*joined.values(), *strays]:
                    _send(conn, f"refuse {err}")
                    conn.close()
                raise
            finally:
                own.close()
        for conn in joined.values():  # everyone is here: go, and let each peer close first
            _send(conn, "go")
        for conn in joined.values():
            _read_line(conn, 2.0)
            conn.close()

    def _reach_self(self, token: str) -> socket.socket:
        try:
            own = socket.create_connection(self.address, timeout=max(min(self.left(), 5.0), 0.1))
            own.sendall(self.hello(token))
            return own
        except OSError as err:
            raise QueensError(
                f"--coordinator {self.coordinator} does not reach process 0's machine "
                f"({err.strerror or err}): run process 0 on that host, or give this "
                "machine's address"
            ) from None

    def _problem(self, pid: int, count: int, waiting: set[int]) -> str | None:
        if count != self.processes:
            return (
                f"process {pid} has --num-processes {count} but process 0 has {self.processes}: "
                "give every process the same --num-processes"
            )
        if pid >= self.processes or pid not in waiting:
            return (
                f"two processes have --process-id {pid} (or it is not below {self.processes}): "
                "give "
                f"each process its own id from 0 to {self.processes - 1}"
            )
        return None

    def _differs(self, pid: int, settings: str) -> str | None:
        """The first setting in which process `pid` differs from process 0, as a refusal."""
        ours = json.loads(self.settings)
        try:
            theirs = json.loads(settings)
        except ValueError:
            theirs = None
        if not isinstance(theirs, dict):
            return (
                f"process {pid} sent settings that are not JSON: run the same jaxqueens everywhere"
            )
        for key in sorted(set(ours) | set(theirs), key=lambda k: (k != "command", k)):
            if ours.get(key) != theirs.get(key):
                return (
                    f"process {pid} has {_setting(key, theirs)} but process 0 has "
                    f"{_setting(key, ours)}: start every process with the same command and "
                    "settings (only --process-id and --out may differ)"
                )
        return None

    def _missing(self, waiting: set[int]) -> str:
        if 0 in waiting:
            return (
                f"--coordinator {self.coordinator} does not reach process 0's own machine within "
                f"{self.timeout:g} s: run process 0 on that host, or give this machine's address"
            )
        ids = ", ".join(str(i) for i in sorted(waiting))
        return (
            f"{len(waiting)} of {self.processes - 1} other processes did not join "
            f"{self.coordinator} "
            f"within {self.timeout:g} s (--process-id {ids}): start each with --coordinator "
            f"{self.coordinator} --num-processes {self.processes} and its own --process-id, or "
            "raise "
            "--coordinator-timeout"
        )


def _listen(port: int, coordinator: str) -> socket.socket:
    """A listening socket on every address of this machine, as JAX's service binds `[::]:PORT`."""
    try:
        if socket.has_dualstack_ipv6():
            return socket.create_server(("", port), family=socket.AF_INET6, dualstack_ipv6=True)
        return socket.create_server(("", port))
    except OSError as err:
        raise QueensError(
            f"--coordinator {coordinator}: process 0 cannot listen on port {port} "
            f"({err.strerror or err}): pick a free port, the same for every process"
        ) from None


def _setting(key: str, settings: dict) -> str:
    """`key=value` of one setting for a message (the value clipped), or "no key"."""
    if key not in settings:
        return f"no {key}"
    return f"{key}={clip(json.dumps(settings[key], default=str))}"


def _read_line(sock: socket.socket, seconds: float, limit: int = _LINE) -> str | None:
    """One ASCII line of at most `limit` bytes, or None on a timeout, a closed connection or
    anything else."""
    data = b""
    try:
        sock.settimeout(max(seconds, 0.01))
        while not data.endswith(b"\n") and len(data) < limit:
            chunk = sock.recv(limit - len(data))
            if not chunk:
                return None
            data += chunk
        return data.decode("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None


def _alive(sock: socket.socket) -> bool:
    """Whether a peer that said hello still waits (it sends nothing more, so readable = closed)."""
    try:
        sock.setblocking(False)
        return sock.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def _send(sock: socket.socket, line: str) -> None:
    """`line` and a newline, cut to the longest line a reader takes; a closed peer is ignored."""
    try:
        sock.settimeout(2.0)
        sock.sendall(line[: _LINE - 1].encode("ascii", "replace") + b"\n")
    except OSError:
        pass
