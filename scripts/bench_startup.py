"""Start-up benchmark (issue 15): whole-process seconds of short commands, against the targets.

Each case runs ``python -m jaxqueens ...`` as a new process, as a user would, and the reps of all
cases are interleaved, so that a busy shared machine slows them alike:

- ``check`` of an 8-line board, ``--help`` and ``solve --help``: no JAX is imported; target: median
  under 0.3 s (1.6 s and 1.3 s before, when every command imported JAX);
- ``solve -n 32 --chains 20000`` with JAX's persistent compilation cache: ``first`` run (a fresh,
  empty cache folder each rep), ``repeated`` (a folder that one untimed run filled), ``no cache``
  (``JAXQUEENS_CACHE_DIR=""``) and ``unwritable`` (a folder that cannot be made: the run warns once
  and goes on without). Targets: repeated at least 1.5x faster than first; unwritable no slower
  than first (within 5%, the noise of one process start).

Short jobs against their peers (issue 27, item 3), whole process each, from warm caches (one
untimed run of each first), the peers alternating with jaxqueens in the same reps; target: each
ratio jaxqueens / peer at most 1.0:

- ``solve -n 1000000`` against the numba peer's ``mc_numba.py big --n 1000000`` (its whole
  process: import, JIT from its on-disk cache, init, search, verification);
- ``count -n 15`` against the one-thread C counter (``count_c.c``, built here with ``gcc -O3
  -march=native``);
- ``solve -n 8 --chains 20000`` against the all-core numba peer at its default restart period
  (``mc_numba.py chains --n 8 --seeds 20000 --parallel --reps 1``: one run of the job after its
  warm-up call).

The peers are ``../shared/baselines`` beside the repository (``--baselines``); numba runs in
``--peer-python`` (default: this interpreter) with its cache in a private folder; a peer that is
missing (no numba, no gcc) leaves its row without a ratio, and says so.

The processes keep their bytecode (``.pyc``) in a private folder (``PYTHONPYCACHEPREFIX``), filled
by an untimed first run, as an installed package has it: a shell with ``PYTHONDONTWRITEBYTECODE=1``
(as on the shared development machine) compiles every module's source at every start, ~0.05-0.1 s
more CPU; ``--no-bytecode`` measures that way.

Writes ``benchmarks/results/startup-cpu.json`` (``startup-quick-cpu.json`` with ``--quick``: fewer
reps and a smaller solve, a smoke test).

Usage: python scripts/bench_startup.py [--reps 5] [--quick] [--out-dir DIR] [--no-peers]
       [--baselines DIR] [--peer-python PYTHON]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib

SOLUTION_8 = "0\n4\n7\n5\n2\n6\n1\n3\n"
BASELINES = Path(__file__).resolve().parents[2] / "shared" / "baselines"
SHORT_JOBS = [
    (["solve", "-n", "1000000"], "numba", ["big", "--n", "1000000", "--seed", "0"]),
    (["count", "-n", "15"], "c", ["15", "15", "1"]),
    (
        ["solve", "-n", "8", "--chains", "20000"],
        "numba",
        ["chains", "--n", "8", "--seeds", "20000", "--reps", "1", "--parallel"],
    ),
]
"""(jaxqueens arguments, peer, peer arguments) of the short jobs (issue 27, item 3)."""
QUICK_SHORT_JOBS = [
    (["solve", "-n", "10000"], "numba", ["big", "--n", "10000", "--seed", "0"]),  # large path
    (["count", "-n", "11"], "c", ["11", "11", "1"]),
    (
        ["solve", "-n", "8", "--chains", "2000"],
        "numba",
        ["chains", "--n", "8", "--seeds", "2000", "--reps", "1", "--parallel"],
    ),
]
PEER_NAMES = {"numba": "numba mc_numba.py", "c": "C counter, 1 thread"}
SHORT_TARGET = 1.0
BEFORE = {"check": 1.6, "--help": 1.3, "solve first": 3.1, "solve repeated": 1.8}
"""Whole-process seconds measured before issue 15 (shared/PERFORMANCE.md; repeated: with JAX's
cache set by hand)."""
START_TARGET = 0.3
_case = "warm-up"


CPU: dict[str, list[float]] = {}
"""CPU seconds (user + system) of each case's processes: on a busy shared machine the wall time
of a process grows with the load while its CPU time barely does; for a single-threaded start
(no JAX) it is what the wall time would be on an idle machine."""


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


BYTECODE: dict[str, str] = {}
"""Environment of the measured processes for their bytecode (set by ``main``)."""


def _run(args: list[str], env: dict) -> float:
    """Seconds of one ``python -m jaxqueens ARGS`` process (it must succeed)."""
    return _process([sys.executable, "-m", "jaxqueens", *args], {**BYTECODE, **env})


def _process(command: list[str], env: dict) -> float:
    """Seconds of one process running ``command`` (it must succeed); its CPU seconds go to
    :data:`CPU` under the current case."""
    t0, c0 = time.perf_counter(), _cpu()
    out = subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, **env}, timeout=600
    )
    seconds = time.perf_counter() - t0
    CPU.setdefault(_case, []).append(_cpu() - c0)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({out.returncode}): {out.stderr[-2000:]}")
    return seconds


def _peers(args, work: Path) -> dict[str, list[str] | None]:
    """The command line of each peer (None: not available here, with a note on stderr)."""
    found: dict[str, list[str] | None] = {"numba": None, "c": None}
    baselines = Path(args.baselines)
    script, source = baselines / "mc_numba.py", baselines / "count_c.c"
    has_numba = (
        subprocess.run([args.peer_python, "-c", "import numba"], capture_output=True).returncode
        == 0
    )
    if script.is_file() and has_numba:
        found["numba"] = [args.peer_python, str(script)]
    else:
        print(
            f"numba peer not available ({script}, numba in {args.peer_python}: pip install "
            "-e '.[bench]' or pass --peer-python): its rows have no ratio",
            file=sys.stderr,
        )
    binary = work / "count_c"
    built = source.is_file() and shutil.which("gcc") is not None
    if built:
        built = (
            subprocess.run(
                ["gcc", "-O3", "-march=native", "-o", str(binary), str(source)],
                capture_output=True,
            ).returncode
            == 0
        )
    if built:
        found["c"] = [str(binary)]
    else:
        print(f"C counter not available ({source}, gcc): its row has no ratio", file=sys.stderr)
    return found


def _short_jobs(args, reps: int, work: Path, env: dict) -> list[dict]:
    """The short jobs against their peers (:data:`SHORT_JOBS`), alternating in every rep."""
    global _case
    peers = _peers(args, work)
    peer_env = {"NUMBA_CACHE_DIR": str(work / "numba-cache")}  # its own cache, warmed below
    cases: dict[str, tuple] = {}
    for jax_args, peer, peer_args in QUICK_SHORT_JOBS if args.quick else SHORT_JOBS:
        name = " ".join(jax_args)
        command = peers[peer]
        cases[name] = (
            lambda a=jax_args: _run(a, env),
            None if command is None else (lambda c=command + peer_args: _process(c, peer_env)),
            peer,
            peer_args,
        )
    warm = [] if args.quick else cases.values()  # quick: a smoke test, figures not read
    for mine, theirs, _, _ in warm:  # warm caches (untimed)
        _case = "warm-up"
        mine()
        if theirs is not None:
            theirs()
    times: dict[str, list[float]] = {}
    for _ in range(reps):
        for name, (mine, theirs, _, _) in cases.items():
            _case = name
            times.setdefault(name, []).append(mine())
            if theirs is not None:
                _case = f"peer: {name}"
                times.setdefault(_case, []).append(theirs())
    rows = []
    for name, (_, theirs, peer, peer_args) in cases.items():
        s = benchlib.summary(times[name])
        p = None if theirs is None else benchlib.summary(times[f"peer: {name}"])
        ratio = None if p is None else s["median"] / p["median"]
        rows.append(
            {
                "case": name,
                **s,
                "median_cpu_s": statistics.median(CPU[name]),
                "peer": PEER_NAMES[peer],
                "peer_args": peer_args,
                "peer_s": p,
                "peer_median_cpu_s": None if p is None else statistics.median(CPU[f"peer: {name}"]),
                "ratio_best": None if p is None else s["best"] / p["best"],
                "ratio_median": ratio,
                "target": f"jaxqueens / peer <= {SHORT_TARGET}",
                "met": None if ratio is None else ratio <= SHORT_TARGET,
                "reps": reps,
            }
        )
    return rows


def _print_short_jobs(rows: list[dict]) -> None:
    table = []
    for r in rows:
        p = r["peer_s"]
        table.append(
            [
                r["case"],
                f"{r['best']:.3f}",
                f"{r['median']:.3f}",
                f"{r['median_cpu_s']:.3f}",
                r["peer"],
                "-" if p is None else f"{p['best']:.3f}",
                "-" if p is None else f"{p['median']:.3f}",
                "-" if p is None else f"{r['peer_median_cpu_s']:.3f}",
                "-" if p is None else f"{r['ratio_best']:.2f}",
                "-" if p is None else f"{r['ratio_median']:.2f}",
                "" if r["met"] is None else ("yes" if r["met"] else "NO"),
            ]
        )
    print(
        "\nshort jobs against their peers (issue 27: jaxqueens / peer <= 1.0), whole process, "
        "warm caches, alternating"
    )
    print(
        benchlib.table(
            [
                "case",
                "best s",
                "median s",
                "cpu s",
                "peer",
                "peer best",
                "peer median",
                "peer cpu",
                "ratio best",
                "ratio median",
                "met",
            ],
            table,
        )
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--reps", type=int, default=None, help="processes per case (default 5, --quick 2)"
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help="fewer reps, solve -n 16 --chains 500, smaller short jobs without warm-up",
    )
    ap.add_argument(
        "--out-dir", default=None, help="where the JSON goes (default benchmarks/results)"
    )
    ap.add_argument(
        "--no-bytecode",
        action="store_true",
        help="no .pyc: every process compiles the sources (PYTHONDONTWRITEBYTECODE=1)",
    )
    ap.add_argument("--no-peers", action="store_true", help="skip the short jobs and their peers")
    ap.add_argument("--baselines", default=str(BASELINES), help="folder of the peers")
    ap.add_argument(
        "--peer-python", default=sys.executable, help="interpreter with numba for the numba peer"
    )
    args = ap.parse_args()
    reps = args.reps or (2 if args.quick else 5)
    n, chains = (16, 500) if args.quick else (32, 20000)
    solve = ["solve", "-n", str(n), "--chains", str(chains), "--quiet"]

    work = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    try:
        board = work / "board.txt"
        board.write_text(SOLUTION_8)
        warm = work / "warm-cache"
        (work / "a-file").write_text("not a folder")
        unwritable = work / "a-file" / "cache"  # cannot be created: its parent is a file
        fresh = iter(range(10**6))
        if args.no_bytecode:
            BYTECODE.update(PYTHONDONTWRITEBYTECODE="1")
        else:  # .pyc in a private folder, as an installed package has them
            BYTECODE.update(PYTHONDONTWRITEBYTECODE="", PYTHONPYCACHEPREFIX=str(work / "pycache"))

        def first() -> float:
            return _run(solve, {"JAXQUEENS_CACHE_DIR": str(work / f"fresh-{next(fresh)}")})

        _run(solve, {"JAXQUEENS_CACHE_DIR": str(warm)})  # fills the warm cache and .pyc (untimed)
        _run(["check", str(board)], {"JAXQUEENS_CACHE_DIR": str(warm)})
        cases = {
            "check": lambda: _run(["check", str(board)], {"JAXQUEENS_CACHE_DIR": str(warm)}),
            "--help": lambda: _run(["--help"], {"JAXQUEENS_CACHE_DIR": str(warm)}),
            "solve --help": lambda: _run(["solve", "--help"], {"JAXQUEENS_CACHE_DIR": str(warm)}),
            "solve first": first,
            "solve repeated": lambda: _run(solve, {"JAXQUEENS_CACHE_DIR": str(warm)}),
            "solve no cache": lambda: _run(solve, {"JAXQUEENS_CACHE_DIR": ""}),
            "solve unwritable": lambda: _run(solve, {"JAXQUEENS_CACHE_DIR": str(unwritable)}),
        }
        times = {name: [] for name in cases}
        global _case
        CPU.clear()
        for _ in range(reps):  # interleaved: every case once per rep
            for name, case in cases.items():
                _case = name
                times[name].append(case())
        cache_bytes = sum(p.stat().st_size for p in warm.rglob("*") if p.is_file())
        short = (
            []
            if args.no_peers
            else _short_jobs(args, reps, work, {"JAXQUEENS_CACHE_DIR": str(warm)})
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)

    stats = {name: benchlib.summary(t) for name, t in times.items()}
    med = {name: s["median"] for name, s in stats.items()}
    speedup = med["solve first"] / med["solve repeated"]
    unwritable_ratio = med["solve unwritable"] / med["solve first"]
    targets = {
        "check": (f"median < {START_TARGET} s", med["check"] < START_TARGET),
        "--help": (f"median < {START_TARGET} s", med["--help"] < START_TARGET),
        "solve --help": (f"median < {START_TARGET} s", med["solve --help"] < START_TARGET),
        "solve repeated": (f"first/repeated >= 1.5 (now {speedup:.2f}x)", speedup >= 1.5),
        "solve unwritable": (
            f"<= first (now {unwritable_ratio:.2f}x first)",
            unwritable_ratio <= 1.05,
        ),
    }
    rows, table = [], []
    for name, s in stats.items():
        target, met = targets.get(name, ("", None))
        before = BEFORE.get(name)
        cpu = statistics.median(CPU[name])
        rows.append(
            {
                "case": name,
                **s,
                "median_cpu_s": cpu,
                "reps": reps,
                "before_s": before,
                "target": target,
                "met": met,
            }
        )
        table.append(
            [
                name,
                f"{s['best']:.3f}",
                f"{s['median']:.3f}",
                f"{cpu:.3f}",
                "-" if before is None else f"{before:.1f}",
                target,
                "" if met is None else ("yes" if met else "NO"),
            ]
        )
    print(
        f"whole-process seconds, {reps} reps each, interleaved; solve = {' '.join(solve)}; "
        f"{'no bytecode' if args.no_bytecode else 'with bytecode'}; {os.cpu_count()} CPUs, load "
        f"average {os.getloadavg()[0]:.2f} at the end (wall times grow with the load; CPU times "
        "hardly do)"
    )
    print(
        benchlib.table(
            ["case", "best s", "median s", "median cpu s", "before s", "target", "met"], table
        )
    )
    print(f"cache after one solve: {cache_bytes / 1024:.0f} KiB")
    if short:
        _print_short_jobs(short)
    path = benchlib.write_results(
        "startup" + ("-quick" if args.quick else ""),
        {
            "rows": rows,
            "solve": solve,
            "speedup_repeated": speedup,
            "bytecode": not args.no_bytecode,
            "unwritable_over_first": unwritable_ratio,
            "cache_kib": cache_bytes / 1024,
            "short_jobs": short,
            "load_average": os.getloadavg(),
        },
        Path(args.out_dir) if args.out_dir else None,
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
