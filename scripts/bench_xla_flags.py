"""XLA:CPU flags on and off: compile and kernel seconds of the main jobs.

``jaxqueens.configure()`` (what the command does first) sets XLA flags
(:mod:`jaxqueens.parallel.devices`); this benchmark is the measurement behind two of them. Every
job runs as a whole ``jaxqueens`` process with no compilation cache (each compiles all it runs),
once per side, alternating in every rep. Kernel and compile seconds are the command's own (its
``summary.json``), the process seconds are the whole process.

- ``--compare fusion-emitters`` (default): the package's flags (``off``:
  ``--xla_cpu_use_fusion_emitters=false``, XLA:CPU's older elemental emitters) against
  ``XLA_FLAGS=--xla_cpu_use_fusion_emitters=true`` (``on``: configure then keeps the MLIR fusion
  emitters and appends its other flags as always).
- ``--compare loop-unrolling``: LLVM's loop unrolling on (``unrolled``) and off (``not``:
  ``devices.NO_LOOP_UNROLLING``, which ``evolve`` asks for) for every job, both given in
  ``--xla_backend_extra_options`` so that configure adds neither.

Usage: python scripts/bench_xla_flags.py [--compare fusion-emitters|loop-unrolling] [--reps 3]
[--quick] [--out-dir DIR]
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

from jaxqueens.parallel import devices

INSTANCES = Path(__file__).resolve().parents[1] / "instances" / "prob079"  # shipped (CC BY 4.0)
COMPARISONS = {  # name -> the two sides' XLA_FLAGS, the package's default side first
    "fusion-emitters": {
        "off": "",  # the package's default: configure appends --xla_cpu_use_fusion_emitters=false
        "on": "--xla_cpu_use_fusion_emitters=true",  # given: configure leaves it as it is
    },
    "loop-unrolling": {  # given: configure adds no backend options of its own
        "unrolled": devices.cpu_xla_flags(loop_unrolling=True)[0],  # --xla_backend_extra_options
        "not": devices.cpu_xla_flags(loop_unrolling=False)[0],
    },
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
    ap.add_argument("--compare", choices=sorted(COMPARISONS), default="fusion-emitters")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="two small jobs (a smoke test)")
    ap.add_argument("--out-dir", default=None)
    args = ap.parse_args()
    settings = COMPARISONS[args.compare]
    a, b = settings  # a: the package's default for most jobs
    jobs = QUICK_JOBS if args.quick else JOBS
    if not INSTANCES.exists():
        jobs = [j for j in jobs if not j[0].startswith("complete")]
    seen: dict[tuple[str, str], dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-xla-flags-") as tmp:
        for _ in range(args.reps):
            for name, argv, read in jobs:
                for setting, flags in settings.items():  # alternating, every rep
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
    med = lambda got, what: statistics.median(got[what])
    for name, _, _ in jobs:
        first, second = seen[name, a], seen[name, b]
        row = {"job": name, "reps": args.reps}
        for setting, got in ((a, first), (b, second)):
            for what, times in got.items():
                row[f"{what}_{setting}"] = benchlib.summary(times)
        for what in ("kernel", "compile"):
            row[f"{what}_{b}_over_{a}"] = med(second, what) / med(first, what)
        rows.append(row)
        table.append(
            [
                name,
                f"{med(first, 'kernel'):.3f} / {med(second, 'kernel'):.3f}",
                f"{row[f'kernel_{b}_over_{a}']:.2f}",
                f"{med(first, 'compile'):.2f} / {med(second, 'compile'):.2f}",
                f"{row[f'compile_{b}_over_{a}']:.2f}",
                f"{med(first, 'process'):.2f} / {med(second, 'process'):.2f}",
            ]
        )
    print(
        f"\n{args.compare.replace('-', ' ')} {a} / {b}, median of {args.reps} reps alternated, "
        "no compilation cache"
    )
    sides, ratio = f"{a} / {b}", f"{b}/{a}"
    print(
        benchlib.table(
            ["job", f"kernel s {sides}", ratio, f"compile s {sides}", ratio, f"process s {sides}"],
            table,
        )
    )
    suffix = "" if args.compare == "fusion-emitters" else f"-{args.compare}"
    name = "xla-flags" + suffix + ("-quick" if args.quick else "")
    path = benchlib.write_results(
        name,
        {"compare": args.compare, "sides": settings, "reps": args.reps, "rows": rows},
        args.out_dir,
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
