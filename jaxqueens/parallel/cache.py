"""JAX's persistent compilation cache: where it lives, turning it on or off, the one warning.

A repeated run loads its compiled kernels from the user's cache folder instead of compiling them
again (``$XDG_CACHE_HOME/jaxqueens/jax-<version>``; ``JAXQUEENS_CACHE_DIR`` moves it, an empty
value turns it off). :func:`jaxqueens.parallel.devices.configure` turns it on, the ``jaxqueens``
command through it (``--no-cache`` turns it off). Importing this module does not import JAX.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from typing import TypedDict

from jaxqueens import _lazy
from jaxqueens.parallel import jax_options

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
