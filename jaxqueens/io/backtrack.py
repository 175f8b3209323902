"""What ``jaxqueens solve --method backtrack`` writes to ``--out``: ``solution.txt`` (text board)
and ``summary.json`` (n, method, rows, placements, backtracks, seconds)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxqueens.io import boards as boardio
from jaxqueens.io.tables import write_json


def write_outputs(out_dir: str | Path, rows: np.ndarray, summary: dict) -> list[Path]:
    """The first solution ``rows`` [n] and its ``summary`` into ``out_dir``."""
    out = Path(out_dir)
    boardio.write_board(out / "solution.txt", rows)
    write_json(out / "summary.json", summary)
    return [out / "solution.txt", out / "summary.json"]
