"""mkdocs hook: fills a page's `{{ NAME }}` placeholders with text generated at build time.

- `{{ cli_reference }}`: every command and option, from the parser (the CLI's `reference.markdown`);
- `{{ runs_csv_columns }}` and `{{ tables_and_columns }}`: the output tables' columns, from the
  schema the writers use;
- `{{ api_reference }}`: every name of `jaxqueens.__all__`, grouped by the module that defines it
  (`api_reference`);
- `{{ perf:NAME }}`: a table or figure from `benchmarks/results/*.json` (`docs/_gen/tables.py`,
  `GENERATED`).

An unknown placeholder fails the build.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tables  # docs/_gen/tables.py, beside this file

DOCS = Path(__file__).resolve().parents[1]
GROUPS = {
    "jaxqueens.parallel": "Process setup",
    "jaxqueens.drivers": "Drivers: run, verify, return NumPy results",
    "jaxqueens.core": "Boards, the checker, symmetry and constrained boards",
    "jaxqueens.io": "Board and instance files",
    "jaxqueens.errors": "Errors",
    "jaxqueens.solvers": "Kernel configurations (one family each)",
}
"""Module prefix -> the section of the package page its public names go to, in this order."""


def rendered_elsewhere() -> dict[str, str]:
    """Object or module path -> the reference page (other than package.md) that renders it."""
    found = {}
    for page in sorted((DOCS / "reference").glob("*.md")):
        if page.name == "package.md":
            continue
        for line in page.read_text(encoding="utf-8").splitlines():
            if line.startswith("::: "):
                found[line[4:].strip()] = page.name
    return found


def api_reference() -> str:
    """The package page's body: every public name, rendered here (mkdocstrings) or linked to the
    family page that renders its module."""
    import jaxqueens

    elsewhere = rendered_elsewhere()
    sections: dict[str, list[str]] = {title: [] for title in GROUPS.values()}
    for name in sorted(jaxqueens.__all__, key=str.lower):
        if name == "__version__":
            continue
        module, attribute = jaxqueens._HOME[name]
        path = f"{module}.{attribute}"
        title = next(t for prefix, t in GROUPS.items() if module.startswith(prefix))
        page = elsewhere.get(path) or elsewhere.get(module)
        if page:
            sections[title].append(f"- `jaxqueens.{name}`: [`{path}`]({page})")
        else:
            sections[title].append(
                f"::: {path}\n    options:\n      show_root_heading: true\n"
                f"      heading: jaxqueens.{name}\n      toc_label: {name}\n"
            )
    out = []
    for title, items in sections.items():
        if items:
            out += [f"## {title}", "", *items, ""]
    return "\n".join(out)


PLACEHOLDER = re.compile(r"\{\{ ([a-z_]+(?::[a-z_]+)?) \}\}")


def generated(name: str) -> str:
    """The text that replaces `{{ name }}`."""
    if name == "cli_reference":
        from jaxqueens.cli import reference

        return reference.markdown()
    if name == "api_reference":
        return api_reference()
    if name == "runs_csv_columns":
        from jaxqueens.io import schema

        return schema.runs_markdown()
    if name == "tables_and_columns":
        from jaxqueens.io import schema

        return schema.tables_markdown()
    if name.startswith("perf:") and name[5:] in tables.GENERATED:
        return tables.GENERATED[name[5:]]()
    raise ValueError(f"unknown placeholder {{{{ {name} }}}}")


def on_page_markdown(markdown: str, **kwargs) -> str:
    return PLACEHOLDER.sub(lambda m: generated(m.group(1)), markdown)
