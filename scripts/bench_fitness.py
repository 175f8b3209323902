"""Boards evaluated per second: jaxqueens' attacking-pair kernel vs vectorised NumPy.

Rows (batch, n): (100000, 8), (10000, 64), (1000, 1000), (1, 10^7). Both tools
compute the same thing the same way (dense pairwise for n <= 32, per-line
counts otherwise), on random combination boards already in memory; results are
compared for equality. jaxqueens runs once on one device and once with the
batch sharded over every host device (one per core, see jaxqueens/parallel/devices.py).

Usage: python scripts/bench_fitness.py [--reps 7] [--quick]
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import jax
import numpy as np

import jaxqueens
from jaxqueens.core import board
from jaxqueens.parallel import shard

sys.path.insert(0, __import__("os").path.dirname(__file__))
import benchlib

jaxqueens.configure()  # before any JAX op: one CPU device per core, XLA:CPU loop flags, cache

ROWS = [(100_000, 8), (10_000, 64), (1_000, 1_000), (1, 10**7)]
QUICK_ROWS = [(1_000, 8), (100, 64), (10, 1_000), (1, 10**5)]


def numpy_pairs(boards: np.ndarray) -> np.ndarray:
    """The same computation in vectorised NumPy: [B, n] -> [B] int64."""
    b, n = boards.shape
    if n <= board.PAIRWISE_MAX_N:
        cols = np.arange(n)
        dr = boards[:, :, None] - boards[:, None, :]
        dc = cols[:, None] - cols[None, :]
        hit = ((dr == 0) | (dr == dc) | (dr == -dc)) & (dc > 0)
        return hit.sum(axis=(1, 2))
    cols = np.arange(n)
    total = np.zeros(b, np.int64)
    for idx, lines in ((boards, n), (boards + cols, 2 * n - 1), (boards - cols + n - 1, 2 * n - 1)):
        flat = (idx + (np.arange(b) * lines)[:, None]).ravel()
        k = np.bincount(flat, minlength=b * lines).astype(np.int64)
        total += (k * (k - 1) // 2).reshape(b, lines).sum(axis=1)
    return total


def jax_pairs(boards: jax.Array) -> Callable[[], jax.Array]:
    """A call of jaxqueens' kernel on `boards` that waits for its result."""
    return lambda: board.attacking_pairs(boards).block_until_ready()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a smoke test)")
    ap.add_argument(
        "--out-dir", default=None, help="where the JSON goes (default benchmarks/results)"
    )
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    records, lines = [], []
    for batch, n in QUICK_ROWS if args.quick else ROWS:
        host = rng.integers(0, n, size=(batch, n), dtype=np.int32)
        one = jax.device_put(host)
        sharded = shard.shard_batch(host)
        want = numpy_pairs(host)
        compile_s = benchlib.timeit(jax_pairs(one))
        for x in (one, sharded):
            got = np.asarray(board.attacking_pairs(x))
            assert np.array_equal(got, want), "jaxqueens and NumPy disagree"
        times = benchlib.interleaved(
            {
                "jax_1dev": jax_pairs(one),
                "jax_all": jax_pairs(sharded),
                "numpy": lambda host=host: numpy_pairs(host),
            },
            args.reps,
        )
        stats = {k: benchlib.summary(v) for k, v in times.items()}
        rate = {k: {q: batch / s for q, s in v.items()} for k, v in stats.items()}
        best_jax = max(("jax_1dev", "jax_all"), key=lambda k: rate[k]["median"])
        ratio_med = rate[best_jax]["median"] / rate["numpy"]["median"]
        ratio_best = rate[best_jax]["best"] / rate["numpy"]["best"]
        records.append(
            {
                "batch": batch,
                "n": n,
                "compile_s": compile_s,
                "devices_sharded": len(getattr(sharded.sharding, "device_set", [0])),
                "seconds": stats,
                "boards_per_s": rate,
                "ratio_vs_numpy_median": ratio_med,
                "ratio_vs_numpy_best": ratio_best,
            }
        )
        lines.append(
            [
                batch,
                n,
                benchlib.fmt_rate(rate["jax_1dev"]["best"]),
                benchlib.fmt_rate(rate["jax_1dev"]["median"]),
                benchlib.fmt_rate(rate["jax_all"]["best"]),
                benchlib.fmt_rate(rate["jax_all"]["median"]),
                benchlib.fmt_rate(rate["numpy"]["best"]),
                benchlib.fmt_rate(rate["numpy"]["median"]),
                f"{ratio_best:.2f}x",
                f"{ratio_med:.2f}x",
                f"{compile_s:.2f}",
            ]
        )
        print(f"done batch={batch} n={n}", file=sys.stderr, flush=True)

    print("boards evaluated per second (attacking pairs), best / median of", args.reps, "reps")
    print(
        benchlib.table(
            [
                "batch",
                "n",
                "jax1 best",
                "jax1 med",
                "jaxN best",
                "jaxN med",
                "numpy best",
                "numpy med",
                "ratio best",
                "ratio med",
                "compile s",
            ],
            lines,
        )
    )
    path = benchlib.write_results(
        "fitness" + ("-quick" if args.quick else ""),
        {"reps": args.reps, "rows": records},
        args.out_dir,
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
