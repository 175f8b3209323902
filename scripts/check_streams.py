"""Independent chains at scale: no two chains of a run share a random stream.

Two checks, each a table row and a record in ``benchmarks/results/streams-<backend>.json``:

- **stream seeds**: the 64-bit stream seeds of chains ``0 .. ids - 1`` of seed 0
  (:func:`jaxqueens.core.rng.chain_seeds`) are pairwise distinct; the low word alone (all that a
  32-bit seed held) repeats about ``ids**2 / 2**33`` times, shown beside it.
- **solve**: ``jaxqueens.solve(n=32, chains=C)`` (seed 0, the defaults) reports ``C`` distinct
  solutions and no two chains with the same (steps, board): with 32-bit seeds, two chains of one
  run were the same search about ``C**2 / 2**33`` times.

The script exits 1 if either check finds a repeat.

Usage: python scripts/check_streams.py [--ids 10000000] [--chains 300000] [--quick]
       [--out-dir benchmarks/results]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import benchlib


def seed_check(ids: int) -> dict:
    """Repeats among the stream seeds (64-bit) and their low words (32-bit) of ``ids`` chains."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from jaxqueens.core import rng

    t0 = time.perf_counter()
    seeds = np.asarray(
        jax.jit(lambda i: rng.chain_seeds(jax.random.key(0), i))(jnp.arange(ids, dtype=jnp.uint32))
    )
    wide = seeds.copy().view(np.uint64).ravel()
    wide.sort()
    low = np.sort(seeds[:, 0])
    return {
        "check": "stream seeds",
        "size": ids,
        "repeats": int((wide[1:] == wide[:-1]).sum()),
        "repeats_32_bit": int((low[1:] == low[:-1]).sum()),
        "expected_32_bit": ids * (ids - 1) / 2 / 2**32,
        "seconds": time.perf_counter() - t0,
    }


def solve_check(n: int, chains: int) -> dict:
    """Distinct solutions and distinct (steps, board) trajectories of one ``solve`` run."""
    import numpy as np

    import jaxqueens

    t0 = time.perf_counter()
    res = jaxqueens.solve(n, chains, seed=0)
    run = res.run
    boards = np.asarray(run.rows)[np.asarray(run.solved)]
    steps = np.asarray(run.steps)[np.asarray(run.solved)]
    keyed = np.concatenate([steps[:, None].astype(np.int64), boards.astype(np.int64)], axis=1)
    return {
        "check": f"solve -n {n}",
        "size": chains,
        "solved": len(boards),
        "repeats": int(len(boards) - len(np.unique(boards, axis=0))),
        "repeats_same_steps": int(len(keyed) - len(np.unique(keyed, axis=0))),
        "expected_32_bit": chains * (chains - 1) / 2 / 2**32,
        "seconds": time.perf_counter() - t0,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ids", type=int, default=10_000_000)
    ap.add_argument("--chains", type=int, default=300_000)
    ap.add_argument("--n", type=int, default=32)
    ap.add_argument("--quick", action="store_true", help="10^5 ids and 2,000 chains (a smoke test)")
    ap.add_argument("--reps", type=int, default=1, help="ignored (the benchmark scripts' option)")
    ap.add_argument("--out-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    if args.quick:
        args.ids, args.chains = 100_000, 2_000
    import jaxqueens

    jaxqueens.configure()
    rows = [seed_check(args.ids), solve_check(args.n, args.chains)]
    print(
        benchlib.table(
            ["check", "size", "repeats", "32-bit repeats (expected)", "s"],
            [
                [
                    r["check"],
                    f"{r['size']:,}",
                    r["repeats"],
                    f"{r.get('repeats_32_bit', '-')} ({r['expected_32_bit']:.1f})",
                    f"{r['seconds']:.1f}",
                ]
                for r in rows
            ],
        )
    )
    path = benchlib.write_results("streams", {"rows": rows}, args.out_dir)
    print(f"wrote {path}")
    return 1 if any(r["repeats"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
