"""What `jaxqueens solve --method backtrack` writes to `--out`: the files of every `solve`
run (`write_outputs`: `solutions.npy` [1, n], `runs.csv` with its
one row, `summary.json`: n, method, rows, placements, backtracks, seconds) and
`solution.txt`, the text board."""

from __future__ import annotations

import types
from pathlib import Path

import numpy as np

from jaxqueens._src.io import boards as boardio
from jaxqueens._src.io import chains as chain_out


def write_outputs(out_dir: str | Path, rows: np.ndarray, summary: dict) -> list[Path]:
    """Write a first solution as a one-chain run into a folder: solved, its placements as steps,
    its seconds as wall share.

    Args:
      out_dir: the output folder.
      rows: int `[n]` the solution.
      summary: the run's summary (`summary.json`).

    Returns:
      The files written.
    """
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
    files = chain_out.write_outputs(run, out, summary)
    boardio.write_board(out / "solution.txt", rows)
    return [*files, out / "solution.txt"]
