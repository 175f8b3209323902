"""What a chain-solver run writes to ``--out``: ``solutions.npy``, ``runs.csv``, ``summary.json``.

Shared by ``solve``, ``anneal`` and ``stats``; the run is taken duck-typed (a
:class:`~jaxqueens.drivers.chains.ChainRun`: ``chain_id``, ``solved``, ``steps``, ``restarts``,
``wall_share``, ``best``, ``solutions``, ``stopped_by``), since io never imports a driver.
"""

from __future__ import annotations

from pathlib import Path

from jaxqueens.io import boards as boardio
from jaxqueens.io import checkpoint
from jaxqueens.io.tables import write_csv, write_json

RUNS_HEADER = ("chain", "solved", "steps", "restarts", "wall_share_s")


def write_outputs(run, out_dir: str | Path, summary: dict) -> list[Path]:
    """Write ``solutions.npy``, ``runs.csv`` and ``summary.json`` atomically into ``out_dir``
    (and remove a finished run's checkpoint).

    ``runs.csv`` has one row per chain: chain, solved (0/1), steps, restarts, wall_share_s
    (``%.3e``), and best_objective for solvers that report one.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    boardio.write_boards_npy(out / "solutions.npy", run.solutions)
    has_best = run.best is not None
    best = run.best if has_best else [None] * len(run.chain_id)
    rows = (
        [int(c), int(ok), int(st), int(rs), f"{ws:.3e}"] + ([int(b)] if has_best else [])
        for c, ok, st, rs, ws, b in zip(
            run.chain_id, run.solved, run.steps, run.restarts, run.wall_share, best, strict=True
        )
    )
    write_csv(out / "runs.csv", list(RUNS_HEADER) + (["best_objective"] if has_best else []), rows)
    write_json(out / "summary.json", summary)
    if run.stopped_by != "interrupted":
        (out / checkpoint.FILENAME).unlink(missing_ok=True)
    return [out / "solutions.npy", out / "runs.csv", out / "summary.json"]


BEST_BOARDS = "best_boards.npy"
"""The board of every unsolved chain with the fewest attacking pairs, [U, n] int32 (same name as
the anneal command's file)."""
BEST_TABLE = "best_boards.csv"
"""One row per board of :data:`BEST_BOARDS`: chain, attacking_pairs, steps, restarts."""


def write_unsolved(run, out_dir: str | Path) -> list[Path]:
    """Write :data:`BEST_BOARDS` and :data:`BEST_TABLE` atomically for the unsolved chains of
    ``run`` (its ``rows`` hold each unsolved chain's best board and ``best`` its attacking pairs);
    nothing when every chain solved."""
    unsolved = ~run.solved
    if not unsolved.any():
        return []
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    boardio.write_boards_npy(out / BEST_BOARDS, run.rows[unsolved])
    pairs = run.best[unsolved] if run.best is not None else [None] * int(unsolved.sum())
    write_csv(
        out / BEST_TABLE,
        ["chain", "attacking_pairs", "steps", "restarts"],
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
