"""What `jaxqueens solve --mode large` writes to `--out`: the files of every `solve` run
(`solutions.npy` [S, n], `runs.csv` one row per chain, `summary.json`; `best_boards.npy`/`.csv`
for chains that ran out of swap attempts) and `solution.txt`, the first solved chain's text
board. Each chain's result is taken duck-typed (`rows` [n], `summary`)."""

from __future__ import annotations

import types
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from jaxqueens.io import chains as chain_out
from jaxqueens.io import schema
from jaxqueens.io.provenance import Record


def as_run(results: Sequence) -> types.SimpleNamespace:
    """The chains' results (one `LargeResult` per chain, in chain order) as the run `chains`
    writes: swap attempts as steps, each chain's seconds (init + search + verification) as its
    wall share, attacking pairs as the best objective, the solved boards and every chain's
    board."""

    def column(key, dtype, default=0):
        return np.asarray([r.summary.get(key, default) for r in results], dtype)

    solved = column("solved", bool, True)
    rows = np.stack([np.asarray(r.rows, np.int32) for r in results])
    return types.SimpleNamespace(
        chain_id=column("chain", np.int64),
        solved=solved,
        steps=column("steps", np.int64),
        restarts=column("restarts", np.int64),
        wall_share=column("total_s", np.float64),
        best=column("pairs", np.int64),
        solutions=rows[solved],
        rows=rows,
        stopped_by="chains",
        solver="large",
    )


def write_outputs(
    results: Sequence, out_dir: str | Path, summary: dict, record: Record | None = None
) -> list[Path]:
    """Write a large-path run (one `LargeResult` per chain, in chain order) and its summary
    into a folder; returns the files written."""
    run = as_run(results)
    files = chain_out.write_outputs(run, out_dir, summary, record=record, best=True)
    first = run.solutions[0] if len(run.solutions) else None
    return files + schema.write(out_dir, "solve", {"solution.txt": first})
