"""Exact solution counting: ``jaxqueens count`` beside the single-threaded C bitboard counter.

For n = 10..16 (17 with --with-17) both count all solutions, interleaved rep by rep in the same
run. The C baseline (``shared/baselines/count_c.c``, Somers-style, mirror symmetry) is compiled
here with ``gcc -O3 -march=native``; it is skipped (with a note) when gcc or the source is
missing. jaxqueens is timed as a full ``count_solutions(n)`` call (prefix expansion included,
compilation done once beforehand and reported apart); C by its own timer. Ratio = C time /
jaxqueens time, so > 1 means jaxqueens is faster. Every count is checked against OEIS A000170.

Usage: python scripts/bench_count.py [--reps 3] [--quick] [--with-17] [--out-dir DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import jaxqueens  # noqa: F401  (one CPU device per core and the loop flags, before any JAX op)
import jax
from jaxqueens.drivers import count
from jaxqueens.core.oeis import A000170

sys.path.insert(0, os.path.dirname(__file__))
import benchlib  # noqa: E402

C_SOURCE = Path(__file__).resolve().parents[2] / "shared" / "baselines" / "count_c.c"


def build_c(source: Path, workdir: str) -> str | None:
    """Compile the C counter; return the binary's path, or None (with a note) if impossible."""
    gcc = shutil.which("gcc")
    if gcc is None or not source.exists():
        print(f"note: C baseline skipped ({'gcc not found' if gcc is None else f'{source} missing'})",
              file=sys.stderr)
        return None
    binary = os.path.join(workdir, "count_c")
    subprocess.run([gcc, "-O3", "-march=native", "-o", binary, str(source)], check=True)
    return binary


def run_c(binary: str, n: int) -> float:
    """Seconds the C counter reports for one count of n (its count is checked)."""
    out = subprocess.run([binary, str(n), str(n), "1"], capture_output=True, text=True, check=True)
    fields = out.stdout.strip().splitlines()[-1].split()
    assert int(fields[1]) == A000170[n], f"C counter disagrees with A000170 at n = {n}"
    return float(fields[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="n = 8..11 only (a smoke test)")
    ap.add_argument("--with-17", action="store_true", help="add n = 17 (C takes ~1-1.5 min per rep)")
    ap.add_argument("--c-source", default=str(C_SOURCE), help="path of count_c.c")
    ap.add_argument("--out-dir", default=None, help="where the JSON goes (default benchmarks/results)")
    args = ap.parse_args()

    sizes = list(range(8, 12)) if args.quick else list(range(10, 17)) + ([17] if args.with_17 else [])
    records, lines = [], []
    with tempfile.TemporaryDirectory() as tmp:
        binary = build_c(Path(args.c_source), tmp)
        for n in sizes:
            first = count.count_solutions(n)  # compiles this n's kernel
            assert first.total == A000170[n]
            times: dict[str, list[float]] = {"jaxqueens": [], **({"c": []} if binary else {})}
            for _ in range(args.reps):  # interleaved, so a noisy machine slows both alike
                times["jaxqueens"].append(benchlib.timeit(lambda: count.count_solutions(n)))
                if binary:
                    times["c"].append(run_c(binary, n))
            stats = {k: benchlib.summary(v) for k, v in times.items()}
            rec = {"n": n, "count": first.total, "depth": first.depth, "prefixes": first.prefixes,
                   "compile_s": first.compile_seconds, "seconds": stats}
            row = [n, f"{first.total:,}", f"{stats['jaxqueens']['best']:.3f}",
                   f"{stats['jaxqueens']['median']:.3f}"]
            if binary:
                rb = stats["c"]["best"] / stats["jaxqueens"]["best"]
                rm = stats["c"]["median"] / stats["jaxqueens"]["median"]
                rec.update(ratio_best=rb, ratio_median=rm)
                row += [f"{stats['c']['best']:.3f}", f"{stats['c']['median']:.3f}", f"{rb:.2f}x",
                        f"{rm:.2f}x"]
            else:
                row += ["-", "-", "-", "-"]
            row += [f"{first.compile_seconds:.2f}", f"{first.prefixes:,} @ {first.depth}"]
            records.append(rec)
            lines.append(row)
            print(f"done n={n}", file=sys.stderr, flush=True)

    print(f"exact counts, seconds best / median of {args.reps} reps; ratio = C / jaxqueens "
          f"(> 1: jaxqueens faster); {jax.local_device_count()} {jax.default_backend()} device(s)")
    print(benchlib.table(["n", "count", "jq best", "jq med", "C best", "C med", "ratio best",
                          "ratio med", "compile s", "prefixes @ depth"], lines))
    path = benchlib.write_results("count" + ("-quick" if args.quick else ""),
                                  {"reps": args.reps, "c_baseline": bool(binary), "rows": records},
                                  args.out_dir)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
