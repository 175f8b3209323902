"""The kernels in a user's own ``jit``, with and without ``jaxqueens.configure()``, and the CLI.

The same work three ways: C min-conflicts chains at n through ``jaxqueens.parallel.chains.run``
inside the user's ``jax.jit``, once after ``jaxqueens.configure()`` (one CPU device per core and
XLA:CPU's loop flags, what the command line sets) and once without it (JAX's defaults), and
``jaxqueens solve -n N --chains C`` (its kernel seconds from ``summary.json``, and the whole
process). Each side runs in a fresh process, the sides alternating rep by rep, so that a busy
machine slows them alike; a library side times one call after compiling it (compilation reported
apart). Reports best and median seconds.

Usage: python scripts/bench_library.py [--quick] [--reps 5] [--n 32] [--chains 10000]
       [--out-dir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
import benchlib

SIDES = ("library, configure()", "library, no configure()", "CLI solve")


def worker(configured: bool, n: int, num_chains: int) -> dict:
    """One library side, in this (fresh) process: compile, then time one call."""
    import jaxqueens as jq

    if configured:
        jq.configure(cache=False)  # before any JAX computation; no cache: compile as a new user
    import jax

    import jaxqueens.solvers.minconflicts as mc
    from jaxqueens.parallel import chains

    config = mc.Config(n=n)
    params = mc.default_params(config)
    fn = jax.jit(lambda key: chains.run(mc, config, key, num_chains, params))
    t0 = time.perf_counter()
    jax.block_until_ready(fn(jax.random.key(0)))
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    out = jax.block_until_ready(fn(jax.random.key(1)))
    seconds = time.perf_counter() - t0
    return {
        "seconds": seconds,
        "first_call_s": compile_s,
        "solved": int(out.solved.sum()),
        "devices": jax.local_device_count(),
    }


def run_side(side: str, n: int, num_chains: int, tmp: Path) -> dict:
    """One side in a fresh process; its seconds (kernel calls) and whole-process seconds."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    t0 = time.perf_counter()
    if side == "CLI solve":
        out = tmp / "solve"
        cmd = [sys.executable, "-m", "jaxqueens.cli", "--no-cache", "solve", "-n", str(n)]
        cmd += ["--chains", str(num_chains), "--out", str(out), "--force", "--quiet"]
        subprocess.run(cmd, check=True, capture_output=True, env=env)
        summary = json.loads((out / "summary.json").read_text())
        got = {"seconds": summary["wall_s"], "solved": summary["solved"]}
        got["devices"] = summary["devices"]
    else:
        flag = "--configured" if side == SIDES[0] else "--unconfigured"
        cmd = [sys.executable, __file__, "--worker", flag, "--n", str(n)]
        cmd += ["--chains", str(num_chains)]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
        got = json.loads(done.stdout.strip().splitlines()[-1])
    got["process_s"] = time.perf_counter() - t0
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 16, 500 chains (a smoke test)")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--n", type=int, default=None)
    ap.add_argument("--chains", type=int, default=None)
    ap.add_argument("--out-dir", default=None)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--configured", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--unconfigured", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    n = args.n or (16 if args.quick else 32)
    num_chains = args.chains or (500 if args.quick else 10_000)
    if args.worker:
        print(json.dumps(worker(args.configured, n, num_chains)))
        return

    runs: dict[str, list[dict]] = {side: [] for side in SIDES}
    with tempfile.TemporaryDirectory(prefix="bench-library-") as tmp:
        for _ in range(args.reps):
            for side in SIDES:  # alternating, every rep
                runs[side].append(run_side(side, n, num_chains, Path(tmp)))

    from jaxqueens.io import provenance

    rows, printed = [], []
    for side in SIDES:
        sec = benchlib.summary([r["seconds"] for r in runs[side]])
        proc = benchlib.summary([r["process_s"] for r in runs[side]])
        rows.append(
            {
                "side": side,
                "n": n,
                "chains": num_chains,
                "seconds": sec,
                "process_seconds": proc,
                "solved": [r["solved"] for r in runs[side]],
                "devices": runs[side][0]["devices"],
                "runs": runs[side],
            }
        )
        printed.append(
            [
                side,
                f"{sec['best']:.3f}",
                f"{sec['median']:.3f}",
                f"{proc['median']:.2f}",
                runs[side][0]["devices"],
            ]
        )
    print(
        f"{num_chains:,} min-conflicts chains at n = {n}; best of {args.reps} fresh processes "
        "per side, alternated; seconds = one call after compilation (CLI: its kernel calls)"
    )
    print(
        benchlib.table(
            ["side", "best s", "median s", "median process s", "devices"],
            printed,
        )
    )
    payload = {
        "benchmark": "chains.run in a user's jit, with and without jaxqueens.configure(), "
        "beside jaxqueens solve (same n and chains)",
        "cpu": provenance.cpu(),
        "reps": args.reps,
        "rows": rows,
    }
    name = "library" + ("-quick" if args.quick else "")
    path = benchlib.write_results(name, payload, Path(args.out_dir) if args.out_dir else None)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
