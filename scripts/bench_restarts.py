"""Min-conflicts restart policies: expected steps and seconds per solution against the period.

Restarts are independent attempts, so any restart policy can be evaluated exactly from the
distribution of one attempt's steps to solution X (Luby, Sinclair & Zuckerman 1993). For each
(n, init, tabu) the script

1. runs many chains with one long attempt each (``max_restarts=0``, ``max_steps=L``: X censored
   at L; machine-independent), and times two runs to price a step ``c_s`` and an attempt's
   start ``c_r`` (a fresh board: O(n) for random/permutation, O(n^2) for greedy, more for qs4)
   on this machine: the long run (chains x c_r + steps x c_s) and one of single-step attempts
   (attempts x (c_r + c_s)), solved for the two unknowns;
2. evaluates policies on the empirical distribution, exactly: a policy gives attempt k the
   limit t_k, and E[cost per solution] = sum_k P(attempts 0..k-1 failed) * (c_s E[min(X, t_k)]
   + c_r) (fixed period T: (c_s E[min(X, T)] + c_r) / P(X <= T)); steps alone with c_r = 0.
   Policies: every fixed period T (the best one, by steps and by seconds), the default
   (:func:`jaxqueens.solvers.variants.default_max_steps`, a fixed period), the classic
   ``max(4000, 2n)``, numba's ``max(100, 4n)``, geometric growth (x1.2 per attempt) and Luby's
   universal sequence from the default period, and the best Luby unit and geometric start and
   factor of a grid for each row alone;
3. validates (``--validate``): ``jaxqueens.solve`` with its default against ``--maxsteps`` at the
   best fixed period by seconds, alternated in the same run, best and median of ``--reps``.

A censored attempt (X > L) is priced as L steps and never solved; a policy whose limits pass L
is marked (its figure is then a bound). Distributions are cached (``--cache``) so that policies
can be re-evaluated without running chains again.

Output: the table (n, init, tabu, best fixed period by seconds with its E[steps] and E[s], the
default's, ratio) and ``benchmarks/results/restarts-cpu.json``.

Usage: python scripts/bench_restarts.py [--n 8 12 16 32 64 100 1000 10000] [--quick]
       [--cache FILE.npz] [--validate 8 32 100] [--reps 5]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import jax
import numpy as np

import jaxqueens
from jaxqueens.core import checker
from jaxqueens.drivers import minconflicts as mcsolve
from jaxqueens.drivers import minconflicts as minconflicts_runner
from jaxqueens.solvers import minconflicts, variants

sys.path.insert(0, os.path.dirname(__file__))
import benchlib

jaxqueens.configure()  # before any JAX op: one CPU device per core, XLA:CPU loop flags, cache

SIZES = (8, 12, 16, 32, 64, 100, 1000, 10_000)
CONFIGS = (("random", 0), ("permutation", 0), ("greedy", 0), ("qs4", 0), ("permutation", 4))
"""(init, tabu) pairs measured; tabu 4 is ``compare``'s mc-tabu."""
CHAINS = {8: 20_000, 12: 20_000, 16: 16_000, 32: 8_000, 64: 4_000, 100: 2_000, 1000: 200}
QUICK_CHAINS = {8: 2_000, 16: 1_000, 32: 500}


