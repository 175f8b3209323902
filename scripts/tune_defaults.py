"""Measured defaults of LS / TA / SA and the GA: success rate and cost per solution over a grid.

Every setting runs the same chains (GA: trials) with ``compare``'s default budget per chain
(``--budget``, 10,000 steps: LS/TA/SA neighbour moves, GA fitness evaluations with the initial
population counted, as :mod:`jaxqueens.drivers.compare` counts them) at each n, and reports the
success rate within the budget, the expected steps per solution (ERT: steps of all chains over
the chains solved) and seconds per solution (kernel time over chains solved; the machine's load
makes these noisy: the choice rests on the success rate and ERT in steps, which are
machine-independent). The defaults chosen from this grid are those of
:mod:`jaxqueens.drivers.anneal` (``DEFAULTS``) and :mod:`jaxqueens.drivers.ga`; the
run prints the best settings per method and n, and the rows of the settings named ``default`` and
``classic`` (the earlier defaults).

Grids:

- anneal: neighbour (step: 1..3 rows, wrapping | swap), rounds, and per method: SA the start
  acceptance ``init_prob`` and the end temperature relative to the start (``alpha`` is then
  ``ratio ** (1 / (rounds - 1))``), TA the first threshold's quantile ``q``; then the best of each
  method with the other objective and step sizes;
- ga: per encoding, scheme, population, tournament, crossover and mutation rates.

Usage: python scripts/tune_defaults.py anneal|ga [--n 16 64] [--chains 300] [--quick]
Results: benchmarks/results/tune-anneal-cpu.json, tune-ga-cpu.json.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxqueens
from jaxqueens.core import checker
from jaxqueens.drivers import anneal as annealing
from jaxqueens.drivers import anneal_setup, ga
from jaxqueens.parallel import chains as chain_batch
from jaxqueens.solvers import anneal as sls
from jaxqueens.solvers.base import chain_keys

sys.path.insert(0, os.path.dirname(__file__))
import benchlib

jaxqueens.configure()  # before any JAX op: one CPU device per core, XLA:CPU loop flags, cache

BUDGET = 10_000
SCHEDULE_KEYS = {"ls": (), "ta": ("q",), "sa": ("init_prob", "alpha")}


def _record(solved, spent, wall, budget) -> dict:
    k, s = solved.size, int(solved.sum())
    return {
        "chains": int(k),
        "solved": s,
        "success_rate": s / k,
        "ert_steps": float(spent.sum()) / s if s else None,
        "seconds_per_solution": wall / s if s else None,
        "wall_s": wall,
    }


# ----------------------------------------------------------------------------- annealing


def anneal_settings(quick: bool):
    """(name, method, neighbour, rounds, objective, step, schedule options) in grid order."""
    rounds_grid = (10, 50) if quick else (10, 25, 50, 100)
    out = []
    for neighbour in ("step", "swap"):
        out.append(("ls", neighbour, 1, "attacks", 3, {}))
        for rounds in rounds_grid:
            for q in (0.5, 0.2, 0.1, 0.05, 0.02):
                out.append(("ta", neighbour, rounds, "attacks", 3, {"q": q}))
            for p in (0.4, 0.2, 0.1):
                for end in (0.9**9, 0.1, 0.03, 0.01, 0.003, 0.001):
                    alpha = end ** (1 / (rounds - 1)) if rounds > 1 else 1.0
                    out.append(
                        ("sa", neighbour, rounds, "attacks", 3, {"init_prob": p, "alpha": alpha})
                    )
    return out


class AnnealRunner:
    """Compiled batches per static config, and calibration walks per neighbour/objective."""

    def __init__(self, n: int, chains: int, budget: int, seed: int):
        self.n, self.chains, self.budget = n, chains, budget
        self.cal_key, self.key = jax.random.split(jax.random.key(seed))
        self._runs, self._walks = {}, {}

    def walk(self, config: sls.Config) -> np.ndarray:
        k = (config.neighbour, config.objective, config.step)
        if k not in self._walks:
            chain0 = chain_keys(self.cal_key, jnp.arange(1))[0]
            self._walks[k] = np.asarray(
                jax.jit(lambda k: sls.random_walk_deltas(k, config, 2000))(chain0), np.float64
            )
        return self._walks[k]

    def run(self, config: sls.Config, schedule: np.ndarray) -> dict:
        if config not in self._runs:
            self._runs[config] = jax.jit(
                lambda sched: chain_batch.run(sls, config, self.key, self.chains, sls.Params(sched))
            )
            jax.block_until_ready(self._runs[config](jnp.asarray(schedule)))  # compile
        fn = self._runs[config]
        t0 = time.perf_counter()
        r = jax.device_get(fn(jnp.asarray(schedule)))
        wall = time.perf_counter() - t0
        solved = np.asarray(r.solved)
        if solved.any() and not checker.are_solutions(np.asarray(r.rows)[solved]).all():
            raise SystemExit("a reported solution fails the checker")
        spent = np.where(solved, np.asarray(r.steps, np.int64), config.total_steps)
        return _record(solved, spent, wall, self.budget)


def anneal_one(runner: AnnealRunner, method, neighbour, rounds, objective, step, opts) -> dict:
    config = anneal_setup.make_config(
        runner.n, method, runner.budget, rounds, neighbour, step, objective
    )
    schedule = anneal_setup.schedule_of(runner.walk(config), config, **opts)
    rec = runner.run(config, schedule)
    rec.update(
        method=method,
        neighbour=neighbour,
        rounds=rounds,
        objective=objective,
        step=step,
        **{k: float(v) for k, v in opts.items()},
    )
    if method == "sa":
        rec["end_ratio"] = float(schedule[-1] / schedule[0])
    return rec


def _key(rec) -> tuple:
    """Rank: success rate first, then ERT in steps."""
    return (-rec["success_rate"], rec["ert_steps"] or float("inf"))


def tune_anneal(sizes, chains, budget, seed, quick, grid=True) -> dict:
    rows, best = [], {}
    for n in sizes:
        runner = AnnealRunner(n, chains, budget, seed)
        for i, setting in enumerate(anneal_settings(quick) if grid else []):
            rec = anneal_one(runner, *setting)
            rec["n"] = n
            rows.append(rec)
            if i % 20 == 0:
                print(f"n={n} {i} settings", file=sys.stderr, flush=True)
        for method in ("ls", "ta", "sa") if grid else ():
            top = min((r for r in rows if r["n"] == n and r["method"] == method), key=_key)
            # the best with the other objective and other step sizes
            opts = {k: top[k] for k in ("q", "init_prob", "alpha") if k in top}
            for objective, step in (("pairs", 3), ("attacks", 1), ("attacks", 2), ("attacks", 5)):
                if top["neighbour"] == "swap" and step != 3:
                    continue
                rec = anneal_one(
                    runner, method, top["neighbour"], top["rounds"], objective, step, opts
                )
                rec["n"] = n
                rows.append(rec)
            best[f"{method} n={n}"] = min(
                (r for r in rows if r["n"] == n and r["method"] == method), key=_key
            )
        # the settings compare runs (the defaults of drivers.anneal) and NMOF's (the old defaults)
        for preset in ("default", "classic"):
            for method in ("ls", "ta", "sa"):
                s = annealing.preset(preset, method)
                rec = anneal_one(
                    runner,
                    method,
                    s["neighbour"],
                    s["rounds"],
                    s["objective"],
                    s["step"],
                    {k: s[k] for k in SCHEDULE_KEYS[method]},
                )
                rec.update(n=n, preset=preset)
                rows.append(rec)
    return {"rows": rows, "best": best}


# ----------------------------------------------------------------------------- GA


REFINE = {
    "permutation": [
        (6, 3, 0.5),
        (6, 3, 0.2),
        (8, 3, 0.5),
        (8, 3, 0.2),
        (14, 3, 0.5),
        (14, 3, 0.2),
        (10, 4, 0.5),
        (10, 4, 0.2),
    ],
    "combination": [(50, 5, 1.0), (200, 5, 1.0)],
}
"""A second look around the first grid's best (steady, mutation rate 1): population, tournament,
crossover rate (``--refine-only`` runs these alone)."""


def ga_settings(encoding: str, quick: bool, refine_only: bool = False):
    """Steady-state (both encodings) and generational (permutation) settings: small populations
    and mutation-heavy rates, where a 10,000-evaluation budget leaves room for many generations
    (each setting compiles anew: the grid is kept small), then :data:`REFINE`."""
    refine = [
        {
            "encoding": encoding,
            "scheme": "steady",
            "pop": pop,
            "tournament": k,
            "cxpb": cx,
            "mutpb": 1.0,
            "refine": True,
        }
        for pop, k, cx in REFINE[encoding]
    ]
    if refine_only:
        return refine
    out = []
    if encoding == "permutation":
        pops, rates = ((10, 20) if quick else (10, 20, 50)), ((1.0, 1.0), (0.5, 1.0), (0.2, 1.0))
    else:
        pops, rates = (10, 20), ((0.5, 1.0), (0.2, 1.0))
    for pop, k, (cx, mut) in itertools.product(pops, (2, 3), rates):
        out.append(
            {
                "encoding": encoding,
                "scheme": "steady",
                "pop": pop,
                "tournament": k,
                "cxpb": cx,
                "mutpb": mut,
            }
        )
    if encoding == "permutation" and not quick:
        for pop, k, (cx, mut) in itertools.product((20, 50), (2, 3), ((0.5, 1.0), (0.2, 1.0))):
            out.append(
                {
                    "encoding": encoding,
                    "scheme": "generational",
                    "pop": pop,
                    "tournament": k,
                    "cxpb": cx,
                    "mutpb": mut,
                    "elite": 1,
                }
            )
    return out + ([] if quick else refine)


def ga_one(n: int, chains: int, budget: int, seed: int, s: dict) -> dict:
    """One GA setting, censored at ``budget`` evaluations as ``compare`` does."""
    pop, scheme = s["pop"], s["scheme"]
    per_generation = 2 if scheme == "steady" else pop
    generations = (budget - pop) // per_generation
    res = ga.evolve(
        n,
        pop,
        generations,
        chains,
        seed=seed,
        **{k: v for k, v in s.items() if k not in ("pop", "refine")},
    )
    cum = np.cumsum(res.evaluations, axis=0)
    first = res.first_solved
    hit = first >= 0
    used = np.where(hit, cum[np.maximum(first, 0), np.arange(chains)], cum[-1])
    solved = hit & (used <= budget)
    spent = np.minimum(used, budget)
    wall = (res.wall_s + res.init_s) * float(spent.sum()) / max(1, int(cum[-1].sum()))
    rec = _record(solved, spent, wall, budget)
    rec.update(n=n, generations=int(generations), compile_s=res.compile_s, **s)
    return rec


def tune_ga(sizes, chains, budget, seed, quick, grid=True, refine_only=False) -> dict:
    rows, best = [], {}
    for n in sizes:
        for encoding in ("permutation", "combination"):
            for i, s in enumerate(ga_settings(encoding, quick, refine_only) if grid else []):
                rows.append(ga_one(n, chains, budget, seed, s))
                print(
                    f"n={n} {encoding} {i} {rows[-1]['success_rate']:.2f}",
                    file=sys.stderr,
                    flush=True,
                )
            for scheme in ("steady", "generational") if grid else ():
                if not any(r["scheme"] == scheme and r["encoding"] == encoding for r in rows):
                    continue
                best[f"{encoding} {scheme} n={n}"] = min(
                    (
                        r
                        for r in rows
                        if r["n"] == n and r["encoding"] == encoding and r["scheme"] == scheme
                    ),
                    key=_key,
                )
            for preset in ("default", "classic"):
                s = ga.preset_settings(preset, encoding)
                print(f"n={n} {encoding} preset {preset}", file=sys.stderr, flush=True)
                rec = ga_one(n, chains, budget, seed, s)
                rec["preset"] = preset
                rows.append(rec)
    return {"rows": rows, "best": best}


# ----------------------------------------------------------------------------- main


def _fmt(rec) -> list:
    ert = rec["ert_steps"]
    sec = rec["seconds_per_solution"]
    return [
        f"{100 * rec['success_rate']:.1f}%",
        "-" if ert is None else f"{ert:,.0f}",
        "-" if sec is None else f"{1e3 * sec:.3g}",
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("family", choices=("anneal", "ga"))
    ap.add_argument("--n", type=int, nargs="+", default=[16, 64])
    ap.add_argument("--chains", type=int, default=None, help="default 300 (anneal), 100 (ga)")
    ap.add_argument("--budget", type=int, default=BUDGET)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--presets-only", action="store_true", help="only the preset rows (no grid)")
    ap.add_argument(
        "--refine-only", action="store_true", help="ga: only the REFINE settings and presets"
    )
    ap.add_argument("--out-dir", default=None)
    args = ap.parse_args(argv)
    chains = args.chains or (300 if args.family == "anneal" else 100)
    if args.quick:
        chains = min(chains, 40)
    tune = tune_anneal if args.family == "anneal" else tune_ga
    extra = {"refine_only": True} if args.refine_only else {}
    out = tune(args.n, chains, args.budget, args.seed, args.quick, not args.presets_only, **extra)
    label = (
        (
            lambda r: (
                f"{r['method']} {r['neighbour']} rounds {r['rounds']} {r['objective']} step "
                f"{r['step']} "
                + " ".join(f"{k} {r[k]:.3g}" for k in ("q", "init_prob", "end_ratio") if k in r)
            )
        )
        if args.family == "anneal"
        else (
            lambda r: (
                f"{r['encoding']} {r['scheme']} pop {r['pop']} k {r['tournament']} "
                f"cxpb {r['cxpb']} mutpb {r['mutpb']}"
            )
        )
    )
    print(f"best settings per method and n ({chains} chains, {args.budget:,} steps each):")
    print(
        benchlib.table(
            ["which", "setting", "solved", "ERT steps", "ms/solution"],
            [[k, label(r), *_fmt(r)] for k, r in out["best"].items()],
        )
    )
    print("presets (default: what compare runs; classic: the earlier defaults):")
    print(
        benchlib.table(
            ["n", "preset", "setting", "solved", "ERT steps", "ms/solution"],
            [[r["n"], r["preset"], label(r), *_fmt(r)] for r in out["rows"] if "preset" in r],
        )
    )
    payload = {
        "benchmark": f"tuning of the {args.family} defaults at compare's budget",
        "budget": args.budget,
        "chains": chains,
        "seed": args.seed,
        "quick": args.quick,
        **out,
    }
    name = f"tune-{args.family}" + ("-quick" if args.quick else "")
    print(f"wrote {benchlib.write_results(name, payload, args.out_dir)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
