"""parallel.cache: JAX's persistent compilation cache (issue 15, item 2), and JAX settings made
before JAX is imported (parallel.jax_options).

The suite runs with the cache off (tests/conftest.py sets ``JAXQUEENS_CACHE_DIR=""``); these tests
give it their own folders. Logic is tested in this process with JAX's settings recorded instead of
applied (so this process's JAX keeps its configuration); the real effect is tested in fresh
processes: a repeated ``solve`` finds every kernel in the cache, an unwritable folder warns once
and the run goes on.
"""

from __future__ import annotations

import collections
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jaxqueens import _lazy, _process
from jaxqueens.cli.main import main
from jaxqueens.io import boards as boardio
from jaxqueens.parallel import cache, jax_options


@pytest.fixture
def recorded(monkeypatch):
    """JAX options set by the package, recorded (name -> value) instead of applied."""
    seen: dict = {}

    def record(name, value):
        seen[name] = value
        return True

    monkeypatch.setattr(jax_options, "set_option", record)
    monkeypatch.setattr(_process.compile_cache, "warned", False)
    monkeypatch.setattr(_process.compile_cache, "problem", None)
    monkeypatch.setattr(_process.compile_cache, "folder", None)
    return seen


def _blocked(tmp_path) -> Path:
    """A folder that cannot be created: its parent is a regular file (fails for root too)."""
    (tmp_path / "a-file").write_text("not a folder")
    return tmp_path / "a-file" / "cache"


def test_default_folder_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv(cache.ENV_CACHE_DIR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    folder = cache.cache_dir_setting()
    assert folder.parent == tmp_path / "xdg" / "jaxqueens" and folder.name.startswith("jax-")
    import jax

    assert folder.name == f"jax-{jax.__version__}"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # not absolute: ignored, as XDG says
    assert cache.cache_dir_setting().parent == Path.home() / ".cache" / "jaxqueens"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache.cache_dir_setting().parent == Path.home() / ".cache" / "jaxqueens"
    monkeypatch.setenv(cache.ENV_CACHE_DIR, str(tmp_path / "mine"))  # moves it, as given
    assert cache.cache_dir_setting() == tmp_path / "mine"
    monkeypatch.setenv(cache.ENV_CACHE_DIR, "")  # empty: off
    assert cache.cache_dir_setting() is None


def test_on_off_and_thresholds(recorded, monkeypatch, tmp_path):
    monkeypatch.setenv(cache.ENV_CACHE_DIR, str(tmp_path / "c"))
    assert cache.configure_cache() == tmp_path / "c" and (tmp_path / "c").is_dir()
    assert recorded == {
        "jax_enable_compilation_cache": True,
        "jax_compilation_cache_dir": str(tmp_path / "c"),
        "jax_persistent_cache_min_compile_time_secs": cache.CACHE_MIN_COMPILE_SECONDS,
        "jax_persistent_cache_min_entry_size_bytes": cache.CACHE_MIN_ENTRY_BYTES,
    }
    assert cache.cache_folder() == tmp_path / "c"
    assert cache.configure_cache(None) is None and cache.cache_folder() is None
    assert recorded["jax_enable_compilation_cache"] is False
    assert recorded["jax_compilation_cache_dir"] is None
    monkeypatch.setenv(cache.ENV_CACHE_DIR, "")
    assert cache.configure_cache() is None and not cache.warn_cache()


def test_unwritable_folder_warns_once_and_goes_on_without(recorded, monkeypatch, tmp_path, capsys):
    blocked = _blocked(tmp_path)
    monkeypatch.setenv(cache.ENV_CACHE_DIR, str(blocked))
    assert cache.configure_cache() is None
    assert recorded["jax_enable_compilation_cache"] is False
    assert capsys.readouterr().err == ""  # said when JAX is about to be used, not at import
    assert cache.warn_cache() and not cache.warn_cache()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(blocked) in err[0] and cache.ENV_CACHE_DIR in err[0]
    assert "--no-cache" in err[0]
    assert cache.configure_cache(None) is None and not cache.warn_cache()  # off: nothing to say


def test_no_cache_flag_and_commands_without_jax_say_nothing(
    recorded, monkeypatch, tmp_path, capsys
):
    monkeypatch.setenv(cache.ENV_CACHE_DIR, str(_blocked(tmp_path)))
    good = tmp_path / "good.txt"
    boardio.write_board(good, [0, 4, 7, 5, 2, 6, 1, 3])
    assert main(["check", str(good)]) == 0  # check never uses JAX: no cache warning
    assert "warning" not in capsys.readouterr().err
    assert main(["--no-cache", "count", "-n", "0"]) == 2  # the flag, anywhere on the line
    assert recorded["jax_enable_compilation_cache"] is False
    err = capsys.readouterr().err
    assert "warning" not in err and len(err.strip().splitlines()) == 1


def test_jax_options_go_to_the_environment_before_jax_is_imported(monkeypatch):
    monkeypatch.setattr(_lazy, "is_loaded", lambda name: False)
    for var in ("JAX_NUM_CPU_DEVICES", "JAX_ENABLE_COMPILATION_CACHE", "JAX_COMPILATION_CACHE_DIR"):
        monkeypatch.setenv(var, "placeholder")  # restored afterwards
    assert jax_options.set_option("jax_num_cpu_devices", 3)
    assert jax_options.set_option("jax_enable_compilation_cache", False)
    assert jax_options.set_option("jax_compilation_cache_dir", None)
    assert os.environ["JAX_NUM_CPU_DEVICES"] == "3"
    assert os.environ["JAX_ENABLE_COMPILATION_CACHE"] == "false"
    assert "JAX_COMPILATION_CACHE_DIR" not in os.environ


CLI = [sys.executable, "-m", "jaxqueens"]
SOLVE = ["solve", "-n", "8", "--chains", "8", "--quiet"]


def _run(args, env):
    return subprocess.run(
        CLI + args,
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "JAXQUEENS_CPU_DEVICES": "2", **env},
    )


