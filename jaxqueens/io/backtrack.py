"""What `jaxqueens solve --method backtrack` writes to `--out`: the files of every `solve` run
(`solutions.npy` [1, n], `runs.csv` with its one row, `summary.json`) and `solution.txt`, the
text board."""

from __future__ import annotations

import types
from pathlib import Path

import numpy as np

from jaxqueens.io import chains as chain_out
from jaxqueens.io import schema
from jaxqueens.io.provenance import Record


def write_outputs(
    out_dir: str | Path, rows: np.ndarray, summary: dict, record: Record | None = None
) -> list[Path]:
    """Write a first solution (int `[n]` `rows`) as a one-chain run into a folder: solved, the
    summary's placements as steps, its seconds as wall share. Returns the files written."""
    out = Path(out_dir)
    run = types.SimpleNamespace(
        chain_id=np.zeros(1, np.int64),
        solved=np.ones(1, bool),
        steps=np.asarray([summary.get("placements", 0)], np.int64),
        restarts=np.zeros(1, np.int64),
        wall_share=np.asarray([summary.get("seconds", 0.0)], np.float64),
        best=np.zeros(1, np.int64),  # a solution: no attacking pair
        solutions=np.asarray(rows, np.int32)[None],
        stopped_by="solutions",
    )
    files = chain_out.write_outputs(run, out, summary, record=record)
    return files + schema.write(out, "solve", {"solution.txt": rows})
