"""parallel.devices: configure (``jaxqueens.configure``), the CPU device count it takes (issue 13,
defect 8) and the one-line notice of a library run on fewer CPU devices than cores (issue 24,
item 4).

Argument handling is tested in this process with JAX's settings recorded instead of applied (this
process was configured by tests/conftest.py, and its backend has started); the real effects in
fresh processes, with the variables this suite's configuration set (``JAX_*``, ``XLA_FLAGS``,
``JAXQUEENS_*``) taken out of their environment, and ``os.cpu_count`` and
``os.sched_getaffinity`` set to 4 CPUs so the figures do not depend on the machine.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

import jaxqueens
from jaxqueens import _process
from jaxqueens.cli.main import main
from jaxqueens.errors import QueensError
from jaxqueens.parallel import cache as compile_cache
from jaxqueens.parallel import devices, jax_options


@pytest.fixture
def recorded(monkeypatch):
    """JAX options set by configure, recorded (name -> value) instead of applied; XLA_FLAGS and the
    module's state restored afterwards."""
    seen: dict = {}

    def record(name, value):
        seen[name] = value
        return True

    monkeypatch.setattr(jax_options, "set_option", record)
    monkeypatch.setenv("XLA_FLAGS", "--xla_dump_to=/tmp/nowhere")
    for var in (devices.ENV_CPU_DEVICES, devices.ENV_XLA_FLAGS, compile_cache.ENV_CACHE_DIR):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(_process.jax_setup, "configured", False)
    for key in ("warned", "problem", "folder"):
        monkeypatch.setattr(_process.compile_cache, key, getattr(_process.compile_cache, key))
    return seen


def test_configure_is_the_public_name():
    assert jaxqueens.configure is devices.configure
    assert jaxqueens.Configuration is devices.Configuration
    assert "configure" in jaxqueens.__all__ and "Configuration" in jaxqueens.__all__


def test_configure_asks_for_one_device_per_core_and_appends_the_flags_once(
    recorded, monkeypatch, tmp_path
):
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(6)), raising=False)
    done = devices.configure(cache=tmp_path / "c")
    assert done == devices.Configuration(6, devices.CPU_XLA_FLAGS, tmp_path / "c", False)
    assert recorded["jax_num_cpu_devices"] == 6 and _process.jax_setup.configured
    assert recorded["jax_compilation_cache_dir"] == str(tmp_path / "c")
    assert os.environ["XLA_FLAGS"] == " ".join(
        ("--xla_dump_to=/tmp/nowhere", *devices.CPU_XLA_FLAGS)
    )
    again = devices.configure(cpu_devices=2, cache=False)  # flags already there: none added
    assert again == devices.Configuration(2, (), None, False)
    assert (
        recorded["jax_num_cpu_devices"] == 2 and recorded["jax_enable_compilation_cache"] is False
    )
    assert os.environ["XLA_FLAGS"].count("xla_cpu_small_while_loop_byte_threshold") == 1


def test_configure_counted_the_machines_cpus_not_the_ones_the_process_may_use(
    recorded, monkeypatch
):
    """Under ``taskset -c 1`` on an 8-core machine configure asked for 8 devices (os.cpu_count());
    it asks for one per CPU the process may run on."""
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {1}, raising=False)
    assert devices.configure(cache=False).cpu_devices == 1
    assert recorded["jax_num_cpu_devices"] == 1
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)  # a system without affinity masks
    assert devices.cpu_cores() == 8


def test_configure_without_loop_unrolling_adds_the_backend_option(recorded, tmp_path):
    flags = devices.cpu_xla_flags(loop_unrolling=False)
    assert flags[0] == f"{devices.CPU_XLA_FLAGS[0]},{devices.NO_LOOP_UNROLLING}"
    assert (
        flags[1:] == devices.CPU_XLA_FLAGS[1:] and devices.cpu_xla_flags() == devices.CPU_XLA_FLAGS
    )
    done = devices.configure(cache=False, loop_unrolling=False)
    assert done.xla_flags == flags
    assert os.environ["XLA_FLAGS"] == " ".join(("--xla_dump_to=/tmp/nowhere", *flags))


def test_configure_follows_the_jaxqueens_variables(recorded, monkeypatch, tmp_path):
    monkeypatch.setenv(devices.ENV_CPU_DEVICES, "3")
    monkeypatch.setenv(devices.ENV_XLA_FLAGS, "0")
    monkeypatch.setenv(compile_cache.ENV_CACHE_DIR, "")
    assert devices.configure() == devices.Configuration(3, (), None, False)
    assert os.environ["XLA_FLAGS"] == "--xla_dump_to=/tmp/nowhere"  # left alone
    # explicit arguments win over the variables
    done = devices.configure(cpu_devices=5, xla_flags=True, cache=str(tmp_path / "here"))
    assert done == devices.Configuration(5, devices.CPU_XLA_FLAGS, tmp_path / "here", False)


