"""XLA:CPU's fusion emitters on and off: compile and kernel seconds of the main jobs.

``jaxqueens.configure()`` (what the command does first) appends
``--xla_cpu_use_fusion_emitters=false`` to ``XLA_FLAGS`` (:mod:`jaxqueens.parallel.devices`):
XLA:CPU then emits its fusions through its older elemental emitters instead of the MLIR fusion
emitters. This benchmark is the measurement behind that choice: every job runs as a whole
``jaxqueens`` process with no compilation cache (each compiles all it runs), once with the
package's flags (``off``) and once with ``XLA_FLAGS=--xla_cpu_use_fusion_emitters=true``
(``on``: configure then keeps the emitters, and appends its other flags as always), alternating
in every rep. Kernel and compile seconds are the command's own (its ``summary.json``), the
process seconds are the whole process.

Usage: python scripts/bench_xla_flags.py [--reps 3] [--quick] [--out-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib

INSTANCES = Path(__file__).resolve().parents[2] / "shared" / "instances" / "prob079"
SETTINGS = {
    "off": "",  # the package's default: configure appends --xla_cpu_use_fusion_emitters=false
    "on": "--xla_cpu_use_fusion_emitters=true",  # given: configure leaves it as it is
}


def _large(summary: dict) -> tuple[float, float]:
    chain = summary["per_chain"][0]
    return chain["init_s"] + chain["search_s"] + chain["verify_s"], chain["compile_s"]


# name, arguments, (kernel seconds, compile seconds) from summary.json
JOBS = [
    ("count -n 16", ["count", "-n", "16"], lambda s: (s["seconds"], s["compile_seconds"])),
    (
        "solve -n 8 --chains 200000",
        ["solve", "-n", "8", "--chains", "200000"],
        lambda s: (s["wall_s"], s["compile_s"]),
    ),
    (
        "solve -n 100 --chains 2000",
        ["solve", "-n", "100", "--chains", "2000"],
        lambda s: (s["wall_s"], s["compile_s"]),
    ),
    ("solve -n 2000000", ["solve", "-n", "2000000"], _large),
    (
        "evolve -n 32 --trials 64 --generations 20000",
        ["evolve", "-n", "32", "--trials", "64", "--generations", "20000"],
        lambda s: (s["wall_s"], s["compile_s"]),
    ),
    (
        "evolve generational -n 32 --pop 100 --generations 2000",
        [
            *("evolve", "-n", "32", "--trials", "64", "--generations", "2000"),
            *("--scheme", "generational", "--pop", "100"),
        ],
        lambda s: (s["wall_s"], s["compile_s"]),
    ),
    (
        "anneal sa -n 64 --chains 200 --steps 20000",
        ["anneal", "--method", "sa", "-n", "64", "--chains", "200", "--steps", "20000"],
        lambda s: (s["wall_s"], s["compile_s"]),
    ),
    (
        "anneal ls -n 100 --chains 200 --steps 50000",
        ["anneal", "--method", "ls", "-n", "100", "--chains", "200", "--steps", "50000"],
        lambda s: (s["wall_s"], s["compile_s"]),
    ),
    (
        "count -n 17 --toroidal",
        ["count", "-n", "17", "--toroidal"],
        lambda s: (s["seconds"], s["compile_seconds"]),
    ),
    (
        "complete diag-16 --count",
        ["complete", str(INSTANCES / "diag-16.tar.gz"), "--count"],
        lambda s: (s["seconds"], s["compile_seconds"]),
    ),
]
QUICK_JOBS = [
    ("count -n 10", ["count", "-n", "10"], JOBS[0][2]),
    ("solve -n 8 --chains 200", ["solve", "-n", "8", "--chains", "200"], JOBS[1][2]),
]


def _run(args: list[str], flags: str, out: Path) -> dict:
    """One ``jaxqueens ARGS --out OUT`` process: its summary.json plus ``process_s``."""
    env = {**os.environ, "XLA_FLAGS": flags, "JAXQUEENS_CACHE_DIR": ""}
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "jaxqueens", *args, "--out", str(out), "--quiet", "--force"],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"jaxqueens {' '.join(args)} failed: {done.stderr[-2000:]}")
    return {**json.loads((out / "summary.json").read_text()), "process_s": seconds}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="two small jobs (a smoke test)")
    ap.add_argument("--out-dir", default=None)
    args = ap.parse_args()
    jobs = QUICK_JOBS if args.quick else JOBS
    if not INSTANCES.exists():
        jobs = [j for j in jobs if not j[0].startswith("complete")]
    seen: dict[tuple[str, str], dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-xla-flags-") as tmp:
        for _ in range(args.reps):
            for name, argv, read in jobs:
                for setting, flags in SETTINGS.items():  # alternating, every rep
                    summary = _run(argv, flags, Path(tmp) / "out")
                    kernel, compile_s = read(summary)
                    got = seen.setdefault(
                        (name, setting), {"kernel": [], "compile": [], "process": []}
                    )
                    got["kernel"].append(kernel)
                    got["compile"].append(compile_s)
                    got["process"].append(summary["process_s"])
                print(f"done {name}", file=sys.stderr)
    rows, table = [], []
    for name, _, _ in jobs:
        off, on = seen[name, "off"], seen[name, "on"]
        row = {"job": name, "reps": args.reps}
        for setting, got in (("off", off), ("on", on)):
            for what, times in got.items():
                row[f"{what}_{setting}"] = benchlib.summary(times)
        med = lambda got, what: statistics.median(got[what])
        row["kernel_on_over_off"] = med(on, "kernel") / med(off, "kernel")
        row["compile_on_over_off"] = med(on, "compile") / med(off, "compile")
        rows.append(row)
        table.append(
            [
                name,
                f"{med(off, 'kernel'):.3f} / {med(on, 'kernel'):.3f}",
                f"{row['kernel_on_over_off']:.2f}",
                f"{med(off, 'compile'):.2f} / {med(on, 'compile'):.2f}",
                f"{row['compile_on_over_off']:.2f}",
                f"{med(off, 'process'):.2f} / {med(on, 'process'):.2f}",
            ]
        )
    print(
        f"\nfusion emitters off (the package's flags) / on, median of {args.reps} reps alternated, "
        "no compilation cache"
    )
    print(
        benchlib.table(
            [
                "job",
                "kernel s off / on",
                "on/off",
                "compile s off / on",
                "on/off",
                "process s off / on",
            ],
            table,
        )
    )
    name = "xla-flags" + ("-quick" if args.quick else "")
    path = benchlib.write_results(name, {"reps": args.reps, "rows": rows}, args.out_dir)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
