"""What ``jaxqueens evolve --out DIR`` writes, from a GA run's result.

Files: ``history.csv`` (Trial, Generation, Best, Avg, Worst; generation 0 is the initial
population), ``runs.csv`` (one row per trial: the per-run table of :mod:`jaxqueens.io.schema`,
steps counted in fitness evaluations; :func:`run_table`), ``solutions.npy`` (every distinct
verified solution, int32 ``[S, n]``),
``population.npy`` ``[T, I, P, n]`` and ``fitness.npy`` ``[T, I, P]`` (final populations) and
``summary.json`` (:func:`summary` plus ``score_in_csv``). Under the GA report's fitness
(``report-diagonals-only``) ``runs.csv`` gains first_score_met_generation (first generation whose
best scored 0) beside first_solved_generation (first generation with a checker-confirmed
solution), and
``score_met.npy`` holds every distinct board that scored 0, solution or not.

The result is taken duck-typed (an :class:`jaxqueens.drivers.ga.EvolveResult` or anything with
its fields): io does not import the drivers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxqueens.io import boards as boardio
from jaxqueens.io import schema
from jaxqueens.io.atomic import atomic_path
from jaxqueens.io.tables import write_csv, write_json

SCORES = ("attacking", "nonattacking")
"""How the CSV and figures report fitness: attacking pairs (minimised) or non-attacking pairs
(n (n - 1) / 2 minus that, maximised: the classic course's 28 for a solution at n = 8)."""

FILES = (
    "history.csv",
    "runs.csv",
    "solutions.npy",
    "population.npy",
    "fitness.npy",
    "summary.json",
)

REPORT_FITNESS = "report-diagonals-only"
"""The GA report's score (:func:`jaxqueens.solvers.ga_fitness.report_diagonals_only`)."""

FITNESS_NAMES = {
    "pairs": "attacking pairs, minimised (0 = solution)",
    "excess": "sum over lines of (queens - 1), minimised (0 = solution)",
    REPORT_FITNESS: "the GA report's score: attacking pairs on diagonals only, rows ignored, "
    "minimised (0 is NOT always a solution: every such board is checked)",
}
"""Every GA fitness by name (the choices of ``evolve --fitness``), with what it means."""

SCORE_MET = "score_met.npy"
"""Report's fitness only: every distinct board that scored 0 (int32 ``[M, n]``)."""


def scored(result, score: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(best, avg, worst) ``[G+1, T]`` as attacking pairs, or as non-attacking pairs."""
    if score == "attacking":
        return result.best, result.avg, result.worst
    top = result.config.n * (result.config.n - 1) // 2
    return top - result.best, top - result.avg, top - result.worst


def summary(result) -> dict:
    """JSON-ready summary of a run."""
    fs = result.first_solved
    solved = fs[fs >= 0]
    return {
        "config": dict(vars(result.config)),
        "params": result.params,
        "seed": result.seed,
        "trials": len(fs),
        "generations": int(result.best.shape[0] - 1),
        "solved": len(solved),
        "success_rate": result.success_rate,
        "first_solved": fs.tolist(),
        "first_solved_median": float(np.median(solved)) if len(solved) else None,
        "distinct_solutions": len(result.solutions),
        "evaluations": int(result.evaluations.sum()),
        "evaluations_counted_as": (
            "DEAP: initial population + individuals changed by crossover or mutation"
        ),
        "wall_s": result.wall_s,
        "compile_s": result.compile_s,
        "init_s": result.init_s,
        "evals_per_s": result.evals_per_s,
        "fitness": FITNESS_NAMES[result.config.fitness],
        **(_report_counts(result) if result.config.fitness == REPORT_FITNESS else {}),
        **(
            {"instance": result.instance.to_dict(), "status": result.status}
            if getattr(result, "instance", None) is not None
            else {}
        ),
    }


def _report_counts(result) -> dict:
    """What the report's score met, and how much of it is solved (checked by the checker)."""
    met = result.first_score_met
    return {
        "score_met_trials": int((met >= 0).sum()),
        "first_score_met": met.tolist(),
        "boards_meeting_score": len(result.score_met),
        "solutions_among_them": len(result.solutions),
    }


def report_line(result) -> str:
    """The report's fitness, labelled honestly: "N boards meet the report's score; K of them
    are solutions"."""
    c = _report_counts(result)
    return (
        f"the report's score (diagonal pairs only, rows ignored) reached 0 in "
        f"{c['score_met_trials']} of {len(result.first_score_met)} trials: "
        f"{c['boards_meeting_score']} distinct boards meet the report's score; "
        f"{c['solutions_among_them']} of them are solutions (checked by the independent checker)"
    )


def _save_npy(path: Path, arr: np.ndarray, **kwargs) -> None:
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        np.save(f, arr, **kwargs)


def run_table(result) -> schema.RunTable:
    """The per-run table of a GA run (:mod:`jaxqueens.io.schema`): one row per trial; steps are
    fitness evaluations (DEAP's count), to the end of the first generation with a verified
    solution for ``steps_to_solution``; a trial's seconds are its share of the run's time by
    evaluations; attacking pairs of the best board of any generation under fitness pairs (else that
    best in ``best_fitness``, and 0 attacking pairs where solved)."""
    first = np.asarray(result.first_solved)
    solved = first >= 0
    evals = np.asarray(result.evaluations, np.int64)  # [G+1, T]
    spent = evals.sum(0)
    cum = evals.cumsum(0)
    trials = np.arange(len(first))
    to_solution = np.where(solved, cum[np.maximum(first, 0), trials], -1)
    final = np.asarray(result.best).min(axis=0)  # the best over every generation
    seconds = (result.wall_s + result.init_s) * spent / max(1, int(spent.sum()))
    extras: dict = {
        "generations_spent": np.full(len(first), evals.shape[0] - 1),
        "first_solved_generation": np.where(solved, first, np.nan),
    }
    if result.config.fitness == REPORT_FITNESS:
        met = np.asarray(result.first_score_met)
        extras["first_score_met_generation"] = np.where(met >= 0, met, np.nan)
    pairs = result.config.fitness == "pairs"
    if not pairs:
        extras["best_fitness"] = final
    return schema.RunTable(
        solver="ga",
        solved=solved,
        steps_spent=spent,
        steps_to_solution=np.where(solved, to_solution.astype(np.float64), np.nan),
        seconds=seconds,
        best_attacking_pairs=final if pairs else np.where(solved, 0.0, np.nan),
        extras=extras,
    )


def write_outputs(result, out: Path, summ: dict, score: str = "attacking") -> list[Path]:
    """Write :data:`FILES` into ``out``; ``summ`` is :func:`summary` of the run."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    best, avg, worst = scored(result, score)
    gens, trials = best.shape
    write_csv(
        out / "history.csv",
        ["Trial", "Generation", "Best", "Avg", "Worst"],
        (
            [t, g, int(best[g, t]), f"{avg[g, t]:.4f}", int(worst[g, t])]
            for t in range(trials)
            for g in range(gens)
        ),
    )
    report = result.config.fitness == REPORT_FITNESS
    schema.write_runs(out / schema.FILENAME, run_table(result))
    sols = result.solutions
    if len(sols):
        boardio.write_boards_npy(out / "solutions.npy", sols)
    else:
        _save_npy(out / "solutions.npy", np.zeros((0, result.config.n), np.int32))
    _save_npy(out / "population.npy", result.population, allow_pickle=False)
    _save_npy(out / "fitness.npy", result.fitness, allow_pickle=False)
    if report:
        met = result.score_met
        _save_npy(out / SCORE_MET, np.asarray(met, np.int32).reshape(-1, result.config.n))
    write_json(out / "summary.json", {**summ, "score_in_csv": score})
    return [out / f for f in FILES] + ([out / SCORE_MET] if report else [])
