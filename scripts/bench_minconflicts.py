"""Solutions per second of min-conflicts: jaxqueens vs the serial numba peer, in the same run.

Both tools solve the same number of chains per n from uniformly random permutations (numba's
``--init random``, jaxqueens' ``init="permutation"``) with the same ``max_steps = max(100, 4n)``
per attempt and restarts until solved, so their mean steps per solution must agree (same
algorithm; a z-score is printed). Repetitions alternate between the tools rep by rep, so machine
noise hits both; every rep solves fresh chains (offset rep * chains on both sides). Reported:
best and median chains solved per second, the ratios jaxqueens / numba of bests and of medians,
mean steps, and jaxqueens' compile time apart. Every jaxqueens board is verified with the
independent checker (``jaxqueens.core.checker.are_solutions``) and every numba board with
numba's own ``verify``. Two more rows per n, in the same alternation: jaxqueens at the user's
default restart period (``default``: :func:`jaxqueens.solvers.variants.default_max_steps`, what
``solve`` runs without ``--maxsteps``) and the all-core numba peer (``run_chains_parallel``,
``--parallel``: every core, at its own default ``max(100, 4n)``); ``default / numba par`` is their
ratio of medians. The jaxqueens figure is the kernel (``drivers.minconflicts.compile_runner``,
results copied to the host inside the timing); the user-facing ``jaxqueens.solve`` is also run once
per n at its defaults (``--no-api`` skips it), chunked by its driver and checked as it goes.

The peer is ``../shared/baselines/mc_numba.py`` beside the repository (``--baselines``), and
needs numba: ``pip install -e '.[bench]'``.

Targets (from the issue), on the 2-core CPU: at least 2x numba's solutions/s for n = 8, 32 and
100, at least 1x for n = 1000; the ``target`` column judges the ratio of medians. The ``other
cpu`` column is the CPU time other processes took while a row was measured (share of all cores,
from /proc/stat): on a shared machine it slows jaxqueens, which uses every core, more than serial
numba, so rows with more than a few percent understate the ratio.

Usage: python scripts/bench_minconflicts.py [--reps 5] [--n 8 32 100 1000] [--quick]
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import sys
import time
from pathlib import Path

import jax
import numpy as np

import jaxqueens
from jaxqueens.core import checker
from jaxqueens.drivers import minconflicts as minconflicts_runner
from jaxqueens.solvers import minconflicts, variants

sys.path.insert(0, os.path.dirname(__file__))
import benchlib

jaxqueens.configure()  # before any JAX op: one CPU device per core, XLA:CPU loop flags, cache

DEFAULT_BASELINES = Path(__file__).resolve().parents[2] / "shared" / "baselines"
DEFAULT_CHAINS = {8: 50_000, 32: 20_000, 100: 8_000, 1000: 500}
QUICK_CHAINS = {8: 2_000, 32: 400}
TARGETS = {8: 2.0, 32: 2.0, 100: 2.0, 1000: 1.0}  # min ratio of solutions/s vs serial numba


def load_peer(folder: Path):
    """Import ``mc_numba`` from ``folder``, or exit 2 with what to do."""
    if importlib.util.find_spec("numba") is None:
        print(
            "error: numba is not installed; the serial numba peer needs it: "
            "pip install -e '.[bench]'",
            file=sys.stderr,
        )
        raise SystemExit(2)
    if not (folder / "mc_numba.py").is_file():
        print(
            f"error: no mc_numba.py in {folder}; pass --baselines DIR (the folder of "
            "shared/baselines/mc_numba.py)",
            file=sys.stderr,
        )
        raise SystemExit(2)
    sys.path.insert(0, str(folder))
    import mc_numba

    return mc_numba


def cpu_seconds() -> tuple[float, float]:
    """(CPU seconds busy on the whole machine, CPU seconds of this process).

    Busy is NaN off Linux.
    """
    own = sum(os.times()[:2])
    try:
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        busy = (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf(
            "SC_CLK_TCK"
        )  # minus idle, iowait
    except (OSError, ValueError, IndexError):
        busy = float("nan")
    return busy, own


def steps_z(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample z-score of the difference of means (large |z|: not the same algorithm)."""
    se = (
        math.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
        if min(a.size, b.size) > 1
        else 0.0
    )
    return float((a.mean() - b.mean()) / se) if se > 0 else 0.0


