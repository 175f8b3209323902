"""Genetic algorithms: jaxqueens vs DEAP's N-Queens GA, in the same run.

(a) DEAP's published configuration (n = 20, population 300, 100 generations of eaSimple, cxpb 0.5,
    mutpb 0.2, PMX, shuffle mutation indpb 2/n, tournament 3) over the same number of seeds/trials
    (50): success rate and evaluations per second, both tools. DEAP runs through
    ``../shared/baselines/deap_nqueens.py`` (a subprocess, one seed after another, as a user would);
    jaxqueens runs all trials in one call (``configs/ga_deap_n20.toml``). Repetitions alternate
    between the tools. Evaluations are counted as DEAP counts them: the initial population plus,
    each generation, every individual changed by crossover or mutation. jaxqueens' rate excludes
    compilation and initialisation (reported apart; "ratio cold" folds the first call's
    compilation and initialisation into the time);
    DEAP's includes nothing but its generations. Success: trials whose best reached 0 conflicts
    (jaxqueens minimises attacking pairs, DEAP the diagonal excess; both are 0 exactly for
    solutions). A 1000-trial jaxqueens run tightens its success estimate.
(b) Large populations, same operators and rates: population 10^4 and 10^6 at n = 20 and n = 64,
    one trial each in a fresh subprocess (peak RSS is the process's): generations/s and
    evaluations/s. DEAP at population 10^4, n = 20 (a few generations) gives a ratio.
(c) The user's defaults at ``compare``'s budget: each encoding at ``--preset default`` (measured by
    ``scripts/tune_defaults.py ga``) and ``--preset classic`` (the course GA, the earlier
    defaults), steady state, 100 trials of 10,000 evaluations at n = 16 and 64: success rate
    within the budget, evaluations per solution and seconds per solution (generation time shared
    by evaluations; a trial solved past the budget counts unsolved, as ``compare`` counts it).

Targets (the issue): on the CPU at least 100x DEAP's evaluations/s on (a) with a success rate no
worse; on an H100, population 10^6 at n = 64 at >= 10 generations/s.

(d) The kernel (``jaxqueens.solvers.ga``, one trial) as a user runs it: 8 mutation rates x a
    population of 1000 (n = 20, DEAP's operators, 50 generations each) as one ``jax.vmap`` over
    ``Params`` in one compiled call, against the 8 rates one call each (one compiled function):
    seconds and generations per second, compile time apart.

Usage: python scripts/bench_ga.py [--reps 3] [--quick] [--out-dir DIR] [--baselines DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

DEFAULT_BASELINES = Path(__file__).resolve().parents[2] / "shared" / "baselines"
DEAP_CONFIG = {
    "scheme": "generational",
    "crossover": "pmx",
    "mutation": "swap",
    "tournament": 3,
    "cxpb": 0.5,
    "mutpb": 0.2,
    "elite": 0,
}


def wilson(k: int, m: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson interval of a success rate k / m."""
    p, d = k / m, 1 + z * z / m
    c, h = (p + z * z / (2 * m)) / d, z * ((p * (1 - p) / m + z * z / (4 * m * m)) ** 0.5) / d
    return max(0.0, c - h), min(1.0, c + h)


