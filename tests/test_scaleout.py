"""Scale-out: checkpoints and resume, killed writes, 1/2/4 devices, two processes on localhost."""

import dataclasses
import json
import os
import signal
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

import jaxqueens
from jaxqueens.cli.main import main
from jaxqueens.drivers import minconflicts as mc_runner
from jaxqueens.errors import QueensError
from jaxqueens.io import checkpoint

ENV = {**os.environ, "PYTHONUNBUFFERED": "1"}


def _untimed(path) -> list[list[str]]:
    """The rows of a runs.csv without its seconds column (timings differ from run to run)."""
    rows = [line.split(",") for line in path.read_text().splitlines()]
    col = rows[0].index("seconds")
    return [r[:col] + r[col + 1 :] for r in rows]


def interrupt_after(monkeypatch, module, calls: int):
    """Make the compiled runner raise KeyboardInterrupt on its ``calls``-th chunk."""
    real = module.compile_runner

    def wrapped(*args, **kwargs):
        run = real(*args, **kwargs)
        seen = []

        def run_chunk(offset, count):
            seen.append(offset)
            if len(seen) == calls:
                raise KeyboardInterrupt
            return run(offset, count)

        return run_chunk

    monkeypatch.setattr(module, "compile_runner", wrapped)


def interrupt_on_update(monkeypatch, calls: int) -> None:
    """Make the ``calls``-th progress update raise KeyboardInterrupt (a Ctrl-C at a chunk end)."""
    from jaxqueens.io import progress

    real, seen = progress.Progress.update, []

    def update(self, done, extra=""):
        seen.append(done)
        if len(seen) == calls:
            raise KeyboardInterrupt
        return real(self, done, extra)

    monkeypatch.setattr(progress.Progress, "update", update)


def test_resume_equals_uninterrupted(tmp_path, monkeypatch):
    kwargs = {"chains": 60, "seed": 2, "batch": 8, "max_steps": 100}
    whole = jaxqueens.solve(14, **kwargs)
    ckpt = tmp_path / "checkpoint.npz"
    interrupt_after(monkeypatch, mc_runner, 4)
    part = jaxqueens.solve(
        14, **kwargs, control=jaxqueens.RunControl(checkpoint=ckpt, checkpoint_every=1e9)
    )
    assert part.run.stopped_by == "interrupted" and len(part.run.chain_id) == 24 and ckpt.exists()
    monkeypatch.undo()
    resumed = jaxqueens.solve(
        14, **kwargs, control=jaxqueens.RunControl(checkpoint=ckpt, resume=True)
    )
    for field in ("rows", "solved", "steps", "restarts", "chain_id"):
        np.testing.assert_array_equal(getattr(resumed.run, field), getattr(whole.run, field))
    with pytest.raises(QueensError, match="seed differ"):
        jaxqueens.solve(
            14,
            chains=60,
            seed=3,
            batch=8,
            max_steps=100,
            control=jaxqueens.RunControl(checkpoint=ckpt, resume=True),
        )


def test_cli_interrupt_message_and_resume(tmp_path, monkeypatch, capsys):
    from jaxqueens.parallel import chains

    argv = [
        "anneal",
        "--method",
        "ta",
        "-n",
        "8",
        "--chains",
        "64",
        "--steps",
        "500",
        "--batch",
        "8",
        "--quiet",
    ]
    assert main([*argv, "--out", str(tmp_path / "whole")]) == 0
    interrupt_after(monkeypatch, chains, 3)
    assert main([*argv, "--out", str(tmp_path / "run")]) == 130
    err = capsys.readouterr().err
    assert "--resume" in err and "16 finished chains" in err
    monkeypatch.undo()
    assert main([*argv, "--resume", str(tmp_path / "run")]) == 0
    a = np.load(tmp_path / "whole" / "solutions.npy")
    b = np.load(tmp_path / "run" / "solutions.npy")
    np.testing.assert_array_equal(a, b)
    assert (tmp_path / "whole" / "runs.csv").read_text().splitlines()[0] == (
        tmp_path / "run" / "runs.csv"
    ).read_text().splitlines()[0]
    assert not (tmp_path / "run" / checkpoint.FILENAME).exists()  # removed once finished
    assert main([*argv, "--resume", str(tmp_path / "nothing")]) == 2


KILL_WRITER = """
import sys, numpy as np
from jaxqueens.io import checkpoint
rows = np.zeros((200_000, 16), np.int32)
done = {"rows": rows, "solved": np.ones(200_000, bool), "steps": np.arange(200_000)}
done["restarts"] = np.zeros(200_000)
i = 0
while True:
    i += 1
    tree = {"done": done, "wall_share": np.zeros(200_000), "offset": i, "wall": float(i)}
    checkpoint.save(sys.argv[1], tree, {"k": i})
    print(i, flush=True)
"""