@pytest.mark.parametrize("bad", [0, -1, devices.MAX_CPU_DEVICES + 1, True])
def test_configure_refuses_a_device_count_out_of_range(recorded, bad):
    with pytest.raises(QueensError, match="CPU devices"):
        devices.configure(cpu_devices=bad)
    assert recorded == {} and not _process.jax_setup.configured  # nothing was changed


def test_configure_refuses_a_bad_variable(recorded, monkeypatch):
    monkeypatch.setenv(devices.ENV_CPU_DEVICES, "many")
    with pytest.raises(QueensError, match=devices.ENV_CPU_DEVICES):
        devices.configure()
    assert recorded == {}


def test_no_module_counts_devices_but_the_one_place():
    """Every driver counts its devices through devices.local_device_count (where the notice is)."""
    package = pathlib.Path(devices.__file__).resolve().parents[1]
    asking = [
        str(path.relative_to(package))
        for path in sorted(package.rglob("*.py"))
        if path.name != "devices.py" and "jax.local_device_count(" in path.read_text()
    ]
    assert asking == []


@pytest.mark.parametrize("value", ["5000", "0", "-2", "four", "2.5"])
def test_defect_8_cpu_devices_out_of_range(monkeypatch, tmp_path, capsys, value):
    monkeypatch.setenv(devices.ENV_CPU_DEVICES, value)
    with pytest.raises(QueensError, match=devices.ENV_CPU_DEVICES):
        devices.check_cpu_devices()
    board = tmp_path / "board.txt"
    board.write_text("0 4 7 5 2 6 1 3\n")
    assert main(["show", str(board)]) == 2
    err = capsys.readouterr().err
    assert devices.ENV_CPU_DEVICES in err and str(devices.MAX_CPU_DEVICES) in err
    assert len(err.strip().splitlines()) == 1
    with pytest.raises(QueensError, match="devices"):
        devices.configure(cpu_devices=devices.MAX_CPU_DEVICES + 1)