def sweep_rows(reps: int, quick: bool) -> tuple[dict, str]:
    """(d) A Params sweep in one compiled call vs one call per rate; (JSON row, table)."""
    import time

    import jax
    import jax.numpy as jnp
    from jax import lax

    import jaxqueens.solvers.ga as kernel

    sys.path.insert(0, os.path.dirname(__file__))
    import benchlib

    # --quick: a smoke test of the same code (2 generations of a population of 100)
    gens, lanes, pop = (2, 8, 100) if quick else (50, 8, 1000)
    rates = jnp.linspace(0.05, 0.4, lanes, dtype=jnp.float32)
    config = kernel.Config(  # compaction sized for the largest rate, as check_setup does
        n=20,
        pop=pop,
        scheme="generational",
        crossover="pmx",
        tournament=3,
        cx_cap32=16,
        mut_cap32=13,
        eval_cap32=23,
    )
    base = kernel.default_params(config, indpb=0.1)

    def trial(key, params):  # a fixed number of generations: the same work in every lane
        s = kernel.init(key, config, params)
        s, m = lax.scan(lambda s, _: kernel.generation(s, config, params), s, None, length=gens)
        return m.best

    keys = jax.random.split(jax.random.key(0), lanes)
    sweep = jax.jit(lambda k, r: jax.vmap(trial)(k, jax.vmap(lambda x: base._replace(mutpb=x))(r)))
    one = jax.jit(trial)
    t0 = time.perf_counter()
    sweep = sweep.lower(keys, rates).compile()
    compile_sweep = time.perf_counter() - t0
    t0 = time.perf_counter()
    one = one.lower(keys[0], base).compile()
    compile_one = time.perf_counter() - t0
    each = [base._replace(mutpb=rates[i]) for i in range(lanes)]
    got = sweep(keys, rates)
    for i in (0, lanes - 1):  # lane i of the sweep is the run of rate i
        assert (jax.device_get(one(keys[i], each[i])) == jax.device_get(got[i])).all()
    times = benchlib.interleaved(
        {
            "sweep": lambda: sweep(keys, rates).block_until_ready(),
            "one by one": lambda: [one(keys[i], each[i]).block_until_ready() for i in range(lanes)],
        },
        reps,
    )
    row = {
        "lanes": lanes,
        "pop": pop,
        "n": 20,
        "generations": gens,
        "compile_s": {"sweep": compile_sweep, "one by one": compile_one},
        "seconds": {k: benchlib.summary(v) for k, v in times.items()},
    }
    lines = [
        [
            name,
            f"{min(t):.3f}",
            f"{statistics.median(t):.3f}",
            f"{lanes * gens / statistics.median(t):.1f}",
            f"{row['compile_s'][name]:.1f}",
        ]
        for name, t in times.items()
    ]
    head = [f"{lanes} rates x pop {pop}", "s best", "s med", "gens/s med", "compile s"]
    return row, benchlib.table(head, lines)