def test_killed_checkpoint_write_leaves_previous_readable(tmp_path):
    path = tmp_path / "checkpoint.npz"
    proc = subprocess.Popen(
        [sys.executable, "-c", KILL_WRITER, str(path)], stdout=subprocess.PIPE, text=True, env=ENV
    )
    try:
        assert proc.stdout.readline()  # one complete checkpoint exists
        for delay in (0.05, 0.13, 0.21):
            time.sleep(delay)
            os.kill(proc.pid, signal.SIGSTOP)  # freeze it somewhere, most likely mid-write
            import numpy as np_

            with np_.load(path) as z:
                offset = int(z["offset"])
                assert z["done.rows"].shape == (200_000, 16)
            os.kill(proc.pid, signal.SIGCONT)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    with np.load(path) as z:  # after SIGKILL: the last whole checkpoint
        assert int(z["offset"]) >= offset and z["done.rows"].shape == (200_000, 16)
    assert all(p.name == "checkpoint.npz" or p.name.endswith(".tmp") for p in tmp_path.iterdir())


DEVICE_RUN = """
import hashlib, json, sys
import numpy as np
import jax, jaxqueens
jaxqueens.configure()  # JAXQUEENS_CPU_DEVICES devices, before any JAX op
from jaxqueens.drivers import count
from jaxqueens.parallel import chains
from jaxqueens.solvers import minconflicts
out = {"devices": jax.local_device_count()}
r = jaxqueens.solve(14, chains=40, seed=5, batch=8, max_steps=80)
out["solve"] = hashlib.sha1(r.run.rows.tobytes() + r.run.steps.tobytes()).hexdigest()
a = jaxqueens.anneal(8, "sa", chains=24, steps=600, batch=8, seed=1)
out["anneal"] = hashlib.sha1(a.run.rows.tobytes() + a.run.best.tobytes()).hexdigest()
cfg = minconflicts.Config(n=12)
prm = minconflicts.default_params(cfg, max_steps=60)
lock = chains.run_lockstep(chains.Chains(minconflicts, cfg), jax.random.key(0), 20, prm, lanes=3)
lock_bytes = np.asarray(lock.rows).tobytes() + np.asarray(lock.steps).tobytes()
out["lockstep"] = hashlib.sha1(lock_bytes).hexdigest()
out["count"] = count.count_solutions(10).total
print(json.dumps(out))
"""


def test_same_results_on_1_2_4_devices():
    import json

    results = []
    for devices in (1, 2, 4):
        out = subprocess.run(
            [sys.executable, "-c", DEVICE_RUN],
            capture_output=True,
            text=True,
            env={**ENV, "JAXQUEENS_CPU_DEVICES": str(devices)},
            timeout=600,
        )
        assert out.returncode == 0, out.stderr[-2000:]
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    assert [r.pop("devices") for r in results] == [1, 2, 4]
    assert results[0] == results[1] == results[2]
    assert results[0]["count"] == 724


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_two(argv: list[str], other: list[str] | None = None) -> list[subprocess.Popen]:
    """Start ``jaxqueens ARGV`` as processes 0 and 1 of a run on localhost (one CPU device each;
    process 1 runs ``OTHER`` when given)."""
    cli = [sys.executable, "-m", "jaxqueens.cli.main"]
    port = _free_port()
    return [
        subprocess.Popen(
            cli
            + ["--coordinator", f"127.0.0.1:{port}", "--num-processes", "2", "--process-id", str(i)]
            + (other if i and other else argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**ENV, "JAXQUEENS_CPU_DEVICES": "1"},
        )
        for i in range(2)
    ]


def two_processes(argv: list[str]) -> tuple[list[int], str]:
    """Run ``jaxqueens ARGV`` as two processes on localhost (one CPU device each).

    Returns their exit codes and their stdout, stderr joined (for assertion messages)."""
    procs = start_two(argv)
    outs = [p.communicate(timeout=300) for p in procs]
    return [p.returncode for p in procs], "".join(o + e[-2000:] for o, e in outs)


CONFIG = """
command = "solve"
[options]
n = 12
chains = 50
batch = 8
seed = 7
quiet = true
"""


