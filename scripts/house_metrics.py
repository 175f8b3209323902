"""Measure the package's shape against the house's limits: lines, long modules, long functions,
long module docstrings, `global` statements and public functions without `Args:`/`Returns:`.

Usage: python scripts/house_metrics.py [--json PATH] [--list]
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "jaxqueens"
MODULE_LINES = 450
FUNCTION_LINES = (80, 100)
DOCSTRING_LINES = 15


def _public(name: str) -> bool:
    return not name.startswith("_")


def measure(package: Path = PACKAGE) -> dict:
    """The package's figures: lines, modules over the limit, functions over 80 and 100 lines,
    module docstrings over 15 lines, `global` statements, public functions and classes whose
    docstring lacks `Args:` (when they take arguments) or `Returns:` (when they return).

    Args:
        package: the package's folder.

    Returns:
        A dict of the figures, each a count or a list of `path:name (lines)` strings.
    """
    lines = 0
    modules, functions, docstrings, globals_, no_args = [], [], [], [], []
    files = sorted(package.rglob("*.py"))
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
        for node in tree.body:
            overload = isinstance(node, ast.FunctionDef) and any(
                isinstance(d, (ast.Name, ast.Attribute))
                and (getattr(d, "id", None) or getattr(d, "attr", None)) == "overload"
                for d in node.decorator_list
            )
            if isinstance(node, ast.FunctionDef) and _public(node.name) and not overload:
                fdoc = ast.get_docstring(node) or ""
                takes = [a for a in node.args.args + node.args.kwonlyargs if a.arg != "self"]
                if (takes and "Args:" not in fdoc) or (
                    node.returns is not None
                    and not (isinstance(node.returns, ast.Constant) and node.returns.value is None)
                    and "Returns:" not in fdoc
                    and "Yields:" not in fdoc
                ):
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
        "public_functions_without_args_or_returns": no_args,
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
