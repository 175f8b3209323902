"""Exact solution counting: ``jaxqueens count`` beside NQueensFAF and the C bitboard counter.

For n = 14..18 (--quick: 10) each rep runs, alternated so that a noisy machine slows all alike:
``python -m jaxqueens count -n N`` and ``... --unique`` as subprocesses (whole-process time,
start-up and compilation included; the kernel time is the search time the command prints,
compilation excluded); NQueensFAF's CPU solver (``shared/baselines/nqueensfaf``, built once with
its ``build.sh``; constellations under the 8 symmetries, 5 rows pre-filled, a DFS specialised
per constellation case), ``java -jar faf.jar N THREADS`` on ``os.cpu_count()`` threads, whole
process (JVM start-up included) and the solve time it prints; and the C counter
(``shared/baselines/count_c.c``, Somers style with mirror symmetry) built twice: ``gcc -O3
-march=native`` (one thread) and with ``-fopenmp`` on every core. Ratios are peer time /
jaxqueens time (> 1: jaxqueens faster), best against best and median against median; the CPU
seconds (user + system) of every process are recorded too (on a shared machine they move less
than wall time). Every count is checked against OEIS A000170 / A002562. A peer is skipped with a
note when its tools (gcc, OpenMP, a JDK) or its source are missing.

Usage: python scripts/bench_count.py [--reps 3] [--large-reps 1] [--single-max 17] [--quick]
       [--sizes 14 15 16] [--no-faf] [--faf-jar JAR] [--out-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
import benchlib

from jaxqueens.core.oeis import A000170, A002562

C_SOURCE = Path(__file__).resolve().parents[2] / "shared" / "baselines" / "count_c.c"
FAF_DIR = Path(__file__).resolve().parents[2] / "shared" / "baselines" / "nqueensfaf"
LARGE = 17  # from this n on, --large-reps reps (one C rep at n = 18 takes minutes)


def timed(argv: list[str], **kwargs) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run a process: its result, wall seconds and CPU seconds (user + system, children)."""
    before = os.times()
    t0 = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, **kwargs)
    wall = time.perf_counter() - t0
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return out, wall, cpu


def build_faf(source: Path, workdir: str, jar: str | None) -> str | None:
    """NQueensFAF's jar built by its ``build.sh``, or None with a note. The JDK and Kryo must be
    installed already (``build.sh`` would install them from Debian: run it once by hand)."""
    if jar:
        return jar if os.path.exists(jar) else None
    if not (source / "build.sh").exists():
        print(f"note: NQueensFAF skipped ({source} missing)", file=sys.stderr)
        return None
    if shutil.which("javac") is None or not os.path.exists("/usr/share/java/kryo.jar"):
        print(
            f"note: NQueensFAF skipped (no JDK or Kryo: run sh {source / 'build.sh'} once)",
            file=sys.stderr,
        )
        return None
    jar = os.path.join(workdir, "faf.jar")
    done = subprocess.run(["sh", str(source / "build.sh"), jar], capture_output=True, text=True)
    if done.returncode or not os.path.exists(jar) or shutil.which("java") is None:
        print(
            f"note: NQueensFAF skipped (build failed: {done.stderr.strip()[-300:]})",
            file=sys.stderr,
        )
        return None
    return jar


FAF_LINE = re.compile(r"solutions=(\d+) solve_wall_s=([0-9.]+)")


def run_faf(jar: str, n: int, threads: int) -> dict:
    """One ``java -jar faf.jar N THREADS`` process: whole-process, solve and CPU seconds."""
    out, wall, cpu = timed(["java", "-jar", jar, str(n), str(threads)])
    assert out.returncode == 0, out.stderr[-2000:]
    m = FAF_LINE.search(out.stdout)
    assert m and int(m.group(1)) == A000170[n], f"NQueensFAF disagrees with A000170 at n = {n}"
    return {"process": wall, "solve": float(m.group(2)), "cpu": cpu}


def build_c(source: Path, workdir: str, openmp: bool) -> str | None:
    """Compile the C counter; return the binary's path, or None (with a note) if impossible."""
    gcc = shutil.which("gcc")
    if gcc is None or not source.exists():
        print(
            f"note: C baseline skipped ({'gcc not found' if gcc is None else f'{source} missing'})",
            file=sys.stderr,
        )
        return None
    binary = os.path.join(workdir, "count_omp" if openmp else "count_c")
    flags = ["-O3", "-march=native"] + (["-fopenmp"] if openmp else [])
    done = subprocess.run([gcc, *flags, "-o", binary, str(source)], capture_output=True, text=True)
    if done.returncode:
        print(
            f"note: C baseline {'with OpenMP ' if openmp else ''}skipped (gcc failed: "
            f"{done.stderr.strip()[:200]})",
            file=sys.stderr,
        )
        return None
    return binary


