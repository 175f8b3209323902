"""Where jaxqueens runs: `configure` (`jaxqueens.configure()`), the devices, the backend.

Importing jaxqueens changes nothing in the process: `configure` is the one call that sets JAX
up for jaxqueens (one CPU device per core, XLA:CPU's loop flags, JAX's persistent compilation
cache), and the `jaxqueens` command calls it first thing. A library user who does not call it
gets JAX's defaults; every driver counts its devices through `local_device_count`, which then
says so once on stderr. Importing this module does not import JAX. The docs' parallel page
explains each setting.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import warnings
from pathlib import Path

from jaxqueens import _lazy, _process
from jaxqueens.errors import QueensError
from jaxqueens.parallel import cache as compile_cache
from jaxqueens.parallel import jax_options

jax = _lazy.load("jax")  # imported at its first use: a command that needs no JAX never imports it

ENV_CPU_DEVICES = "JAXQUEENS_CPU_DEVICES"
ENV_XLA_FLAGS = "JAXQUEENS_XLA_FLAGS"
# XLA:CPU numbers a process's devices below 2048; a device id above that is read as another
# process ("Multiprocess computations aren't implemented on the CPU backend"); 2048 runs.
MAX_CPU_DEVICES = 2048

CPU_XLA_FLAGS = (
    "--xla_backend_extra_options=xla_cpu_small_while_loop_byte_threshold=1073741824,"
    "-x86-cmov-converter=false",
    "--xla_cpu_copy_insertion_use_region_analysis=true",
    "--xla_cpu_use_fusion_emitters=false",
)
NO_LOOP_UNROLLING = "xla_cpu_disable_loop_unrolling=true"
"""XLA:CPU's backend option (in `--xla_backend_extra_options`; XLA reads the key's presence)
that turns off LLVM's loop unrolling: `configure(loop_unrolling=False)`."""


def cpu_xla_flags(loop_unrolling: bool = True) -> tuple[str, ...]:
    """The XLA:CPU flags `configure` appends.

    Args:
      loop_unrolling: False adds `NO_LOOP_UNROLLING` to the backend options.

    Returns:
      `CPU_XLA_FLAGS`, with that option when asked for.
    """
    if loop_unrolling:
        return CPU_XLA_FLAGS
    backend, *rest = CPU_XLA_FLAGS
    return (f"{backend},{NO_LOOP_UNROLLING}", *rest)


