"""What `jaxqueens evolve --out DIR` writes, from a GA run's result.

`history.csv` (per generation, statistics over the trials, or with `--history per-trial` one row
per generation and trial, streamed to disk as the run goes by `HistoryStream`), `runs.csv` (one
row per trial, steps counted in fitness evaluations), `solutions.npy`, the final populations
(`population.npy`, `fitness.npy`) and `summary.json`; under the GA report's fitness also
`score_met.npy`, every distinct board that scored 0. The result is taken duck-typed (an
`EvolveResult` or anything with its fields).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from jaxqueens.errors import QueensError
from jaxqueens.io import schema
from jaxqueens.io.atomic import Stream, partial_path
from jaxqueens.io.boards import write_npy
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

SCORE_MET = "score_met.npy"
"""Report's fitness only: every distinct board that scored 0 (int32 `[M, n]`)."""

HISTORIES = ("summary", "per-trial")
"""What `history.csv` holds (`evolve --history`): per generation, statistics over the trials
(default: its size grows with generations only), or every trial's row per generation (streamed
to disk as the run goes: generations x trials rows)."""

SUMMARY_STATS = (
    "best_min",
    "best_p10",
    "best_p50",
    "best_p90",
    "best_max",
    "best_mean",
    "avg_mean",
    "worst_mean",
    "evaluations",
)
"""The run's per-generation statistics in order (`EvolveResult.summary`'s columns): per
generation, the minimum, 10th/50th/90th percentiles (linear interpolation), maximum and mean over
trials of each trial's best fitness; the mean over trials of the population's mean and of its
worst; the evaluations of all trials in that generation."""


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


def unit(fitness, score: str = "attacking") -> str:
    """The unit an objective column is named by: `attacking_pairs` (`--score nonattacking`:
    `nonattacking_pairs`), `excess_queens` (`--fitness excess`), `diagonal_attacking_pairs`
    (the report's fitness) or `user_fitness` (a function)."""
    if score == "nonattacking":
        return "nonattacking_pairs"
    if callable(fitness):
        return "user_fitness"
    return {"pairs": "attacking_pairs", "excess": "excess_queens"}.get(
        fitness, "diagonal_attacking_pairs"
    )


def per_trial_columns(u: str) -> list[str]:
    """`history.csv` columns with `--history per-trial` (one row per generation and trial,
    in generation order, then trial), in the objective's unit `u`."""
    return ["generation", "trial", f"best_{u}", f"mean_{u}", f"worst_{u}", "evaluations"]


def summary_columns(u: str) -> list[str]:
    """`history.csv` columns by default: one row per generation, `SUMMARY_STATS` in the
    objective's unit `u` (`best_*`: of each trial's best; `mean_*` and `worst_*`: the means over
    trials of the population's), then `solved_fraction` (trials with a verified solution by that
    generation) and `evaluations` (of all trials in that generation)."""
    stats = (k.split("_") for k in SUMMARY_STATS[:-1])
    names = [f"{'mean' if of == 'avg' else of}_{u}_{stat}" for of, stat in stats]
    return ["generation", *names, "solved_fraction", "evaluations"]


def top(n: int) -> int:
    """The pairs of queens on an n x n board, n (n - 1) / 2 (non-attacking = top - attacking)."""
    return n * (n - 1) // 2


def scored_summary(result, score: str) -> dict[str, np.ndarray]:
    """The per-generation statistics in the score of the CSV (non-attacking pairs turn min
    into max and p10 into p90): `{name: [G+1]}` (`SUMMARY_STATS`, names without the unit)."""
    cols = {k: np.asarray(result.summary[:, i]) for i, k in enumerate(SUMMARY_STATS)}
    if score == "attacking":
        return cols
    t = top(result.config.n)
    flip = {"best_min": "best_max", "best_max": "best_min", "best_p10": "best_p90"}
    flip["best_p90"] = "best_p10"
    return {k: cols[k] if k == "evaluations" else t - cols[flip.get(k, k)] for k in SUMMARY_STATS}


def _num(x: float) -> str:
    """A statistic in the CSV: up to 4 decimals, trailing zeros dropped (`12`, `12.5`)."""
    return np.format_float_positional(float(x), precision=4, trim="-")