def run_deap(folder: Path, seeds: str, pop: int = 300, ngen: int = 100, n: int = 20) -> dict:
    """Run the DEAP peer; return its per-seed rows and aggregate figures."""
    out = subprocess.run(
        [
            sys.executable,
            str(folder / "deap_nqueens.py"),
            "--seeds",
            seeds,
            "--pop",
            str(pop),
            "--ngen",
            str(ngen),
            "--n",
            str(n),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    per_seed = [r for r in rows if not r.get("summary")]
    wall = sum(r["wall_s"] for r in per_seed)
    nevals = sum(r["nevals"] for r in per_seed)
    return {
        "seeds": len(per_seed),
        "ngen": ngen,
        "solved": sum(bool(r["solved"]) for r in per_seed),
        "wall_s": wall,
        "nevals": nevals,
        "evals_per_s": nevals / wall,
        "evals_per_s_median_seed": statistics.median(r["nevals"] / r["wall_s"] for r in per_seed),
    }


def one_large(pop: int, n: int, generations: int) -> dict:
    """Child process: one trial of the large-population run; prints a JSON line."""
    import jaxqueens
    from jaxqueens.drivers import ga

    jaxqueens.configure()  # before any JAX op: one CPU device per core, XLA:CPU loop flags, cache

    r = ga.evolve(n, pop, generations, 1, indpb=2.0 / n, **DEAP_CONFIG)
    return {
        "pop": pop,
        "n": n,
        "generations": generations,
        "gens_per_s": generations / r.wall_s,
        "evals_per_s": float(r.evaluations[1:].sum()) / r.wall_s,
        "wall_s": r.wall_s,
        "compile_s": r.compile_s,
        "init_s": r.init_s,
        "best": int(r.best[-1].min()),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def budget_rows(
    ga, sizes, trials: int, budget: int = 10_000, presets=("default", "classic")
) -> list[dict]:
    """Part (c): each encoding at its default and classic presets within ``budget`` evaluations."""
    import numpy as np

    rows = []
    for n in sizes:
        for encoding in ("permutation", "combination"):
            for preset in presets:
                s = ga.preset_settings(preset, encoding)
                gens = (budget - s["pop"]) // 2
                r = ga.evolve(
                    n,
                    s["pop"],
                    gens,
                    trials,
                    encoding=encoding,
                    scheme="steady",
                    tournament=s["tournament"],
                    cxpb=s["cxpb"],
                    mutpb=s["mutpb"],
                    seed=0,
                )
                cum = np.cumsum(r.evaluations, axis=0)
                hit = r.first_solved >= 0
                used = np.where(hit, cum[np.maximum(r.first_solved, 0), np.arange(trials)], cum[-1])
                solved = int((hit & (used <= budget)).sum())
                spent = float(np.minimum(used, budget).sum())
                # generations only: init_s holds the first call's compilation of the initialisation
                wall = r.wall_s * spent / max(1, int(cum[-1].sum()))
                rows.append(
                    {
                        "n": n,
                        "encoding": encoding,
                        "preset": preset,
                        **{k: s[k] for k in ("pop", "tournament", "cxpb", "mutpb")},
                        "trials": trials,
                        "budget": budget,
                        "solved": solved,
                        "success_rate": solved / trials,
                        "evals_per_solution": spent / solved if solved else None,
                        "seconds_per_solution": wall / solved if solved else None,
                    }
                )
                print(
                    f"(c) n {n} {encoding} {preset}: {solved}/{trials}", file=sys.stderr, flush=True
                )
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument(
        "--quick", action="store_true", help="tiny sizes: a smoke test of every part (< 30 s)"
    )
    ap.add_argument(
        "--out-dir", default=None, help="where the JSON goes (default benchmarks/results)"
    )
    ap.add_argument(
        "--baselines", type=Path, default=DEFAULT_BASELINES, help="folder of deap_nqueens.py"
    )
    ap.add_argument(
        "--one", nargs=3, type=int, metavar=("POP", "N", "GENS"), help=argparse.SUPPRESS
    )
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one_large(*args.one)))
        return 0

    import jax

    import jaxqueens
    from jaxqueens.drivers import ga

    sys.path.insert(0, os.path.dirname(__file__))
    import benchlib

    jaxqueens.configure()  # before any JAX op: one CPU device per core, XLA:CPU loop flags, cache

    have_deap = (
        importlib.util.find_spec("deap") is not None
        and (args.baselines / "deap_nqueens.py").is_file()
    )
    if not have_deap:
        print(
            "note: DEAP or deap_nqueens.py missing (pip install deap; --baselines DIR): "
            "DEAP part skipped",
            file=sys.stderr,
        )
    # --quick runs every part at the smallest sizes that exercise it (a smoke test of the script,
    # no figure to read): 4 trials of 10 generations in (a), one population of 1000 in (b).
    trials, gens_a = (4, 10) if args.quick else (50, 100)
    deap_seeds = "0-1" if args.quick else f"0-{trials - 1}"

    # (a) DEAP's configuration, interleaved rep by rep.
    jq_runs, deap_runs = [], []
    for rep in range(args.reps):
        r = ga.evolve(20, 300, gens_a, trials, indpb=0.1, seed=0, **DEAP_CONFIG)
        jq_runs.append(
            {
                "wall_s": r.wall_s,
                "compile_s": r.compile_s,
                "init_s": r.init_s,
                "evals": int(r.evaluations.sum()),
                "solved": int((r.first_solved >= 0).sum()),
            }
        )
        if have_deap:
            deap_runs.append(run_deap(args.baselines, deap_seeds, ngen=gens_a))
        print(
            f"(a) rep {rep}: jaxqueens {jq_runs[-1]['wall_s']:.3f} s"
            + (f", DEAP {deap_runs[-1]['wall_s']:.1f} s" if deap_runs else ""),
            file=sys.stderr,
            flush=True,
        )
    jq_rate = [j["evals"] / j["wall_s"] for j in jq_runs]
    cold = jq_runs[0]  # the first call pays compilation; later ones hit the in-process cache
    jq_e2e = [cold["evals"] / (cold["wall_s"] + cold["compile_s"] + cold["init_s"])]
    big_trials = trials if args.quick else 1000  # quick: the compiled call of (a), seed 1
    wide = ga.evolve(20, 300, gens_a, big_trials, indpb=0.1, seed=1, **DEAP_CONFIG)
    a = {
        "trials": trials,
        "jaxqueens": {
            "runs": jq_runs,
            "solved": jq_runs[0]["solved"],
            "success_rate": jq_runs[0]["solved"] / trials,
            "evals_per_s": benchlib.summary(jq_rate),
            "evals_per_s_cold_call_incl_compile_init": jq_e2e[0],
            "success_rate_wide": wide.success_rate,
            "wide_trials": big_trials,
        },
    }
    lines = []
    if deap_runs:
        d_rate = [d["evals_per_s"] for d in deap_runs]
        a["deap"] = {
            "runs": deap_runs,
            "seeds": deap_seeds,
            "solved": deap_runs[0]["solved"],
            "success_rate": deap_runs[0]["solved"] / deap_runs[0]["seeds"],
            "evals_per_s": benchlib.summary(d_rate),
        }
        a["ratio_median"] = statistics.median(jq_rate) / statistics.median(d_rate)
        a["ratio_best"] = max(jq_rate) / max(d_rate)
        a["ratio_cold_call"] = jq_e2e[0] / statistics.median(d_rate)
        lo, hi = wilson(a["deap"]["solved"], deap_runs[0]["seeds"])
        lines.append(
            [
                "DEAP",
                f"{a['deap']['solved']}/{deap_runs[0]['seeds']} [{lo:.2f}, {hi:.2f}]",
                "-",
                benchlib.fmt_rate(max(d_rate)),
                benchlib.fmt_rate(statistics.median(d_rate)),
                "1x",
                "-",
            ]
        )
    ratio = lambda key: f"{a[key]:.0f}x" if key in a else "-"
    lo, hi = wilson(a["jaxqueens"]["solved"], trials)
    wlo, whi = wilson(int((wide.first_solved >= 0).sum()), big_trials)
    lines.append(
        [
            "jaxqueens",
            f"{a['jaxqueens']['solved']}/{trials} [{lo:.2f}, {hi:.2f}]",
            f"{wide.success_rate:.3f} of {big_trials} [{wlo:.2f}, {whi:.2f}]",
            benchlib.fmt_rate(max(jq_rate)),
            benchlib.fmt_rate(statistics.median(jq_rate)),
            ratio("ratio_median"),
            ratio("ratio_cold_call"),
        ]
    )
    table_a = benchlib.table(
        [
            "tool",
            "solved [95% CI]",
            "success, more trials [95% CI]",
            "evals/s best",
            "evals/s med",
            "ratio med",
            "ratio cold",
        ],
        lines,
    )

    # (b) large populations, one subprocess each.
    sizes = (
        [(1_000, 20, 2)]
        if args.quick
        else [(10_000, 20, 50), (10_000, 64, 50), (1_000_000, 20, 5), (1_000_000, 64, 5)]
    )
    deap_pop = sizes[0][0]  # DEAP runs the first size (n = 20) for the ratio
    rows_b = []
    for pop, n, gens in sizes:
        out = subprocess.run(
            [sys.executable, __file__, "--one", str(pop), str(n), str(gens)],
            capture_output=True,
            text=True,
            check=True,
        )
        rows_b.append(json.loads(out.stdout.strip().splitlines()[-1]))
        print(
            f"(b) pop {pop} n {n}: {rows_b[-1]['gens_per_s']:.2f} gens/s",
            file=sys.stderr,
            flush=True,
        )
    deap_big = (
        run_deap(args.baselines, "0-0", pop=deap_pop, ngen=2 if args.quick else 5)
        if have_deap
        else None
    )
    lines_b = []
    for r in rows_b:
        ratio_b = (
            f"{r['evals_per_s'] / deap_big['evals_per_s']:.0f}x"
            if deap_big and (r["pop"], r["n"]) == (deap_pop, 20)
            else "-"
        )
        lines_b.append(
            [
                r["pop"],
                r["n"],
                r["generations"],
                f"{r['gens_per_s']:.3g}",
                benchlib.fmt_rate(r["evals_per_s"]),
                ratio_b,
                f"{r['peak_rss_mib']:.0f}",
                f"{r['compile_s']:.1f}",
                f"{r['init_s']:.1f}",
            ]
        )
    if deap_big:
        lines_b.append(
            [
                f"{deap_pop} (DEAP)",
                20,
                deap_big["ngen"],
                f"{deap_big['ngen'] / deap_big['wall_s']:.3g}",
                benchlib.fmt_rate(deap_big["evals_per_s"]),
                "1x",
                "-",
                "-",
                "-",
            ]
        )
    table_b = benchlib.table(
        ["pop", "n", "gens", "gens/s", "evals/s", "vs DEAP", "peak RSS MiB", "compile s", "init s"],
        lines_b,
    )

    print(
        f"(a) DEAP's N-Queens configuration (n = 20, pop 300, {gens_a} generations), "
        f"{args.reps} reps interleaved;"
        f" DEAP seeds {deap_seeds}, jaxqueens {trials} trials in one call"
    )
    print(table_a)
    print(
        "\n(b) large populations (one trial, generational, PMX + shuffle, DEAP's rates), on "
        f"{jax.default_backend()} x {jax.local_device_count()} device(s)"
    )
    print(table_b)
    rows_c = (  # quick: each run compiles anew, so one preset at a small budget
        budget_rows(ga, [16], 4, budget=1_000, presets=("default",))
        if args.quick
        else budget_rows(ga, [16, 64], 100)
    )
    print("\n(c) the user's defaults (--preset default) and the classic GA at compare's budget")
    print(
        benchlib.table(
            ["n", "encoding", "preset", "pop", "k", "cxpb", "solved", "evals/sol", "ms/sol"],
            [
                [
                    r["n"],
                    r["encoding"],
                    r["preset"],
                    r["pop"],
                    r["tournament"],
                    r["cxpb"],
                    f"{100 * r['success_rate']:.0f}%",
                    "-" if r["evals_per_solution"] is None else f"{r['evals_per_solution']:,.0f}",
                    "-"
                    if r["seconds_per_solution"] is None
                    else f"{1e3 * r['seconds_per_solution']:.3g}",
                ]
                for r in rows_c
            ],
        )
    )
    rows = [{"part": "a", **a}] + [{"part": "b", **r} for r in rows_b]
    rows += [{"part": "c", **r} for r in rows_c]
    if deap_big:
        rows.append({"part": "b-deap", **deap_big, "pop": deap_pop, "n": 20})

    row_d, table_d = sweep_rows(args.reps, args.quick)
    print(
        "\n(d) the kernel, a Params sweep: one vmapped call vs one call per rate "
        f"({row_d['generations']} generations each)"
    )
    print(table_d)
    rows.append({"part": "d", **row_d})
    path = benchlib.write_results(
        "ga" + ("-quick" if args.quick else ""), {"reps": args.reps, "rows": rows}, args.out_dir
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
