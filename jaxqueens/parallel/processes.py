"""Several processes in one run (`--coordinator`): the settings, the bounded join, the early exit.

`distributed_settings` checks the flags and the `JAX_*` variables, `init_distributed`
meets the other processes within a timeout (`rendezvous`) before it joins
`jax.distributed`, and `leave` ends a process that stopped early without waiting at JAX's
exit barrier. Importing this module does not import JAX.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import os
import sys

import numpy as np

from jaxqueens import _lazy
from jaxqueens.errors import QueensError

jax = _lazy.load("jax")
rendezvous = _lazy.load("jaxqueens.parallel.rendezvous")  # sockets: multi-process runs only

ENV_COORDINATOR_TIMEOUT = "JAXQUEENS_COORDINATOR_TIMEOUT"
COORDINATOR_TIMEOUT = 60.0  # seconds to wait for every process of a multi-process run to join
MAX_COORDINATOR_TIMEOUT = 86400.0
MIN_HEARTBEAT_TIMEOUT = 10  # seconds: never give up on a peer's heartbeat sooner (no false alarms)


@dataclasses.dataclass(frozen=True)
class Distributed:
    """The settings of a multi-process run, checked."""

    coordinator: str  #: HOST:PORT of process 0
    num_processes: int  #: processes in the run
    process_id: int  #: this process, 0 <= process_id < num_processes
    timeout: float  #: seconds to wait for every process to join (and at the end, for all to finish)


def _env_number(name: str, kind: type, fix: str):
    """The number in environment variable `name` (None when unset); QueensError naming it."""
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        return kind(text)
    except ValueError:
        what = "a whole number" if kind is int else "a number"
        raise QueensError(f"{name}={text[:20]!r} is not {what}: {fix}") from None


def distributed_settings(
    coordinator: str | None,
    num_processes: int | None,
    process_id: int | None,
    timeout: float | None = None,
) -> Distributed | None:
    """The flags of a multi-process run, each defaulting to its environment variable, checked.

    Args:
      coordinator: `HOST:PORT` of process 0, or `$JAX_COORDINATOR_ADDRESS`.
      num_processes: processes in the run, or `$JAX_NUM_PROCESSES`.
      process_id: this process, `0 <= I < P`, or `$JAX_PROCESS_ID`.
      timeout: seconds to wait for the others, or `$JAXQUEENS_COORDINATOR_TIMEOUT`, or
        `COORDINATOR_TIMEOUT`.

    Returns:
      The settings, or None for a single-process run (no coordinator anywhere).

    Raises:
      QueensError: one line naming the flag or variable: a value that is not a number, a process
        flag without a coordinator, an id out of range, a coordinator that is not HOST:PORT.
    """
    flags = {
        "--num-processes": num_processes,
        "--process-id": process_id,
        "--coordinator-timeout": timeout,
    }
    coordinator = coordinator or os.environ.get("JAX_COORDINATOR_ADDRESS", "").strip() or None
    if num_processes is None:
        num_processes = _env_number(
            "JAX_NUM_PROCESSES", int, "set it to the number of processes, or use --num-processes"
        )
        flags["JAX_NUM_PROCESSES"] = num_processes
    if process_id is None:
        process_id = _env_number(
            "JAX_PROCESS_ID", int, "set it to this process's id, 0 to P-1, or use --process-id"
        )
        flags["JAX_PROCESS_ID"] = process_id
    if coordinator is None:
        given = [name for name, value in flags.items() if value is not None]
        if given:
            one = len(given) == 1
            raise QueensError(
                f"{' and '.join(given)} {'is' if one else 'are'} set without --coordinator "
                "HOST:PORT (or JAX_COORDINATOR_ADDRESS): add the coordinator to join a "
                f"multi-process run, or drop {'it' if one else 'them'} for one process"
            )
        return None
    if timeout is None:
        timeout = _env_number(
            ENV_COORDINATOR_TIMEOUT,
            float,
            "set it to seconds (e.g. 60), or use --coordinator-timeout",
        )
        timeout = COORDINATOR_TIMEOUT if timeout is None else timeout
    if num_processes is None or process_id is None:
        raise QueensError(
            f"--coordinator {coordinator} needs --num-processes P and --process-id I "
            "(or JAX_NUM_PROCESSES and JAX_PROCESS_ID)"
        )
    if num_processes < 1:
        raise QueensError(f"--num-processes {num_processes}: a run needs at least 1 process")
    if not 0 <= process_id < num_processes:
        raise QueensError(
            f"--process-id {process_id} is not between 0 and {num_processes - 1} "
            f"(--num-processes {num_processes}): number the processes 0 to P-1"
        )
    if not 0 < timeout <= MAX_COORDINATOR_TIMEOUT:  # also refuses nan
        raise QueensError(
            f"--coordinator-timeout {timeout:g} (or {ENV_COORDINATOR_TIMEOUT}) must be a "
            f"number of seconds above 0 and at most {MAX_COORDINATOR_TIMEOUT:g} (a day)"
        )
    rendezvous.split_address(coordinator)
    return Distributed(coordinator.strip(), num_processes, process_id, float(timeout))


def init_distributed(
    coordinator: str | None,
    num_processes: int | None,
    process_id: int | None,
    timeout: float | None = None,
    settings: dict | None = None,
) -> bool:
    """Join a multi-process run (`jax.distributed`) before any JAX computation, in bounded time.

    The processes first meet on the coordinator's port (`rendezvous`), so that a wrong address, a
    missing, duplicate or misnumbered process, or settings that differ from process 0's end every
    process there with one line within `timeout` seconds, instead of JAX's abort from C++ (or a
    run that silently takes process 0's settings). JAX then gets the same timeout to connect and,
    at exit, for every process to finish; a process whose heartbeats stop for that long (at least
    `MIN_HEARTBEAT_TIMEOUT`) counts as dead. On CPU, cross-process collectives use gloo.

    Args:
      coordinator: as `distributed_settings` takes it.
      num_processes: as `distributed_settings` takes it.
      process_id: as `distributed_settings` takes it.
      timeout: as `distributed_settings` takes it.
      settings: what every process must agree on (the command and its settings).

    Returns:
      True if this process joined a run, False for a single-process run.
    """
    run = distributed_settings(coordinator, num_processes, process_id, timeout)
    if run is None:
        return False
    rendezvous.meet(run.coordinator, run.num_processes, run.process_id, run.timeout, settings)
    from jax.experimental import multihost_utils  # third-party, imported where first needed

    seconds = max(1, math.ceil(run.timeout))
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(
        run.coordinator,
        num_processes=run.num_processes,
        process_id=run.process_id,
        initialization_timeout=seconds,
        shutdown_timeout_seconds=seconds,
        heartbeat_timeout_seconds=max(seconds, MIN_HEARTBEAT_TIMEOUT),
    )
    # One gather now opens gloo's connections between every pair of processes (they open at the
    # first one). From here on, a process that dies or leaves breaks them, so the others' next
    # gather fails at once instead of waiting for a peer that will never connect.
    try:
        ids = np.asarray(multihost_utils.process_allgather(np.int32(run.process_id))).ravel()
    except Exception as err:
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0][-120:]
        raise QueensError(
            f"the processes met at {run.coordinator} but could not exchange data "
            f"({reason}): every machine must reach the others' ports"
        ) from err
    if ids.tolist() != list(range(run.num_processes)):
        raise QueensError(
            f"the processes at {run.coordinator} did not all join the same run "
            f"(ids {ids.tolist()}): start each with its own --process-id 0 to P-1"
        )
    return True


def leave(code: int) -> int:
    """End this process of a multi-process run now if it stopped on an error or an interrupt.

    At exit JAX waits at a barrier for every process, and a process that stops early keeps the
    others waiting in their next gather until JAX aborts from C++. So when this process joined a
    run and `code` is not 0 or 1 (outcomes that every process reaches together), it flushes its
    output and exits at once: the others' next gather then fails at once (`PeerLostError`).

    Args:
      code: the process's exit status.

    Returns:
      `code`, when the process does not exit here.
    """
    if code in (0, 1) or not _lazy.is_loaded("jax") or not jax.distributed.is_initialized():
        return code
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)
