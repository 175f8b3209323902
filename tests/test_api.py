"""The public API: every name in ``jaxqueens.__all__`` exists and the headline calls work."""

import importlib.util
import re
from pathlib import Path

import numpy as np

import jaxqueens as jq
from jaxqueens.core.oeis import A000170


def test_all_names_exist():
    assert not [name for name in jq.__all__ if not hasattr(jq, name)]
    for name in (
        "count_solutions",
        "enumerate_solutions",
        "first_solution",
        "solve_large",
        "solve",
        "anneal",
        "evolve",
        "estimate",
        "stats",
        "compare",
        "RunControl",
    ):
        assert name in jq.__all__


def test_the_internal_modules_exist_and_the_docs_render_none_of_them():
    internal = [f"jaxqueens.{name}" for name in jq._INTERNAL]
    assert not [name for name in internal if importlib.util.find_spec(name) is None]
    assert not set(jq._LAYERS) & set(jq._INTERNAL)
    docs = Path(__file__).resolve().parent.parent / "docs"
    rendered = {
        match
        for page in docs.rglob("*.md")
        for match in re.findall(r"^::: (jaxqueens[.\w]*)", page.read_text(), re.MULTILINE)
    }
    assert rendered, "no ::: directive found: the docs moved?"
    hidden = [m for m in rendered for i in internal if m == i or m.startswith(f"{i}.")]
    assert not hidden, f"the reference renders internal modules: {hidden}"


def test_headline_calls():
    assert jq.count_solutions(8).total == A000170[8]
    assert len(jq.enumerate_solutions(6)) == A000170[6]
    rows, placements, backtracks = jq.first_solution(8)
    assert jq.check_board(rows).ok and (placements, backtracks) == (113, 105)
    assert jq.are_solutions(np.asarray([rows])).all()
    assert jq.solve_large(200, control=jq.RunControl(quiet=True)).summary["n"] == 200


def test_defect_10_numpy_integers_are_accepted_wherever_n_is_taken():
    """Every public function that takes n takes a NumPy integer too, and reports a Python int."""
    import json

    n = np.int64(8)
    counted = jq.count_solutions(n)
    assert counted.total == 92 and type(counted.n) is int
    assert len(jq.enumerate_solutions(np.int32(6))) == 4
    assert json.loads(json.dumps(jq.solve(n, 2).summary))["n"] == 8
    assert json.loads(json.dumps(jq.solve_large(np.int64(200)).summary))["n"] == 200
    assert json.loads(json.dumps(jq.anneal(n, chains=2, steps=500).summary))["n"] == 8
    assert jq.evolve(n, pop=10, generations=2).population.shape[-1] == 8
    assert jq.check_board(jq.first_solution(n)[0]).ok
    estimated = jq.estimate(n, 1024)
    assert estimated.n == 8 and type(estimated.n) is int
    # two chains, as solve above: its chain kernel is shared
    assert json.loads(json.dumps(jq.stats(n, chains=2).summary))["n"] == 8


# Importing the package, or any public name, changes nothing (issue 24, item 4). In a fresh process:
# this one has been configured by tests/conftest.py.
NO_SIDE_EFFECTS = """
import json, os, pkgutil, importlib, sys
start = dict(os.environ)
import jaxqueens
from jaxqueens import check_board, load_boards, QueensError, configure  # NumPy-only names
plain = {"env_same": dict(os.environ) == start, "jax_imported": "jax" in sys.modules}
import jax  # JAX's own import sets a few variables (TF_CPP_MIN_LOG_LEVEL, ...): not ours
env, config = dict(os.environ), dict(jax.config.values)
for name in jaxqueens.__all__:
    getattr(jaxqueens, name)
modules = [m.name for m in pkgutil.walk_packages(jaxqueens.__path__, "jaxqueens.")
           if not m.name.endswith("__main__")]  # python -m entry points run the command
for name in modules:
    importlib.import_module(name)
after = dict(os.environ)
values = jax.config.values
plain["env_changed"] = sorted(k for k in set(env) | set(after) if env.get(k) != after.get(k))
plain["config_changed"] = sorted(k for k in config if repr(config[k]) != repr(values.get(k)))
plain["modules"] = len(modules)
# nothing started JAX's backend either: configure() still sets the device count
done = jaxqueens.configure(cpu_devices=3, cache=False)
plain["configured"] = [done.backend_started, done.cpu_devices, jax.device_count()]
print(json.dumps(plain))
"""


def test_import_and_every_public_name_leave_the_environment_and_jax_config_alone():
    import json
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", NO_SIDE_EFFECTS], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["env_same"] and not seen["jax_imported"]
    assert seen["env_changed"] == [] and seen["config_changed"] == [], seen
    assert seen["modules"] > 50  # every module of the package was imported
    assert seen["configured"] == [False, 3, 3]
    assert "jaxqueens:" not in out.stderr  # no notice, no warning


def test_defect_only_the_ga_kernel_config_and_params_were_exported():
    """Every kernel family's ``Config`` and ``Params`` is public, named as ``GAConfig`` is."""
    import importlib
    import pkgutil

    import jaxqueens.solvers

    public = {
        id(getattr(jq, name)): name for name in jq.__all__ if name.endswith(("Config", "Params"))
    }
    families = 0
    for info in pkgutil.iter_modules(jaxqueens.solvers.__path__):
        module = importlib.import_module(f"jaxqueens.solvers.{info.name}")
        for kind in ("Config", "Params"):
            cls = module.__dict__.get(kind)
            if isinstance(cls, type) and cls.__module__ == module.__name__:
                families += kind == "Config"
                name = public.get(id(cls))
                assert name is not None and name.endswith(kind), (info.name, kind)
    assert families >= 8
