"""Lazy imports: a module that is imported on its first use, so a command that never uses JAX never
pays for importing it.

A module declares its lazy imports at the top, one name per line (`jax = _lazy.load("jax")`),
and uses them as usual; `tests/test_layers.py` reads these declarations as imports. The name is
bound to a stand-in that imports the module at the first attribute access and passes every
attribute read, write and deletion on to it (so `monkeypatch.setattr` works). Until then nothing
is put in `sys.modules`, so `"jax" in sys.modules` keeps meaning "JAX was imported" (the
standard library's `importlib.util.LazyLoader` registers its module at once).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types


class _Deferred(types.ModuleType):
    """Stands in for module `__name__` until its first use, then forwards to it."""

    def __init__(self, name: str):
        super().__init__(name, f"{name}, imported at its first use (jaxqueens._lazy)")
        object.__setattr__(self, "_module", None)

    def _load(self) -> types.ModuleType:
        module = object.__getattribute__(self, "_module")
        if module is None:
            module = importlib.import_module(object.__getattribute__(self, "__name__"))
            object.__setattr__(self, "_module", module)
        return module

    def __getattr__(self, attr: str):  # only for names the stand-in itself lacks
        return getattr(self._load(), attr)

    def __setattr__(self, attr: str, value) -> None:
        setattr(self._load(), attr, value)

    def __delattr__(self, attr: str) -> None:
        delattr(self._load(), attr)

    # the real module's namespace: what pytest's monkeypatch reads and restores (a property over
    # ModuleType's attribute on purpose: the stand-in has no namespace of its own)
    @property
    def __dict__(self):  # type: ignore[override]
        return self._load().__dict__

    def __dir__(self) -> list[str]:
        return dir(self._load())

    def __repr__(self) -> str:
        name = object.__getattribute__(self, "__name__")
        return f"<module {name!r} (lazy, {'loaded' if is_loaded(name) else 'not loaded yet'})>"


def load(name: str) -> types.ModuleType:
    """Module `name`, imported at its first attribute access.

    Args:
      name: absolute module name, e.g. `"jax"` or `"jaxqueens.drivers.count"`.

    Returns:
      The module itself if it is imported already, else a proxy that imports it when first used.

    Raises:
      ModuleNotFoundError: no top-level package of that name is installed (checked now, without
        importing it, so a typo fails at once rather than at first use).
    """
    module = sys.modules.get(name)
    if module is not None:
        return module
    top = name.partition(".")[0]
    if top not in sys.modules and importlib.util.find_spec(top) is None:
        raise ModuleNotFoundError(f"No module named {top!r}", name=top)
    return _Deferred(name)


def is_loaded(name: str) -> bool:
    """Whether a module has really been imported (by a plain import or a lazy one used).

    Args:
      name: absolute module name.

    Returns:
      True once the module's code has run.
    """
    return name in sys.modules
