"""What `jaxqueens evolve --out DIR` writes, from a GA run's result.

`history.csv` (per generation, statistics over the trials, or with `--history per-trial` one
row per generation and trial: `ga_history`), `runs.csv` (one row per trial, steps counted in
fitness evaluations), `solutions.npy`, the final populations (`population.npy`, `fitness.npy`)
and `summary.json`; under the GA report's fitness also `score_met.npy`, every distinct board
that scored 0. The result is taken duck-typed (an `EvolveResult` or anything with its fields).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxqueens.io import schema
from jaxqueens.io.boards import write_npy
from jaxqueens.io.ga_history import HistoryStream, summary_columns, summary_rows, unit
from jaxqueens.io.provenance import Record
from jaxqueens.io.tables import SUMMARY
from jaxqueens.solvers.variants import solver_name

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
"""The GA report's score (`report_diagonals_only`)."""

FITNESS_NAMES = {
    "pairs": "attacking pairs, minimised (0 = solution)",
    "excess": "sum over lines of (queens - 1), minimised (0 = solution)",
    REPORT_FITNESS: "the GA report's score: attacking pairs on diagonals only, rows ignored, "
    "minimised (0 is NOT always a solution: every such board is checked)",
}
"""Every GA fitness by name (the choices of `evolve --fitness`), with what it means."""


def operator_name(op) -> str:
    """How the outputs name a GA operator (fitness, selection, crossover, mutation): a
    built-in's name (or None) as it is, a user's function as `user:module.function`."""
    if isinstance(op, str) or op is None:
        return str(op)
    where = getattr(op, "__module__", None) or "?"
    return f"user:{where}.{getattr(op, '__qualname__', type(op).__name__)}"


def fitness_meaning(fitness) -> str:
    """What a fitness (a name of `FITNESS_NAMES` or a user's function) means; a user's
    function: its name, and that its 0s are checked."""
    if isinstance(fitness, str):
        return FITNESS_NAMES[fitness]
    return (
        f"a user's function, {operator_name(fitness)}, minimised (0 is not always a solution: "
        "every board scoring 0 is checked)"
    )


def checks_zero(fitness) -> bool:
    """Whether a board that scores 0 under `fitness` need not be a solution, so that the driver
    checks every such board (`EvolveResult.score_met` holds them all, `solutions` the
    confirmed ones): true for the GA report's score and a user's function (`pairs` and
    `excess` are 0 exactly for solutions)."""
    return callable(fitness) or fitness == REPORT_FITNESS


SCORE_MET = "score_met.npy"
"""Report's fitness only: every distinct board that scored 0 (int32 `[M, n]`)."""


def out_bytes(
    n: int, pop: int, trials: int, islands: int, generations: int, history: str = "summary"
) -> int:
    """Roughly the bytes `--out` receives at its peak: the final populations (.npy) and the
    checkpoint with its temporary copy, the history (streamed per trial: one row per trial and
    generation), and the small tables; `pop` individuals per island, `history` one of
    `HISTORIES`."""
    gene = 1 if n <= 127 else 2
    population = trials * islands * (pop * (gene * n + 4) + 4) + 64 * trials
    statistics = (generations + 1) * 200
    rows = (generations + 1) * trials * 36 if history == "per-trial" else statistics
    return 3 * population + 2 * statistics + rows + 40 * trials


