"""Very large boards: jaxqueens' linear-time path beside the numba peer (``mc_numba.py big``).

For n = 10 .. 10^7 each tool runs in a fresh subprocess (so peak memory is its own), in the same
benchmark run, alternating tool by tool: init seconds, search seconds, steps, total (init +
search + verification), compile seconds (apart), and peak resident memory. jaxqueens' total
excludes compilation, as the targets ask; the numba peer's JIT comes from its on-disk cache.

Targets (2-core CPU): n = 10^6 in <= 3 s end to end and never slower than 1.5x numba; n = 10^7
in <= 30 s.

A second table: the batched path's ``--init greedy`` (the CP468 column-by-column greedy) at the
largest sizes it takes, attacking pairs of the initial board (which must stay a handful at every
n: it was 88-150 at n = 3 * 10^4 and ~3500 at 46,340 before issue 14) and generation seconds.

Usage: python scripts/bench_large_n.py [--reps 3] [--max-n 10000000] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
import benchlib

SIZES = [10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000]
QUICK = [1_000]  # --quick: one size runs every part (each size is a fresh process)
BASELINES = Path(__file__).resolve().parents[2] / "shared" / "baselines"

JAX_CHILD = """
import json, resource, sys, time
import jaxqueens
from jaxqueens.drivers import large as large_solve
jaxqueens.configure()  # one CPU device per core, XLA:CPU loop flags, cache
n, seed = int(sys.argv[1]), int(sys.argv[2])
res = large_solve.solve_large(n, seed=seed)
s = res.summary
s["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(s))
"""

GREEDY_SIZES = [10_000, 30_000, 46_340]
QUICK_GREEDY = [10_000]

GREEDY_CHILD = """
import json, sys, time
import jaxqueens
from jaxqueens.drivers import minconflicts as mcsolve
jaxqueens.configure()  # one CPU device per core, XLA:CPU loop flags, cache
n, seed = int(sys.argv[1]), int(sys.argv[2])
rows, pairs, gen_s, compile_s = mcsolve.initial_board(n, init="greedy", seed=seed)
print(json.dumps({"n": n, "seed": seed, "pairs": pairs, "init_s": gen_s, "compile_s": compile_s}))
"""

NUMBA_CHILD = """
import json, os, resource, runpy, sys, io, contextlib
sys.path.insert(0, os.path.dirname({path!r}))  # numba's cache imports the peer by its name
sys.argv = ["mc_numba.py", "big", "--n", sys.argv[1], "--seed", sys.argv[2]]
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    try:
        runpy.run_path({path!r}, run_name="__main__")
    except SystemExit:  # the peer ends with sys.exit(main())
        pass
s = json.loads(buf.getvalue().strip().splitlines()[-1])
s["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(s))
"""


def child(code: str, n: int, seed: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", code, str(n), str(seed)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    if out.returncode != 0:
        raise RuntimeError(f"child failed for n={n}: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--max-n", type=int, default=10_000_000)
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    ap.add_argument("--baselines", default=str(BASELINES), help="folder holding mc_numba.py")
    ap.add_argument("--out-dir", default=None)
    args = ap.parse_args()

    peer = Path(args.baselines) / "mc_numba.py"
    try:
        import numba  # noqa: F401

        have_peer = peer.exists()
    except ImportError:
        have_peer = False
    if not have_peer:
        print(
            f"numba peer not available ({peer}; pip install -e '.[bench]'): jaxqueens only",
            file=sys.stderr,
        )
    numba_code = NUMBA_CHILD.format(path=str(peer))

    rows, records = [], []
    for n in [s for s in (QUICK if args.quick else SIZES) if s <= args.max_n]:
        runs = {"jax": [], "numba": []}
        for rep in range(args.reps):
            runs["jax"].append(child(JAX_CHILD, n, rep))
            if have_peer:
                runs["numba"].append(child(numba_code, n, rep))
        rec = {"n": n}
        for tool, rs in runs.items():
            if not rs:
                continue
            if tool == "jax":
                totals = [r["total_s"] for r in rs]
            else:
                totals = [r["init_s"] + r["search_s"] + r["verify_s"] for r in rs]
            rec[tool] = {
                "total_s": benchlib.summary(totals),
                "init_s": statistics.median(r["init_s"] for r in rs),
                "search_s": statistics.median(r["search_s"] for r in rs),
                "steps": statistics.median(r["steps"] for r in rs),
                "compile_s": statistics.median(r.get("compile_s", r.get("jit_s", 0.0)) for r in rs),
                "peak_rss_mib": max(r["peak_rss_mib"] for r in rs),
                "all_verified": all(r.get("verified", False) for r in rs),
                "runs": rs,
            }
        j, p = rec["jax"], rec.get("numba")
        ratio = (j["total_s"]["median"] / p["total_s"]["median"]) if p else None
        rec["time_ratio_jax_over_numba"] = ratio
        records.append(rec)
        fmt = lambda x: f"{x:.3f}"
        rows.append(
            [
                f"{n:,}",
                fmt(j["init_s"]),
                fmt(j["search_s"]),
                f"{j['steps']:.0f}",
                fmt(j["total_s"]["best"]),
                fmt(j["total_s"]["median"]),
                f"{j['peak_rss_mib']:.0f}",
                fmt(p["init_s"]) if p else "-",
                fmt(p["search_s"]) if p else "-",
                f"{p['steps']:.0f}" if p else "-",
                fmt(p["total_s"]["median"]) if p else "-",
                f"{p['peak_rss_mib']:.0f}" if p else "-",
                f"{ratio:.2f}" if ratio else "-",
                fmt(j["compile_s"]),
            ]
        )
        print(f"done n={n}", file=sys.stderr, flush=True)

    greedy, greedy_rows = [], []
    for n in [s for s in (QUICK_GREEDY if args.quick else GREEDY_SIZES) if s <= args.max_n]:
        rs = [child(GREEDY_CHILD, n, seed) for seed in range(args.reps)]
        greedy.append({"n": n, "runs": rs})
        greedy_rows.append(
            [
                f"{n:,}",
                " ".join(str(r["pairs"]) for r in rs),
                max(r["pairs"] for r in rs),
                f"{statistics.median(r['init_s'] for r in rs):.3f}",
            ]
        )
        print(f"done greedy n={n}", file=sys.stderr, flush=True)

    print(
        f"seconds (median of {args.reps} unless 'best'); ratio = jaxqueens total / numba total "
        "(< 1: jaxqueens faster)"
    )
    print(
        benchlib.table(
            [
                "n",
                "jq init",
                "jq search",
                "jq steps",
                "jq best",
                "jq med",
                "jq MiB",
                "nb init",
                "nb search",
                "nb steps",
                "nb med",
                "nb MiB",
                "ratio",
                "jq compile",
            ],
            rows,
        )
    )
    print(
        "--init greedy (CP468 greedy, batched path): "
        "attacking pairs of the initial board, one per seed"
    )
    print(benchlib.table(["n", "pairs per seed", "max", "init s (median)"], greedy_rows))
    path = benchlib.write_results(
        "large_n" + ("-quick" if args.quick else ""),
        {"reps": args.reps, "rows": records, "greedy": greedy},
        args.out_dir,
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
