"""``jaxqueens evolve``: run GA experiments (:func:`jaxqueens.solvers.ga.evolve`) from flags or a TOML config.

A config file (``--config configs/ga_classic_permutation.toml``) holds the keyword arguments of
:func:`jaxqueens.solvers.ga.evolve` (``n``, ``pop``, ``generations``, ``trials``, ``encoding``, ``scheme``,
``crossover``, ``mutation``, ``tournament``, ``cxpb``, ``mutpb``, ``indpb``, ``elite``,
``islands``, ``migrate_every``, ``migrants``, ``fitness``, ``seed``) plus ``out``, ``plot``, ``score`` and a
free-text ``description``. Unknown keys and wrong types are refused with a one-line error naming
the key; command-line flags override config values.

Fitness is the number of attacking pairs (minimised, 0 = solution). ``--score nonattacking``
reports n (n - 1) / 2 minus that instead (maximised, the classic course's fitness: 28 for a
solution at n = 8) in the CSV and figures; the run itself is the same.

Outputs in ``--out DIR``: ``history.csv`` (Trial, Generation, Best, Avg, Worst; generation 0 is
the initial population), ``trials.csv`` (first solved generation per trial, -1 if never),
``solutions.npy`` (every distinct verified solution found), ``population.npy`` ``[T, I, P, n]``
and ``fitness.npy`` ``[T, I, P]`` (final populations), ``summary.json``; with ``--plot``:
``best.png``, ``avg.png``, ``worst.png``, ``success.png``.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np

from jaxqueens.parallel import gather
from jaxqueens.parallel import devices as backend

from jaxqueens.drivers import minconflicts as mcsolve
from jaxqueens.errors import QueensError

INT_KEYS = ("n", "pop", "generations", "trials", "tournament", "elite", "islands", "migrate_every",
            "migrants", "seed")
FLOAT_KEYS = ("cxpb", "mutpb", "indpb")
STR_KEYS = ("encoding", "scheme", "crossover", "mutation", "fitness", "out", "score", "description")
BOOL_KEYS = ("plot",)
SCORES = ("attacking", "nonattacking")


def load_config(path: str | Path) -> dict:
    """Read an experiment file (the ``jaxqueens run`` format with ``command = "evolve"``) and
    return its options; raise QueensError naming a bad key or value."""
    from jaxqueens.cli import run as experiment

    cfg = experiment.load(path)
    if cfg["command"] != "evolve":
        raise QueensError(f"{path}: a config for {cfg['command']!r}, not evolve; run it with "
                          f"'jaxqueens run {path}'")
    data = dict(cfg.get("options", {}))
    if "out" in cfg:
        data.setdefault("out", cfg["out"])
    known = INT_KEYS + FLOAT_KEYS + STR_KEYS + BOOL_KEYS
    for key, value in data.items():
        if key not in known:
            raise QueensError(f"{path}: unknown key {key!r}; known keys: {', '.join(known)}")
        ok = (isinstance(value, int) and not isinstance(value, bool) if key in INT_KEYS else
              isinstance(value, (int, float)) and not isinstance(value, bool) if key in FLOAT_KEYS else
              isinstance(value, str) if key in STR_KEYS else isinstance(value, bool))
        if not ok:
            want = ("an integer" if key in INT_KEYS else "a number" if key in FLOAT_KEYS else
                    "a string" if key in STR_KEYS else "true or false")
            raise QueensError(f"{path}: key {key!r} must be {want}, got {value!r}")
    return data


def add_command(sub) -> None:
    """Register ``jaxqueens evolve``."""
    p = sub.add_parser(
        "evolve", help="genetic algorithms: many trials and islands at once",
        description="Evolve N-Queens populations (permutation or combination encoding, steady-state "
                    "or generational), many independent trials in one call; record Best/Avg/Worst "
                    "attacking pairs per generation and every distinct verified solution.")
    p.add_argument("--config", default=None, metavar="TOML", help="experiment file (flags override it)")
    p.add_argument("-n", type=int, default=None, help="board size (default 8)")
    p.add_argument("--pop", type=int, default=None, help="individuals per island (default 100)")
    p.add_argument("--generations", type=int, default=None, help="generations (default 1000)")
    p.add_argument("--trials", type=int, default=None, help="independent trials (default 1)")
    p.add_argument("--encoding", choices=("permutation", "combination"), default=None)
    p.add_argument("--scheme", choices=("steady", "generational"), default=None)
    p.add_argument("--crossover", default=None,
                   help="permutation: cut (default), pmx, ox1, cycle; combination: one_point (default), uniform")
    p.add_argument("--mutation", default=None,
                   help="permutation: swap (default), inversion, scramble; combination: reset")
    p.add_argument("--tournament", type=int, default=None, help="tournament size (5 steady, 3 generational)")
    p.add_argument("--cxpb", type=float, default=None, help="crossover probability (1 steady, 0.5 generational)")
    p.add_argument("--mutpb", type=float, default=None, help="mutation probability (1 steady, 0.2 generational)")
    p.add_argument("--indpb", type=float, default=None,
                   help="per-gene swap/reset rate as DEAP's indpb; 0 = exactly one gene (default)")
    p.add_argument("--elite", type=int, default=None, help="generational: best parents kept (default 1)")
    p.add_argument("--islands", type=int, default=None, help="islands per trial on a ring (default 1)")
    p.add_argument("--migrate-every", dest="migrate_every", type=int, default=None,
                   help="generations between ring migrations (default 0 = never)")
    p.add_argument("--migrants", type=int, default=None, help="individuals per migration (default 1)")
    p.add_argument("--fitness", choices=("pairs", "excess"), default=None,
                   help="minimise attacking pairs (default) or DEAP's sum of (k - 1) over lines")
    p.add_argument("--seed", type=int, default=None, help="random seed (default 0)")
    p.add_argument("--score", choices=SCORES, default=None,
                   help="CSV/plots: attacking pairs (default, minimised) or non-attacking pairs (maximised)")
    p.add_argument("--out", default=None, metavar="DIR", help="write CSVs, .npy files and summary.json here")
    p.add_argument("--plot", action="store_true", default=None, help="with --out: best/avg/worst/success figures")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    mcsolve.add_checkpoint_args(p)
    p.set_defaults(func=cmd_evolve)


def scored(result, score: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(best, avg, worst) ``[G+1, T]`` as attacking pairs, or as non-attacking pairs."""
    if score == "attacking":
        return result.best, result.avg, result.worst
    top = result.config.n * (result.config.n - 1) // 2
    return top - result.best, top - result.avg, top - result.worst


