"""Measure the package's shape against the house's limits: lines, long modules, long functions,
long module docstrings, `global` statements and public names without `Args:`/`Returns:`.

Public names: the functions and classes not starting with `_` of the public modules (not those
`_INTERNAL` in `jaxqueens/__init__.py` names, not a `_*.py` module), plus the names `_PUBLIC`
there exports from internal modules (both read with `ast`).

Usage: python scripts/house_metrics.py [--json PATH] [--list]
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "jaxqueens"
MODULE_LINES = 450
FUNCTION_LINES = (80, 100)
DOCSTRING_LINES = 15


def _public(name: str) -> bool:
    return not name.startswith("_")


def _declared(package: Path, name: str):
    """The value of `name` (a literal) in the package's `__init__.py`, read with `ast`."""
    for node in ast.parse((package / "__init__.py").read_text()).body:
        if isinstance(node, ast.Assign) and any(
            getattr(target, "id", None) == name for target in node.targets
        ):
            return ast.literal_eval(node.value)
    raise SystemExit(f"{package}/__init__.py declares no {name}")


def _documented_names(doc: str) -> set[str]:
    """The names of the entries of a docstring's `Args:` and `Attributes:` sections."""
    names, inside = set(), False
    for line in doc.splitlines():
        text = line.strip()
        if re.fullmatch(r"[A-Z]\w*:", text):
            inside = text in ("Args:", "Attributes:")
        elif inside and (entry := re.match(r"\*{0,2}(\w+)(?: \([^)]*\))?:", text)):
            names.add(entry.group(1))
    return names


def _undocumented_function(node: ast.FunctionDef) -> bool:
    """Takes arguments but has no `Args:`, or returns a value but has no `Returns:`/`Yields:`."""
    doc = ast.get_docstring(node) or ""
    takes = [a for a in node.args.args + node.args.kwonlyargs if a.arg != "self"]
    returns = node.returns is not None and not (
        isinstance(node.returns, ast.Constant) and node.returns.value is None
    )
    return bool(takes and "Args:" not in doc) or (
        returns and "Returns:" not in doc and "Yields:" not in doc
    )


def _undocumented_class(node: ast.ClassDef, lines: list[str]) -> bool:
    """A class with an `__init__` that takes arguments lacks `Args:` (in its docstring or
    `__init__`'s); a record class (dataclass, NamedTuple) has a field documented neither in its
    `Args:`/`Attributes:` nor by a comment (on the field's line or the line above) nor by a
    docstring under it."""
    doc = ast.get_docstring(node) or ""
    init = next((s for s in node.body if getattr(s, "name", None) == "__init__"), None)
    if isinstance(init, ast.FunctionDef):
        takes = init.args.args[1:] + init.args.kwonlyargs
        return bool(takes) and "Args:" not in doc + (ast.get_docstring(init) or "")
    named = _documented_names(doc)
    for i, field in enumerate(node.body):
        if not isinstance(field, ast.AnnAssign) or not isinstance(field.target, ast.Name):
            continue
        name = field.target.id
        after = lines[(field.end_lineno or field.lineno) - 1][field.end_col_offset or 0 :]
        below = node.body[i + 1] if i + 1 < len(node.body) else None
        if not (
            not _public(name)
            or "ClassVar" in ast.unparse(field.annotation)
            or name in named
            or "#" in after
            or lines[field.lineno - 2].lstrip().startswith("#")
            or (isinstance(below, ast.Expr) and isinstance(below.value, ast.Constant))
        ):
            return True
    return False


def measure(package: Path = PACKAGE) -> dict:
    """The package's figures: lines, modules over the limit, functions over 80 and 100 lines,
    module docstrings over 15 lines, `global` statements, public functions and classes whose
    docstrings do not document their arguments and return values.

    Args:
        package: the package's folder.

    Returns:
        A dict of the figures, each a count or a list of `path:name (lines)` strings.
    """
    lines = 0
    modules, functions, docstrings, globals_, no_args = [], [], [], [], []
    files = sorted(package.rglob("*.py"))
    exported = {module: set(names) for module, names in _declared(package, "_PUBLIC").items()}
    internal = _declared(package, "_INTERNAL")
    for path in files:
        text = path.read_text()
        rel = str(path.relative_to(package.parent))
        count = len(text.splitlines())
        lines += count
        if count > MODULE_LINES:
            modules.append(f"{rel} ({count})")
        tree = ast.parse(text)
        doc = ast.get_docstring(tree, clean=False)
        if doc and len(doc.splitlines()) > DOCSTRING_LINES:
            docstrings.append(f"{rel} ({len(doc.splitlines())})")
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                globals_.append(f"{rel}:{node.lineno}")
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > FUNCTION_LINES[0]:
                    functions.append((size, f"{rel}:{node.name} ({size})"))
        parts = path.relative_to(package).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        module = ".".join((package.name, *parts))
        dotted = ".".join(parts)
        private = any(dotted == i or dotted.startswith(f"{i}.") for i in internal)
        private = private or (bool(parts) and parts[-1].startswith("_"))
        for node in tree.body:
            if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) or not _public(node.name):
                continue
            if private and node.name not in exported.get(module, ()):
                continue
            overload = any(
                (getattr(d, "id", None) or getattr(d, "attr", None)) == "overload"
                for d in node.decorator_list
            )
            if isinstance(node, ast.FunctionDef):
                missing = not overload and _undocumented_function(node)
            else:
                missing = _undocumented_class(node, text.splitlines())
            if missing:
                no_args.append(f"{rel}:{node.name}")
    functions.sort(reverse=True)
    return {
        "lines": lines,
        "modules": len(files),
        f"modules_over_{MODULE_LINES}": modules,
        f"functions_over_{FUNCTION_LINES[1]}": [f for s, f in functions if s > FUNCTION_LINES[1]],
        f"functions_over_{FUNCTION_LINES[0]}": [f for s, f in functions],
        f"module_docstrings_over_{DOCSTRING_LINES}": docstrings,
        "global_statements": globals_,
        "public_names_without_args_or_returns": no_args,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--list", action="store_true", help="list every finding, not counts")
    args = parser.parse_args(argv)
    figures = measure()
    for key, value in figures.items():
        if isinstance(value, list):
            print(f"{key:45s} {len(value)}")
            if args.list:
                for item in value:
                    print(f"    {item}")
        else:
            print(f"{key:45s} {value}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
