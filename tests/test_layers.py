"""The house stays layered: every module imports only from the layers before its own.

errors < core < solvers < parallel < io < drivers < plots < cli (README, "Architecture").
``io`` and ``drivers`` are one layer in the style guide; here the direction inside it is fixed
too: a driver may use io's checkpoints and progress line, io never imports a driver. Imports of
the package's own modules are checked wherever they stand (top level or inside a function, which
is not allowed at all), and the import graph has no cycle.

Lazy imports (:mod:`jaxqueens._lazy`:
``mcsolve = _lazy.load("jaxqueens.drivers.minconflicts")``) are imports too: they are read here
like ``import`` statements, checked for direction and cycles, and must stand at the top of the
module, like every import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "jaxqueens"
ORDER = ["errors", "core", "solvers", "parallel", "io", "drivers", "plots", "cli"]
RANK = {name: i for i, name in enumerate(ORDER)}
TOP_LEVEL_FILES = {"__init__", "__main__", "_version", "_lazy", "_process", "errors"}
BASE_FILES = ("errors", "_version", "_lazy", "_process")
"""Top-level modules of the first layer (importable from every layer)."""


def _modules() -> dict[str, Path]:
    mods = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        mods[name] = path
    return mods


MODULES = _modules()


def _lazy_target(node: ast.AST) -> str | None:
    """The module of a lazy import ``_lazy.load("module")`` (or ``load("module")``), else None."""
    if not (
        isinstance(node, ast.Call)
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ):
        return None
    func = node.func
    named = (
        isinstance(func, ast.Attribute)
        and func.attr == "load"
        and isinstance(func.value, ast.Name)
        and func.value.id == "_lazy"
    ) or (isinstance(func, ast.Name) and func.id == "load")
    return node.args[0].value if named else None


def _imports(name: str, path: Path) -> list[tuple[str, bool]]:
    """(imported package module, at top level?) for every import of a jaxqueens module, lazy
    imports (:func:`_lazy_target`) included; a lazy import stands at the top level when it is the
    value of a module-level assignment, a type checker's import when it is in a module-level
    ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text())
    top = {id(node) for node in tree.body}
    top |= {id(node.value) for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))}
    for node in tree.body:  # `if TYPE_CHECKING:` at module level: imports for annotations only
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            top |= {id(child) for child in node.body}
    found = []
    for node in ast.walk(tree):
        if (lazy := _lazy_target(node)) is not None:
            targets = [lazy]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                raise AssertionError(f"{name}: relative import; write jaxqueens.<layer>.<module>")
            base = node.module or ""
            subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in MODULES]
            targets = subs or [base]
        else:
            continue
        found += [(t, id(node) in top) for t in targets if t in MODULES and t != name]
    return found


def _layer(name: str) -> str | None:
    parts = name.split(".")
    if len(parts) < 2:
        return None
    return "errors" if parts[1] in BASE_FILES else parts[1]


def test_every_module_lives_in_a_layer():
    for name in MODULES:
        parts = name.split(".")
        if len(parts) == 2:  # jaxqueens.X
            assert parts[1] in TOP_LEVEL_FILES or parts[1] in RANK, (
                f"{name} is outside the layer folders"
            )
        elif len(parts) > 2:
            assert parts[1] in RANK, f"{name} is in an unknown folder"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if _layer(n) in RANK))
def test_imports_point_to_earlier_layers(name):
    mine = RANK[_layer(name)]
    for target, at_top in _imports(name, MODULES[name]):
        assert at_top, f"{name} imports {target} inside a function: import it at the top"
        if target == "jaxqueens":
            raise AssertionError(f"{name} imports the package root; import the module it needs")
        theirs = RANK[_layer(target)]
        assert theirs <= mine, (
            f"{name} ({ORDER[mine]}) imports {target} ({ORDER[theirs]}), a later layer"
        )


def test_no_import_cycles():
    graph = {name: {t for t, _ in _imports(name, path)} for name, path in MODULES.items()}
    state: dict[str, int] = {}

    def visit(node, trail):
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                raise AssertionError(
                    "import cycle: " + " -> ".join([*trail[trail.index(nxt) :], nxt])
                )
            if nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node, [node])


def test_the_check_sees_a_violation(tmp_path):
    """The parser catches an import inside a function and a right-pointing one, plain or lazy
    (the test can fail)."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from jaxqueens import _lazy\nfrom jaxqueens.cli import main\n"
        "count = _lazy.load('jaxqueens.drivers.count')\n\n"
        "def f():\n    from jaxqueens.core import board\n"
        "    return _lazy.load('jaxqueens.core.checker')\n"
    )
    global MODULES
    saved = MODULES
    MODULES = {**saved, "jaxqueens.solvers.bad": bad}
    try:
        found = _imports("jaxqueens.solvers.bad", bad)
    finally:
        MODULES = saved
    assert ("jaxqueens.cli.main", True) in found and ("jaxqueens.core.board", False) in found
    assert ("jaxqueens.drivers.count", True) in found  # a lazy import pointing right
    assert ("jaxqueens.core.checker", False) in found  # a lazy import inside a function
    assert ("jaxqueens._lazy", True) in found


def test_lazy_imports_are_read():
    """The command modules' lazy imports are in the graph (so a cycle through them is caught)."""
    found = dict(_imports("jaxqueens.cli.count", MODULES["jaxqueens.cli.count"]))
    assert found.get("jaxqueens.drivers.count") is True