def check_cpu_devices() -> int | None:
    """The device count `$JAXQUEENS_CPU_DEVICES` asks for.

    Returns:
      The count, or None when the variable is not set.

    Raises:
      QueensError: it is not a whole number from 1 to `MAX_CPU_DEVICES`.
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
    """The CPUs this process may run on, at most `MAX_CPU_DEVICES`.

    Returns:
      The size of the process's affinity mask (`os.sched_getaffinity`: `taskset`, a batch
      scheduler's cpuset), or `os.cpu_count()` where the system has no such mask.
    """
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # no affinity masks here (macOS, Windows)
        usable = os.cpu_count() or 1
    return max(1, min(usable, MAX_CPU_DEVICES))


@dataclasses.dataclass(frozen=True)
class Configuration:
    """What `configure` did."""

    cpu_devices: int | None  #: CPU devices asked of JAX; None: too late to ask (backend started)
    xla_flags: tuple[str, ...]  #: flags appended to $XLA_FLAGS now (none: off, there, or too late)
    cache_dir: Path | None  #: folder of the persistent compilation cache; None: the cache is off
    #: JAX's backend had started: device count and XLA_FLAGS left as they were
    backend_started: bool


def configure(
    cpu_devices: int | None = None,
    xla_flags: bool | None = None,
    cache: bool | str | os.PathLike[str] | None = True,
    loop_unrolling: bool = True,
) -> Configuration:
    """Set JAX up for jaxqueens in this process: one CPU device per core, XLA:CPU's loop flags and
    the persistent compilation cache (`jaxqueens.configure`).

    Importing jaxqueens changes nothing; this call does, for the whole process (JAX's settings are
    per process, and child processes inherit the environment variables it sets while JAX is not
    imported yet). Call it before the first JAX computation, the first jaxqueens solver call
    included; importing JAX before is fine. The `jaxqueens` command calls it first thing. Calling
    it again is harmless.

    Args:
      cpu_devices: CPU devices to ask of JAX, 1 to `MAX_CPU_DEVICES`; None (default):
        `$JAXQUEENS_CPU_DEVICES`, else one per core. Only JAX's CPU backend uses them.
      xla_flags: append the XLA:CPU loop flags (`CPU_XLA_FLAGS`) to `$XLA_FLAGS`; None
        (default): yes, unless `$JAXQUEENS_XLA_FLAGS` is 0.
      cache: JAX's persistent compilation cache: True (default) for `$JAXQUEENS_CACHE_DIR` (an
        empty value turns the cache off) or else `$XDG_CACHE_HOME/jaxqueens/jax-<version>`; a
        folder; or False/None for no cache. A folder that cannot be written turns the cache off,
        and the first solver call says so in one line. JAX looks at the cache at its first
        compilation: after that, the setting may not take effect.
      loop_unrolling: False: the flags also turn off LLVM's loop unrolling
        (`cpu_xla_flags`; the GA's kernels run and compile faster, the counting DFS runs
        slower). Only with `xla_flags`.

    Returns:
      What it did (`Configuration`). When JAX's backend had already started (a JAX
      computation ran before), the device count and `XLA_FLAGS` cannot change any more:
      `backend_started` is True, `cpu_devices` None, no flag is added, and a
      `RuntimeWarning` says so if the CPU backend has another device count than asked for.

    Raises:
      QueensError: `cpu_devices` (or `$JAXQUEENS_CPU_DEVICES`) is not a count from 1 to
        `MAX_CPU_DEVICES`.
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
    _process.jax_setup.configured = True
    started = not jax_options.set_option("jax_num_cpu_devices", count)
    added: tuple[str, ...] = ()
    if started:
        _warn_too_late(count)
    elif xla_flags:
        flags = os.environ.get("XLA_FLAGS", "")
        wanted = cpu_xla_flags(loop_unrolling)
        added = tuple(f for f in wanted if f.split("=")[0] not in flags)
        if added:
            os.environ["XLA_FLAGS"] = " ".join([flags, *added]).strip()
    folder = compile_cache.configure_cache(cache)
    return Configuration(None if started else count, added, folder, started)


def _warn_too_late(count: int) -> None:
    """The `RuntimeWarning` of a `configure` after JAX's backend started, if its CPU
    device count differs from `count` (no warning on an accelerator backend)."""
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
    """The devices of this process that a driver spreads its batches over.

    Every driver counts its devices here (`tests/parallel/test_devices.py` checks that no other
    module asks JAX), so this is the one place that says what a run is missing, once per process
    and in one line on stderr each: an unwritable compilation cache folder (`warn_cache`), and
    a CPU run on fewer devices than the machine has cores because `configure` was not called
    (nothing is said after `configure`, or when the device count was chosen through JAX's own
    settings, `JAX_NUM_CPU_DEVICES` or `--xla_force_host_platform_device_count`).

    Returns:
      `jax.local_device_count()`.
    """
    count = int(jax.local_device_count())
    compile_cache.warn_cache()
    setup = _process.jax_setup
    if not setup.configured and not setup.noted:
        setup.noted = True
        cores = cpu_cores()
        if count < cores and jax.default_backend() == "cpu" and not _count_chosen():
            print(
                f"jaxqueens: running on {count} of {cores} CPU cores without configure(): the "
                "kernels run several times slower (no XLA:CPU loop flags, one device); call "
                "jaxqueens.configure() first, before the first JAX computation",
                file=sys.stderr,
            )
    return count


def _count_chosen() -> bool:
    """Whether the CPU device count was set through JAX's own settings, not left at its default."""
    return jax.config.values.get(
        "jax_num_cpu_devices", -1
    ) >= 0 or "xla_force_host_platform_device_count" in os.environ.get("XLA_FLAGS", "")


def is_accelerator() -> bool:
    """Whether JAX runs on an accelerator.

    Returns:
      True on GPU/TPU backends (lockstep vmap); False on the CPU (per-chain map).
    """
    return jax.default_backend() != "cpu"
