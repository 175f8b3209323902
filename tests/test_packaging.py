"""Packaging hygiene (issue 24): the dependency floors that pyproject.toml declares are the versions
the floor job (``make test-floor``, run by CI) installs and tests, and lint and types run with the
tests."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _project() -> dict:
    return _pyproject()["project"]


def _make_variable(name: str) -> str:
    """A variable of the Makefile, its continuation lines joined."""
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    found = re.search(rf"^{name}\s*\??:?=\s*(.*)$", text, re.M)
    assert found, f"{name} is not set in the Makefile"
    return found.group(1).split("#")[0].strip()


def _floors(requirements: list[str]) -> dict[str, str]:
    """name -> the version after ``>=`` for every requirement that has one."""
    out = {}
    for req in requirements:
        found = re.fullmatch(r"([A-Za-z0-9_.-]+)(\[[^]]*\])?\s*>=\s*([0-9][0-9.]*)", req.strip())
        assert found, f"{req!r}: declare a floor, name>=version"
        out[found.group(1).lower()] = found.group(3)
    return out


def test_every_declared_floor_is_the_version_the_floor_job_tests():
    project = _project()
    pins = dict(pin.split("==") for pin in _make_variable("FLOOR_PINS").split())
    runtime = _floors(project["dependencies"])
    assert set(runtime) == {"jax", "numpy", "matplotlib"}
    test_extra = [r for r in project["optional-dependencies"]["test"] if "==" not in r]
    for name, floor in {**runtime, **_floors(test_extra)}.items():
        assert pins.get(name) == floor, (
            f"{name}>={floor} in pyproject.toml, {pins.get(name)} tested"
        )
    assert pins["jaxlib"] == pins["jax"]  # jax and jaxlib are released together
    gpu = _floors(project["optional-dependencies"]["gpu"])
    assert gpu == {"jax": runtime["jax"]}


def test_the_floor_job_runs_the_lowest_python():
    lowest = _project()["requires-python"].removeprefix(">=")
    assert _make_variable("FLOOR_PYTHON") == f"python{lowest}"
    assert (ROOT / ".ci" / "run").read_text().rstrip().endswith("make test-floor")


def test_lint_and_types_run_with_the_tests_and_their_tools_are_pinned():
    text = (ROOT / "Makefile").read_text()
    assert re.search(r"^test: lint\b", text, re.M)
    lint = text[text.index("\nlint:") :].split("\n\n")[0]
    assert "ruff format --check" in lint and "ruff check" in lint and "mypy" in lint
    pinned = [r for r in _project()["optional-dependencies"]["test"] if "==" in r]
    assert sorted(r.split("==")[0] for r in pinned) == ["mypy", "ruff"]
    assert _pyproject()["tool"]["mypy"]["files"] == ["jaxqueens", "scripts/gpumodel"]


def test_the_wheel_metadata_is_complete_and_carries_the_package_data():
    """What `pip wheel .` puts in the wheel's metadata, and every data file of the package
    (a non-Python file under jaxqueens/) matched by a package-data pattern, so that an installed
    wheel runs every command. The build itself: CONTRIBUTING.md, "The wheel"."""
    project = _project()
    assert project["readme"] == "README.md" and project["license"] == "MIT"
    assert all((ROOT / f).is_file() for f in project["license-files"])
    urls = project["urls"]
    assert {"Homepage", "Documentation", "Repository", "Changelog"} <= set(urls)
    classifiers = project["classifiers"]
    lowest = project["requires-python"].removeprefix(">=")
    assert f"Programming Language :: Python :: {lowest}" in classifiers
    assert project["scripts"] == {"jaxqueens": "jaxqueens.cli.main:entry"}
    patterns = _pyproject()["tool"]["setuptools"].get("package-data", {})  # none: no data files
    for path in (ROOT / "jaxqueens").rglob("*"):
        if not path.is_file() or path.suffix in (".py", ".pyc") or "__pycache__" in path.parts:
            continue
        package = ".".join(path.parent.relative_to(ROOT).parts)
        owners = [p for p in patterns if package == p or package.startswith(p + ".")]
        rel = lambda p, path=path: str(path.relative_to(ROOT / p.replace(".", "/")))
        assert any(any(Path(rel(p)).match(glob) for glob in patterns[p]) for p in owners), (
            f"{path.relative_to(ROOT)} is not package data: the wheel would lack it"
        )