def _settings(args) -> dict:
    conf = load_config(args.config) if args.config else {}
    for key in INT_KEYS + FLOAT_KEYS + STR_KEYS + BOOL_KEYS:
        value = getattr(args, key, None)
        if value is not None:
            conf[key] = value
    conf.pop("description", None)
    return conf


def cmd_evolve(args) -> int:
    """The ``evolve`` command: run, print the summary, write the outputs."""
    from jaxqueens.solvers import ga

    conf = _settings(args)
    out, plot, score = conf.pop("out", None), conf.pop("plot", False), conf.pop("score", "attacking")
    if score not in SCORES:
        raise QueensError(f"score {score!r} is unknown; use one of {', '.join(SCORES)}")
    if score == "nonattacking" and conf.get("fitness", "pairs") != "pairs":
        raise QueensError("--score nonattacking needs --fitness pairs (it is n(n-1)/2 minus attacking pairs)")
    if plot and not out and not args.resume:
        raise QueensError("--plot needs --out DIR to write the figures into")
    args.out = out
    checkpoint, resume = mcsolve.checkpoint_target(args)
    out = args.out
    result = ga.evolve(**conf, quiet=args.quiet, checkpoint=checkpoint, resume=resume,
                       checkpoint_every=args.checkpoint_every)
    if result.interrupted:
        generations = result.best.shape[0] - 1
        return mcsolve.report_interrupt_message(f"{generations} finished generations", out)
    s = summary(result)
    c = result.config
    print(f"n = {c.n}, {c.encoding} encoding, {c.scheme} GA, pop {c.pop}, {s['generations']} generations: "
          f"{s['solved']} of {s['trials']} trials solved, median first solved generation "
          f"{s['first_solved_median']}, {len(result.solutions)} distinct verified solutions")
    print(f"{s['evaluations']:,} evaluations in {result.wall_s:.3f} s ({s['evals_per_s']:,.0f}/s; "
          f"compile {result.compile_s:.2f} s and init {result.init_s:.2f} s excluded)")
    if out and gather.is_writer():
        written = write_outputs(result, Path(out), s, score)
        (Path(out) / "checkpoint.npz").unlink(missing_ok=True)
        if plot:
            from jaxqueens.plots import ga as ga_plots

            written += ga_plots.write_plots(result, Path(out), score)
        print(f"wrote {', '.join(p.name for p in written)} to {out}")
    return 0 if s["solved"] else 1


