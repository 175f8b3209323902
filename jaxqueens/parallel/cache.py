"""JAX's persistent compilation cache: where it lives, turning it on or off, the one warning.

A repeated run loads its compiled kernels from the user's cache folder instead of compiling them
again (`$XDG_CACHE_HOME/jaxqueens/jax-<version>`; `JAXQUEENS_CACHE_DIR` moves it, an empty
value turns it off). `configure` turns it on, the `jaxqueens`
command through it (`--no-cache` turns it off). Importing this module does not import JAX.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import pickle
import platform
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from jaxqueens import _lazy, _process
from jaxqueens.parallel import jax_options

jax = _lazy.load("jax")
serialize_executable = _lazy.load("jax.experimental.serialize_executable")
jax_cache = _lazy.load("jax.experimental.compilation_cache.compilation_cache")

ENV_CACHE_DIR = "JAXQUEENS_CACHE_DIR"
CACHE_MIN_COMPILE_SECONDS = 0.0
"""Every compiled kernel is cached: a run compiles several, many under JAX's default floor of
1 s, each of which a repeated run would otherwise pay again."""
CACHE_MIN_ENTRY_BYTES = -1
"""No size floor (JAX's -1; its default 0 lets it pick a floor for the filesystem)."""


def default_cache_dir() -> Path:
    """The cache folder the XDG base-directory specification gives.

    Returns:
      `$XDG_CACHE_HOME/jaxqueens/jax-<JAX version>` (`~/.cache` when the variable is unset
      or not absolute).
    """
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / "jaxqueens" / f"jax-{_installed_version('jax')}"


def _installed_version(package: str) -> str:
    """The installed version of `package`, read from its `*.dist-info` folder name beside it,
    without importing it (`importlib.metadata` would slow every start); "unknown" if
    not found."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return "unknown"
    site = Path(next(iter(spec.submodule_search_locations))).parent
    found = sorted(site.glob(f"{package}-*.dist-info"))
    return found[0].name[len(package) + 1 : -len(".dist-info")] if len(found) == 1 else "unknown"


def cache_dir_setting() -> Path | None:
    """Where the cache goes by default.

    Returns:
      `$JAXQUEENS_CACHE_DIR` as given (None when it is empty: the cache is off), else
      `default_cache_dir`.
    """
    env = os.environ.get(ENV_CACHE_DIR)
    if env is None:
        return default_cache_dir()
    return Path(env).expanduser() if env.strip() else None


def _unwritable(folder: Path) -> str | None:
    """Why `folder` cannot hold the cache (it is created if missing), or None if it can."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        return err.strerror or type(err).__name__
    if not os.access(folder, os.W_OK | os.X_OK):
        return "no permission to write there"
    return None


def configure_cache(folder: str | os.PathLike[str] | bool | None = True) -> Path | None:
    """Turn JAX's persistent compilation cache on (in `folder`) or off, before JAX compiles.

    A repeated run then loads its compiled kernels from disk instead of compiling them again
    (compiling is most of a short run's time). Several processes may share
    the folder: each entry is one file named by a hash of the program, its devices and the JAX
    version, written once; a reader that meets an entry being written (JAX 0.10 writes it in place,
    not atomically) fails its checksum, warns and compiles for itself, so a result is never wrong.

    Args:
      folder: True for the default (`cache_dir_setting`: `$JAXQUEENS_CACHE_DIR` or the XDG
        cache folder), a folder, or None/False to turn the cache off.

    Returns:
      The folder in use, or None when the cache is off. A folder that cannot be created or written
      turns the cache off; `warn_cache` then says so once.
    """
    chosen: Path | None
    if isinstance(folder, bool) or folder is None:
        chosen = cache_dir_setting() if folder else None
    else:
        chosen = Path(folder).expanduser()
    problem = _unwritable(chosen) if chosen is not None else None
    if problem is not None:
        _process.compile_cache.problem = (
            f"cannot write the compilation cache folder {chosen} ({problem}); going "
            f"on without it: set {ENV_CACHE_DIR} to a writable folder, or to an "
            "empty value (or pass --no-cache) to turn the cache off"
        )
        chosen = None
    else:
        _process.compile_cache.problem = None
    _process.compile_cache.folder = chosen
    on = chosen is not None
    jax_options.set_option("jax_enable_compilation_cache", on)
    jax_options.set_option("jax_compilation_cache_dir", str(chosen) if on else None)
    if on or not _lazy.is_loaded("jax"):  # off: thresholds back to JAX's defaults before import
        jax_options.set_option(
            "jax_persistent_cache_min_compile_time_secs", CACHE_MIN_COMPILE_SECONDS if on else None
        )
        jax_options.set_option(
            "jax_persistent_cache_min_entry_size_bytes", CACHE_MIN_ENTRY_BYTES if on else None
        )
    return chosen


def cache_folder() -> Path | None:
    """The folder of the compilation cache in use.

    Returns:
      The folder, or None when the cache is off.
    """
    return _process.compile_cache.folder


def warn_cache() -> bool:
    """Print, once per process, the warning of a cache folder that could not be written.

    One line on stderr; the run goes on without the cache.

    Returns:
      True if it printed now.
    """
    state = _process.compile_cache
    if state.problem is None or state.warned:
        return False
    state.warned = True
    print(f"jaxqueens: warning: {state.problem}", file=sys.stderr)
    return True


# ------------------------------------------------------------------------- compiled executables
EXECUTABLES = "executables"
"""Subfolder of the cache folder holding whole compiled executables (`compiled`)."""
EXECUTABLE_FORMAT = 2
"""Part of every executable's key: a new layout of the entries starts a new set of names."""
EXECUTABLES_MAX_BYTES = 256 << 20
"""The executables kept at most (bytes): after each save the least recently used entries go
until the folder is under it (an upgrade or an edited module keys new entries; the old ones
would otherwise stay for ever)."""
_NOT_KEYED = (
    "jax_compilation_cache_",
    "jax_persistent_cache_",
    "jax_enable_compilation_cache",
    "jax_log_compiles",
    "jax_explain_cache_misses",
)
"""JAX options that do not change a compiled program (where and whether JAX caches, what it
logs)."""


KEPT_MAX = 64
"""Executables `kept` holds at most in this process (least recently used go first)."""


def kept(name: str, static: object, args: tuple, build: Callable[[], Any]) -> Any:
    """The executable `build()` returns, kept in this process.

    A later call with the same `name`, `static` values and argument types returns it without
    tracing or compiling again (a driver builds its executables afresh on every call:
    `jit(...).lower().compile()` is not cached by JAX). JAX's options and `XLA_FLAGS` as they
    are now are part of the key too.

    Args:
      name: the jitted function's name.
      static: every static value the program is compiled for (a config, a chunk size, a device
        count), hashable; compared by equality and kept alive with the entry. An unhashable
        one is not kept: `build()` every time.
      args: the arguments, keyed by pytree structure and, per leaf, shape, dtype, weak type
        and placement.
      build: makes the executable, typically `lambda: compiled(...)` or
        `fn.lower(...).compile()`.

    Returns:
      The executable.
    """
    try:
        key = (name, static, *_signature(args), _options_key())
        hash(key)
    except TypeError:
        return build()
    state = _process.compile_cache
    with state.lock:
        executable = state.kept.get(key)
        if executable is not None:
            state.kept.move_to_end(key)
            return executable
    executable = build()  # outside the lock: another thread's build need not wait for this one
    with state.lock:
        state.kept[key] = executable
        while len(state.kept) > KEPT_MAX:
            state.kept.popitem(last=False)
    return executable


def loaded(name: str, static: object, args: tuple, lower: Callable[[], Any]) -> Any:
    """`compiled`, kept in this process (`kept`).

    A driver's executables are loaded from the cache folder (or compiled) once per process,
    whatever the number of calls.

    Args:
      name: the jitted function's name.
      static: every static value it is compiled for (as for `kept` and `compiled`).
      args: the arguments it is lowered for.
      lower: returns the `jax.stages.Lowered` program.

    Returns:
      The executable, called like `lower().compile()`.
    """
    return kept(name, static, args, lambda: compiled(name, static, args, lower))


def call(name: str, fn: Any, args: tuple, static: tuple = ()) -> Any:
    """`fn(*args, *static)`, run by its executable (`loaded`).

    A repeated run traces nothing; a repeated call in the process reuses the executable.

    Args:
      name: the function's name in the executable's key.
      fn: a jitted function whose trailing static arguments are `static`.
      args: the dynamic arguments.
      static: the static arguments (they key the executable).

    Returns:
      What `fn` returns.
    """
    return loaded(name, static, args, lambda: fn.lower(*args, *static))(*args)


def _signature(args: tuple) -> tuple[str, tuple]:
    """(pytree structure, per leaf: shape, dtype, weak type, placement) of `args`."""
    leaves, tree = jax.tree.flatten(args)
    return str(tree), tuple(
        (
            tuple(np.shape(x)),
            str(getattr(x, "dtype", type(x).__name__)),
            getattr(x, "weak_type", not hasattr(x, "dtype")),
            repr(getattr(x, "sharding", None)),
        )
        for x in leaves
    )


def _options_key() -> tuple:
    """`XLA_FLAGS` and every JAX option that can change a program, as they are now."""
    options = sorted(
        (k, repr(v)) for k, v in jax.config.values.items() if not k.startswith(_NOT_KEYED)
    )
    return os.environ.get("XLA_FLAGS", ""), tuple(options)


def compiled(name: str, static: object, args: tuple, lower: Callable[[], Any]) -> Any:
    """The compiled executable of `lower()`, loaded from the cache folder when a previous run
    saved it, else compiled and saved.

    JAX's persistent cache (`configure_cache`) keys an executable by its lowered program, so a
    repeated run still traces and lowers every kernel before it finds it. This cache keys it by
    what fixes the program instead, and skips both: `name`, `static`, `args` and the process
    (JAX and jaxlib versions, the package's sources by path, size and modification time as
    Python tells a stale `.pyc`, the backend and its devices, the host CPU's instruction set,
    `XLA_FLAGS` and every JAX option that can change a program).

    Only on the CPU, in a single-process run, with the cache on; anything else, and any entry
    that cannot be read, compiles as usual (a broken entry is replaced). The entries are pickled
    executables from the user's own cache folder: the same trust as JAX's cache, which holds
    compiled code too.

    Args:
      name: the jitted function's name.
      static: every static value it is compiled for, those of its closure included (a config,
        a chunk size); its `repr` is part of the key, so it must name each one.
      args: the arguments it is lowered for, keyed by pytree structure and, per leaf, shape,
        dtype, weak type and placement.
      lower: returns the `jax.stages.Lowered` program.

    Returns:
      The executable, called like `lower().compile()`.
    """
    folder = _executables_folder()
    if folder is None:
        return lower().compile()
    path = folder / f"{name}-{_key(name, static, args)}.exe"
    try:
        with open(path, "rb") as f:
            serialized, in_tree, out_tree, device_ids = pickle.load(f)
        local = {d.id: d for d in jax.local_devices()}
        loaded = serialize_executable.deserialize_and_load(
            serialized, in_tree, out_tree, execution_devices=[local[i] for i in device_ids]
        )
        with contextlib.suppress(OSError):  # used now: the last to be evicted (_evict)
            os.utime(path)
        return loaded
    except Exception:  # none saved yet, or a partial, stale or foreign entry: compile, replace
        pass
    executable = _fresh(lower)
    try:
        device_ids = [d.id for d in executable._executable.xla_executable.local_devices()]
        entry = pickle.dumps((*serialize_executable.serialize(executable), device_ids))
    except Exception:  # e.g. a program with captured constants: JAX cannot serialize it
        return executable
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(entry)
        os.replace(tmp, path)  # readers see the whole entry or none
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
    _evict(folder, EXECUTABLES_MAX_BYTES)
    return executable


def _evict(folder: Path, limit: int) -> None:
    """Remove the least recently used entries of `folder` (by modification time, which a load
    renews) until their bytes are at most `limit`. Another process may remove or replace
    entries meanwhile: what cannot be read or removed is skipped."""
    entries = []
    for path in folder.glob("*.exe"):
        with contextlib.suppress(OSError):
            st = path.stat()
            entries.append((st.st_mtime_ns, st.st_size, path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries, key=lambda e: e[0]):
        if total <= limit:
            break
        with contextlib.suppress(OSError):
            path.unlink()
        total -= size


def _fresh(lower: Callable[[], Any]) -> Any:
    """`lower().compile()` compiled by XLA, not loaded from JAX's persistent cache: an executable
    that JAX loaded from its cache serializes into an entry that fails to load or to run
    ("Function convert_multiply_fusion not found"). JAX's cache is off for this one compile (so
    a run that misses here compiles once, even where JAX's cache holds the program)."""
    lowered = lower()
    if not jax.config.jax_enable_compilation_cache:
        return lowered.compile()
    jax.config.update("jax_enable_compilation_cache", False)
    jax_cache.reset_cache()  # JAX decides once whether its cache is used: ask it again
    try:
        return lowered.compile()
    finally:
        jax.config.update("jax_enable_compilation_cache", True)
        jax_cache.reset_cache()


def _executables_folder() -> Path | None:
    """Where `compiled` keeps executables, or None when it compiles every time."""
    folder = _process.compile_cache.folder
    if folder is None or jax.default_backend() != "cpu" or jax.process_count() != 1:
        return None
    folder = folder / EXECUTABLES
    try:
        folder.mkdir(exist_ok=True)
    except OSError:
        return None
    return folder


def _key(name: str, static: object, args: tuple) -> str:
    """The hex digest naming an executable (`compiled`)."""
    tree, signature = _signature(args)
    text = repr((EXECUTABLE_FORMAT, name, static, tree, list(signature), _environment_key()))
    return hashlib.sha256(text.encode()).hexdigest()[:40]


def _environment_key() -> str:
    """The process's part of an executable's key: what cannot change while it runs (computed at
    the first call), and JAX's options and `XLA_FLAGS` as they are now."""
    state = _process.compile_cache
    if state.environment is None:
        package = Path(__file__).resolve().parents[1]
        sources = hashlib.sha256()
        for path in sorted(package.rglob("*.py")):  # Python's own test for a stale .pyc
            stat = path.stat()
            sources.update(
                f"{path.relative_to(package)} {stat.st_size} {stat.st_mtime_ns}\n".encode()
            )
        local = jax.local_devices()
        devices = [(d.platform, d.device_kind, d.id) for d in local]
        host = (local[0].client.platform_version, _cpu_features())
        versions = (jax.__version__, _installed_version("jaxlib"))
        state.environment = repr((versions, sources.hexdigest(), devices, host))
    flags, options = _options_key()
    return repr((state.environment, flags, list(options)))


def _cpu_features() -> str:
    """The host CPU's model and instruction-set flags (`/proc/cpuinfo`; the machine type where
    it cannot be read): XLA:CPU compiles for the host, so a cache folder shared by several
    machines keeps their executables apart."""
    try:
        with open("/proc/cpuinfo") as f:
            lines = [line for line in f if line.startswith(("model name", "flags", "Features"))]
        return hashlib.sha256("".join(sorted(set(lines))).encode()).hexdigest()[:16]
    except OSError:
        return platform.machine()