def chains_for(n: int, quick: bool) -> int:
    table = QUICK_CHAINS if quick else CHAINS
    return table.get(n, max(24, int(4e7 // (n * n))) if n > 1000 else 400)


def limit_for(n: int) -> int:
    """L: the single attempt's limit (far past every useful period; stuck small boards pay it)."""
    return max(20_000, 40 * n)


# ----------------------------------------------------------------------------- measurement


def measure(n: int, init: str, tabu: int, chains: int, seed: int) -> dict:
    """One attempt per chain, L steps at most; and the price of a step and of an attempt."""
    L = limit_for(n)
    config = minconflicts.Config(n=n, init=init, tabu=tabu)
    params = minconflicts.default_params(config, max_steps=L, max_restarts=0)
    key = jax.random.key(seed)
    devices = jax.local_device_count()
    cap = minconflicts_runner.default_chunk(n, None, L)
    calls = -(-chains // cap)
    per_call = -(-chains // calls)
    chunk = -(-per_call // devices) * devices
    chains = calls * chunk  # every call a full chunk: no size compiles inside the timing
    run = minconflicts_runner.compile_runner(key, config, params, chunk)
    jax.device_get(run(chains, chunk))  # warm (chains past those measured)
    steps, solved, wall = [], [], 0.0
    for off in range(0, chains, chunk):
        count = min(chunk, chains - off)
        t0 = time.perf_counter()
        r = jax.device_get(run(off, count))
        wall += time.perf_counter() - t0
        steps.append(np.asarray(r.steps, np.int64))
        solved.append(np.asarray(r.solved))
        ok = np.asarray(r.solved)
        if ok.any() and not checker.are_solutions(np.asarray(r.rows)[ok]).all():
            raise SystemExit(f"n={n} {init}: a reported solution fails the checker")
    steps, solved = np.concatenate(steps), np.concatenate(solved)
    # Attempts of one step each: attempts x (c_r + c_s1); solved with the long run's
    # chains x c_r + steps x c_s (c_s1 ~ c_s: the price of a step early in an attempt).
    attempts_per_chain = 8 if n <= 1000 else 2
    k = max(devices, min(chains, int(2e6 // (n * attempts_per_chain)) // devices * devices))
    if init in ("greedy", "qs4"):
        k = max(devices, min(k, int(4e7 // (n * n * attempts_per_chain)) // devices * devices))
    short = minconflicts.default_params(config, max_steps=1, max_restarts=attempts_per_chain - 1)
    run1 = minconflicts_runner.compile_runner(jax.random.key(seed + 1), config, short, k)
    jax.device_get(run1(k, k))  # warm
    walls1, att1 = [], 0
    for rep in range(3):
        t0 = time.perf_counter()
        r1 = jax.device_get(run1(rep * k, k))
        walls1.append(time.perf_counter() - t0)
        att1 = int(np.asarray(r1.restarts, np.int64).sum() + k)
    per_attempt = min(walls1) / att1  # c_r + c_s (wall of the machine: both cores)
    total = float(steps.sum())
    c_s = max(0.0, (wall - chains * per_attempt) / max(1.0, total - chains))
    c_r = max(0.0, per_attempt - c_s)
    return {
        "n": n,
        "init": init,
        "tabu": tabu,
        "chains": chains,
        "limit": L,
        "steps": steps,
        "solved": solved,
        "wall_s": wall,
        "c_s": c_s,
        "c_r": c_r,
    }


# ----------------------------------------------------------------------------- policies


class Dist:
    """The empirical distribution of one attempt's steps (censored at ``limit``)."""

    def __init__(self, steps: np.ndarray, solved: np.ndarray, limit: int):
        self.limit = int(limit)
        self.x = np.sort(np.where(solved, steps, limit + 1).astype(np.int64))  # censored: L + 1
        self.m = self.x.size
        self.cum = np.concatenate([[0], np.cumsum(np.minimum(self.x, limit))])

    def cdf(self, t: np.ndarray) -> np.ndarray:
        """P(X <= t) (solved within t steps)."""
        return np.searchsorted(self.x, t, side="right") / self.m

    def mean_min(self, t: np.ndarray) -> np.ndarray:
        """E[min(X, t)] (a censored attempt counts min(L, t))."""
        t = np.asarray(t, np.int64)
        k = np.searchsorted(self.x, t, side="right")
        return (self.cum[k] + (self.m - k) * np.minimum(t, self.limit)) / self.m

    def fixed(self, t, c_s: float = 1.0, c_r: float = 0.0) -> np.ndarray:
        """Expected cost per solution with every attempt limited to ``t`` (inf: never solved)."""
        t = np.asarray(t, np.int64)
        p = self.cdf(t)
        with np.errstate(divide="ignore"):
            return np.where(p > 0, (c_s * self.mean_min(t) + c_r) / np.maximum(p, 1e-300), np.inf)

    def sequence(self, limits: np.ndarray, c_s: float = 1.0, c_r: float = 0.0) -> float:
        """Expected cost per solution of attempts with limits ``limits`` [K] (the last repeats
        until solved)."""
        limits = np.asarray(limits, np.int64)
        p = self.cdf(limits)
        cost = c_s * self.mean_min(limits) + c_r
        alive = np.concatenate([[1.0], np.cumprod(1.0 - p)[:-1]])
        head = float(np.sum(alive * cost))
        tail_alive = alive[-1] * (1.0 - p[-1])
        if tail_alive <= 0:
            return head
        if p[-1] <= 0:
            return float("inf")
        return head + tail_alive * cost[-1] / p[-1]


def luby(k: np.ndarray) -> np.ndarray:
    """Luby's universal sequence 1, 1, 2, 1, 1, 2, 4, ... at 0-based indices ``k``."""
    out = np.empty(len(k), np.int64)
    for j, i in enumerate(np.asarray(k, np.int64) + 1):
        while True:
            p = 1 << int(i).bit_length()  # 2^m > i
            if i == p - 1:
                out[j] = p >> 1
                break
            i -= (p >> 1) - 1
    return out


ATTEMPTS = 4096
"""Attempts a sequence policy is evaluated over (the last limit repeats after them)."""


def default_limits(n: int) -> np.ndarray:
    """The default policy's limits: every attempt the period of
    :func:`jaxqueens.solvers.variants.default_max_steps` (what ``solve`` runs without
    ``--maxsteps``)."""
    return np.array([variants.default_max_steps(n)], np.int64)


def _ratio_at(d: Dist, grid: np.ndarray, c_s: float, c_r: float, n: int) -> float:
    """Default over best fixed period, in seconds, with these prices."""
    return float(d.fixed(default_limits(n), c_s, c_r)[0] / d.fixed(grid, c_s, c_r).min())


def evaluate(rec: dict) -> dict:
    """Every policy's expected steps and seconds per solution for one measured distribution."""
    n, L = rec["n"], rec["limit"]
    d = Dist(rec["steps"], rec["solved"], L)
    c_s, c_r = rec["c_s"], rec["c_r"]
    grid = np.unique(
        np.concatenate([np.unique(d.x[d.x <= L]), np.round(np.logspace(0, math.log10(L), 400))])
    ).astype(np.int64)
    grid = grid[(grid >= 1) & (grid <= L)]
    es, sec = d.fixed(grid), d.fixed(grid, c_s, c_r)
    i_s, i_t = int(np.argmin(es)), int(np.argmin(sec))

    def row(limits) -> dict:
        limits = np.asarray(limits, np.int64)
        return {
            "steps": d.sequence(limits),
            "seconds": d.sequence(limits, c_s, c_r),
            "past_limit": bool(limits.max() > L and d.cdf(L) < 1),
            "first_limits": limits[:8].tolist(),
        }

    k = np.arange(ATTEMPTS)
    period = int(default_limits(n)[0])
    policies = {
        "default": row(default_limits(n)),
        "classic max(4000, 2n)": row([max(4000, 2 * n)]),
        "numba max(100, 4n)": row([max(100, 4 * n)]),
        "geometric from the default x1.2": row(np.floor(period * 1.2 ** np.minimum(k, 100))),
        "luby, unit the default": row(period * luby(k)),
        "luby, unit half the default": row(max(1, period // 2) * luby(k)),
    }
    # the best of each family for this row alone (tuned per row: optimistic)
    lubys = {u: row(u * luby(k)) for u in (1, 2, 4, 8, 16, 32, 64, 128)}
    geos = {
        (t0, g): row(np.minimum(np.floor(t0 * g ** np.minimum(k, 200)), 2**31 - 1))
        for t0 in (8, 16, 32, 64, 128, max(1, n // 2), n, 2 * n)
        for g in (1.1, 1.2, 1.5, 2.0)
    }
    best_luby = min(lubys, key=lambda u: lubys[u]["seconds"])
    best_geo = min(geos, key=lambda t: geos[t]["seconds"])
    policies[f"luby x{best_luby} (best fixed unit)"] = lubys[best_luby]
    policies[f"geometric {best_geo[0]} x{best_geo[1]} (best for this row)"] = geos[best_geo]
    return {
        "n": n,
        "init": rec["init"],
        "tabu": rec["tabu"],
        "chains": int(rec["chains"]),
        "limit": L,
        "censored": float(1 - d.cdf(L)),
        "mean_steps_solved": float(np.mean(rec["steps"][rec["solved"]]))
        if rec["solved"].any()
        else None,
        "c_s_us": 1e6 * c_s,
        "c_r_us": 1e6 * c_r,
        "best_by_steps": {"period": int(grid[i_s]), "steps": float(es[i_s])},
        "best_by_seconds": {
            "period": int(grid[i_t]),
            "steps": float(es[i_t]),
            "seconds": float(sec[i_t]),
        },
        "policies": policies,
        "default_ratio_steps": policies["default"]["steps"] / float(es[i_s]),
        "default_ratio_seconds": policies["default"]["seconds"] / float(sec[i_t]),
        # the same ratio had a fresh board cost half or twice the measured price (the price of
        # a fresh board relative to a step decides the best period where boards start nearly
        # solved: greedy and qs4 at small n)
        "default_ratio_seconds_price_half": _ratio_at(d, grid, c_s, c_r / 2, n),
        "default_ratio_seconds_price_double": _ratio_at(d, grid, c_s, 2 * c_r, n),
        "curve": {  # E[steps], E[s] per solution against the fixed period, log-spaced
            "period": grid[:: max(1, len(grid) // 60)].tolist(),
            "steps": [float(v) for v in es[:: max(1, len(grid) // 60)]],
            "seconds": [float(v) for v in sec[:: max(1, len(grid) // 60)]],
        },
    }


# ----------------------------------------------------------------------------- validation


def _best_of(ev: dict, prefix: str) -> float:
    return min(
        v["seconds"] for k, v in ev["policies"].items() if k.startswith(prefix) and "best" in k
    )


def validate(n: int, init: str, tabu: int, period: int, chains: int, reps: int, seed: int) -> dict:
    """``jaxqueens.solve`` at its default vs ``max_steps=period``, alternated rep by rep (whole
    call, compilation excluded by a warm-up per setting)."""
    out: dict[str, list] = {"default": [], "fixed": []}
    kw = {"init": init, "tabu": tabu}
    for which in out:  # warm-up: compile both
        mcsolve.solve(n, 64, seed=seed + 999, max_steps=period if which == "fixed" else None, **kw)
    steps = {"default": [], "fixed": []}
    for rep in range(reps):
        for which in out:
            r = mcsolve.solve(
                n,
                chains,
                seed=seed + rep,
                max_steps=period if which == "fixed" else None,
                **kw,
            )
            s = r.summary
            out[which].append(s["solutions_per_s"])
            steps[which].append(s["steps"]["mean"])
    return {
        "n": n,
        "init": init,
        "tabu": tabu,
        "chains": chains,
        "fixed_period": period,
        "solutions_per_s": {
            k: {"best": max(v), "median": float(np.median(v))} for k, v in out.items()
        },
        "mean_steps": {k: float(np.mean(v)) for k, v in steps.items()},
        "ratio_median": float(np.median(out["default"]) / np.median(out["fixed"])),
        "ratio_best": float(max(out["default"]) / max(out["fixed"])),
    }


# ----------------------------------------------------------------------------- main


def load_cache(path: Path | None) -> dict:
    if path is None or not path.exists():
        return {}
    z = np.load(path)
    out = {}
    for key in {k.rsplit("/", 1)[0] for k in z.files}:
        meta = z[f"{key}/meta"]
        n, tabu, chains, limit = (int(v) for v in meta[:4])
        out[key] = {
            "n": n,
            "init": key.split(":")[1],
            "tabu": tabu,
            "chains": chains,
            "limit": limit,
            "steps": z[f"{key}/steps"],
            "solved": z[f"{key}/solved"],
            "wall_s": float(meta[4]),
            "c_s": float(meta[5]),
            "c_r": float(meta[6]),
        }
    return out


def save_cache(path: Path, recs: dict) -> None:
    arrays = {}
    for key, r in recs.items():
        arrays[f"{key}/steps"] = r["steps"]
        arrays[f"{key}/solved"] = r["solved"]
        arrays[f"{key}/meta"] = np.array(
            [r["n"], r["tabu"], r["chains"], r["limit"], r["wall_s"], r["c_s"], r["c_r"]],
            np.float64,
        )
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, **arrays)
    os.replace(tmp, path)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=None, help=f"sizes (default {SIZES})")
    ap.add_argument(
        "--configs",
        default=",".join(f"{i}:{t}" for i, t in CONFIGS),
        help="comma list of init:tabu (default: every init with tabu 0, permutation with tabu 4)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="n = 8, 16, 32, few chains (a smoke test)")
    ap.add_argument("--cache", type=Path, default=None, help="npz of distributions (reused)")
    ap.add_argument(
        "--validate", type=int, nargs="*", default=None, help="n to validate on real runs"
    )
    ap.add_argument("--validate-chains", type=int, default=20_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out-dir", default=None)
    args = ap.parse_args(argv)
    sizes = args.n or ([8, 16, 32] if args.quick else list(SIZES))
    configs = [(c.split(":")[0], int(c.split(":")[1])) for c in args.configs.split(",")]
    cache = load_cache(args.cache)
    records, rows = [], []
    for n in sizes:
        for init, tabu in configs:
            key = f"{n}:{init}:{tabu}"
            if key not in cache:
                t0 = time.perf_counter()
                cache[key] = measure(n, init, tabu, chains_for(n, args.quick), args.seed)
                print(
                    f"measured {key} in {time.perf_counter() - t0:.1f} s",
                    file=sys.stderr,
                    flush=True,
                )
                if args.cache is not None:
                    save_cache(args.cache, cache)
            ev = evaluate(cache[key])
            records.append(ev)
            best, pol = ev["best_by_seconds"], ev["policies"]
            dflt = pol["default"]
            rows.append(
                [
                    n,
                    init,
                    tabu,
                    ev["best_by_steps"]["period"],
                    f"{ev['best_by_steps']['steps']:.1f}",
                    best["period"],
                    f"{best['steps']:.1f}",
                    f"{1e6 * best['seconds']:.2f}",
                    dflt["first_limits"][0],
                    f"{dflt['steps']:.1f}",
                    f"{1e6 * dflt['seconds']:.2f}",
                    f"{ev['default_ratio_steps']:.3f}",
                    f"{ev['default_ratio_seconds']:.3f}",
                    f"{ev['default_ratio_seconds_price_half']:.2f}/"
                    f"{ev['default_ratio_seconds_price_double']:.2f}",
                    f"{ev['policies']['classic max(4000, 2n)']['seconds'] / best['seconds']:.2f}",
                    f"{ev['policies']['numba max(100, 4n)']['seconds'] / best['seconds']:.2f}",
                    f"{pol['geometric from the default x1.2']['seconds'] / best['seconds']:.2f}",
                    f"{pol['luby, unit the default']['seconds'] / best['seconds']:.2f}",
                    f"{_best_of(ev, 'luby x') / best['seconds']:.2f}",
                    f"{_best_of(ev, 'geometric ') / best['seconds']:.2f}",
                    f"{100 * ev['censored']:.2f}%",
                ]
            )
    headers = [
        "n",
        "init",
        "tabu",
        "T*steps",
        "E[steps]",
        "T*sec",
        "E[steps]",
        "E[us]",
        "default T",
        "E[steps]",
        "E[us]",
        "ratio st",
        "ratio s",
        "c_r/2, x2",
        "classic",
        "numba",
        "geo1.2",
        "luby(T)",
        "luby*",
        "geo*",
        "censored",
    ]
    print(
        "expected cost per solution: best fixed period (T*, by steps and by seconds) against the "
        "default period; ratios = default / best fixed (c_r/2, x2: in seconds, had a fresh board "
        "cost half or twice its measured price); then seconds / best fixed's of: classic "
        "max(4000, 2n), numba max(100, 4n), geometric x1.2 and Luby from the default period, "
        "Luby with the best fixed unit and geometric with the best start and factor for the row"
    )
    print(benchlib.table(headers, rows))
    worst = max(r["default_ratio_seconds"] for r in records)
    worst_steps = max(
        (r["default_ratio_steps"] for r in records if r["init"] in ("random", "permutation")),
        default=float("nan"),
    )
    print(
        f"worst default / best fixed: seconds {worst:.3f} over every row; steps {worst_steps:.3f} "
        "over the random and permutation rows (greedy and qs4 boards are nearly solved: in steps "
        "alone, which leave out the O(n^2) price of a fresh board, restarting after a step or "
        "two looks best)"
    )
    checks = []
    if args.validate:
        for n in args.validate:
            ev = next(
                r for r in records if r["n"] == n and r["init"] == "permutation" and not r["tabu"]
            )
            v = validate(
                n,
                "permutation",
                0,
                ev["best_by_seconds"]["period"],
                args.validate_chains,
                args.reps,
                args.seed,
            )
            checks.append(v)
            print(
                f"validate n={n}: solve default {v['solutions_per_s']['default']['median']:,.0f} "
                f"sol/s (best {v['solutions_per_s']['default']['best']:,.0f}) vs --maxsteps "
                f"{v['fixed_period']} {v['solutions_per_s']['fixed']['median']:,.0f} "
                f"(best {v['solutions_per_s']['fixed']['best']:,.0f}): ratio of medians "
                f"{v['ratio_median']:.3f}, of bests {v['ratio_best']:.3f}",
                flush=True,
            )
    payload = {
        "benchmark": "min-conflicts restart policies: E[steps], E[seconds] per solution",
        "seed": args.seed,
        "quick": args.quick,
        "policy": "jaxqueens.solvers.variants.default_max_steps (a fixed period per n)",
        "worst_ratio_seconds": worst,
        "worst_ratio_steps_random_permutation": worst_steps,
        "rows": records,
        "validation": checks,
    }
    path = benchlib.write_results(
        "restarts" + ("-quick" if args.quick else ""), payload, args.out_dir
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