def test_config_on_4_devices_and_two_processes_matches_one(tmp_path):
    config = tmp_path / "exp.toml"
    config.write_text(CONFIG)
    cli = [sys.executable, "-m", "jaxqueens.cli.main"]
    run = ["run", str(config), "--out"]
    for name, devices in (("one", "1"), ("four", "4")):
        out = subprocess.run(
            cli + run + [str(tmp_path / name)],
            capture_output=True,
            text=True,
            env={**ENV, "JAXQUEENS_CPU_DEVICES": devices},
            timeout=300,
        )
        assert out.returncode == 0, out.stderr[-2000:]
    codes, log = two_processes([*run, str(tmp_path / "two")])
    assert codes == [0, 0], log
    reference = np.load(tmp_path / "one" / "solutions.npy")
    one = [r.split(",")[:4] for r in (tmp_path / "one" / "runs.csv").read_text().splitlines()]
    for name in ("four", "two"):
        np.testing.assert_array_equal(np.load(tmp_path / name / "solutions.npy"), reference)
        rows = [r.split(",")[:4] for r in (tmp_path / name / "runs.csv").read_text().splitlines()]
        assert rows == one
    record = json.loads((tmp_path / "two" / "run.json").read_text())
    assert record["process_count"] == 2


def test_ga_resume_equals_uninterrupted(tmp_path, monkeypatch):
    from jaxqueens.drivers import ga

    kwargs = {"n": 8, "pop": 30, "generations": 50, "trials": 4, "seed": 1, "chunk": 10}
    whole = ga.evolve(**kwargs)
    ckpt = tmp_path / "checkpoint.npz"
    interrupt_on_update(monkeypatch, 3)
    part = ga.evolve(**kwargs, control=jaxqueens.RunControl(checkpoint=ckpt))
    assert part.interrupted and part.best.shape[0] == 31 and ckpt.exists()
    monkeypatch.undo()
    resumed = ga.evolve(**kwargs, control=jaxqueens.RunControl(checkpoint=ckpt, resume=True))
    for field in ("best", "avg", "worst", "evaluations", "solutions", "population", "fitness"):
        np.testing.assert_array_equal(getattr(resumed, field), getattr(whole, field))
    with pytest.raises(QueensError, match="seed differ"):
        ga.evolve(
            **{**kwargs, "seed": 2}, control=jaxqueens.RunControl(checkpoint=ckpt, resume=True)
        )


def test_evolve_cli_interrupt_and_resume(tmp_path, monkeypatch, capsys):
    from jaxqueens.drivers import ga_size
    from jaxqueens.io import progress

    monkeypatch.setattr(ga_size, "default_chunk", lambda *args: 10)  # several chunks in a small run

    argv = [
        "evolve",
        "-n",
        "8",
        "--pop",
        "30",
        "--generations",
        "40",
        "--trials",
        "2",
        "--quiet",
        "--checkpoint-every",
        "0.000001",
    ]
    real = progress.Progress.update
    assert main([*argv, "--out", str(tmp_path / "whole")]) in (0, 1)
    interrupt_on_update(monkeypatch, 2)
    assert main([*argv, "--out", str(tmp_path / "run")]) == 130
    assert "--resume" in capsys.readouterr().err
    monkeypatch.setattr(progress.Progress, "update", real)
    assert main([*argv, "--resume", str(tmp_path / "run")]) in (0, 1)
    assert (tmp_path / "whole" / "history.csv").read_text() == (
        tmp_path / "run" / "history.csv"
    ).read_text()
    assert not (tmp_path / "run" / "checkpoint.npz").exists()


def test_estimate_resume_equals_uninterrupted(tmp_path, monkeypatch):
    from jaxqueens.drivers import estimate as knuth

    kwargs = {"probes": 120_000, "depth": 3, "seed": 4, "lanes": 4096}
    whole = knuth.estimate(10, **kwargs)
    ckpt = tmp_path / "checkpoint-n10.npz"
    interrupt_on_update(monkeypatch, 3)
    # Ctrl-C returns, as every driver does: the estimate of the calls finished by then
    partial = knuth.estimate(
        10, **kwargs, control=jaxqueens.RunControl(checkpoint=ckpt, checkpoint_every=1e9)
    )
    monkeypatch.undo()
    assert (whole.stopped_by, partial.stopped_by) == ("finished", "interrupted")
    with np.load(ckpt) as z:
        done = int(z["done"])
        assert 0 < done < 30
    assert 0 < partial.probes < whole.probes and np.isfinite(partial.solutions)
    resumed = knuth.estimate(
        10, **kwargs, control=jaxqueens.RunControl(checkpoint=ckpt, resume=True)
    )
    assert (resumed.solutions, resumed.solutions_se, resumed.nodes, resumed.probes) == (
        whole.solutions,
        whole.solutions_se,
        whole.nodes,
        whole.probes,
    )
    with pytest.raises(QueensError, match="seed differ"):
        knuth.estimate(
            10, **{**kwargs, "seed": 5}, control=jaxqueens.RunControl(checkpoint=ckpt, resume=True)
        )


