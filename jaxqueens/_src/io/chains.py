"""What a chain-solver run writes to `--out`: `solutions.npy`, `runs.csv`, `summary.json`.

Shared by `solve`, `anneal` and `stats`; the run is taken duck-typed (a
`ChainRun`: `chain_id`, `solved`, `steps` (spent),
`restarts`, `wall_share`, `best`, `solutions`, `stopped_by`, and where it has them
`solver`, `best_unit`, `best_step`, `unfinished`), since io never imports a driver.
`runs.csv` is the per-run table of `schema`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxqueens._src.io import boards as boardio
from jaxqueens._src.io import checkpoint, schema, writing
from jaxqueens._src.io.tables import write_csv, write_json

BEST_COLUMNS = {
    "nmof_attacks": "best_nmof_attacks",
    "pairs_plus_stranded": "best_pairs_plus_stranded",
}
"""The runs.csv column of a run's best objective by its unit (attacking pairs go to the core
column `best_attacking_pairs`)."""


def run_table(run, solver: str | None = None, pairs: np.ndarray | None = None) -> schema.RunTable:
    """The per-run table of a chain run.

    Args:
      run: the finished run (`ChainRun`).
      solver: the solver column (default `run.solver`).
      pairs: [U] the attacking pairs of the unsolved chains' best boards where the run's
        objective is another unit (annealing's replayed best boards); None: those cells stay
        empty.

    Returns:
      The `RunTable`, one row per chain.
    """
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


def write_outputs(
    run, out_dir: str | Path, summary: dict, table: schema.RunTable | None = None
) -> list[Path]:
    """Write `solutions.npy`, `runs.csv` and `summary.json` atomically into `out_dir` (and
    remove a finished run's checkpoint).

    Args:
      run: the finished run (`ChainRun`).
      out_dir: the output folder.
      summary: the run's summary.
      table: `runs.csv`'s rows (default `run_table` of `run`, its solver named by
        `summary["solver"]` when the run has no name).

    Returns:
      The files written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    boardio.write_boards_npy(out / "solutions.npy", run.solutions)
    if table is None:
        name = getattr(run, "solver", "") or summary.get("solver") or summary.get("method", "")
        table = run_table(run, solver=str(name))
    schema.write_runs(out / schema.FILENAME, table)
    write_json(out / "summary.json", summary)
    if run.stopped_by != "interrupted":  # once the report is written too
        writing.retire(out / checkpoint.FILENAME)
    return [out / "solutions.npy", out / schema.FILENAME, out / "summary.json"]


BEST_BOARDS = "best_boards.npy"
"""The board of every unsolved chain with the fewest attacking pairs, [U, n] int32 (same name as
the anneal command's file)."""
BEST_TABLE = "best_boards.csv"
"""One row per board of `BEST_BOARDS`: run, best_attacking_pairs, steps_spent, restarts."""


def write_unsolved(run, out_dir: str | Path) -> list[Path]:
    """Write `BEST_BOARDS` and `BEST_TABLE` atomically for the unsolved chains of a run.

    Args:
      run: the finished run; its `rows` hold each unsolved chain's best board and `best` its
        attacking pairs.
      out_dir: the output folder.

    Returns:
      The files written (none when every chain solved).
    """
    unsolved = ~run.solved
    if not unsolved.any():
        return []
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    boardio.write_boards_npy(out / BEST_BOARDS, run.rows[unsolved])
    pairs = run.best[unsolved] if run.best is not None else [None] * int(unsolved.sum())
    write_csv(
        out / BEST_TABLE,
        ["run", "best_attacking_pairs", "steps_spent", "restarts"],
        (
            [int(c), None if p is None else int(p), int(s), int(r)]
            for c, p, s, r in zip(
                run.chain_id[unsolved],
                pairs,
                run.steps[unsolved],
                run.restarts[unsolved],
                strict=True,
            )
        ),
    )
    return [out / BEST_BOARDS, out / BEST_TABLE]
