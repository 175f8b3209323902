"""What `jaxqueens compare` writes to `--out`: one CSV per measure and `summary.json`.

`summary.csv` (one row per solver), `settings.csv`, `runs.csv` (every chain of every solver,
the per-run table of `jaxqueens.io.schema`), the run-time distributions `rtd_steps.csv` /
`rtd_seconds.csv` and their conditional forms `steps_ecdf.csv` / `seconds_ecdf.csv`,
`success.csv`, `solutions.csv`, `bias.csv` and `summary.json` (strict JSON: a figure that does
not exist is null, with its reason beside it). The result is taken duck-typed, since io never
imports a driver.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from jaxqueens.io import schema
from jaxqueens.io.provenance import Record
from jaxqueens.io.tables import SUMMARY

SUMMARY_HEADER = schema.table("compare", "summary.csv")


def _g(x) -> str | None:
    return None if x is None else f"{x:.6g}"


RAW = ("solver", "family", "chains", "solved", "distinct_solutions", "fundamental_classes")


def _cell(s: dict, column: str):
    """One cell of `summary.csv` from a solver's `per_solver` record `s`: counts and names as
    they are, figures in 6 digits (None: empty), `X_low` / `X_high` the ends of the pair `X`."""
    for prefix, key in (("steps_to_solution_", "steps"), ("seconds_to_solution_", "seconds")):
        if column.startswith(prefix):
            return _g(s[key][column.removeprefix(prefix)])
    if column.endswith(("_low", "_high")):
        key, end = column.rsplit("_", 1)
        return _g((s.get(key) or [None, None])[end == "high"])
    if column == "ert_note":
        return s["ert_note"] or ""
    return s[column] if column in (*RAW, "steps_budget") else _g(s[column])


def summary_rows(summary: dict) -> list[list]:
    """The rows of `summary.csv` from `summary.json`'s document: one per solver, in
    `SUMMARY_HEADER` order."""
    return [[_cell(s, column) for column in SUMMARY_HEADER] for s in summary["per_solver"]]


def _bias_rows(summary: dict):
    for s in summary["per_solver"]:
        for test in ("solutions", "classes"):
            t = s[f"chi2_{test}"]
            if t is None:
                yield [s["solver"], test, *[None] * 4, "exact total unknown (n > 27) or no sample"]
            else:
                yield [
                    s["solver"],
                    test,
                    _g(t["statistic"]),
                    t["dof"],
                    _g(t["p_value"]),
                    int(t["valid"]),
                    "" if t["valid"] else "under 5 expected per cell: not meaningful",
                ]


def settings_rows(summary: dict):
    """The `[solver, key, value]` rows of `settings.csv`: every solver's effective settings."""
    for s in summary["per_solver"]:
        for key, value in s["options"].items():
            yield [s["solver"], key, "" if value is None else value]


CURVES = ("rtd_steps", "rtd_seconds", "steps_ecdf", "seconds_ecdf", "success")


def _curve_rows(curves: dict, name: str) -> Iterator[list]:
    """The rows of one curve's CSV: solver, x (steps whole, seconds in 4 digits), y of every
    solver's curve."""
    steps = schema.table("compare", f"{name}.csv")[1].startswith("steps")
    fmt = (lambda v: int(v)) if steps else (lambda v: f"{v:.4e}")
    for solver, c in curves.items():
        for x, y in zip(*c[name], strict=True):
            yield [solver, fmt(x), f"{y:.6f}"]


def _solution_rows(summary: dict) -> Iterator[list]:
    for p in summary["per_solver"]:
        yield [p[key] for key in schema.table("compare", "solutions.csv")]


def write_outputs(res, out_dir: str | Path, record: Record | None = None) -> list[Path]:
    """Write `summary.json` and every table of a compare run (`schema.TABLES["compare"]`, in
    that order) into `out_dir`; `res` is the compare result (duck-typed: `runs`, `curves`,
    `summary`). Returns the paths written, `summary.json` first."""
    s = res.summary
    runs = [
        schema.RunTable(
            solver=r.name,
            solved=r.solved,
            steps_spent=r.steps,
            seconds=r.seconds,
            best_attacking_pairs=getattr(r, "best_pairs", None),
            restarts=getattr(r, "restarts", None),
        )
        for r in res.runs
    ]
    curves = {f"{name}.csv": _curve_rows(res.curves, name) for name in CURVES}
    files = {
        SUMMARY: s,
        "summary.csv": summary_rows(s),
        "settings.csv": settings_rows(s),
        schema.FILENAME: runs,
        **curves,
        "solutions.csv": _solution_rows(s),
        "bias.csv": _bias_rows(s),
    }
    return schema.write(out_dir, "compare", files, record)