def test_a_repeated_run_finds_every_kernel_in_the_cache(tmp_path):
    folder = tmp_path / "cache"
    first = _run(SOLVE, {cache.ENV_CACHE_DIR: str(folder)})
    assert first.returncode == 0, first.stderr[-3000:]
    entries = sorted(p.name for p in folder.iterdir())
    assert entries, "the first run wrote no cache entry"
    second = _run(SOLVE, {cache.ENV_CACHE_DIR: str(folder)})
    same = [
        line for line in first.stdout.splitlines() if "solutions/s" not in line
    ]  # timings differ
    assert second.returncode == 0, second.stderr[-3000:]
    assert [line for line in second.stdout.splitlines() if "solutions/s" not in line] == same
    assert sorted(p.name for p in folder.iterdir()) == entries  # all hits: nothing compiled anew
    assert "warning" not in (first.stderr + second.stderr).lower()
    # nor traced or lowered: the kernels load whole and no eager JAX operation runs (each compiles
    # a program at a process's first use: jax.random.key(seed) was ~60 ms of a 0.6 s run)
    third = _run(SOLVE, {cache.ENV_CACHE_DIR: str(folder), "JAX_LOG_COMPILES": "1"})
    assert third.returncode == 0, third.stderr[-3000:]
    assert [line for line in third.stdout.splitlines() if "solutions/s" not in line] == same
    assert not re.search(r"[Cc]ompil|tracing", third.stderr), third.stderr[-3000:]


def test_an_unwritable_cache_warns_once_and_the_run_goes_on(tmp_path):
    blocked = _blocked(tmp_path)
    out = _run(SOLVE, {cache.ENV_CACHE_DIR: str(blocked)})
    assert out.returncode == 0 and "8 of 8 chains solved" in out.stdout, out.stderr[-3000:]
    warnings = [line for line in out.stderr.splitlines() if "warning" in line.lower()]
    assert len(warnings) == 1 and str(blocked) in warnings[0], out.stderr[-3000:]
    quiet = _run(["--no-cache", *SOLVE], {cache.ENV_CACHE_DIR: str(blocked)})
    assert quiet.returncode == 0 and "warning" not in quiet.stderr.lower(), quiet.stderr[-3000:]


