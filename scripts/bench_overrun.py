"""How long ``--time T`` may overrun (issue 28): whole-process seconds of every command that
takes ``--time``, against T.

Each case runs ``python -m jaxqueens ...`` as a new process, as a user would, with more work
than T allows (so the time budget is what stops it), for two budgets T; the reps of all cases
are interleaved, so that a busy shared machine slows them alike. The overrun is the process's
wall time minus T: start-up (Python, JAX's import, device set-up), compilation, the kernel call
in flight when T passes, and the final verification and writes. Its growth from the short to
the long budget shows what grows with T (chunks sized by time would keep it flat); the overrun
at the short budget is the bound the README's Guarantees state.

Writes ``benchmarks/results/overrun-cpu.json`` (``overrun-quick-cpu.json`` with ``--quick``:
one rep, one budget: a smoke test).

Usage: python scripts/bench_overrun.py [--reps 3] [--budgets 2 6] [--quick] [--out-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib

MANY = str(10**8)  # chains no budget reaches: --time stops every case
CASES = {
    "solve batched": ["solve", "-n", "200", "--chains", MANY],
    "solve time only": ["solve", "-n", "30", "--max-restarts", "0", "--maxsteps", "1"],
    "stats minconflicts": ["stats", "-n", "16", "--chains", MANY],
    "stats anneal": ["stats", "-n", "16", "--solver", "anneal", "--chains", MANY],
    "stats ga": ["stats", "-n", "16", "--solver", "ga", "--chains", MANY],
}
"""The commands that take ``--time`` (``solve``'s batched and time-only paths: its large-n path
refuses ``--time``; ``stats`` with each solver), each with far more work than any budget here."""


def _run(args: list[str], budget: float) -> float:
    """Wall seconds of one ``python -m jaxqueens ARGS --time BUDGET --quiet`` process (it must
    end by its budget: exit 0, or 1 when not every chain was solved)."""
    argv = [sys.executable, "-m", "jaxqueens", *args, "--time", str(budget), "--quiet"]
    t0 = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - t0
    if out.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv[3:])} failed ({out.returncode}): {out.stderr[-2000:]}")
    return seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=None, help="processes per case (default 3)")
    ap.add_argument(
        "--budgets", type=float, nargs="+", default=None, help="--time values (default 2 6)"
    )
    ap.add_argument("--quick", action="store_true", help="one rep of --time 1")
    ap.add_argument("--only", nargs="+", default=None, help="cases to run (default all)")
    ap.add_argument(
        "--out-dir", default=None, help="where the JSON goes (default benchmarks/results)"
    )
    args = ap.parse_args()
    reps = args.reps or (1 if args.quick else 3)
    budgets = args.budgets or ([1.0] if args.quick else [2.0, 6.0])
    cases = {k: v for k, v in CASES.items() if args.only is None or k in args.only}
    load = [os.getloadavg()[0]]
    times: dict[tuple[str, float], list[float]] = {(c, t): [] for c in cases for t in budgets}
    for _ in range(reps):  # interleaved: every case and budget once per rep
        for name, argv in cases.items():
            for budget in budgets:
                times[name, budget].append(_run(argv, budget))
                load.append(os.getloadavg()[0])
    rows, table = [], []
    for (name, budget), t in times.items():
        s = benchlib.summary([x - budget for x in t])
        rows.append({"case": name, "argv": cases[name], "time": budget, "reps": reps, **s})
        table.append(
            [name, f"{budget:g}", f"{s['best']:.2f}", f"{s['median']:.2f}", f"{s['worst']:.2f}"]
        )
    print(
        f"overrun = whole-process wall seconds - T, {reps} reps each, interleaved; "
        f"{os.cpu_count()} CPUs, load average {min(load):.1f}-{max(load):.1f} during the run "
        "(wall times grow with the load)"
    )
    print(benchlib.table(["case", "T s", "best s", "median s", "worst s"], table))
    path = benchlib.write_results(
        "overrun" + ("-quick" if args.quick else ""),
        {"rows": rows, "budgets": budgets, "load_average": [min(load), max(load)]},
        Path(args.out_dir) if args.out_dir else None,
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
