"""What `jaxqueens compare` writes to `--out`: one CSV per measure and `summary.json`.

`summary.csv` (one row per solver), `settings.csv`, `runs.csv` (every chain of every solver,
the per-run table of `jaxqueens._src.io.schema`), the run-time distributions `rtd_steps.csv` /
`rtd_seconds.csv` and their conditional forms `steps_ecdf.csv` / `seconds_ecdf.csv`,
`success.csv`, `solutions.csv`, `bias.csv` and `summary.json` (strict JSON: a figure that does
not exist is null, with its reason beside it). The result is taken duck-typed, since io never
imports a driver.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from jaxqueens._src.io import schema
from jaxqueens._src.io.tables import write_csv, write_json

SUMMARY_HEADER = schema.table("compare", "summary.csv")


def _g(x) -> str | None:
    return None if x is None else f"{x:.6g}"


def _ci(s: dict, key: str) -> list:
    ci = s.get(key) or [None, None]
    return [_g(ci[0]), _g(ci[1])]


def summary_rows(summary: dict) -> list[list]:
    """The rows of `summary.csv`, in `SUMMARY_HEADER` order.

    Args:
      summary: `summary.json`'s document.

    Returns:
      One row per solver.
    """
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
                yield [
                    s["solver"],
                    test,
                    None,
                    None,
                    None,
                    None,
                    "exact total unknown (n > 27) or no sample",
                ]
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
    """The rows of `settings.csv`: every solver's effective settings.

    Args:
      summary: `summary.json`'s document.

    Returns:
      `[solver, key, value]` rows.
    """
    for s in summary["per_solver"]:
        for key, value in s["options"].items():
            yield [s["solver"], key, "" if value is None else value]


def _curve_rows(curves: dict, name: str, columns: tuple) -> Iterator[list]:
    """The rows of one curve's CSV (`rtd_steps`, ...): solver, x, y of every solver's curve."""
    fmt = (lambda v: int(v)) if columns[1].startswith("steps") else (lambda v: f"{v:.4e}")
    for solver, c in curves.items():
        for x, y in zip(*c[name], strict=True):
            yield [solver, fmt(x), f"{y:.6f}"]


def _success_rows(curves: dict) -> Iterator[list]:
    for solver, c in curves.items():
        for b, r in zip(*c["success"], strict=True):
            yield [solver, int(b), f"{r:.6f}"]


def _solution_rows(summary: dict) -> Iterator[list]:
    keys = ("solver", "solved", "distinct_solutions", "fundamental_classes")
    for p in summary["per_solver"]:
        yield [*(p[k] for k in keys), p["exact_solutions"], p["exact_classes"]]


def write_outputs(res, out_dir: str | Path) -> list[Path]:
    """Write every table and `summary.json` of a compare run into `out_dir`.

    The tables, in this order: `summary.csv` (one row per solver), `settings.csv`, `runs.csv`
    (every chain of every solver), the run-time distributions `rtd_steps.csv`,
    `rtd_seconds.csv`, `steps_ecdf.csv`, `seconds_ecdf.csv`, then `success.csv`,
    `solutions.csv` and `bias.csv`; their columns are `jaxqueens._src.io.schema`'s compare tables
    (the docs' outputs page says what each column means).

    Args:
      res: the compare result (duck-typed: `runs`, `curves`, `summary`).
      out_dir: the output folder.

    Returns:
      The paths written, `summary.json` first.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    s = res.summary
    write_json(out / "summary.json", s)  # strict JSON, with the run record
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
    files = [
        out / "summary.json",
        write_csv(out / "summary.csv", SUMMARY_HEADER, summary_rows(s)),
        write_csv(out / "settings.csv", schema.table("compare", "settings.csv"), settings_rows(s)),
        schema.write_runs(out / schema.FILENAME, runs),
    ]
    tables: dict[str, Iterable[list]] = {}
    for name in ("rtd_steps", "rtd_seconds", "steps_ecdf", "seconds_ecdf"):
        tables[name] = _curve_rows(res.curves, name, schema.table("compare", f"{name}.csv"))
    tables.update(
        success=_success_rows(res.curves), solutions=_solution_rows(s), bias=_bias_rows(s)
    )
    for name, rows in tables.items():
        files.append(write_csv(out / f"{name}.csv", schema.table("compare", f"{name}.csv"), rows))
    return files