def summary(result) -> dict:
    """A GA result's `summary.json` document."""
    fs = result.first_solved
    solved = fs[fs >= 0]
    return {
        "config": {
            k: operator_name(v) if callable(v) else v for k, v in vars(result.config).items()
        },
        "params": result.params,
        "seed": result.seed,
        "trials": len(fs),
        "generations": int(result.generations),
        "solved": len(solved),
        "success_rate": result.success_rate,
        "first_solved": fs.tolist(),
        "first_solved_median": float(np.median(solved)) if len(solved) else None,
        "distinct_solutions": len(result.solutions),
        "evaluations": result.evaluations_total,
        "evaluations_counted_as": (
            "DEAP: initial population + individuals changed by crossover or mutation"
        ),
        "wall_s": result.wall_s,
        "compile_s": result.compile_s,
        "init_s": result.init_s,
        "evaluations_this_process": int(result.evals_here),
        "evals_per_s": result.evals_per_s,
        "evals_per_s_counts": "evaluations of the generations run in this process over wall_s",
        "sessions": int(result.sessions),
        "wall_total_s": result.wall_total_s,
        "evals_per_s_all_sessions": result.evals_per_s_total,
        "fitness": fitness_meaning(result.config.fitness),
        **(_report_counts(result) if checks_zero(result.config.fitness) else {}),
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
    """The report's fitness of a GA result under it, labelled honestly: "... N distinct boards
    meet the report's score; K of them are solutions ..."."""
    c = _report_counts(result)
    return (
        f"the report's score (diagonal pairs only, rows ignored) reached 0 in "
        f"{c['score_met_trials']} of {len(result.first_score_met)} trials: "
        f"{c['boards_meeting_score']} distinct boards meet the report's score; "
        f"{c['solutions_among_them']} of them are solutions (checked by the independent checker)"
    )


def run_table(result) -> schema.RunTable:
    """The per-run table of a GA run (`schema`): one row per trial; steps are
    fitness evaluations (DEAP's count, over every session of a resumed run), to the end of the
    first generation with a verified solution for `steps_to_solution`; a trial's seconds are
    its share of the run's generation and initialisation time by evaluations; attacking pairs of
    the last generation's best under fitness pairs, 0 where solved (other fitnesses: that best
    in `best_fitness`)."""
    first = np.asarray(result.first_solved)
    solved = first >= 0
    spent = np.asarray(result.evals_total, np.int64)
    at_first = getattr(result, "evals_at_first", None)
    to_solution = (
        None
        if at_first is None
        else np.where(solved & (np.asarray(at_first) >= 0), at_first, np.nan)
    )
    final = np.asarray(result.final_best, np.int64)
    wall = getattr(result, "wall_total_s", 0.0) or result.wall_s
    seconds = (wall + result.init_s) * spent / max(1, int(spent.sum()))
    extras: dict = {
        "generations_spent": np.full(len(first), int(result.generations)),
        "first_solved_generation": np.where(solved, first, np.nan),
    }
    if checks_zero(result.config.fitness):
        met = np.asarray(result.first_score_met)
        extras["first_score_met_generation"] = np.where(met >= 0, met, np.nan)
    pairs = result.config.fitness == "pairs"
    if not pairs:
        extras["best_fitness"] = final
    return schema.RunTable(
        solver=solver_name("ga", encoding=result.config.encoding),
        solved=solved,
        steps_spent=spent,
        steps_to_solution=to_solution,
        seconds=seconds,
        best_attacking_pairs=np.where(solved, 0, final) if pairs else np.where(solved, 0.0, np.nan),
        extras=extras,
    )


def write_outputs(
    result,
    out: Path,
    summ: dict,
    score: str = "attacking",
    history: str = "summary",
    stream: HistoryStream | None = None,
    record: Record | None = None,
) -> list[Path]:
    """Write `FILES` (and under a fitness whose 0s are checked, `SCORE_MET`) of a GA result
    into `out`; `summ` is `summary(result)`, `score` the objective's name in the columns
    (`unit`). `history` "summary" writes the per-generation statistics (`summary_rows`);
    "per-trial" commits `stream`, the rows streamed during the run, last (ValueError without
    it). Returns the paths written."""
    if history == "per-trial" and stream is None:
        raise ValueError("history='per-trial' needs the HistoryStream the run wrote to")
    out = Path(out)
    n = result.config.n
    write_npy(out / "population.npy", result.population)
    write_npy(out / "fitness.npy", result.fitness)
    report = checks_zero(result.config.fitness)
    columns = summary_columns(unit(result.config.fitness, score))
    files = {
        "history.csv": (columns, summary_rows(result, score)) if history != "per-trial" else None,
        schema.FILENAME: run_table(result),
        "solutions.npy": np.asarray(result.solutions, np.int32).reshape(-1, n),
        SCORE_MET: np.asarray(result.score_met, np.int32).reshape(-1, n) if report else None,
        SUMMARY: {**summ, "score_in_csv": score, "history": history},
    }
    schema.write(out, "evolve", files, record)
    if stream is not None:  # last: until here a resume finds the streamed rows where it left them
        stream.commit()
    return [out / f for f in FILES] + ([out / SCORE_MET] if report else [])