def summary_rows(result, score: str):
    """The rows of the default `history.csv` (`summary_columns`), one per generation."""
    cols = scored_summary(result, score)
    solved = result.success_curve()
    order = SUMMARY_STATS[:-1]
    for g in range(len(solved)):
        yield (
            [g] + [_num(cols[k][g]) for k in order] + [_num(solved[g]), int(cols["evaluations"][g])]
        )


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
    fs, met = result.first_solved, result.first_score_met
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
        **(
            {  # what the report's score met, and how much of it the checker confirms
                "score_met_trials": int((met >= 0).sum()),
                "first_score_met": met.tolist(),
                "boards_meeting_score": len(result.score_met),
                "solutions_among_them": len(result.solutions),
            }
            if checks_zero(result.config.fitness)
            else {}
        ),
        **(
            {"instance": result.instance.to_dict(), "status": result.status}
            if getattr(result, "instance", None) is not None
            else {}
        ),
    }


def report_line(summ: dict) -> str:
    """The report's fitness of a GA run under it (its `summary`), labelled honestly: "... N
    distinct boards meet the report's score; K of them are solutions ..."."""
    return (
        f"the report's score (diagonal pairs only, rows ignored) reached 0 in "
        f"{summ['score_met_trials']} of {summ['trials']} trials: "
        f"{summ['boards_meeting_score']} distinct boards meet the report's score; "
        f"{summ['solutions_among_them']} of them are solutions (checked by the independent checker)"
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
    at_first = np.asarray(result.evals_at_first)
    to_solution = np.where(solved & (at_first >= 0), at_first, np.nan)
    final = np.asarray(result.final_best, np.int64)
    wall = result.wall_total_s or result.wall_s
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


class HistoryStream:
    """`history.csv` with one row per generation and trial, streamed as the run goes
    (`evolve --history per-trial`): the driver's `sink`.

    The rows go to `.history.csv.partial` (`Stream`) chunk by chunk, never held in memory beyond
    a chunk; each checkpoint records the file's length, so a resumed run continues it exactly
    where its checkpoint stands (rows written after it are cut off); `commit` renames it onto
    `history.csv` at the end (atomic), and an interrupted run leaves `history.csv` absent or as
    it was.
    """

    NAME = "history.csv"

    def __init__(self, out, n: int, fitness: str, score: str = "attacking"):
        self.path = Path(out) / self.NAME
        self.columns = per_trial_columns(unit(fitness, score))
        self.top = top(n) if score == "nonattacking" else None
        self._stream: Stream | None = None

    def start(self) -> None:
        """A new file: its header."""
        self._stream = Stream(self.path)
        self._stream.write(",".join(self.columns) + "\n")

    def resume(self, position: int) -> None:
        """Continue the file of an interrupted run at `position` (its checkpoint's length)."""
        partial = partial_path(self.path)
        if not partial.exists() and self.path.exists():  # committed, but the checkpoint stayed
            os.replace(self.path, partial)  # (stopped before it was removed): go on from it
        try:
            self._stream = Stream(self.path, resume_at=position)
        except FileNotFoundError:
            raise QueensError(
                f"{partial_path(self.path)}: the per-trial history streamed before the "
                f"checkpoint is missing or shorter than the checkpoint's {position:,} bytes; "
                "start over without --resume (or use --history summary)"
            ) from None

    def records(self, gen0: int, best, avg, worst, nevals) -> None:
        """Rows of generations `gen0 ..` (`[k, T]` arrays, the fitness minimised)."""
        assert self._stream is not None, "start() or resume() first"
        k, trials = np.shape(best)
        best, avg, worst = (np.asarray(x) for x in (best, avg, worst))
        if self.top is not None:
            best, avg, worst = self.top - best, self.top - avg, self.top - worst
        gens = np.repeat(np.arange(gen0, gen0 + k), trials).tolist()
        ids = np.tile(np.arange(trials), k).tolist()
        rows = map(
            "{},{},{},{:.4f},{},{}\n".format,
            gens,
            ids,
            best.ravel().tolist(),
            np.asarray(avg, np.float64).ravel().tolist(),
            worst.ravel().tolist(),
            np.asarray(nevals).ravel().tolist(),
        )
        self._stream.write("".join(rows))

    def sync(self) -> int:
        """Bytes durably written (a checkpoint records them)."""
        return self._stream.sync() if self._stream is not None else 0

    def commit(self) -> Path:
        """Rename the whole file onto `history.csv`."""
        assert self._stream is not None
        return self._stream.commit()

    def close(self) -> None:
        """Keep the partial file for `--resume` (an interrupted run)."""
        if self._stream is not None:
            self._stream.close()

    def discard(self) -> None:
        """Remove the partial file (a run that left no checkpoint to resume from)."""
        if self._stream is not None:
            self._stream.discard()
