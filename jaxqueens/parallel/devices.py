"""Where jaxqueens runs: host CPU devices and how batches are spread over devices.

Importing jaxqueens changes nothing in the process (no environment variable, no JAX setting):
:func:`configure` (``jaxqueens.configure()``) is the one call that sets JAX up for jaxqueens, and
the ``jaxqueens`` command calls it first thing. It does three things, each process-wide:

- XLA:CPU runs each computation on one core. ``shared/PERFORMANCE.md`` measured 1.7-2.2x from
  splitting a batch over one host "device" per core, so it asks JAX for ``os.cpu_count()`` CPU
  devices (``JAXQUEENS_CPU_DEVICES`` or the ``cpu_devices`` argument for another count, from 1 to
  ``MAX_CPU_DEVICES``, XLA:CPU's limit per process). JAX fixes the count when its backend starts
  (at the first JAX computation), so this only works before that.
- It appends ``CPU_XLA_FLAGS`` to ``XLA_FLAGS``. XLA:CPU runs each op of a ``while_loop`` body as
  a separate thunk (~30-40 ns each) unless the loop touches under 1 KiB; raising that threshold
  compiles a whole per-chain search loop as one native function (4-5x fewer us per min-conflicts
  step, measured), and region-based copy insertion drops the per-step copies of the carried board
  and counts (~20% more). LLVM's x86 cmov converter is turned off: in a branch-free search loop
  it turned data-dependent selects back into branches (the counting DFS: 0.46 mispredicted
  branches per edge under callgrind's simulation, 1.25-1.3x more CPU time per edge than with
  conditional moves). These flags only exist as ``XLA_FLAGS`` (jit's ``compiler_options``
  rejects them), so they are process-wide; ``JAXQUEENS_XLA_FLAGS=0`` (or ``xla_flags=False``)
  leaves ``XLA_FLAGS`` alone.
- :func:`configure_cache` turns on JAX's persistent compilation cache in the user's cache folder
  (``$XDG_CACHE_HOME/jaxqueens/jax-<version>``; ``JAXQUEENS_CACHE_DIR`` moves it, an empty value
  turns it off), so a repeated run loads its compiled kernels instead of compiling them again.

A library user who does not call :func:`configure` gets JAX's defaults (one CPU device, no flags);
every driver counts its devices through :func:`local_device_count`, which then says once, in one
line on stderr, that the run uses fewer devices than the machine has cores.

Several processes (``--coordinator``): :func:`distributed_settings` checks the flags and the
``JAX_*`` variables, :func:`init_distributed` meets the other processes within a timeout
(:mod:`jaxqueens.parallel.rendezvous`) before it joins ``jax.distributed``, and :func:`leave` ends a
process that stopped early without waiting at JAX's exit barrier.

Importing this module does not import JAX (``jax`` is loaded at its first use,
:mod:`jaxqueens._lazy`), so the command line configures JAX before JAX is even imported: the
settings go to JAX's environment variables (``JAX_NUM_CPU_DEVICES``, ``JAX_COMPILATION_CACHE_DIR``,
...), which JAX reads when it is imported, or to ``jax.config`` once it is.

This module and its siblings in :mod:`jaxqueens.parallel` are the one place that decides
batching per backend: lockstep ``vmap`` with lane recycling on accelerators, one item per
``lax.map`` iteration sharded over host devices on the CPU. :func:`sizes` is the one table of
batch sizes the drivers read on the CPU; on an accelerator they size from the device
(:mod:`jaxqueens.parallel.sizing`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import math
import os
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import numpy as np

from jaxqueens import _lazy
from jaxqueens.errors import QueensError

# imported at their first use (jaxqueens._lazy): a command that needs no JAX never imports it
if TYPE_CHECKING:
    from jax.sharding import Mesh

jax = _lazy.load("jax")
rendezvous = _lazy.load("jaxqueens.parallel.rendezvous")  # sockets: multi-process runs only

ENV_CPU_DEVICES = "JAXQUEENS_CPU_DEVICES"
ENV_XLA_FLAGS = "JAXQUEENS_XLA_FLAGS"
ENV_COORDINATOR_TIMEOUT = "JAXQUEENS_COORDINATOR_TIMEOUT"
BATCH_AXIS = "batch"
# XLA:CPU numbers a process's devices below 2048; a device id above that is read as another
# process ("Multiprocess computations aren't implemented on the CPU backend"): measured, 2048 runs.
MAX_CPU_DEVICES = 2048
COORDINATOR_TIMEOUT = 60.0  # seconds to wait for every process of a multi-process run to join
MAX_COORDINATOR_TIMEOUT = 86400.0
MIN_HEARTBEAT_TIMEOUT = 10  # seconds: never give up on a peer's heartbeat sooner (no false alarms)

CPU_XLA_FLAGS = (
    "--xla_backend_extra_options=xla_cpu_small_while_loop_byte_threshold=1073741824,"
    "-x86-cmov-converter=false",
    "--xla_cpu_copy_insertion_use_region_analysis=true",
)


def check_cpu_devices() -> int | None:
    """``$JAXQUEENS_CPU_DEVICES`` as a device count, or None when it is not set.

    Raises:
      QueensError: it is not a whole number from 1 to ``MAX_CPU_DEVICES``.
    """
    env = os.environ.get(ENV_CPU_DEVICES, "").strip()
    if not env:
        return None
    if not (env.isascii() and env.isdigit() and 1 <= int(env) <= MAX_CPU_DEVICES):
        raise QueensError(
            f"{ENV_CPU_DEVICES}={env[:20]!r} is not a device count from 1 to "
            f"{MAX_CPU_DEVICES} (XLA:CPU's limit per process): set it to one of those, "
            "or unset it for one device per core"
        )
    return int(env)


def cpu_cores() -> int:
    """The CPU cores of this machine (``os.cpu_count()``), at most ``MAX_CPU_DEVICES``."""
    return min(os.cpu_count() or 1, MAX_CPU_DEVICES)


@dataclasses.dataclass(frozen=True)
class Configuration:
    """What :func:`configure` did."""

    cpu_devices: int | None  # CPU devices asked of JAX; None: too late to ask (backend started)
    xla_flags: tuple[str, ...]  # flags appended to $XLA_FLAGS now (none: off, there, or too late)
    cache_dir: Path | None  # folder of the persistent compilation cache; None: the cache is off
    backend_started: bool  # JAX's backend had started: device count and XLA_FLAGS left as they were


_state = {"configured": False, "noted": False}
"""``configured``: :func:`configure` was called in this process; ``noted``: the few-devices
notice of :func:`local_device_count` was considered (it is said at most once)."""


def configure(
    cpu_devices: int | None = None,
    xla_flags: bool | None = None,
    cache: bool | str | os.PathLike[str] | None = True,
) -> Configuration:
    """Set JAX up for jaxqueens in this process: one CPU device per core, XLA:CPU's loop flags and
    the persistent compilation cache (``jaxqueens.configure``).

    Importing jaxqueens changes nothing; this call does, for the whole process (JAX's settings are
    per process, and child processes inherit the environment variables it sets while JAX is not
    imported yet). Call it before the first JAX computation, the first jaxqueens solver call
    included; importing JAX before is fine. The ``jaxqueens`` command calls it first thing. Calling
    it again is harmless.

    Args:
      cpu_devices: CPU devices to ask of JAX, 1 to ``MAX_CPU_DEVICES``; None (default):
        ``$JAXQUEENS_CPU_DEVICES``, else one per core. Only JAX's CPU backend uses them.
      xla_flags: append the XLA:CPU loop flags (``CPU_XLA_FLAGS``, 4-5x faster search loops) to
        ``$XLA_FLAGS``; None (default): yes, unless ``$JAXQUEENS_XLA_FLAGS`` is 0.
      cache: JAX's persistent compilation cache: True (default) for ``$JAXQUEENS_CACHE_DIR`` (an
        empty value turns the cache off) or else ``$XDG_CACHE_HOME/jaxqueens/jax-<version>``; a
        folder; or False/None for no cache. A folder that cannot be written turns the cache off,
        and the first solver call says so in one line. JAX looks at the cache at its first
        compilation: after that, the setting may not take effect.

    Returns:
      What it did (:class:`Configuration`). When JAX's backend had already started (a JAX
      computation ran before), the device count and ``XLA_FLAGS`` cannot change any more:
      ``backend_started`` is True, ``cpu_devices`` None, no flag is added, and a
      ``RuntimeWarning`` says so if the CPU backend has another device count than asked for.

    Raises:
      QueensError: ``cpu_devices`` (or ``$JAXQUEENS_CPU_DEVICES``) is not a count from 1 to
        ``MAX_CPU_DEVICES``.
    """
    if cpu_devices is None:
        count = check_cpu_devices() or cpu_cores()
    elif isinstance(cpu_devices, bool) or not 1 <= int(cpu_devices) <= MAX_CPU_DEVICES:
        raise QueensError(
            f"{cpu_devices!r} CPU devices asked for: give 1 to {MAX_CPU_DEVICES} devices"
        )
    else:
        count = int(cpu_devices)
    if xla_flags is None:
        xla_flags = os.environ.get(ENV_XLA_FLAGS, "1").strip() != "0"
    _state["configured"] = True
    started = not _set_jax_option("jax_num_cpu_devices", count)
    added: tuple[str, ...] = ()
    if started:
        _warn_too_late(count)
    elif xla_flags:
        flags = os.environ.get("XLA_FLAGS", "")
        added = tuple(f for f in CPU_XLA_FLAGS if f.split("=")[0] not in flags)
        if added:
            os.environ["XLA_FLAGS"] = " ".join([flags, *added]).strip()
    folder = configure_cache(cache)
    return Configuration(None if started else count, added, folder, started)


def _warn_too_late(count: int) -> None:
    """The ``RuntimeWarning`` of a :func:`configure` after JAX's backend started, if its CPU
    device count differs from ``count`` (no warning on an accelerator backend)."""
    if jax.default_backend() != "cpu" or jax.local_device_count() == count:
        return
    warnings.warn(
        f"jaxqueens.configure() came after JAX's backend started: it keeps its "
        f"{jax.local_device_count()} CPU device(s) instead of {count}, and its XLA_FLAGS; call "
        "jaxqueens.configure() before the first JAX computation",
        RuntimeWarning,
        stacklevel=3,
    )


def local_device_count() -> int:
    """``jax.local_device_count()``: the devices of this process that a driver spreads its
    batches over.

    Every driver counts its devices here (``tests/parallel/test_devices.py`` checks that no other
    module asks JAX), so this is the one place that says what a run is missing, once per process
    and in one line on stderr each: an unwritable compilation cache folder (:func:`warn_cache`),
    and a CPU run on fewer devices than the machine has cores because :func:`configure` was not
    called (nothing is said after :func:`configure`, or when the device count was chosen through
    JAX's own settings, ``JAX_NUM_CPU_DEVICES`` or ``--xla_force_host_platform_device_count``).
    """
    count = int(jax.local_device_count())
    warn_cache()
    if not _state["configured"] and not _state["noted"]:
        _state["noted"] = True
        cores = cpu_cores()
        if count < cores and jax.default_backend() == "cpu" and not _count_chosen():
            print(
                f"jaxqueens: running on {count} of {cores} CPU cores; call jaxqueens.configure() "
                "before the first JAX computation for one device per core",
                file=sys.stderr,
            )
    return count


def _count_chosen() -> bool:
    """Whether the CPU device count was set through JAX's own settings, not left at its default."""
    return jax.config.values.get(
        "jax_num_cpu_devices", -1
    ) >= 0 or "xla_force_host_platform_device_count" in os.environ.get("XLA_FLAGS", "")


def _set_jax_option(name: str, value) -> bool:
    """Set JAX option ``name`` before its backend starts, without importing JAX: through its
    environment variable (``JAX_NUM_CPU_DEVICES`` for ``jax_num_cpu_devices``, which JAX reads when
    it is imported) while JAX is not imported yet, else through ``jax.config``. ``value`` None
    removes the variable (JAX's default). Returns False if JAX refused (its backend had started)."""
    if _lazy.is_loaded("jax"):
        try:
            jax.config.update(name, value)
        except RuntimeError:
            return False
        return True
    var = name.upper()
    if value is None:
        os.environ.pop(var, None)
    else:
        os.environ[var] = str(value).lower() if isinstance(value, bool) else str(value)
    return True


# ------------------------------------------------------------------ persistent compilation cache
ENV_CACHE_DIR = "JAXQUEENS_CACHE_DIR"
CACHE_MIN_COMPILE_SECONDS = 0.0
"""Every compiled kernel is cached: ours compile in 0.1-6 s and a run compiles several, each of
which a repeated run would otherwise pay again (JAX's default caches only compiles over 1 s)."""
CACHE_MIN_ENTRY_BYTES = -1
"""No size floor (JAX's -1; its default 0 lets it pick a floor for the filesystem)."""


class _CacheState(TypedDict):
    folder: Path | None  # the cache in use, None when off
    problem: str | None  # why the folder asked for could not be used, until warn_cache says it
    warned: bool  # warn_cache has said it


_cache: _CacheState = {"folder": None, "problem": None, "warned": False}


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/jaxqueens/jax-<JAX version>`` (``~/.cache`` when the variable is unset
    or not absolute, as the XDG base-directory specification says)."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "jaxqueens" / f"jax-{_installed_version('jax')}"


def _installed_version(package: str) -> str:
    """The installed version of ``package``, read from its ``*.dist-info`` folder name beside it,
    without importing it (``importlib.metadata`` would cost ~50 ms at every start); "unknown" if
    not found."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return "unknown"
    site = Path(next(iter(spec.submodule_search_locations))).parent
    found = sorted(site.glob(f"{package}-*.dist-info"))
    return found[0].name[len(package) + 1 : -len(".dist-info")] if len(found) == 1 else "unknown"


def cache_dir_setting() -> Path | None:
    """Where the cache goes by default: ``$JAXQUEENS_CACHE_DIR`` as given (an empty value turns the
    cache off: None), else :func:`default_cache_dir`."""
    env = os.environ.get(ENV_CACHE_DIR)
    if env is None:
        return default_cache_dir()
    return Path(env).expanduser() if env.strip() else None


def _unwritable(folder: Path) -> str | None:
    """Why ``folder`` cannot hold the cache (it is created if missing), or None if it can."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        return err.strerror or type(err).__name__
    if not os.access(folder, os.W_OK | os.X_OK):
        return "no permission to write there"
    return None


def configure_cache(folder: str | os.PathLike[str] | bool | None = True) -> Path | None:
    """Turn JAX's persistent compilation cache on (in ``folder``) or off, before JAX compiles.

    A repeated run then loads its compiled kernels from disk instead of compiling them again
    (``shared/PERFORMANCE.md``: compile 1.3 s of a 3.1 s ``solve``). Several processes may share
    the folder: each entry is one file named by a hash of the program, its devices and the JAX
    version, written once; a reader that meets an entry being written (JAX 0.10 writes it in place,
    not atomically) fails its checksum, warns and compiles for itself, so a result is never wrong.

    Args:
      folder: True for the default (:func:`cache_dir_setting`: ``$JAXQUEENS_CACHE_DIR`` or the XDG
        cache folder), a folder, or None/False to turn the cache off.

    Returns:
      The folder in use, or None when the cache is off. A folder that cannot be created or written
      turns the cache off; :func:`warn_cache` then says so once.
    """
    chosen: Path | None
    if isinstance(folder, bool) or folder is None:
        chosen = cache_dir_setting() if folder else None
    else:
        chosen = Path(folder).expanduser()
    problem = _unwritable(chosen) if chosen is not None else None
    if problem is not None:
        _cache["problem"] = (
            f"cannot write the compilation cache folder {chosen} ({problem}); going "
            f"on without it: set {ENV_CACHE_DIR} to a writable folder, or to an "
            "empty value (or pass --no-cache) to turn the cache off"
        )
        chosen = None
    else:
        _cache["problem"] = None
    _cache["folder"] = chosen
    on = chosen is not None
    _set_jax_option("jax_enable_compilation_cache", on)
    _set_jax_option("jax_compilation_cache_dir", str(chosen) if on else None)
    if on or not _lazy.is_loaded("jax"):  # off: thresholds back to JAX's defaults before import
        _set_jax_option(
            "jax_persistent_cache_min_compile_time_secs", CACHE_MIN_COMPILE_SECONDS if on else None
        )
        _set_jax_option(
            "jax_persistent_cache_min_entry_size_bytes", CACHE_MIN_ENTRY_BYTES if on else None
        )
    return chosen


def cache_folder() -> Path | None:
    """The folder of the compilation cache in use, or None when it is off."""
    return _cache["folder"]


def warn_cache() -> bool:
    """Print, once per process, the warning of a cache folder that could not be written (one
    line on stderr; the run goes on without the cache). Returns True if it printed now."""
    if _cache["problem"] is None or _cache["warned"]:
        return False
    _cache["warned"] = True
    print(f"jaxqueens: warning: {_cache['problem']}", file=sys.stderr)
    return True


def is_accelerator() -> bool:
    """True on GPU/TPU backends (lockstep vmap); False on the CPU (per-chain map)."""
    return jax.default_backend() != "cpu"


@dataclasses.dataclass(frozen=True)
class Sizes:
    """Batch sizes for the default backend (the drivers read these; flags may override them)."""

    accelerator: bool  # lockstep lanes (True) or one item per lax.map iteration (False)
    chain_lanes: int  # lockstep lanes per device for chain solvers
    count_prefixes: int  # prefixes an exact count expands to, at least
    count_lanes: int  # lockstep lanes per device for the exact count
    estimator_probes: int  # default probes of Knuth's estimator
    estimator_block: int  # probes per lax.map iteration (0: all at once, the accelerator way)


CPU_SIZES = Sizes(
    accelerator=False,
    chain_lanes=256,
    count_prefixes=4096,
    count_lanes=4096,
    estimator_probes=10**7,
    estimator_block=4096,
)
ACCELERATOR_DEFAULTS = Sizes(
    accelerator=True,
    chain_lanes=0,
    count_prefixes=0,
    count_lanes=0,
    estimator_probes=10**8,
    estimator_block=0,
)
"""On an accelerator the lanes and items per call are not taken from a table: each driver sizes
them from its compiled program against the device (:mod:`jaxqueens.parallel.sizing`); the zeros
here say so. What stays is the strategy (lockstep lanes, all probes at once) and the default
length of an estimate."""


def sizes() -> Sizes:
    """The batch sizes of the default backend: CPU figures measured on a 2-core machine; on an
    accelerator the strategy only (:data:`ACCELERATOR_DEFAULTS`: the sizes come from
    :func:`jaxqueens.parallel.sizing.choose`)."""
    return ACCELERATOR_DEFAULTS if is_accelerator() else CPU_SIZES


def batch_mesh() -> Mesh:
    """A 1-D mesh over every local device, axis name ``BATCH_AXIS``."""
    return jax.sharding.Mesh(np.asarray(jax.local_devices()), (BATCH_AXIS,))


def shard_batch(x):
    """Place ``x`` with its leading (batch) axis split over all local devices.

    Falls back to the default device when the batch does not divide evenly.
    """
    mesh = batch_mesh()
    if mesh.size == 1 or np.shape(x)[0] % mesh.size:
        return jax.device_put(x)
    return jax.device_put(
        x, jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(BATCH_AXIS))
    )