def test_defect_8_cpu_devices_5000_from_the_command_line(tmp_path):
    """The import keeps working (the setting is refused by the command, not by `import`)."""
    out = subprocess.run(
        [sys.executable, "-m", "jaxqueens", "solve", "-n", "8", "--chains", "2"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONUNBUFFERED": "1", devices.ENV_CPU_DEVICES: "5000"},
    )
    assert out.returncode == 2, out.stderr[-3000:]
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and devices.ENV_CPU_DEVICES in lines[0], out.stderr[-3000:]


def _clean_env(**extra: str) -> dict[str, str]:
    """This environment without what the suite's configure() set, as a user's shell has it."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("JAX_", "JAXQUEENS_", "XLA_")) and k != "PYTHONWARNINGS"
    }
    return {**env, "JAX_PLATFORMS": "cpu", "PYTHONUNBUFFERED": "1", **extra}


FOUR_CORES = (
    "import os\nos.cpu_count = lambda: 4\nos.sched_getaffinity = lambda pid: set(range(4))\n"
)
"""Prepended to a child's code: the machine has 4 CPUs, all of them the process's."""


def _python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    out = subprocess.run(
        [sys.executable, "-c", FOUR_CORES + code],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out


NOTICE = "jaxqueens: running on 1 of 4 CPU cores without configure()"

CONFIGURE_RUN = """
import json, os, warnings
import jax  # importing JAX first is fine: its backend starts at the first computation
import jaxqueens
env = dict(os.environ)
done = jaxqueens.configure(cache={cache!r})
out = {{
    "done": [done.cpu_devices, list(done.xla_flags), str(done.cache_dir), done.backend_started],
    "devices": jax.device_count(),
    "xla_flags": os.environ.get("XLA_FLAGS"),
    "cache": [jax.config.jax_enable_compilation_cache, jax.config.jax_compilation_cache_dir],
    "env_added": sorted(set(os.environ) - set(env)),
}}
assert jaxqueens.count_solutions(6).total == 4
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    late = jaxqueens.configure(cpu_devices=2, cache=False)
out["late"] = [late.cpu_devices, list(late.xla_flags), late.backend_started, jax.device_count()]
out["warnings"] = [f"{{w.category.__name__}}: {{w.message}}" for w in caught]
out["xla_flags_late"] = os.environ.get("XLA_FLAGS")
print(json.dumps(out))
"""


def test_configure_sets_what_it_says_and_reports_when_it_is_too_late(tmp_path):
    cache = tmp_path / "cache"
    out = _python(
        CONFIGURE_RUN.format(cache=str(cache)),
        _clean_env(XLA_FLAGS="--xla_cpu_use_thunk_runtime=true"),
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["done"] == [4, list(devices.CPU_XLA_FLAGS), str(cache), False]
    assert seen["devices"] == 4  # one per core (os.cpu_count() is 4 in that process)
    assert seen["xla_flags"] == " ".join(
        ("--xla_cpu_use_thunk_runtime=true", *devices.CPU_XLA_FLAGS)
    )
    assert seen["cache"] == [True, str(cache)] and any(cache.iterdir())  # kernels were cached
    assert seen["env_added"] == []  # JAX was imported: its settings went to jax.config
    # after the first JAX computation: the device count and XLA_FLAGS stay, and it says so
    assert seen["late"] == [None, [], True, 4]
    assert len(seen["warnings"]) == 1 and seen["warnings"][0].startswith("RuntimeWarning")
    assert (
        "backend started" in seen["warnings"][0]
        and "4 CPU device(s) instead of 2" in seen["warnings"][0]
    )
    assert seen["xla_flags_late"] == seen["xla_flags"]
    assert NOTICE not in out.stderr


UNCONFIGURED_RUN = """
import jaxqueens
assert jaxqueens.count_solutions(6).total == 4
assert len(jaxqueens.solve(8, chains=4).solutions) == 4
assert jaxqueens.first_solution(6)[0] is not None
print("done")
"""


def test_an_unconfigured_run_works_and_says_once_that_it_uses_one_core_of_four():
    out = _python(UNCONFIGURED_RUN, _clean_env())
    assert out.stdout.split() == ["done"]
    lines = out.stderr.strip().splitlines()
    assert [line for line in lines if line.startswith("jaxqueens:")] == [
        NOTICE + ": the kernels run several times slower (no XLA:CPU loop flags, one device); "
        "call jaxqueens.configure() first, before the first JAX computation"
    ], out.stderr[-3000:]


@pytest.mark.parametrize(
    "how",
    [
        {"code": "jaxqueens.configure(cpu_devices=1, cache=False)\n"},  # chosen with configure
        {"env": {"JAX_NUM_CPU_DEVICES": "1"}},  # chosen through JAX's own setting
    ],
    ids=["configured", "jax-setting"],
)
def test_no_notice_when_the_device_count_was_chosen(how):
    code = "import jaxqueens\n" + how.get("code", "") + UNCONFIGURED_RUN.split("\n", 2)[2]
    out = _python(code, _clean_env(**how.get("env", {})))
    assert out.stdout.split() == ["done"] and "jaxqueens:" not in out.stderr, out.stderr[-3000:]


CLI_RUN = """
import runpy, sys
sys.argv = ["jaxqueens", "solve", "-n", "8", "--chains", "4", "--quiet"]
runpy.run_module("jaxqueens", run_name="__main__", alter_sys=True)
"""


def test_the_command_line_configures_and_never_says_it():
    """The CLI configures itself (here with 1 device of 4 cores, as asked): no notice."""
    out = subprocess.run(
        [sys.executable, "-c", FOUR_CORES + CLI_RUN],
        capture_output=True,
        text=True,
        timeout=300,
        env=_clean_env(JAXQUEENS_CPU_DEVICES="1", JAXQUEENS_CACHE_DIR=""),
    )
    assert out.returncode == 0 and "4 of 4 chains solved" in out.stdout, out.stderr[-3000:]
    assert "jaxqueens:" not in out.stderr, out.stderr[-3000:]


def test_defect_the_unconfigured_notice_blamed_the_cores_not_its_cost(monkeypatch, capsys):
    """Without configure() the kernels ran several times slower, mostly for want of XLA:CPU's
    loop flags, and the notice spoke only of "1 of 2 CPU cores": it now states the cost and the
    call that fixes it."""
    import jax

    monkeypatch.setattr(devices, "cpu_cores", lambda: jax.local_device_count() + 1)
    monkeypatch.setattr(_process.jax_setup, "configured", False)
    monkeypatch.setattr(_process.jax_setup, "noted", False)
    monkeypatch.setattr(devices, "_count_chosen", lambda: False)
    capsys.readouterr()
    devices.local_device_count()
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1 and "several times slower" in said[0], said
    assert said[0].endswith("call jaxqueens.configure() first, before the first JAX computation")
