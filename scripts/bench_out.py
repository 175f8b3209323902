"""What `--out` costs a user: whole-process seconds of a command with and without its files.

The job is `solve -n 32 --chains 20000 --quiet` (the files: a ~0.8 MB runs.csv, a 2.5 MB
solutions.npy, solution.png, summary.json and report.html), run as a new process each time, the
two sides alternated rep by rep; the target is an overhead of at most 25% of the run without
files. Where the time goes is measured apart, in one process each: importing matplotlib (a new
process), drawing the poster, writing runs.csv, writing the report.

Writes `benchmarks/results/out-cpu.json` (`out-quick-cpu.json` with `--quick`: fewer reps and
chains, a smoke test).

Usage: python scripts/bench_out.py [--reps 7] [--quick] [--out-dir DIR]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchlib

TARGET = 0.25
"""The most `--out` may add to the whole process, as a fraction of the run without files."""


def _process(argv: list[str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return seconds


def _parts(n: int, chains: int, folder: Path, tries: int = 3) -> dict[str, float]:
    """Seconds of each part of the writing, measured apart (best of ``tries`` each)."""
    import numpy as np

    from jaxqueens.io import schema
    from jaxqueens.plots import render

    importing = min(
        _process(
            [sys.executable, "-c", "import matplotlib.figure, matplotlib.backends.backend_agg"]
        )
        - _process([sys.executable, "-c", "pass"])
        for _ in range(tries)
    )
    rows = np.random.default_rng(0).permutation(n)
    render.render_png(rows, folder / "warm.png")  # the import, out of the figure's time
    drawing = min(
        benchlib.timeit(lambda: render.render_png(rows, folder / "poster.png"))
        for _ in range(tries)
    )
    table = schema.RunTable(
        "mc-permutation",
        np.ones(chains, bool),
        np.arange(chains),
        np.random.default_rng(0).random(chains),
        np.zeros(chains),
        np.zeros(chains),
    )
    csv = min(
        benchlib.timeit(lambda: schema.write_runs(folder / "runs.csv", table)) for _ in range(tries)
    )
    return {"import_matplotlib_s": importing, "draw_poster_s": drawing, "runs_csv_s": csv}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument(
        "--quick",
        action="store_true",
        help="at most 3 reps, 2,000 chains, no warm-up, each part once: a smoke test",
    )
    ap.add_argument("--out-dir", type=Path, default=None)
    args = ap.parse_args()
    reps, chains = (min(args.reps, 3), 2000) if args.quick else (args.reps, 20000)
    n = 32
    cli = [sys.executable, "-m", "jaxqueens", "solve", "-n", str(n), "--chains", str(chains)]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sides = {
            "no files": [*cli, "--quiet"],
            "--out": [*cli, "--quiet", "--out", str(folder / "out"), "--force"],
        }
        warm = [] if args.quick else sides.values()  # quick: a smoke test, figures not read
        for argv in warm:  # warm caches (compilation cache, bytecode): untimed
            _process(argv)
        times = {name: [] for name in sides}
        for _ in range(reps):
            for name, argv in sides.items():
                times[name].append(_process(argv))
        parts = _parts(n, chains, folder, 1 if args.quick else 3)
    plain, out = (benchlib.summary(times[k]) for k in ("no files", "--out"))
    overhead = {k: out[k] / plain[k] - 1 for k in ("best", "median")}
    rows = [
        [name, f"{s['best']:.3f}", f"{s['median']:.3f}"]
        for name, s in (("no files", plain), ("--out", out))
    ]
    print(f"solve -n {n} --chains {chains:,} --quiet, whole process (s), {reps} reps alternated")
    print(benchlib.table(["side", "best", "median"], rows))
    print(
        f"--out adds {overhead['best']:.0%} (best) / {overhead['median']:.0%} (median); "
        f"target at most {TARGET:.0%}"
    )
    print("parts (s): " + ", ".join(f"{k} {v:.3f}" for k, v in parts.items()))
    name = "out-quick" if args.quick else "out"
    path = benchlib.write_results(
        name,
        {
            "job": f"solve -n {n} --chains {chains} --quiet",
            "reps": reps,
            "rows": [dict(zip(["side", "best_s", "median_s"], r, strict=True)) for r in rows],
            "seconds": {"no_files": times["no files"], "out": times["--out"]},
            "summary": {"no_files": plain, "out": out},
            "overhead": overhead,
            "target_overhead": TARGET,
            "median_ratio_met": overhead["median"] <= TARGET,
            "parts": parts,
        },
        args.out_dir,
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
