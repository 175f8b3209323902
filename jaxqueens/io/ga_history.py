"""`history.csv` of `jaxqueens evolve`: its columns, its per-generation rows, its stream.

By default one row per generation (statistics over the trials, `summary_rows`); with
`--history per-trial` one row per generation and trial, streamed to disk by `HistoryStream`
(the GA driver's `sink`) as the run goes.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from jaxqueens.errors import QueensError
from jaxqueens.io.atomic import Stream, partial_path

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
"""The run's per-generation statistics in order (`EvolveResult.summary`'s columns, the
driver's `SUMMARY`): min, percentiles (linear), max and mean over trials of each trial's best;
mean over trials of the population's mean and worst; evaluations of all trials."""


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
    """`history.csv` columns by default: one row per generation, statistics over the trials
    (`best_*`: of each trial's best; `solved_fraction`: trials with a verified solution by
    that generation; `evaluations`: of all trials in that generation), in the objective's unit
    `u`."""
    return [
        "generation",
        f"best_{u}_min",
        f"best_{u}_p10",
        f"best_{u}_p50",
        f"best_{u}_p90",
        f"best_{u}_max",
        f"best_{u}_mean",
        f"mean_{u}_mean",
        f"worst_{u}_mean",
        "solved_fraction",
        "evaluations",
    ]


def top(n: int) -> int:
    """The pairs of queens on an n x n board, n (n - 1) / 2 (non-attacking = top - attacking)."""
    return n * (n - 1) // 2


def scored(result, score: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The records of a GA result that kept them (`records="all"`) in the `score` of the
    outputs: `(best, avg, worst)` `[G+1, T]` as attacking or as non-attacking pairs."""
    if score == "attacking":
        return result.best, result.avg, result.worst
    t = top(result.config.n)
    return t - result.best, t - result.avg, t - result.worst


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


class HistoryStream:
    """`history.csv` with one row per generation and trial, streamed as the run goes
    (`evolve --history per-trial`): the driver's `sink`.

    The rows go to `.history.csv.partial` (`Stream`) chunk by
    chunk, never held in memory beyond a chunk; each checkpoint records the file's length, so a
    resumed run continues it exactly where its checkpoint stands (rows written after it are cut
    off); `commit` renames it onto `history.csv` at the end (atomic), and an
    interrupted run leaves `history.csv` absent or as it was.
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
