"""LS, TA, SA and min-conflicts side by side: success rate and solutions/s at the same step budget.

For each n, every method runs the same number of chains with the same budget of steps per chain.
LS, TA and SA run twice: at the user's defaults (``--preset default``, measured by
``scripts/tune_defaults.py anneal``: swap neighbour, SA 100 rounds cooling to 1/1000) and at the
classic setting (``-classic``: NMOF's TAopt/SAopt settings, step neighbour 1..3 rows wrapping,
attack-count objective, 10 rounds). Min-conflicts runs one attempt of the whole budget
(``minconflicts``, no restarts, as before) and at its default restart period within the budget
(``minconflicts-default``, as ``compare`` runs it). Solutions/s counts verified solutions over
kernel time (compilation and calibration excluded); reps alternate between methods.

Usage: python scripts/bench_anneal.py [--reps 3] [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time

import jax
import jax.numpy as jnp

import jaxqueens
from jaxqueens.drivers import anneal as annealing
from jaxqueens.drivers import anneal_setup, chains_types
from jaxqueens.drivers import chains as driver
from jaxqueens.drivers import minconflicts as minconflicts_runner
from jaxqueens.parallel import chains as chain_batch
from jaxqueens.solvers import anneal as sls
from jaxqueens.solvers import minconflicts, variants

sys.path.insert(0, __import__("os").path.dirname(__file__))
import benchlib

jaxqueens.configure()  # before any JAX op: one CPU device per core, XLA:CPU loop flags, cache

CASES = [(8, 2000, 10_000), (32, 500, 20_000), (100, 200, 50_000)]  # n, chains, steps per chain
# --quick: a smoke test of every method at one size (each size compiles every method anew)
QUICK = [(8, 20, 500)]
METHODS = (
    "ls",
    "ta",
    "sa",
    "ls-classic",
    "ta-classic",
    "sa-classic",
    "minconflicts",
    "minconflicts-default",
)


def runners(n: int, chains: int, steps: int, seed: int = 0):
    """Compiled chunk runners per method: {name: (run_chunk, chunk)}."""
    devices = jax.local_device_count()
    chunk = -(-chains // devices) * devices
    out = {}
    for name in METHODS[:6]:
        method, preset = [*name.split("-"), "default"][:2]
        s = annealing.preset(preset, method)
        config = anneal_setup.make_config(
            n, method, steps, s["rounds"], s["neighbour"], s["step"], s["objective"], s["edge"]
        )
        cal_key, key = jax.random.split(jax.random.key(seed))
        schedule, _ = anneal_setup.calibrate(
            cal_key, config, q=s["q"], init_prob=s["init_prob"], alpha=s["alpha"], t0=s["t0"]
        )
        out[name] = (
            chain_batch.compile_runner(
                chain_batch.Chains(sls, config), key, chunk, sls.Params(jnp.asarray(schedule))
            ),
            chunk,
        )
    config = minconflicts.Config(n=n)
    params = minconflicts.default_params(config, max_steps=steps, max_restarts=0)
    runner = minconflicts_runner.compile_runner(jax.random.key(seed), config, params, chunk)
    out["minconflicts"] = (runner, chunk)
    period = min(variants.default_max_steps(n), steps)
    params = minconflicts.default_params(
        config, max_steps=period, max_restarts=-(-steps // period) - 1
    )
    out["minconflicts-default"] = (
        minconflicts_runner.compile_runner(jax.random.key(seed), config, params, chunk),
        chunk,
    )
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="tiny sizes (a smoke test)")
    ap.add_argument("--out-dir", default=None)
    args = ap.parse_args()

    records, lines = [], []
    for n, chains, steps in QUICK if args.quick else CASES:
        compiled = runners(n, chains, steps)
        last: dict[str, chains_types.ChainRun] = {}
        times: dict[str, list[float]] = {m: [] for m in METHODS}
        for _ in range(args.reps):
            for m in METHODS:
                run_chunk, chunk = compiled[m]
                t0 = time.perf_counter()
                last[m] = driver.run_chains(
                    run_chunk, n, chains_types.Budget(max_chains=chains), chunk, what=m
                )  # verifies every solution
                times[m].append(time.perf_counter() - t0)
        for m in METHODS:
            ok = last[m].solved & (last[m].steps <= steps)  # within the budget (as compare)
            solved = int(ok.sum())
            t = benchlib.summary(times[m])
            rate = {"best": solved / t["best"], "median": solved / t["median"]}
            records.append(
                {
                    "n": n,
                    "method": m,
                    "chains": chains,
                    "steps_budget": steps,
                    "solved": solved,
                    "success_rate": solved / chains,
                    "seconds": t,
                    "solutions_per_s": rate,
                    "mean_steps_solved": float(last[m].steps[ok].mean()) if solved else None,
                }
            )
            lines.append(
                [
                    n,
                    m,
                    chains,
                    steps,
                    f"{100 * solved / chains:.1f}%",
                    benchlib.fmt_rate(rate["best"]),
                    benchlib.fmt_rate(rate["median"]),
                    f"{records[-1]['mean_steps_solved'] or 0:.0f}",
                ]
            )
        print(f"done n={n}", file=sys.stderr, flush=True)

    print(f"same step budget per chain, best / median of {args.reps} reps (all solutions verified)")
    print(
        benchlib.table(
            ["n", "method", "chains", "steps", "success", "sol/s best", "sol/s med", "mean steps"],
            lines,
        )
    )
    path = benchlib.write_results(
        "anneal" + ("-quick" if args.quick else ""),
        {"reps": args.reps, "rows": records},
        args.out_dir,
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
