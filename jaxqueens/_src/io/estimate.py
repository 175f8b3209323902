"""What `jaxqueens estimate` writes to `--out`: `summary.json` and `estimates.csv`.

Both come from the run's summary document (`run_summary`: method,
seed, Simkin's alpha, backend and one row per size, `Estimate.as_dict`), so io needs no
driver type. The figure `log_q_over_n.png` is drawn by `estimate`.
"""

from __future__ import annotations

from pathlib import Path

from jaxqueens._src.io import schema
from jaxqueens._src.io.tables import write_dict_csv, write_json

CSV_KEYS = schema.table("estimate", "estimates.csv")
"""The columns of `estimates.csv` (keys of each size's row, `exact` as `exact_solutions`;
missing values are empty cells)."""


def write_outputs(out_dir: str | Path, summary: dict) -> list[Path]:
    """Write `summary.json` (`summary` as it is) and `estimates.csv` (one row per entry of
    `summary["estimates"]`) atomically.

    Args:
      out_dir: the output folder.
      summary: the run's summary (`jaxqueens._src.drivers.estimate.run_summary`).

    Returns:
      The paths written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return [
        write_json(out / "summary.json", summary),
        write_dict_csv(
            out / "estimates.csv",
            [{**row, "exact_solutions": row.get("exact")} for row in summary["estimates"]],
            CSV_KEYS,
        ),
    ]
