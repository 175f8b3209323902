"""The docs site's generated parts (docs/_gen/hooks.py): every placeholder a page uses is one the
hook fills, and the package page lists the whole public API."""

import re
import sys
from pathlib import Path

import pytest

import jaxqueens

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def hooks():
    sys.path.insert(0, str(ROOT / "docs" / "_gen"))
    try:
        import hooks
    finally:
        sys.path.remove(str(ROOT / "docs" / "_gen"))
    return hooks


def test_every_placeholder_on_a_page_is_generated(hooks):
    used = set()
    for page in (ROOT / "docs").rglob("*.md"):
        used |= set(hooks.PLACEHOLDER.findall(page.read_text(encoding="utf-8")))
    assert {"cli_reference", "runs_csv_columns", "api_reference", "perf:readme_table"} <= used
    for name in sorted(used):
        assert hooks.generated(name).strip(), name
    with pytest.raises(ValueError, match="unknown placeholder"):
        hooks.generated("perf:nothing")


def test_the_package_page_lists_every_public_name(hooks):
    text = hooks.api_reference()
    for name in jaxqueens.__all__:
        if name == "__version__":
            continue
        module, attribute = jaxqueens._HOME[name]
        assert f"::: {module}.{attribute}\n" in text or f"`jaxqueens.{name}`" in text, name
    assert "{{ api_reference }}" in (ROOT / "docs" / "reference" / "package.md").read_text()


def test_every_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in (ROOT / "docs").rglob("*.md"):
        rel = page.relative_to(ROOT / "docs").as_posix()
        if rel.startswith("_gen/"):
            continue
        assert re.search(rf":\s*{re.escape(rel)}\s*$", nav, re.M), (
            f"{rel} is not in mkdocs.yml's nav"
        )
