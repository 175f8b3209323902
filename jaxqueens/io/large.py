"""What ``jaxqueens solve --mode large`` writes to ``--out``: ``solution.npy``, ``solution.txt``
(text board) and ``summary.json``. The figures (``solution.png``, traces) are drawn by
:mod:`jaxqueens.plots`; the result is taken duck-typed (``rows`` [n], ``summary``)."""

from __future__ import annotations

from pathlib import Path

from jaxqueens.io import boards as boardio
from jaxqueens.io.tables import write_json


def write_outputs(res, out_dir: str | Path) -> list[Path]:
    """``solution.npy`` ([1, n]), ``solution.txt`` and ``summary.json`` of a large-n result; an
    unsolved result (``summary["solved"]`` False: the step limit ran out) writes its board with
    the fewest attacking pairs as ``best_board.npy`` and ``best_board.txt`` instead."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = "solution" if res.summary.get("solved", True) else "best_board"
    boardio.write_boards_npy(out / f"{stem}.npy", res.rows[None])
    boardio.write_board(out / f"{stem}.txt", res.rows)
    write_json(out / "summary.json", res.summary)
    return [out / f"{stem}.npy", out / f"{stem}.txt", out / "summary.json"]
