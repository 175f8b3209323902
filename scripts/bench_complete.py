"""Constrained instances decided in batches: ``jaxqueens complete`` beside the C peer ``diag_c``.

The shipped CSPLib prob079 excluded-diagonals sets (``instances/prob079/diag-N.tar.gz``,
1000 instances per n): for each n = 12..18, every instance at the d nearest the SAT/UNSAT
transition (the d whose SAT fraction on a 100-instance sample, decided by jaxqueens, is nearest
one half), and a sweep over d for one n. Three solvers decide the same instances in the same run:
jaxqueens (:func:`jaxqueens.drivers.complete.solve_instances`, one call for the whole set,
compilation done beforehand and reported apart), ``diag_c`` on one core (one process per
instance, in turn) and ``diag_c`` on every core at once (one process per core over the instance
list, as ``xargs -P $(nproc)``). Every decision is checked to agree with diag_c's. Rates:
instances decided per second and tree nodes per second (each solver's own node count: jaxqueens
counts tree edges, diag_c queens tried). Ratio = jaxqueens instances/s / all-core diag_c
instances/s (> 1: jaxqueens faster). Toroidal counts (A051906) are timed too.

Usage: python scripts/bench_complete.py [--quick] [--reps 1] [--sizes 12-18] [--sweep-n 14]
       [--out-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jax

import jaxqueens
from jaxqueens.core.constraints import Constraints
from jaxqueens.core.oeis import A051906
from jaxqueens.drivers import complete
from jaxqueens.io import instances as instio

sys.path.insert(0, os.path.dirname(__file__))
import benchlib

jaxqueens.configure()  # before any JAX op: one CPU device per core, XLA:CPU loop flags, cache

SHARED = Path(__file__).resolve().parents[2] / "shared"
SETS = Path(__file__).resolve().parents[1] / "instances" / "prob079"  # shipped (CC BY 4.0)
PEER = SHARED / "baselines" / "diag_c.c"


def build_peer(workdir: str) -> str | None:
    gcc = shutil.which("gcc")
    if gcc is None or not PEER.exists():
        print(
            f"note: diag_c skipped ({'gcc not found' if gcc is None else f'{PEER} missing'})",
            file=sys.stderr,
        )
        return None
    binary = os.path.join(workdir, "diag_c")
    subprocess.run([gcc, "-O3", "-march=native", "-o", binary, str(PEER)], check=True)
    return binary


def extract(n: int, workdir: str) -> Path:
    dest = Path(workdir) / f"diag-{n}"
    with tarfile.open(SETS / f"diag-{n}.tar.gz") as tar:
        tar.extractall(dest, filter="data")
    return dest


def load(folder: Path, d: int, limit: int | None):
    loaded = instio.load_instances([str(folder)], diags=d).instances
    return loaded[:limit] if limit else loaded


def peer_one(binary: str, path: str, d: int) -> tuple[str, int]:
    out = subprocess.run(
        [binary, path, str(d), "first"], capture_output=True, text=True, check=True
    )
    f = out.stdout.split("\t")
    return f[2], int(f[4])


def peer_all(binary: str, insts, d: int, workers: int) -> tuple[float, list[tuple[str, int]]]:
    t0 = time.perf_counter()
    if workers == 1:
        res = [peer_one(binary, i.source, d) for i in insts]
    else:
        with ThreadPoolExecutor(workers) as pool:
            res = list(pool.map(lambda i: peer_one(binary, i.source, d), insts))
    return time.perf_counter() - t0, res


def ours(insts):
    t0 = time.perf_counter()
    res = complete.solve_instances([i.model for i in insts], "decide")
    return time.perf_counter() - t0, res


def transition_d(folder: Path, sample: int) -> int:
    """The d whose SAT fraction on ``sample`` instances is nearest one half."""
    best, frac = None, None
    for d in range(4, 40):
        insts = load(folder, d, sample)
        if len(insts) < sample // 2:
            break
        res = complete.solve_instances([i.model for i in insts], "decide")
        f = sum(r.status == "SAT" for r in res.instances) / len(insts)
        if best is None or abs(f - 0.5) < abs(frac - 0.5):
            best, frac = d, f
        if f < 0.2:
            break
    return best


def measure(label, n, d, insts, binary, reps, workers) -> tuple[dict, list]:
    ours(insts[: min(8, len(insts))])  # compiles this n's kernel
    jq_t, c1_t, ca_t, load = [], [], [], [os.getloadavg()[0]]
    for _ in range(reps):  # interleaved, so a noisy machine slows all alike
        t, res = ours(insts)
        jq_t.append(t)
        if binary:
            t1, peer = peer_all(binary, insts, d, 1)
            c1_t.append(t1)
            ta, peer_a = peer_all(binary, insts, d, workers)
            ca_t.append(ta)
            status = [r.status for r in res.instances]
            assert status == [p[0] for p in peer] == [p[0] for p in peer_a], (
                f"decisions differ at n={n} d={d}"
            )
        load.append(os.getloadavg()[0])
    count = len(insts)
    nodes = sum(r.nodes for r in res.instances)
    sat = sum(r.status == "SAT" for r in res.instances)
    jq = benchlib.summary(jq_t)
    rec = {
        "set": label,
        "n": n,
        "d": d,
        "instances": count,
        "sat": sat,
        "jq_seconds": jq,
        "jq_instances_per_s": count / jq["best"],
        "jq_nodes_per_s": nodes / jq["best"],
        "jq_nodes": nodes,
        "compile_s": res.compile_seconds,
        "load_avg_1min": load,
    }
    row = [
        label,
        n,
        d,
        count,
        sat,
        f"{jq['best']:.3f}",
        benchlib.fmt_rate(count / jq["best"]),
        benchlib.fmt_rate(nodes / jq["best"]),
    ]
    if binary:
        c1, ca = benchlib.summary(c1_t), benchlib.summary(ca_t)
        cnodes = sum(p[1] for p in peer)
        rec.update(
            c1_seconds=c1,
            call_seconds=ca,
            c_nodes=cnodes,
            c1_instances_per_s=count / c1["best"],
            call_instances_per_s=count / ca["best"],
            ratio_vs_all_core=ca["best"] / jq["best"],
            ratio_vs_all_core_median=ca["median"] / jq["median"],
            ratio_vs_one_core=c1["best"] / jq["best"],
        )
        row += [
            f"{c1['best']:.3f}",
            benchlib.fmt_rate(count / c1["best"]),
            benchlib.fmt_rate(cnodes / c1["best"]),
            f"{ca['best']:.3f}",
            benchlib.fmt_rate(count / ca["best"]),
            f"{ca['best'] / jq['best']:.2f}x",
            f"{ca['median'] / jq['median']:.2f}x",
        ]
    else:
        row += ["-"] * 7
    row.append(f"{min(load):.1f}-{max(load):.1f}")
    return rec, row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument(
        "--quick", action="store_true", help="n = 10, 20 instances a row (a smoke test)"
    )
    ap.add_argument("--sizes", default=None, help="n range, e.g. 12-18 (default 12-18; quick 10)")
    ap.add_argument(
        "--sweep-n", type=int, default=None, help="n of the sweep over d (default 14; quick 10)"
    )
    ap.add_argument(
        "--out-dir", default=None, help="where the JSON goes (default benchmarks/results)"
    )
    args = ap.parse_args()
    if args.sizes:
        lo, _, hi = args.sizes.partition("-")
        sizes = list(range(int(lo), int(hi or lo) + 1))
    else:
        # --quick: a smoke test of every part at the smallest sizes (one n, which the sweep
        # shares; 20 instances a row; three sweep points; one toroidal count)
        sizes = [10] if args.quick else list(range(12, 19))
    sweep_n = args.sweep_n or (10 if args.quick else 14)
    limit = 20 if args.quick else None
    workers = os.cpu_count() or 1
    records, lines, tor_rows, tor_records = [], [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        binary = build_peer(tmp)
        folders = {n: extract(n, tmp) for n in sorted(set(sizes) | {sweep_n})}
        for n in sizes:
            d = transition_d(folders[n], 20 if args.quick else 100)
            rec, row = measure(
                "transition", n, d, load(folders[n], d, limit), binary, args.reps, workers
            )
            records.append(rec)
            lines.append(row)
            print(f"done n={n} d={d}", file=sys.stderr, flush=True)
        centre = transition_d(folders[sweep_n], 20 if args.quick else 100)
        for d in range(max(0, centre - 6), centre + 7, 6 if args.quick else 2):
            insts = load(folders[sweep_n], d, limit)
            if not insts:
                continue
            rec, row = measure("sweep", sweep_n, d, insts, binary, args.reps, workers)
            records.append(rec)
            lines.append(row)
            print(f"done sweep d={d}", file=sys.stderr, flush=True)
    for n in (11,) if args.quick else (13, 17, 19):
        t0 = time.perf_counter()
        res = complete.solve_instances([Constraints(n, toroidal=True)], "count")
        dt = time.perf_counter() - t0
        got = res.instances[0].solutions
        assert got == A051906[n], f"toroidal n={n}: {got} != A051906 {A051906[n]}"
        tor_records.append(
            {
                "n": n,
                "count": got,
                "seconds": dt,
                "compile_s": res.compile_seconds,
                "nodes": res.instances[0].nodes,
            }
        )
        tor_rows.append([n, f"{got:,}", "agrees", f"{dt:.2f}", f"{res.compile_seconds:.2f}"])

    print(
        f"prob079 excluded diagonals, decide; best of {args.reps} rep(s); "
        f"all-core diag_c = {workers} processes; "
        f"ratio = jaxqueens instances/s over all-core diag_c's (best, and median over reps); "
        f"load = 1-minute load average during the row; "
        f"{jax.local_device_count()} {jax.default_backend()} device(s)"
    )
    print(
        benchlib.table(
            [
                "set",
                "n",
                "d",
                "inst",
                "SAT",
                "jq s",
                "jq inst/s",
                "jq nodes/s",
                "C1 s",
                "C1 inst/s",
                "C1 nodes/s",
                "Call s",
                "Call inst/s",
                "ratio",
                "ratio med",
                "load",
            ],
            lines,
        )
    )
    print("toroidal counts (OEIS A051906), whole call including compilation:")
    print(benchlib.table(["n", "count", "A051906", "seconds", "compile s"], tor_rows))
    path = benchlib.write_results(
        "complete" + ("-quick" if args.quick else ""),
        {
            "reps": args.reps,
            "peer": bool(binary),
            "cpu_count": workers,
            "rows": records,
            "toroidal": tor_records,
        },
        args.out_dir,
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