def bench_n(M, n: int, chains: int, reps: int, api: bool, seed: int) -> dict:
    """Measure one board size; raise SystemExit(1) on an unsolved or invalid board."""
    max_steps = max(100, 4 * n)
    config = minconflicts.Config(n=n, init="permutation")
    params = minconflicts.default_params(config, max_steps=max_steps)
    key = jax.random.key(seed)
    t_start, (busy0, own0) = time.perf_counter(), cpu_seconds()

    # numba: JIT or cache load on two throwaway chains
    S = M.State(n)
    nb_state = (S.q, S.rowc, S.rowx, S.dA, S.dAx, S.dB, S.dBx, S.cand, S.incand)
    nb_steps = np.zeros((reps, chains), np.int64)
    nb_restarts = np.zeros((reps, chains), np.int64)
    nb_ok = np.zeros((reps, chains), np.bool_)
    w_steps, w_rest, w_ok = np.zeros(2, np.int64), np.zeros(2, np.int64), np.zeros(2, np.bool_)
    numba_jit_s = benchlib.timeit(
        lambda: M.run_chains(
            n, 10**9, 2, False, 0, 100, max_steps, *nb_state, w_steps, w_rest, w_ok
        )
    )

    # jaxqueens: compile for `chains` chains, then one untimed warm-up run (chains past the reps')
    t0 = time.perf_counter()
    run = minconflicts_runner.compile_runner(key, config, params, chains)
    compile_s = time.perf_counter() - t0
    first_run_s = benchlib.timeit(lambda: jax.device_get(run(reps * chains, chains)))

    jx_out: list = []
    rep = {"jax": 0, "numba": 0}

    def jax_rep():
        r = rep["jax"]
        jx_out.append(jax.device_get(run(r * chains, chains)))  # results in host memory
        rep["jax"] += 1

    def numba_rep():
        r = rep["numba"]
        M.run_chains(
            n,
            seed * 10**9 + r * chains,
            chains,
            False,
            0,
            100,
            max_steps,
            *nb_state,
            nb_steps[r],
            nb_restarts[r],
            nb_ok[r],
        )
        rep["numba"] += 1

    # the user's default period, and the all-core numba peer at its own default
    default_steps = variants.default_max_steps(n)
    config_d = minconflicts.Config(n=n, init="permutation")
    params_d = minconflicts.default_params(config_d, max_steps=default_steps)
    run_d = minconflicts_runner.compile_runner(key, config_d, params_d, chains)
    jax.device_get(run_d(reps * chains, chains))  # warm-up
    d_out: list = []
    par_steps = np.zeros((reps, chains), np.int64)
    par_restarts = np.zeros((reps, chains), np.int64)
    par_ok = np.zeros((reps, chains), np.bool_)
    threads = M.numba.get_num_threads()
    M.run_chains_parallel(n, 10**9, 2, False, 0, 100, max_steps, threads, *(w_steps, w_rest, w_ok))
    rep.update(default=0, numba_par=0)

    def default_rep():
        d_out.append(jax.device_get(run_d(rep["default"] * chains, chains)))
        rep["default"] += 1

    def numba_par_rep():
        r = rep["numba_par"]
        M.run_chains_parallel(
            n,
            seed * 10**9 + r * chains,
            chains,
            False,
            0,
            100,
            max_steps,
            threads,
            par_steps[r],
            par_restarts[r],
            par_ok[r],
        )
        rep["numba_par"] += 1

    times = benchlib.interleaved(
        {"jax": jax_rep, "numba": numba_rep, "default": default_rep, "numba_par": numba_par_rep},
        reps,
    )

    # verification (outside the timings)
    jx_rows = np.concatenate([np.asarray(o.rows) for o in jx_out])
    jx_solved = np.concatenate([np.asarray(o.solved) for o in jx_out])
    jx_steps = np.concatenate([np.asarray(o.steps) for o in jx_out]).astype(np.int64)
    jx_restarts = np.concatenate([np.asarray(o.restarts) for o in jx_out]).astype(np.int64)
    jx_verified = int(checker.are_solutions(jx_rows).sum())
    nb_verified = int(nb_ok.sum())
    d_rows = np.concatenate([np.asarray(o.rows) for o in d_out])
    d_steps = np.concatenate([np.asarray(o.steps) for o in d_out]).astype(np.int64)
    d_verified = int(
        (
            checker.are_solutions(d_rows) & np.concatenate([np.asarray(o.solved) for o in d_out])
        ).sum()
    )
    par_verified = int(par_ok.sum())
    total = reps * chains
    if not (
        jx_solved.all()
        and jx_verified == total
        and nb_verified == total
        and d_verified == total
        and par_verified == total
    ):
        raise SystemExit(
            f"n={n}: jaxqueens solved {int(jx_solved.sum())}/{total}, verified "
            f"{jx_verified}/{total}; default verified {d_verified}/{total}; numba verified "
            f"{nb_verified}/{total}, all-core {par_verified}/{total}"
        )

    stats = {k: benchlib.summary(v) for k, v in times.items()}
    rate = {k: {q: chains / s for q, s in v.items()} for k, v in stats.items()}
    ratio_best = rate["jax"]["best"] / rate["numba"]["best"]
    ratio_med = rate["jax"]["median"] / rate["numba"]["median"]
    z = steps_z(jx_steps, nb_steps.ravel())
    devices = jax.local_device_count()
    record = {
        "n": n,
        "chains": chains,
        "reps": reps,
        "max_steps": max_steps,
        "init": "permutation",
        "seconds": stats,
        "solutions_per_s": rate,
        "ratio_best": ratio_best,
        "ratio_median": ratio_med,
        "target_ratio": TARGETS.get(n),
        "meets_target_median": ratio_med >= TARGETS[n] if n in TARGETS else None,
        "meets_target_best": ratio_best >= TARGETS[n] if n in TARGETS else None,
        "mean_steps": {"jax": float(jx_steps.mean()), "numba": float(nb_steps.mean())},
        "mean_restarts": {"jax": float(jx_restarts.mean()), "numba": float(nb_restarts.mean())},
        "steps_z": z,
        "us_per_step": {  # per core: jaxqueens' wall is shared by `devices` devices
            "jax_per_device": 1e6
            * stats["jax"]["median"]
            * devices
            * reps
            / max(1, jx_steps.sum()),
            "numba": 1e6 * stats["numba"]["median"] * reps / max(1, nb_steps.sum()),
        },
        "verified": {
            "jax": jx_verified,
            "numba": nb_verified,
            "default": d_verified,
            "numba_parallel": par_verified,
            "of": total,
        },
        "default_max_steps": default_steps,
        "numba_threads": threads,
        "default_vs_numba_parallel_median": rate["default"]["median"] / rate["numba_par"]["median"],
        "default_vs_numba_parallel_best": rate["default"]["best"] / rate["numba_par"]["best"],
        "default_vs_fixed_median": rate["default"]["median"] / rate["jax"]["median"],
        "mean_steps_default": float(d_steps.mean()),
        "mean_steps_numba_parallel": float(par_steps.mean()),
        "compile_s": compile_s,
        "first_run_s": first_run_s,
        "numba_jit_or_cache_s": numba_jit_s,
    }
    busy1, own1 = cpu_seconds()
    # CPU time other processes took while this n was measured, as a share of all cores: a few
    # percent is a quiet machine; more slows jaxqueens (all cores) more than numba (one core).
    wall_cores = (time.perf_counter() - t_start) * (os.cpu_count() or 1)
    other = max(0.0, (busy1 - busy0) - (own1 - own0)) / wall_cores
    record["other_cpu_share"] = None if math.isnan(busy1 - busy0) else other
    if api:  # the user's call: solve at its defaults (restart period included)
        res = jaxqueens.solve(n, chains=chains, init="permutation", seed=seed + 1)
        s = res.summary
        record["api"] = {
            "solutions_per_s": s["solutions_per_s"],
            "wall_s": s["wall_s"],
            "compile_s": s["compile_s"],
            "chunk": s.get("chunk"),
            "solved": s["solved"],
            "mean_steps": s["steps"]["mean"],
            "max_steps": s["max_steps"],
            "ratio_vs_numba_median": s["solutions_per_s"] / rate["numba"]["median"],
            "ratio_vs_numba_parallel_median": s["solutions_per_s"] / rate["numba_par"]["median"],
        }
    return record


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--n", type=int, nargs="+", default=None, help="board sizes (default 8 32 100 1000)"
    )
    ap.add_argument(
        "--chains", type=int, default=0, help="chains per rep, every n (0: per-n default)"
    )
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, n = 8 and 32 (a smoke test)")
    ap.add_argument("--no-api", action="store_true", help="skip the jaxqueens.solve run per n")
    ap.add_argument(
        "--baselines",
        type=Path,
        default=DEFAULT_BASELINES,
        help=f"folder of mc_numba.py (default {DEFAULT_BASELINES})",
    )
    ap.add_argument(
        "--out-dir", default=None, help="where the JSON goes (default benchmarks/results)"
    )
    args = ap.parse_args(argv)
    if args.reps < 1:
        ap.error("--reps must be at least 1")

    M = load_peer(args.baselines)
    table_chains = QUICK_CHAINS if args.quick else DEFAULT_CHAINS
    sizes = args.n or list(table_chains)
    print(
        f"backend {jax.default_backend()}, {jax.local_device_count()} device(s), "
        f"{os.cpu_count()} cores; numba peer {args.baselines / 'mc_numba.py'}",
        file=sys.stderr,
    )

    records, lines = [], []
    for n in sizes:
        chains = args.chains or table_chains.get(n) or max(200, 2_000_000 // (n * n))
        r = bench_n(M, n, chains, args.reps, not args.no_api, args.seed)
        records.append(r)
        rate = r["solutions_per_s"]
        target = r["target_ratio"]
        lines.append(
            [
                n,
                chains,
                benchlib.fmt_rate(rate["jax"]["best"]),
                benchlib.fmt_rate(rate["jax"]["median"]),
                benchlib.fmt_rate(rate["numba"]["best"]),
                benchlib.fmt_rate(rate["numba"]["median"]),
                f"{r['ratio_best']:.2f}x",
                f"{r['ratio_median']:.2f}x",
                f"{r['mean_steps']['jax']:.1f}",
                f"{r['mean_steps']['numba']:.1f}",
                f"{r['steps_z']:+.1f}",
                r["default_max_steps"],
                benchlib.fmt_rate(rate["default"]["median"]),
                benchlib.fmt_rate(rate["numba_par"]["median"]),
                f"{r['default_vs_numba_parallel_median']:.2f}x",
                benchlib.fmt_rate(r["api"]["solutions_per_s"]) if "api" in r else "-",
                f"{r['compile_s']:.2f}",
                "-" if r["other_cpu_share"] is None else f"{100 * r['other_cpu_share']:.0f}%",
                "-"
                if target is None
                else f"{target:g}x {'ok' if r['meets_target_median'] else 'MISS'}",
            ]
        )
        print(
            f"done n={n} ({r['verified']['jax']} + {r['verified']['numba']} boards verified)",
            file=sys.stderr,
            flush=True,
        )
        if abs(r["steps_z"]) > 4:
            print(
                f"warning: n={n}: mean steps differ (z = {r['steps_z']:+.1f}); "
                "the two tools may not run the same algorithm",
                file=sys.stderr,
            )

    print(
        f"min-conflicts solutions per second, best / median of {args.reps} reps "
        f"({jax.default_backend()}, {jax.local_device_count()} devices; numba serial); "
        "ratio = jaxqueens / numba"
    )
    print(
        benchlib.table(
            [
                "n",
                "chains",
                "jax best",
                "jax med",
                "numba best",
                "numba med",
                "ratio best",
                "ratio med",
                "steps jax",
                "steps numba",
                "z",
                "default T",
                "default med",
                "numba par med",
                "default/par",
                "api sol/s",
                "compile s",
                "other cpu",
                "target",
            ],
            lines,
        )
    )
    payload = {
        "benchmark": "min-conflicts solutions/s vs serial numba (shared/baselines/mc_numba.py)",
        "reps": args.reps,
        "seed": args.seed,
        "quick": args.quick,
        "backend": jax.default_backend(),
        "device_count": jax.local_device_count(),
        "numba_version": __import__("numba").__version__,
        "targets": {str(k): v for k, v in TARGETS.items()},
        "rows": records,
    }
    name = "minconflicts" + ("-quick" if args.quick else "")
    path = benchlib.write_results(name, payload, args.out_dir)
    if any((r["other_cpu_share"] or 0) > 0.1 for r in records):
        print(
            "note: other processes took over 10% of the CPU during some rows ('other cpu'); "
            "they slow jaxqueens (every core) more than serial numba: rerun on a quiet machine"
        )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