@dataclasses.dataclass(frozen=True)
class Distributed:
    """The settings of a multi-process run, checked."""

    coordinator: str  # HOST:PORT of process 0
    num_processes: int
    process_id: int
    timeout: float  # seconds to wait for every process to join (and at the end, for all to finish)


def _env_number(name: str, kind: type, fix: str):
    """The number in environment variable ``name`` (None when unset); QueensError naming it."""
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
      coordinator: ``HOST:PORT`` of process 0, or ``$JAX_COORDINATOR_ADDRESS``.
      num_processes: processes in the run, or ``$JAX_NUM_PROCESSES``.
      process_id: this process, ``0 <= I < P``, or ``$JAX_PROCESS_ID``.
      timeout: seconds to wait for the others, or ``$JAXQUEENS_COORDINATOR_TIMEOUT``, or
        ``COORDINATOR_TIMEOUT``.

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
) -> bool:
    """Join a multi-process run (``jax.distributed``) before any JAX computation, in bounded time.

    Arguments as :func:`distributed_settings` takes them. The processes first meet on the
    coordinator's port (:mod:`jaxqueens.parallel.rendezvous`), so that a wrong address or a
    missing, duplicate or misnumbered process ends every process there with one line within
    ``timeout`` seconds, instead of JAX's abort from C++. JAX then gets the same timeout to
    connect and, at exit, for every process to finish; a process whose heartbeats stop for that
    long (at least ``MIN_HEARTBEAT_TIMEOUT``) counts as dead. On CPU, cross-process collectives
    use gloo.

    Returns:
      True if this process joined a run, False for a single-process run.
    """
    run = distributed_settings(coordinator, num_processes, process_id, timeout)
    if run is None:
        return False
    rendezvous.meet(run.coordinator, run.num_processes, run.process_id, run.timeout)
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
    others waiting in their next gather; when the wait runs out, JAX aborts from C++. So when this
    process joined a run and ``code`` is not 0 or 1 (outcomes that every process reaches together),
    it flushes its output and exits at once with ``code``: the others' next gather then fails at
    once (:class:`~jaxqueens.errors.PeerLostError`). Otherwise it returns ``code``.
    """
    if code in (0, 1) or not _lazy.is_loaded("jax") or not jax.distributed.is_initialized():
        return code
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)