def run_c(binary: str, n: int, threads: int | None = None) -> float:
    """Seconds the C counter reports for one count of n (its count is checked)."""
    env = dict(os.environ, **({"OMP_NUM_THREADS": str(threads)} if threads else {}))
    out = subprocess.run(
        [binary, str(n), str(n), "1"], capture_output=True, text=True, check=True, env=env
    )
    fields = out.stdout.strip().splitlines()[-1].split()
    assert int(fields[1]) == A000170[n], f"C counter disagrees with A000170 at n = {n}"
    return float(fields[-1])


SEARCH = re.compile(
    r"^([0-9.]+) s \(([0-9,]+) tasks from ([0-9,]+) constellations, depth (\d+), "
    r"compile ([0-9.]+) s",
    re.M,
)


def run_jaxqueens(n: int, unique: bool) -> dict:
    """One ``python -m jaxqueens count`` process: whole-process and search seconds, checked."""
    argv = [sys.executable, "-m", "jaxqueens", "count", "-n", str(n), "--quiet"] + (
        ["--unique"] if unique else []
    )
    out, wall, cpu = timed(argv)
    assert out.returncode == 0, out.stderr[-2000:]
    assert f"{A000170[n]:,} solutions" in out.stdout, out.stdout
    if unique:
        assert f": {A002562[n]:,}" in out.stdout, out.stdout
    m = SEARCH.search(out.stdout)
    assert m, out.stdout
    return {
        "process": wall,
        "cpu": cpu,
        "kernel": float(m.group(1)),
        "tasks": int(m.group(2).replace(",", "")),
        "constellations": int(m.group(3).replace(",", "")),
        "depth": int(m.group(4)),
        "compile": float(m.group(5)),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3, help="reps for n < 17 (default 3)")
    ap.add_argument("--large-reps", type=int, default=1, help=f"reps for n >= {LARGE} (default 1)")
    ap.add_argument(
        "--single-max",
        type=int,
        default=17,
        help="largest n for the single-thread C counter (n = 18 takes ~10 min a rep)",
    )
    ap.add_argument("--quick", action="store_true", help="n = 10 only (a smoke test)")
    ap.add_argument(
        "--sizes", type=int, nargs="*", default=None, help="board sizes (default 14..18)"
    )
    ap.add_argument("--c-source", default=str(C_SOURCE), help="path of count_c.c")
    ap.add_argument("--no-faf", action="store_true", help="leave out NQueensFAF")
    ap.add_argument("--faf-jar", default=None, help="a built NQueensFAF jar (default: build one)")
    ap.add_argument(
        "--out-dir", default=None, help="where the JSON goes (default benchmarks/results)"
    )
    args = ap.parse_args()

    # --quick: one size runs every part (a smoke test; each size is another set of processes)
    sizes = args.sizes or ([10] if args.quick else list(range(14, 19)))
    cores = os.cpu_count() or 1
    records, lines = [], []
    with tempfile.TemporaryDirectory() as tmp:
        single = build_c(Path(args.c_source), tmp, openmp=False)
        omp = build_c(Path(args.c_source), tmp, openmp=True)
        faf = None if args.no_faf else build_faf(FAF_DIR, tmp, args.faf_jar)
        for n in sizes:
            reps = args.large_reps if n >= LARGE else args.reps
            names = ["total", "unique"]
            times: dict[str, list[float]] = {
                k: []
                for k in (
                    "jaxqueens",
                    "jaxqueens_process",
                    "jaxqueens_unique",
                    "jaxqueens_unique_process",
                    "jaxqueens_cpu",
                    "faf",
                    "faf_process",
                    "faf_cpu",
                    "c",
                    "c_omp",
                )
            }
            info = {}
            for _ in range(reps):  # alternated, so a noisy machine slows every peer alike
                for name in names:
                    r = run_jaxqueens(n, unique=name == "unique")
                    key = "jaxqueens" if name == "total" else "jaxqueens_unique"
                    times[key].append(r["kernel"])
                    times[key + "_process"].append(r["process"])
                    if name == "total":
                        times["jaxqueens_cpu"].append(r["cpu"])
                    info = r
                if faf:
                    f = run_faf(faf, n, cores)
                    times["faf"].append(f["solve"])
                    times["faf_process"].append(f["process"])
                    times["faf_cpu"].append(f["cpu"])
                if omp:
                    times["c_omp"].append(run_c(omp, n, threads=cores))
                if single and n <= args.single_max:
                    times["c"].append(run_c(single, n))
            stats = {k: benchlib.summary(v) for k, v in times.items() if v}
            rec = {
                "n": n,
                "count": A000170[n],
                "unique": A002562[n],
                "depth": info["depth"],
                "prefixes": info["tasks"],
                "constellations": info["constellations"],
                "compile_s": info["compile"],
                "reps": reps,
                "seconds": stats,
            }

            def ratio(peer: str, ours: str = "jaxqueens", stats=stats, rec=rec) -> tuple[str, str]:
                if peer not in stats:
                    return "-", "-"
                rb = stats[peer]["best"] / max(stats[ours]["best"], 1e-6)
                rm = stats[peer]["median"] / max(stats[ours]["median"], 1e-6)
                suffix = "" if ours == "jaxqueens" else "_" + ours.split("_", 1)[1]
                tag = {"c": "", "c_omp": "_omp"}.get(peer, "_" + peer)
                rec[f"ratio{tag}{suffix}_best"] = rb
                rec[f"ratio{tag}{suffix}_median"] = rm
                return f"{rb:.2f}x", f"{rm:.2f}x"

            r1 = ratio("c")
            r2 = ratio("c_omp")
            r3 = ratio("c_omp", "jaxqueens_process")
            r4 = ratio("c_omp", "jaxqueens_unique")
            f1 = ratio("faf_process", "jaxqueens_process")
            f2 = ratio("faf", "jaxqueens")
            f3 = ratio("faf_cpu", "jaxqueens_cpu")
            fmt = lambda k, s="best", stats=stats: f"{stats[k][s]:.3f}" if k in stats else "-"
            lines.append(
                [
                    n,
                    f"{A000170[n]:,}",
                    reps,
                    f"{fmt('jaxqueens')} / {fmt('jaxqueens', 'median')}",
                    f"{fmt('jaxqueens_unique')} / {fmt('jaxqueens_unique', 'median')}",
                    f"{fmt('jaxqueens_process')} / {fmt('jaxqueens_process', 'median')}",
                    f"{fmt('faf_process')} / {fmt('faf_process', 'median')}",
                    f"{f1[0]} / {f1[1]}",
                    f"{f2[0]} / {f2[1]}",
                    f"{f3[0]} / {f3[1]}",
                    f"{fmt('c')} / {fmt('c', 'median')}",
                    f"{fmt('c_omp')} / {fmt('c_omp', 'median')}",
                    f"{r1[0]} / {r1[1]}",
                    f"{r2[0]} / {r2[1]}",
                    f"{r4[0]} / {r4[1]}",
                    f"{r3[0]} / {r3[1]}",
                    f"{info['tasks']:,} @ {info['depth']}",
                ]
            )
            records.append(rec)
            print(f"done n={n}", file=sys.stderr, flush=True)

    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    print(
        f"exact counts, seconds best / median; ratio = peer / jaxqueens (> 1: jaxqueens "
        f"faster); NQueensFAF and C omp on {cores} threads; load average at the end {load}"
    )
    print(
        benchlib.table(
            [
                "n",
                "count",
                "reps",
                "jq kernel",
                "jq --unique",
                "jq process",
                f"FAF {cores} process",
                "process vs FAF",
                "kernel vs FAF solve",
                "CPU s vs FAF",
                "C 1 thread",
                f"C {cores} threads",
                "vs C 1",
                f"vs C {cores}",
                f"unique vs C {cores}",
                f"process vs C {cores}",
                "tasks @ depth",
            ],
            lines,
        )
    )
    path = benchlib.write_results(
        "count" + ("-quick" if args.quick else ""),
        {
            "reps": args.reps,
            "large_reps": args.large_reps,
            "c_baseline": bool(single),
            "c_omp_baseline": bool(omp),
            "c_omp_threads": cores,
            "faf_baseline": bool(faf),
            "faf_threads": cores,
            "load_average_end": load,
            "rows": records,
        },
        args.out_dir,
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
