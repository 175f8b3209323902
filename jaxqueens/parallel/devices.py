"""Where jaxqueens runs: host CPU devices and how batches are spread over devices.

XLA:CPU runs each computation on one core. ``shared/PERFORMANCE.md`` measured
1.7-2.2x from splitting a batch over one host "device" per core, so the package
asks JAX for ``os.cpu_count()`` CPU devices when it is imported -- only if no
JAX computation has run yet (the setting is fixed once the backend starts) and
only if ``JAXQUEENS_CPU_DEVICES`` does not say otherwise (set it to 1 to keep
JAX's default of one CPU device, or to any count from 1 to ``MAX_CPU_DEVICES``, XLA:CPU's limit
per process; another value is left out at import and refused by :func:`check_cpu_devices`, which
the command line calls first).

At the same moment it appends ``CPU_XLA_FLAGS`` to ``XLA_FLAGS``. XLA:CPU runs
each op of a ``while_loop`` body as a separate thunk (~30-40 ns each) unless the
loop touches under 1 KiB; raising that threshold compiles a whole per-chain
search loop as one native function (4-5x fewer us per min-conflicts step,
measured), and region-based copy insertion drops the per-step copies of the
carried board and counts (~20% more). LLVM's x86 cmov converter is turned off: in a
branch-free search loop it turned data-dependent selects back into branches (the counting
DFS: 0.46 mispredicted branches per edge under callgrind's simulation, 1.25-1.3x more CPU time
per edge than with conditional moves). These flags only exist as ``XLA_FLAGS``
(jit's ``compiler_options`` rejects them), so they are process-wide; set
``JAXQUEENS_XLA_FLAGS=0`` to leave ``XLA_FLAGS`` alone.

Several processes (``--coordinator``): :func:`distributed_settings` checks the flags and the
``JAX_*`` variables, :func:`init_distributed` meets the other processes within a timeout
(:mod:`jaxqueens.parallel.rendezvous`) before it joins ``jax.distributed``, and :func:`leave` ends a
process that stopped early without waiting at JAX's exit barrier.

Importing this module does not import JAX (``jax`` is loaded at its first use,
:mod:`jaxqueens._lazy`), so ``import jaxqueens`` configures JAX before JAX is even imported: the
settings go to JAX's environment variables (``JAX_NUM_CPU_DEVICES``, ``JAX_COMPILATION_CACHE_DIR``,
...), which JAX reads when it is imported, or to ``jax.config`` once it is. The same way,
:func:`configure_cache` turns on JAX's persistent compilation cache in the user's cache folder
(``$XDG_CACHE_HOME/jaxqueens/jax-<version>``; ``JAXQUEENS_CACHE_DIR`` moves it, an empty value
turns it off), so a repeated run loads its compiled kernels instead of compiling them again.

This module and its siblings in :mod:`jaxqueens.parallel` are the one place that decides
batching per backend: lockstep ``vmap`` with lane recycling on accelerators, one item per
``lax.map`` iteration sharded over host devices on the CPU. :func:`sizes` is the one table of
batch sizes per backend that the drivers read.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import os
import sys
from pathlib import Path

import numpy as np

from jaxqueens import _lazy
from jaxqueens.errors import QueensError

# imported at their first use (jaxqueens._lazy): a command that needs no JAX never imports it
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


def configure_cpu_devices(count: int | None = None) -> bool:
    """Ask for one CPU device per core, and fast CPU loops, before the JAX backend starts.

    Args:
      count: devices wanted, 1 to ``MAX_CPU_DEVICES``; default ``$JAXQUEENS_CPU_DEVICES`` (left out
        here when it is not a valid count: this runs at import, and :func:`check_cpu_devices`
        reports it) or ``os.cpu_count()``.

    Returns:
      True if the settings were applied (to JAX's environment variables while JAX is not imported
      yet, so this never imports it; else to ``jax.config``), False if the backend had already
      started.
    """
    if count is None:
        try:
            count = check_cpu_devices()
        except QueensError:
            count = None
        count = count or min(os.cpu_count() or 1, MAX_CPU_DEVICES)
    elif not 1 <= int(count) <= MAX_CPU_DEVICES:
        raise QueensError(f"{count} CPU devices asked for: give 1 to {MAX_CPU_DEVICES} devices")
    if not _set_jax_option("jax_num_cpu_devices", int(count)):
        return False  # backend already initialised: keep what the user has
    if os.environ.get(ENV_XLA_FLAGS, "1").strip() != "0":
        flags = os.environ.get("XLA_FLAGS", "")
        extra = [f for f in CPU_XLA_FLAGS if f.split("=")[0] not in flags]
        os.environ["XLA_FLAGS"] = " ".join([flags, *extra]).strip()
    return True


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
"""Every compiled kernel is cached: ours compile in 0.1-6 s and a run compiles several, each of which
a repeated run would otherwise pay again (JAX's default caches only compiles over 1 s)."""
CACHE_MIN_ENTRY_BYTES = -1
"""No size floor (JAX's -1; its default 0 lets it pick a floor for the filesystem)."""
_cache = {"folder": None, "problem": None, "warned": False}


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
    site = Path(list(spec.submodule_search_locations)[0]).parent
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


def configure_cache(folder: Path | str | bool | None = True) -> Path | None:
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
    if folder is True:
        folder = cache_dir_setting()
    folder = Path(folder).expanduser() if folder not in (None, False) else None
    problem = _unwritable(folder) if folder is not None else None
    if problem is not None:
        _cache["problem"] = (
            f"cannot write the compilation cache folder {folder} ({problem}); going "
            f"on without it: set {ENV_CACHE_DIR} to a writable folder, or to an "
            "empty value (or pass --no-cache) to turn the cache off"
        )
        folder = None
    else:
        _cache["problem"] = None
    _cache["folder"] = folder
    on = folder is not None
    _set_jax_option("jax_enable_compilation_cache", on)
    _set_jax_option("jax_compilation_cache_dir", str(folder) if on else None)
    if on or not _lazy.is_loaded(
        "jax"
    ):  # off: thresholds back to JAX's defaults (unset) before import
        _set_jax_option(
            "jax_persistent_cache_min_compile_time_secs", CACHE_MIN_COMPILE_SECONDS if on else None
        )
        _set_jax_option(
            "jax_persistent_cache_min_entry_size_bytes", CACHE_MIN_ENTRY_BYTES if on else None
        )
    return folder


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
ACCELERATOR_SIZES = Sizes(
    accelerator=True,
    chain_lanes=256,
    count_prefixes=1 << 17,
    count_lanes=4096,
    estimator_probes=10**8,
    estimator_block=0,
)


def sizes() -> Sizes:
    """The batch sizes of the default backend (CPU figures measured on a 2-core machine; the
    accelerator figures are not yet tuned on a GPU)."""
    return ACCELERATOR_SIZES if is_accelerator() else CPU_SIZES


def batch_mesh() -> jax.sharding.Mesh:
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
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
