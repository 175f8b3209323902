"""Measure the GPU paths on a lent GPU (``make gpu-measure``), beside their prediction.

One run, each result checked: ``count`` n = 18..21 on the thread kernel (one search per GPU
thread) and n = 18..19 on the XLA kernels (slower: n >= 20 there would take minutes), the two
alternated at n <= 19, totals against OEIS A000170; ``complete`` deciding the shipped prob079
set of n = 18 at its transition d (the largest n shipped), SAT boards checked and the SAT
count against the CPU benchmark's; ``solve`` n = 8 / 32 / 1,000 (every solution checked); the
generational GA at n = 64. Writes ``benchmarks/results/gpu-measured.json`` (best and median of
the repeats, the device, and the H100 prediction of ``gpu-compile.json`` beside each row).

``--dry-run``: tiny sizes on whatever backend JAX has (the thread kernel interpreted on a CPU),
written to ``--out``; the tests run it.

Usage: python scripts/bench_gpu.py [--dry-run] [--out PATH] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import jax
import numpy as np

import jaxqueens
from jaxqueens.core import checker, constraints
from jaxqueens.core.oeis import A000170
from jaxqueens.drivers import complete
from jaxqueens.drivers import count as counting
from jaxqueens.io import instances as instio

sys.path.insert(0, os.path.dirname(__file__))
import benchlib

jaxqueens.configure()  # before any JAX op

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
SETS = ROOT / "instances" / "prob079"

FULL = {
    "count_threads": (18, 19, 20, 21),
    "count_items": (18, 19),
    "complete": (18, 16, 1000),  # n, d (the CPU benchmark's transition d), instances
    "solve": ((8, 100_000), (32, 10_000), (1000, 100)),  # (n, chains)
    "evolve": (64, 1_000_000, 100),  # n, population, generations
}
DRY = {
    "count_threads": (8,),
    "count_items": (8,),
    "complete": (8, 5, 8),
    "solve": ((8, 50),),  # one size: each size is a compile of its own
    "evolve": (8, 64, 10),
}


def timed(fn, repeats: int) -> tuple[list[float], object]:
    """Run ``fn`` ``repeats`` times: its own reported seconds (compilation excluded) and the last
    result."""
    secs, out = [], None
    for _ in range(repeats):
        out, s = fn()
        secs.append(s)
    return secs, out


def row(what: str, n: int, secs: list[float], ok: bool, **extra) -> dict:
    r = {
        "what": what,
        "n": n,
        "ok": bool(ok),
        "best_s": min(secs),
        "median_s": statistics.median(secs),
    }
    r.update(repeats=len(secs), seconds=secs, **extra)
    print(
        f"{what:28} n={n:<5} best {r['best_s']:9.3f} s  median {r['median_s']:9.3f} s  "
        f"{'ok' if ok else 'WRONG'}",
        flush=True,
    )
    return r


def count_rows(sizes: dict, repeats: int) -> list[dict]:
    """Both count kernels, alternated at the sizes both run."""
    rows = []
    ns = sorted(set(sizes["count_threads"]) | set(sizes["count_items"]))
    for n in ns:
        kernels = [k for k in ("threads", "items") if n in sizes[f"count_{k}"]]
        reps = repeats if n <= 19 else 1
        secs = {k: [] for k in kernels}
        last = {}
        for _ in range(reps):  # alternate the two sides in one run
            for k in kernels:
                res = counting.count_solutions(n, kernel=k)
                secs[k].append(res.seconds)
                last[k] = res
        for k in kernels:
            res = last[k]
            rows.append(
                row(
                    f"count ({k})",
                    n,
                    secs[k],
                    res.total == A000170[n],
                    total=res.total,
                    compile_s=res.compile_seconds,
                    tasks=res.prefixes,
                    depth=res.depth,
                )
            )
    return rows


def complete_row(spec: tuple, repeats: int) -> dict:
    n, d, limit = spec
    with tempfile.TemporaryDirectory() as work:
        with tarfile.open(SETS / f"diag-{n}.tar.gz") as tar:
            tar.extractall(work, filter="data")
        insts = instio.load_instances([work], diags=d).instances[:limit]
    models = [i.model for i in insts]

    def one():
        res = complete.solve_instances(models, "decide")
        return res, res.seconds

    secs, res = timed(one, repeats)
    sat = [r for r in res.instances if r.status == "SAT"]
    boards_ok = all(
        board_ok(np.asarray(r.boards[0]), m)
        for r, m in zip(res.instances, models, strict=True)
        if r.status == "SAT"
    )
    settled = all(r.status in ("SAT", "UNSAT") for r in res.instances)
    want = cpu_sat(n, d, len(models))
    ok = boards_ok and settled and (want is None or want == len(sat))
    return row(
        "complete decide",
        n,
        secs,
        ok,
        d=d,
        instances=len(models),
        sat=len(sat),
        cpu_sat=want,
        instances_per_s=len(models) / min(secs),
        compile_s=res.compile_seconds,
    )


def board_ok(board: np.ndarray, model) -> bool:
    """A SAT board: a solution (the NumPy checker) with every queen on an allowed square."""
    allowed = constraints.allowed_squares(model)
    return bool(checker.are_solutions(board[None])[0]) and bool(
        allowed[np.arange(len(board)), board].all()
    )


def cpu_sat(n: int, d: int, instances: int) -> int | None:
    """The SAT count the CPU benchmark recorded for the same instances, if it did."""
    path = RESULTS / "complete-cpu.json"
    if not path.exists():
        return None
    for r in json.loads(path.read_text())["rows"]:
        if (r["set"], r["n"], r["d"], r["instances"]) == ("transition", n, d, instances):
            return r["sat"]
    return None


def solve_rows(specs, repeats: int) -> list[dict]:
    rows = []
    for n, chains in specs:

        def one(n=n, chains=chains):
            res = jaxqueens.solve(n, chains=chains, seed=1)
            return res, res.run.wall_s

        secs, res = timed(one, repeats)
        sols = res.run.rows[res.run.solved]
        ok = len(sols) == chains and bool(checker.are_solutions(sols).all())
        rows.append(
            row(
                "solve (min-conflicts)",
                n,
                secs,
                ok,
                chains=chains,
                chains_per_s=chains / min(secs),
                compile_s=res.run.compile_s,
            )
        )
    return rows


def evolve_row(spec: tuple, repeats: int) -> dict:
    n, pop, gens = spec

    def one():
        res = jaxqueens.evolve(n, pop, gens, scheme="generational", seed=1)
        return res, res.wall_s

    secs, res = timed(one, repeats)
    sols = np.asarray(res.solutions)
    ok = len(sols) == 0 or bool(checker.are_solutions(sols).all())
    return row(
        "evolve (generational)",
        n,
        secs,
        ok,
        population=pop,
        generations=res.generations,
        individuals_per_s=pop * res.generations / min(secs),
        solutions=len(sols),
        compile_s=res.compile_s,
    )


def predictions() -> dict:
    """The H100 prediction of each measured row (``gpu-compile.json``), by (workload, n)."""
    path = RESULTS / "gpu-compile.json"
    if not path.exists():
        return {}
    out = {}
    for r in json.loads(path.read_text()).get("records", []):
        p = r.get("predicted") or {}
        if r.get("device_key") == "h100" and "count_seconds" in p:
            kind = "threads" if r["workload"] == "count (threads)" else "items"
            if r["workload"] in ("count (threads)", "count"):
                out[f"count ({kind})", r["n"]] = p["count_seconds"]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dry-run", action="store_true", help="tiny sizes, any backend")
    ap.add_argument("--out", default=None)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    sizes = DRY if args.dry_run else FULL
    repeats = 1 if args.dry_run else args.repeats
    out = Path(
        args.out or RESULTS / ("gpu-measured-dry.json" if args.dry_run else "gpu-measured.json")
    )
    if not args.dry_run and jax.default_backend() != "gpu":
        print("bench_gpu: no GPU here (JAX backend: " + jax.default_backend() + "); use --dry-run")
        return 2
    t0 = time.perf_counter()
    rows = count_rows(sizes, repeats)
    rows.append(complete_row(sizes["complete"], repeats))
    rows += solve_rows(sizes["solve"], repeats)
    rows.append(evolve_row(sizes["evolve"], repeats))
    pred = predictions()
    for r in rows:
        if (r["what"], r["n"]) in pred:
            r["predicted_h100_s"] = pred[r["what"], r["n"]]
    dev = jax.devices()[0]
    doc = {
        "label": "measured" + (" (dry run: tiny sizes, not a benchmark)" if args.dry_run else ""),
        "device": dev.device_kind,
        "backend": jax.default_backend(),
        "jax": jax.__version__,
        "dry_run": args.dry_run,
        "seconds": time.perf_counter() - t0,
        "environment": benchlib.environment(),
        "rows": rows,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, default=str) + "\n")
    bad = [f"{r['what']} n={r['n']}" for r in rows if not r["ok"]]
    print(f"bench_gpu: {len(rows)} rows in {doc['seconds']:.0f} s on {dev.device_kind}; {out}")
    for b in bad:
        print(f"bench_gpu: WRONG result: {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