def test_estimate_on_two_processes_matches_one(tmp_path):
    """Two processes of one device each equal one process of two devices bit for bit, at depth 0
    too (a stratum's copies followed the device count)."""
    argv = ["estimate", "-n", "10", "--probes", "100000", "--depth", "0", "--seed", "2", "--quiet"]
    cli = [sys.executable, "-m", "jaxqueens.cli.main"]
    env = {**ENV, "JAXQUEENS_CPU_DEVICES": "2"}
    one = subprocess.run(
        cli + argv + ["--out", str(tmp_path / "one")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert one.returncode == 0, one.stderr[-2000:]
    codes, log = two_processes([*argv, "--out", str(tmp_path / "two")])
    assert codes == [0, 0], log
    a = json.loads((tmp_path / "one" / "summary.json").read_text())["estimates"][0]
    b = json.loads((tmp_path / "two" / "summary.json").read_text())["estimates"][0]
    for key in ("solutions", "solutions_se", "ci_low", "ci_high", "nodes", "nodes_se", "probes"):
        assert a[key] == b[key]


def test_count_on_two_processes(tmp_path):
    argv = ["count", "-n", "11", "--unique", "--out", str(tmp_path)]
    codes, log = two_processes(argv)
    assert codes == [0, 0], log
    assert log.count("2,680 solutions") == 2 and "341" in log  # both report the exact totals
    assert {p.name for p in tmp_path.iterdir()} == {  # both processes' checkpoints retired
        "summary.json",
        "manifest.json",
        "report.html",
    }


def test_evolve_on_two_processes_matches_one(tmp_path):
    cli = [sys.executable, "-m", "jaxqueens.cli.main"]
    argv = [
        "evolve",
        "-n",
        "8",
        "--pop",
        "40",
        "--generations",
        "60",
        "--trials",
        "5",
        "--seed",
        "3",
        "--quiet",
    ]
    env = {**ENV, "JAXQUEENS_CPU_DEVICES": "1"}
    one = subprocess.run(
        cli + argv + ["--out", str(tmp_path / "one")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert one.returncode in (0, 1), one.stderr[-2000:]
    codes, log = two_processes([*argv, "--out", str(tmp_path / "two")])
    assert codes == [one.returncode] * 2, log
    assert (tmp_path / "one" / "history.csv").read_text() == (
        tmp_path / "two" / "history.csv"
    ).read_text()
    assert _untimed(tmp_path / "one" / "runs.csv") == _untimed(tmp_path / "two" / "runs.csv")
    for name in ("solutions.npy", "population.npy", "fitness.npy"):
        np.testing.assert_array_equal(
            np.load(tmp_path / "one" / name), np.load(tmp_path / "two" / name)
        )


def test_count_lockstep_shards_over_devices(monkeypatch):
    """The accelerator strategy (forced here on the CPU) splits prefixes over every device."""
    import jax

    from jaxqueens.drivers import count
    from jaxqueens.parallel import devices as backend
    from jaxqueens.parallel import sizing

    assert jax.local_device_count() >= 2
    monkeypatch.setattr(backend, "is_accelerator", lambda: True)
    # explicit lanes: 0 (the default) sizes them from the accelerator's memory, which a CPU lacks
    monkeypatch.setattr(
        sizing,
        "sizes",
        lambda: dataclasses.replace(sizing.ACCELERATOR_DEFAULTS, count_prefixes=64, count_lanes=8),
    )
    for n, want in ((8, 92), (10, 724), (11, 2680)):
        assert count.count_solutions(n, chunk=64).total == want


@pytest.mark.parametrize(
    "solver,extra",
    [
        ("minconflicts", ["--batch", "4"]),
        ("ga", ["--batch", "4", "--pop", "30", "--generations", "40"]),
    ],
)
def test_stats_interrupt_and_resume(tmp_path, monkeypatch, capsys, solver, extra):
    from jaxqueens.drivers import ga

    argv = [
        "stats",
        "-n",
        "6",
        "--solver",
        solver,
        "--chains",
        "24",
        "--seed",
        "2",
        "--quiet",
        "--no-plots",
        "--checkpoint-every",
        "0.000001",
        *extra,
    ]
    assert main([*argv, "--out", str(tmp_path / "whole")]) == 0
    real_evolve, calls = ga.evolve, []

    def evolve(*args, **kwargs):  # GA samples come in rounds: interrupt the third round
        calls.append(0)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real_evolve(*args, **kwargs)

    if solver == "ga":
        monkeypatch.setattr(ga, "evolve", evolve)
    else:
        interrupt_on_update(monkeypatch, 3)
    assert main([*argv, "--out", str(tmp_path / "run")]) == 130
    assert "--resume" in capsys.readouterr().err
    monkeypatch.undo()
    assert main([*argv, "--resume", str(tmp_path / "run")]) == 0
    for name in ("frequencies.csv", "coverage.csv"):
        assert (tmp_path / "whole" / name).read_text() == (tmp_path / "run" / name).read_text()
    assert _untimed(tmp_path / "whole" / "runs.csv") == _untimed(tmp_path / "run" / "runs.csv")
    assert not (tmp_path / "run" / "checkpoint.npz").exists()


LONG_SOLVE = [
    "solve",
    "-n",
    "32",
    "--chains",
    "10000000",
    "--batch",
    "8",
    "--quiet",
    "--checkpoint-every",
    "0.2",
]


def _clean_stop(proc: subprocess.Popen, seconds: float) -> tuple[float, str]:
    """Wait for ``proc`` (at most ``seconds``); its time to stop and its stderr, which must hold one
    error line and neither a Python traceback nor JAX's C++ abort."""
    t0 = time.monotonic()
    try:
        _, err = proc.communicate(timeout=seconds)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "Traceback" not in err and "Check failure" not in err, err[-3000:]
    assert len([line for line in err.splitlines() if "error:" in line]) == 1, err[-3000:]
    return time.monotonic() - t0, err


def test_defect_4_peer_killed_mid_run_survivor_saves_and_stops(tmp_path):
    """kill -9 of process 1 mid-run: process 0 saves its checkpoint and stops within seconds with
    one line and exit 2 (it used to print a traceback, wait ~100 s and abort from C++, 134)."""
    out = tmp_path / "run"
    procs = start_two([*LONG_SOLVE, "--out", str(out)])
    try:
        ckpt, deadline = out / checkpoint.FILENAME, time.monotonic() + 120
        while not ckpt.exists():  # the run is under way: it has saved once
            assert time.monotonic() < deadline and procs[0].poll() is None, procs[0].stderr.read()
            time.sleep(0.1)
        procs[1].kill()
        procs[1].wait()
        seconds, err = _clean_stop(procs[0], 60)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert procs[0].returncode == 2 and seconds < 20, (seconds, err[-3000:])
    assert "process 0 of 2 lost contact" in err and "--resume" in err
    with np.load(ckpt) as z:  # the survivor's last save is whole
        assert int(z["offset"]) > 0 and len(z["done.solved"]) == int(z["offset"])


def test_defect_4_peer_stopping_on_an_error_does_not_hang_the_run(tmp_path):
    """Process 1 fails after the join (here: its --out lies under a file) while process 0 works:
    process 1 exits 2 at once instead of waiting in JAX's exit barrier, and process 0 stops with
    one line."""
    (tmp_path / "blocker.txt").write_text("a file, not a folder")
    procs = start_two(
        [*LONG_SOLVE, "--out", str(tmp_path / "run")],
        other=[*LONG_SOLVE, "--out", str(tmp_path / "blocker.txt" / "run")],
    )
    try:
        _seconds_1, err_1 = _clean_stop(procs[1], 60)
        seconds_0, err_0 = _clean_stop(procs[0], 60)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert procs[1].returncode == 2 and "blocker.txt" in err_1
    assert procs[0].returncode == 2 and seconds_0 < 20 and "lost contact" in err_0, err_0[-3000:]


def test_processes_with_different_arguments_stop_at_the_join_on_every_process(tmp_path):
    """`solve -n 8` on process 0 and `solve -n 10` on process 1 (JAX's gather aborted from C++,
    exit 134, and left the lock file): both stop at the join with one line naming the setting,
    exit 2, before any folder is claimed."""
    argv = ["solve", "--chains", "16", "--quiet", "-n"]
    procs = start_two([*argv, "8", "--out", str(tmp_path / "a")], other=[*argv, "10"])
    try:
        errs = [_clean_stop(p, 60)[1] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert [p.returncode for p in procs] == [2, 2], errs
    assert all("process 1 has n=10 but process 0 has n=8" in e for e in errs), errs
    assert not (tmp_path / "a").exists()