def test_device_settings_reach_jax_imported_after_the_package():
    code = (
        "import jaxqueens\n"
        "jaxqueens.configure()\n"
        "import jax\n"
        "print(jax.device_count(), jax.config.jax_enable_compilation_cache, "
        "jax.config.jax_compilation_cache_dir)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "JAXQUEENS_CPU_DEVICES": "3", cache.ENV_CACHE_DIR: ""},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["3", "False", "None"]


# Whole executables (cache.compiled): a repeated run loads them without tracing or lowering.


@pytest.fixture
def exe_folder(monkeypatch, tmp_path):
    """The cache on in ``tmp_path`` for cache.compiled (this process's JAX settings untouched)."""
    monkeypatch.setattr(_process.compile_cache, "folder", tmp_path)
    return tmp_path / cache.EXECUTABLES


def _scaled(x, factor):
    return x * factor + 1


def test_compiled_saves_then_loads_without_lowering(exe_folder):
    import jax
    import jax.numpy as jnp
    import numpy as np

    fn = jax.jit(_scaled, static_argnums=1)
    x = jnp.arange(6, dtype=jnp.int32)
    lowered = []

    def lower(factor=3, arg=x):
        lowered.append(factor)
        return fn.lower(arg, factor)

    first = cache.compiled("scaled", (3,), (x,), lower)
    assert lowered == [3] and len(list(exe_folder.iterdir())) == 1
    again = cache.compiled("scaled", (3,), (x,), lambda: pytest.fail("lowered on a hit"))
    np.testing.assert_array_equal(again(x), first(x))
    np.testing.assert_array_equal(again(x), np.arange(6) * 3 + 1)
    # another static value, or another shape, or dtype: another executable
    other = cache.compiled("scaled", (4,), (x,), lambda: lower(4))
    np.testing.assert_array_equal(other(x), np.arange(6) * 4 + 1)
    y = jnp.arange(5, dtype=jnp.int32)
    cache.compiled("scaled", (3,), (y,), lambda: lower(3, y))
    z = jnp.arange(6, dtype=jnp.float32)
    cache.compiled("scaled", (3,), (z,), lambda: lower(3, z))
    assert lowered == [3, 4, 3, 3] and len(list(exe_folder.iterdir())) == 4


def test_a_broken_entry_is_compiled_again_and_replaced(exe_folder):
    import jax
    import jax.numpy as jnp
    import numpy as np

    fn = jax.jit(_scaled, static_argnums=1)
    x = jnp.arange(4, dtype=jnp.int32)
    cache.compiled("scaled", (2,), (x,), lambda: fn.lower(x, 2))
    (entry,) = exe_folder.iterdir()
    entry.write_bytes(b"not an executable")
    again = cache.compiled("scaled", (2,), (x,), lambda: fn.lower(x, 2))
    np.testing.assert_array_equal(again(x), np.arange(4) * 2 + 1)
    assert entry.stat().st_size > 100  # replaced by a whole entry
    assert cache.compiled("scaled", (2,), (x,), lambda: pytest.fail("lowered on a hit"))


def test_call_runs_the_function_by_its_executable_once_per_process(exe_folder, monkeypatch):
    """cache.call: fn(*args, *static) by its loaded executable, lowered once per name, static
    values and argument types; saved for a later run (the cache folder)."""
    import jax
    import numpy as np

    monkeypatch.setattr(_process.compile_cache, "kept", collections.OrderedDict())
    fn = jax.jit(_scaled, static_argnums=1)
    lowered = []
    real = fn.lower

    class Counted:  # fn, counting its lowerings
        def lower(self, *args):
            lowered.append(args[1:])
            return real(*args)

    x = np.arange(4, dtype=np.int32)
    for _ in range(2):
        np.testing.assert_array_equal(cache.call("t-call", Counted(), (x,), (3,)), x * 3 + 1)
    np.testing.assert_array_equal(cache.call("t-call", Counted(), (x,), (5,)), x * 5 + 1)
    assert lowered == [(3,), (5,)]
    assert len(list(exe_folder.glob("t-call-*.exe"))) == 2


def test_kept_reuses_an_executable_in_the_process(monkeypatch):
    """cache.kept: the same name, static values and argument types return the kept executable
    without building it again; another static value, shape, dtype or name builds anew; an
    unhashable static is never kept; past KEPT_MAX the least recently used goes."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    monkeypatch.setattr(_process.compile_cache, "kept", collections.OrderedDict())
    fn = jax.jit(_scaled, static_argnums=1)
    x = jnp.arange(6, dtype=jnp.int32)
    built = []

    def build(factor=3, arg=x):
        built.append(factor)
        return fn.lower(arg, factor).compile()

    first = cache.kept("scaled", (3,), (x,), build)
    again = cache.kept("scaled", (3,), (jnp.ones(6, jnp.int32),), lambda: pytest.fail("built"))
    assert again is first and built == [3]
    np.testing.assert_array_equal(again(x), np.arange(6) * 3 + 1)
    cache.kept("scaled", (4,), (x,), lambda: build(4))  # another static value
    y, z = jnp.arange(5, dtype=jnp.int32), jnp.arange(6, dtype=jnp.float32)
    cache.kept("scaled", (3,), (y,), lambda: build(3, y))  # another shape
    cache.kept("scaled", (3,), (z,), lambda: build(3, z))  # another dtype
    cache.kept("other", (3,), (x,), lambda: build(3))  # another name
    assert built == [3, 4, 3, 3, 3]
    for _ in range(2):  # unhashable: built every time
        cache.kept("scaled", ([3],), (x,), lambda: build(3))
    assert built == [3, 4, 3, 3, 3, 3, 3]
    monkeypatch.setattr(cache, "KEPT_MAX", 2)
    cache.kept("scaled", (3,), (x,), lambda: pytest.fail("built"))  # now the most recent
    cache.kept("scaled", (5,), (x,), lambda: build(5))  # over the limit: the oldest go
    assert len(_process.compile_cache.kept) == 2
    cache.kept("scaled", (3,), (x,), lambda: pytest.fail("evicted"))
    cache.kept("scaled", (4,), (x,), lambda: build(4))  # evicted: built again
    assert built[-2:] == [5, 4]


def test_a_repeated_api_call_reuses_its_executables_with_the_same_results():
    """The drivers keep their executables (cache.kept): a second solve, anneal or evolve with
    the same settings compiles nothing more and returns the same chains (the kept executable is
    the one compiled)."""
    import jax
    import numpy as np

    import jaxqueens

    compiles = []

    def listen(event, duration, **kwargs):
        if event == "/jax/core/compile/backend_compile_duration":
            compiles.append(duration)

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        calls = [
            lambda seed: jaxqueens.solve(11, 24, seed=seed, batch=8).run.rows,
            lambda seed: jaxqueens.anneal(8, "sa", chains=16, steps=300, seed=seed).run.rows,
            lambda seed: jaxqueens.evolve(8, pop=12, generations=5, trials=2, seed=seed).population,
        ]
        for call in calls:
            first = call(1)
            before = len(compiles)
            np.testing.assert_array_equal(call(1), first)
            other = call(2)  # another seed: the same executables
            assert len(compiles) == before, call
            assert not np.array_equal(other, first)
    finally:  # public from JAX 0.8; the floor (0.7.2) has only the private one
        unregister = getattr(jax.monitoring, "unregister_event_duration_listener", None)
        if unregister is None:
            from jax._src import monitoring

            unregister = monitoring._unregister_event_duration_listener_by_callback
        unregister(listen)


def test_no_folder_no_executables(monkeypatch, tmp_path):
    import jax
    import jax.numpy as jnp

    monkeypatch.setattr(_process.compile_cache, "folder", None)
    x = jnp.arange(3, dtype=jnp.int32)
    calls = []
    for _ in range(2):
        cache.compiled(
            "scaled",
            (2,),
            (x,),
            lambda: calls.append(1) or jax.jit(_scaled, static_argnums=1).lower(x, 2),
        )
    assert calls == [1, 1] and not list(tmp_path.iterdir())


REPEATED = [
    [
        ["count", "-n", "10"],
        ["solve", "-n", "3000", "--mode", "large", "--quiet"],
        ["anneal", "-n", "10", "--chains", "8", "--quiet"],
        ["stats", "-n", "7", "--chains", "40", "--no-plots", "--quiet"],
        ["estimate", "-n", "9", "--probes", "20000", "--quiet"],
    ],
    # evolve turns LLVM's loop unrolling off before JAX starts (XLA_FLAGS): a process of its own
    [["evolve", "-n", "8", "--generations", "50", "--trials", "4", "--quiet"]],
]
"""Commands whose repeated runs are checked, in groups that one process runs one after another
(each a ``jaxqueens`` command line, by ``cli.main.main``): the same device, flag and cache
settings, so one Python+JAX start-up serves the group."""

MARK = "@@ jaxqueens"
SEVERAL = (
    "import sys\n"
    "from jaxqueens.cli.main import main\n"
    "for words in sys.argv[1:]:\n"
    f"    print({MARK!r}, words, flush=True)\n"
    f"    print({MARK!r}, words, file=sys.stderr, flush=True)\n"
    "    code = main(words.split())\n"
    "    sys.stdout.flush()\n"
    f"    print({MARK!r}, 'exit', code, flush=True)\n"
)
"""A process that runs several command lines (its arguments) in turn, each between marks."""


def _run_group(group, env) -> tuple[dict[str, str], str]:
    """Run the command lines of ``group`` in one process: each one's stdout (it exited 0) and
    the process's stderr."""
    out = subprocess.run(
        [sys.executable, "-c", SEVERAL, *(" ".join(args) for args in group)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "JAXQUEENS_CPU_DEVICES": "2", **env},
    )
    assert out.returncode == 0, out.stderr[-3000:]
    parts = out.stdout.split(MARK + " ")[1:]
    stdouts = {}
    for words, end in zip(parts[::2], parts[1::2], strict=True):
        line, _, text = words.partition("\n")
        assert end.strip() == "exit 0", (line, out.stderr[-3000:])
        stdouts[line] = text
    assert list(stdouts) == [" ".join(args) for args in group]
    return stdouts, out.stderr


@pytest.mark.parametrize("group", REPEATED, ids=lambda g: "+".join(a[0] for a in g))
def test_a_repeated_run_loads_its_executables_and_prints_the_same(tmp_path, group):
    folder = tmp_path / "cache"
    first, _ = _run_group(group, {cache.ENV_CACHE_DIR: str(folder)})
    saved = sorted(p.name for p in (folder / cache.EXECUTABLES).iterdir())
    assert saved, "no executable saved"
    # the repeated run, with JAX's compile log: it loads every executable and compiles nothing
    second, log = _run_group(group, {cache.ENV_CACHE_DIR: str(folder), "JAX_LOG_COMPILES": "1"})
    assert not re.search(r"[Cc]ompil|tracing", log), log[-3000:]
    assert sorted(p.name for p in (folder / cache.EXECUTABLES).iterdir()) == saved

    def results(out: dict[str, str]) -> dict[str, list[str]]:  # the lines without timings
        return {
            words: [
                re.sub(r"[0-9.,]+( [a-z]+)?/s\b", "R/s", re.sub(r"[0-9.]+ s\b", "T s", line))
                for line in text.splitlines()
            ]
            for words, text in out.items()
        }

    assert results(second) == results(first)
    assert all(results(first).values())  # every command printed its results
    # JAX's cache holds the programs, this one not: the executables are compiled afresh (one
    # loaded from JAX's cache made an entry that failed to load or run), then load
    shutil.rmtree(folder / cache.EXECUTABLES)
    for _ in range(2):
        again, _ = _run_group(group, {cache.ENV_CACHE_DIR: str(folder)})
        assert results(again) == results(first)
    assert sorted(p.name for p in (folder / cache.EXECUTABLES).iterdir()) == saved


def test_the_least_recently_used_entries_go_past_the_size_limit(exe_folder, monkeypatch):
    import os

    import jax
    import jax.numpy as jnp

    fn = jax.jit(_scaled, static_argnums=1)
    x = jnp.arange(4, dtype=jnp.int32)
    for factor in (1, 2):
        cache.compiled("scaled", (factor,), (x,), lambda f=factor: fn.lower(x, f))
    entries = sorted(exe_folder.iterdir(), key=lambda p: p.stat().st_mtime_ns)
    one = max(p.stat().st_size for p in entries)
    for age, path in enumerate(entries):  # factor 1 saved first, factor 2 after it
        os.utime(path, ns=(10**18 + age * 10**9, 10**18 + age * 10**9))
    # a hit renews its entry: factor 1 becomes the most recently used
    cache.compiled("scaled", (1,), (x,), lambda: pytest.fail("lowered on a hit"))
    monkeypatch.setattr(cache, "EXECUTABLES_MAX_BYTES", 2 * one + one // 2)
    cache.compiled("scaled", (3,), (x,), lambda: fn.lower(x, 3))  # a third entry: one must go
    assert len(list(exe_folder.iterdir())) == 2
    cache.compiled("scaled", (1,), (x,), lambda: pytest.fail("factor 1 was evicted"))
    # factor 2, the least recently used, went: loading it compiles again
    lowered = []
    cache.compiled("scaled", (2,), (x,), lambda: lowered.append(2) or fn.lower(x, 2))
    assert lowered == [2] and len(list(exe_folder.iterdir())) == 2  # and factor 1 went now
