"""What a chain-solver run writes to `--out`: `solutions.npy`, `runs.csv`, `summary.json`, and
the best boards of its unsolved chains.

Shared by `solve`, `anneal` and `stats`; the run is taken duck-typed (a `ChainRun`: `chain_id`,
`solved`, `steps` (spent), `restarts`, `wall_share`, `best`, `solutions`, `stopped_by`, and
where it has them `solver`, `best_unit`, `best_step`, `unfinished`), since io never imports a
driver.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from jaxqueens.io import checkpoint, schema, writing
from jaxqueens.io.provenance import Record
from jaxqueens.io.tables import SUMMARY

BEST_COLUMNS = {
    "nmof_attacks": "best_nmof_attacks",
    "pairs_plus_stranded": "best_pairs_plus_stranded",
}
"""The runs.csv column of a run's best objective by its unit (attacking pairs go to the core
column `best_attacking_pairs`)."""


def run_table(run, solver: str | None = None, pairs: np.ndarray | None = None) -> schema.RunTable:
    """The per-run table of a finished `ChainRun`, one row per chain; `solver` defaults to
    `run.solver`. Where the run's objective is another unit, `pairs` ([U]) are the attacking
    pairs of the unsolved chains' best boards (annealing's replayed best boards; None: those
    cells stay empty)."""
    solver = solver if solver is not None else getattr(run, "solver", "") or ""
    unit = getattr(run, "best_unit", "attacking_pairs")
    extras: dict[str, np.ndarray | None] = {}
    best_pairs = None
    if run.best is not None and unit == "attacking_pairs":
        best_pairs = run.best
    elif run.best is not None:
        extras[BEST_COLUMNS[unit]] = run.best
        column = np.where(run.solved, 0.0, np.nan)
        if pairs is not None:
            column[~run.solved] = pairs
        best_pairs = column
    if getattr(run, "best_step", None) is not None:
        extras["best_step"] = run.best_step
    unfinished = getattr(run, "unfinished", None)
    if unfinished is not None and unfinished.any():
        extras["unfinished"] = unfinished.astype(np.int64)
    restarts = None if solver.startswith("annealing") else run.restarts  # annealing never restarts
    return schema.RunTable(
        solver=solver,
        run=run.chain_id,
        solved=run.solved,
        steps_spent=run.steps,
        seconds=run.wall_share,
        best_attacking_pairs=best_pairs,
        restarts=restarts,
        extras=extras,
    )


BEST_BOARDS = "best_boards.npy"
"""The best board of every unsolved chain, [U, n] int32 (`solve` and `anneal`)."""
BEST_TABLE = "best_boards.csv"
"""One row per board of `BEST_BOARDS`: its run and how good it is (`schema.TABLES`)."""


def write_best(
    folder: str | Path, command: str, boards: np.ndarray, columns: dict[str, Any]
) -> list[Path]:
    """Write `BEST_BOARDS` ([U, n] `boards`) and `BEST_TABLE` (`columns`: name -> [U] whole
    numbers, None an empty cell) into `folder`; returns the two files."""
    rows = (
        [None if v is None else int(v) for v in row] for row in zip(*columns.values(), strict=True)
    )
    return schema.write(folder, command, {BEST_BOARDS: boards, BEST_TABLE: (list(columns), rows)})


def write_outputs(
    run,
    out_dir: str | Path,
    summary: dict,
    table: schema.RunTable | None = None,
    record: Record | None = None,
    best: bool = False,
) -> list[Path]:
    """Write `solutions.npy`, `runs.csv` and `summary.json` (with the run's `record`) into
    `out_dir`; a run that was not interrupted has its checkpoint removed once the command's
    report is written too. With `best`, also the best boards of its unsolved chains
    (`write_best`; none when every chain solved): its `rows` hold each chain's best board, `best`
    its attacking pairs.

    `table` defaults to `run_table` of `run`, its solver named by `summary["solver"]` (or
    `["method"]`) when the run has no name. Returns the files written.
    """
    if table is None:
        name = getattr(run, "solver", "") or summary.get("solver") or summary.get("method", "")
        table = run_table(run, solver=str(name))
    files = {"solutions.npy": run.solutions, schema.FILENAME: table, SUMMARY: summary}
    written = schema.write(out_dir, "solve", files, record)
    if run.stopped_by != "interrupted":
        writing.retire(Path(out_dir) / checkpoint.FILENAME)
    unsolved = ~run.solved
    if not best or not unsolved.any():
        return written
    pairs = run.best[unsolved] if run.best is not None else [None] * int(unsolved.sum())
    columns = {
        "run": run.chain_id[unsolved],
        "best_attacking_pairs": pairs,
        "steps_spent": run.steps[unsolved],
        "restarts": run.restarts[unsolved],
    }
    return written + write_best(out_dir, "solve", run.rows[unsolved], columns)