def summary(result) -> dict:
    """JSON-ready summary of a run."""
    fs = result.first_solved
    solved = fs[fs >= 0]
    return {
        "config": dict(vars(result.config)), "params": result.params, "seed": result.seed,
        "trials": int(len(fs)), "generations": int(result.best.shape[0] - 1), "solved": int(len(solved)),
        "success_rate": result.success_rate, "first_solved": fs.tolist(),
        "first_solved_median": float(np.median(solved)) if len(solved) else None,
        "distinct_solutions": int(len(result.solutions)), "evaluations": int(result.evaluations.sum()),
        "evaluations_counted_as": "DEAP: initial population + individuals changed by crossover or mutation",
        "wall_s": result.wall_s, "compile_s": result.compile_s, "init_s": result.init_s,
        "evals_per_s": result.evals_per_s,
        "fitness": ("attacking pairs" if result.config.fitness == "pairs" else
                    "sum over lines of (queens - 1)") + ", minimised (0 = solution)",
    }


def write_outputs(result, out: Path, summ: dict, score: str = "attacking") -> list[Path]:
    """Write history.csv, trials.csv, solutions.npy, population.npy, fitness.npy, summary.json."""
    from jaxqueens.io import boards as boardio
    from jaxqueens.io.atomic import atomic_path, write_text

    out.mkdir(parents=True, exist_ok=True)
    best, avg, worst = scored(result, score)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["Trial", "Generation", "Best", "Avg", "Worst"])
    gens = best.shape[0]
    for t in range(best.shape[1]):
        for g in range(gens):
            w.writerow([t, g, int(best[g, t]), f"{avg[g, t]:.4f}", int(worst[g, t])])
    write_text(out / "history.csv", buf.getvalue())
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["Trial", "FirstSolved", "FinalBest", "Evaluations"])
    for t, (fs, b, e) in enumerate(zip(result.first_solved, result.best[-1], result.evaluations.sum(0))):
        w.writerow([t, int(fs), int(b), int(e)])
    write_text(out / "trials.csv", buf.getvalue())
    n = result.config.n
    sols = result.solutions if len(result.solutions) else np.zeros((0, n), np.int32)
    if len(sols):
        boardio.write_boards_npy(out / "solutions.npy", sols)
    else:
        with atomic_path(out / "solutions.npy") as tmp, open(tmp, "wb") as f:
            np.save(f, sols.astype(np.int32))
    for name, arr in (("population.npy", result.population), ("fitness.npy", result.fitness)):
        with atomic_path(out / name) as tmp, open(tmp, "wb") as f:
            np.save(f, arr, allow_pickle=False)
    write_text(out / "summary.json", json.dumps({**summ, "score_in_csv": score}, indent=2) + "\n")
    return [out / f for f in ("history.csv", "trials.csv", "solutions.npy", "population.npy",
                              "fitness.npy", "summary.json")]
