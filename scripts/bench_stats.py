"""Knuth's estimator (jaxqueens.drivers.estimate): probes per second and the error in a budget.

The kernel is jaxqueens.solvers.estimate. Part 1: probes per second at n = 20, 32, 64 (kernel
time only, compilation excluded; best and median of --reps runs of --rate-probes probes each).
Part 2: relative error against OEIS A000170 for n = 20..27 within a fixed budget of 10^7 probes on
a CPU (10^8 on a GPU), with the standard error, the 99% interval and whether it holds the exact
value; the plain estimator (depth 0) is run beside the stratified one (automatic depth) so the
variance reduction shows.

Usage: python scripts/bench_stats.py [--reps 3] [--quick] [--out-dir DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys

import jax

import jaxqueens
from jaxqueens.drivers import estimate as E

sys.path.insert(0, __import__("os").path.dirname(__file__))
import benchlib

jaxqueens.configure()  # before any JAX op: one CPU device per core, XLA:CPU loop flags, cache


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="tiny budgets (a smoke test)")
    ap.add_argument(
        "--out-dir", default=None, help="where the JSON goes (default benchmarks/results)"
    )
    args = ap.parse_args()

    gpu = jax.default_backend() != "cpu"
    rate_sizes, err_sizes = (
        ([20, 32, 64], list(range(20, 28))) if not args.quick else ([20, 64], [20, 27])
    )
    rate_probes = 2 * 10**5 if args.quick else 10**7
    budget = 10**5 if args.quick else (10**8 if gpu else 10**7)

    rate_rows, lines = [], []
    for n in rate_sizes:
        runs = [E.estimate(n, rate_probes, seed=r) for r in range(max(1, args.reps))]
        rates = [r.probes_per_s or 0.0 for r in runs]
        rate_rows.append(
            {
                "n": n,
                "probes": runs[0].probes,
                "depth": runs[0].depth,
                "strata": runs[0].strata,
                "probes_per_s_best": max(rates),
                "probes_per_s_median": statistics.median(rates),
                "compile_s": runs[0].compile_s,
            }
        )
        lines.append(
            [
                n,
                f"{runs[0].probes:,}",
                runs[0].depth,
                benchlib.fmt_rate(max(rates)),
                benchlib.fmt_rate(statistics.median(rates)),
                f"{runs[0].compile_s:.2f}",
            ]
        )
        print(f"done rate n={n}", file=sys.stderr, flush=True)
    print(
        f"Knuth estimator, probes per second ({jax.default_backend()}, "
        f"{jax.local_device_count()} devices), best / median of {args.reps}"
    )
    print(benchlib.table(["n", "probes", "depth", "best", "median", "compile s"], lines))

    err_rows, lines = [], []
    for n in err_sizes:
        for label, depth in (("plain", 0), ("stratified", None)):
            r = E.estimate(n, budget, depth=depth, seed=1)
            lo, hi = r.ci
            err_rows.append({"n": n, "estimator": label, **r.as_dict()})
            lines.append(
                [
                    n,
                    label,
                    r.depth,
                    f"{r.probes:,}",
                    f"{r.solutions:.5e}",
                    f"{r.exact:.5e}",
                    f"{100 * r.rel_error:+.3f}%",
                    f"{100 * r.solutions_se / r.solutions:.3f}%",
                    "yes" if lo <= r.exact <= hi else "NO",
                    f"{r.seconds:.2f}",
                ]
            )
        print(f"done error n={n}", file=sys.stderr, flush=True)
    print(f"\nrelative error against A000170 within {budget:.0e} probes (seed 1)")
    print(
        benchlib.table(
            [
                "n",
                "estimator",
                "depth",
                "probes",
                "estimate",
                "exact",
                "rel error",
                "rel SE",
                "in 99% CI",
                "seconds",
            ],
            lines,
        )
    )
    path = benchlib.write_results(
        "stats" + ("-quick" if args.quick else ""),
        {"reps": args.reps, "budget": budget, "rows": rate_rows, "errors": err_rows},
        args.out_dir,
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
