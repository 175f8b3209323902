"""Lazy imports: a module that is imported on its first use, so a command that never uses JAX never
pays for importing it (``jaxqueens check``, ``--help`` and every argument error stay instant).

The one mechanism the package uses for this. A module declares its lazy imports at the top, where
its imports stand, one name per line::

    from jaxqueens import _lazy

    jax = _lazy.load("jax")
    mcsolve = _lazy.load("jaxqueens.drivers.minconflicts")

and uses them as usual (``mcsolve.solve(...)``): the module is imported by the first attribute
access. ``tests/test_layers.py`` reads these declarations as imports (direction of the layers,
cycles), so a lazy import is still an import.

The name is bound to a small stand-in that imports the module then (``importlib.import_module``)
and passes every attribute read, write and deletion on to it, its ``__dict__`` included, so
``monkeypatch.setattr`` on it patches the real module and its undo restores it (pytest reads the
old value from ``__dict__``). Until then nothing is put in ``sys.modules``: libraries that look
there to see whether JAX is in use (matplotlib does) do not import it by looking, and
``"jax" in sys.modules`` keeps meaning "JAX was imported". (The standard library's
``importlib.util.LazyLoader`` registers its module at once, which is why it is not used here.)
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types


class _Deferred(types.ModuleType):
    """Stands in for module ``__name__`` until its first use, then forwards to it."""

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
    """Module ``name``, imported at its first attribute access (the module itself if it is
    imported already).

    Args:
      name: absolute module name, e.g. ``"jax"`` or ``"jaxqueens.drivers.count"``.

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
    """Whether module ``name`` has really been imported (by a plain import or a lazy one used)."""
    return name in sys.modules
