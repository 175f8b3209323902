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
    assert _pyproject()["tool"]["mypy"]["files"] == ["jaxqueens"]
