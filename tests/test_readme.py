"""The README: its Python example runs as written, it stays short, its links and the paths it and
the docs name exist, and its benchmark table is the one generated from benchmarks/results."""

import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
MARKER = "<!-- tested: tests/test_readme.py runs this block -->"
LIMIT = 12_288  # bytes: a newcomer reads it in two minutes; the docs site holds the rest


def _text() -> str:
    return README.read_text(encoding="utf-8")


def _tested_blocks() -> list[str]:
    blocks = []
    for part in _text().split(MARKER)[1:]:
        body = part.split("```python\n", 1)[1].split("\n```", 1)[0]
        blocks.append(body)
    return blocks


def test_the_readme_python_example_runs():
    blocks = _tested_blocks()
    assert blocks, "the README lost its tested Python example"
    assert len(blocks[0].splitlines()) <= 12
    scope: dict = {}
    exec(compile(blocks[0], str(README), "exec"), scope)  # the README's own code
    result, out = scope["result"], scope["out"]
    assert result.solutions.shape == (1000, 100)
    assert result.summary["success_rate"] == 1.0
    assert out.rows.shape == (10_000, 32) and bool(np.asarray(out.solved).all())
    mc, jax, config, params = scope["mc"], scope["jax"], scope["config"], scope["params"]
    # chain 7 alone, compiled as one program (op by op its loop and init compiled one each)
    one = jax.jit(mc.run, static_argnums=1)(
        jax.random.fold_in(jax.random.key(1), 7), config, params
    )
    np.testing.assert_array_equal(np.asarray(out.rows[7]), np.asarray(one.rows))


def test_the_readme_is_short_and_keeps_the_quick_start():
    text = _text()
    assert len(text.encode("utf-8")) <= LIMIT, len(text.encode("utf-8"))
    assert "make demo    # creates .venv, installs jaxqueens, runs the main job\n" in text
    assert (
        "make test    # creates .venv, installs jaxqueens with test extras, runs `make lint`, "
        "then the whole test suite\n"
    ) in text
    assert not re.search(r"\bissue \d+|#\d{2,}\b| -> ", text), "history belongs in CHANGELOG.md"
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test$", ci, re.M), "CI runs the README's test command"


def test_every_relative_link_and_image_exists():
    text = _text()
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text) + re.findall(r'src="([^"]+)"', text)
    local = [t for t in targets if not re.match(r"[a-z]+:", t)]
    assert {"LICENSE", "CITATION.cff", "CHANGELOG.md", "CONTRIBUTING.md"} <= set(local)
    for target in local:
        assert (ROOT / target).exists(), target


def test_paths_named_in_the_readme_and_docs_exist():
    """An example names instances/, configs/ or examples/ files a user's clone has."""
    pages = [README, *sorted((ROOT / "docs").rglob("*.md"))]
    pattern = r"(?<![\w./-])((?:instances|configs|examples|scripts)/[\w./*-]*[\w*])"
    for page in pages:
        for path in re.findall(pattern, page.read_text(encoding="utf-8")):
            if "NAME" in path or "*" in path or not re.search(r"\.\w+$|/.+/", path):
                continue  # a pattern, or a unit such as instances/s
            assert (ROOT / path).exists(), f"{page.relative_to(ROOT)} names {path}"


def test_the_benchmark_table_is_the_generated_one():
    sys.path.insert(0, str(ROOT / "docs" / "_gen"))
    try:
        import tables
    finally:
        sys.path.remove(str(ROOT / "docs" / "_gen"))
    section = tables.readme_section(_text())
    assert section is not None, "the README lost its benchmark table markers"
    assert section == tables.readme_table(), (
        "the README's benchmark table differs from benchmarks/results: run "
        "`python docs/_gen/tables.py --readme README.md`"
    )
    assert "configure()" in section and "Xeon" in section and "JAX" in section
