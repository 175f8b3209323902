"""What `jaxqueens solve --mode large` writes to `--out`: the files of every `solve` run
(`write_outputs`: `solutions.npy` [S, n], `runs.csv` one row per
chain, `summary.json`; `best_boards.npy`/`.csv` for chains that ran out of swap attempts)
and `solution.txt`, the first solved chain's text board. The figures (`solution.png`,
traces) are drawn by `jaxqueens._src.plots`; each chain's result is taken duck-typed (`rows`
[n], `summary`)."""

from __future__ import annotations

import types
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from jaxqueens._src.io import boards as boardio
from jaxqueens._src.io import chains as chain_out


def as_run(results: Sequence) -> types.SimpleNamespace:
    """The chains' results as the run `chains` writes.

    Args:
      results: one `LargeResult` per chain, in chain order.

    Returns:
      The run: chain ids, solved, swap attempts as steps, restarts, each chain's seconds (init
      + search + verification) as its wall share, attacking pairs as the best objective, the
      solved boards and every chain's board.
    """

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


def write_outputs(results: Sequence, out_dir: str | Path, summary: dict) -> list[Path]:
    """Write a large-path run and its summary atomically into a folder.

    Args:
      results: one `LargeResult` per chain, in chain order.
      out_dir: the output folder.
      summary: the run's summary (`summary.json`).

    Returns:
      The files written.
    """
    out = Path(out_dir)
    run = as_run(results)
    files = chain_out.write_outputs(run, out, summary)
    files += chain_out.write_unsolved(run, out)
    if len(run.solutions):
        boardio.write_board(out / "solution.txt", run.solutions[0])
        files.append(out / "solution.txt")
    return files
