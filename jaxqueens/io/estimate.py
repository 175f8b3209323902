"""What `jaxqueens estimate` writes to `--out`: `summary.json` and `estimates.csv`.

Both come from the run's summary document (`run_summary`: method, seed, Simkin's alpha, backend
and one row per size, `Estimate.as_dict`), so io needs no driver type.
"""

from __future__ import annotations

from pathlib import Path

from jaxqueens.io import schema
from jaxqueens.io.provenance import Record
from jaxqueens.io.tables import SUMMARY

CSV_KEYS = schema.table("estimate", "estimates.csv")
"""The columns of `estimates.csv` (keys of each size's row, `exact` as `exact_solutions`;
missing values are empty cells)."""


def write_outputs(out_dir: str | Path, summary: dict, record: Record | None = None) -> list[Path]:
    """Write `summary.json` (`summary` as it is, `drivers.estimate.run_summary`) and
    `estimates.csv` (one row per entry of `summary["estimates"]`); returns the paths written."""
    rows = ({**row, "exact_solutions": row.get("exact")} for row in summary["estimates"])
    table = ([row.get(k) for k in CSV_KEYS] for row in rows)
    return schema.write(out_dir, "estimate", {SUMMARY: summary, "estimates.csv": table}, record)
