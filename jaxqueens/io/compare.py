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


def _ci(s: dict, key: str) -> list:
    ci = s.get(key) or [None, None]
    return [_g(ci[0]), _g(ci[1])]


def summary_rows(summary: dict) -> list[list]:
    """The rows of `summary.csv` from `summary.json`'s document: one per solver, in
    `SUMMARY_HEADER` order."""
    rows = []
    for s in summary["per_solver"]:
        st, sec = s["steps"], s["seconds"]
        rows.append(
            [
                s["solver"],
                s["family"],
                s["chains"],
                s["solved"],
                _g(s["success_rate"]),
                _g(st["mean"]),
                _g(st["median"]),
                _g(st["p90"]),
                _g(sec["mean"]),
                _g(sec["median"]),
                _g(s["ert_s"]),
                _g(s["solutions_per_s"]),
                s["distinct_solutions"],
                s["fundamental_classes"],
                _g(s["wall_s"]),
                _g(s["compile_s"]),
                s["steps_budget"],
                *_ci(s, "ert_s_ci"),
                _g(s["ert_steps"]),
                *_ci(s, "ert_steps_ci"),
                s["ert_note"] or "",
                *_ci(s, "ert_s_spread"),
            ]
        )
    return rows


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
    keys = ("solver", "solved", "distinct_solutions", "fundamental_classes")
    for p in summary["per_solver"]:
        yield [*(p[k] for k in keys), p["exact_solutions"], p["exact_classes"]]


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
