"""What `jaxqueens compare` writes to `--out`: one CSV per measure and `summary.json`.

`summary.csv` (one row per solver), `settings.csv`, `runs.csv` (every chain of every solver,
the per-run table of `jaxqueens.io.schema`), the run-time distributions `rtd_steps.csv` /
`rtd_seconds.csv` and their conditional forms `steps_ecdf.csv` / `seconds_ecdf.csv`,
`success.csv`, `solutions.csv`, `bias.csv` and `summary.json` (strict JSON: a figure that does
not exist is null, with its reason beside it). `write_outputs` lists the columns. The result is
taken duck-typed, since io never imports a driver.
"""

from __future__ import annotations

from pathlib import Path

from jaxqueens.io import schema
from jaxqueens.io.tables import write_csv, write_json

SUMMARY_HEADER = schema.table("compare", "summary.csv")


def _g(x) -> str | None:
    return None if x is None else f"{x:.6g}"


def _ci(s: dict, key: str) -> list:
    ci = s.get(key) or [None, None]
    return [_g(ci[0]), _g(ci[1])]


def summary_rows(summary: dict) -> list[list]:
    """The rows of `summary.csv` (in `SUMMARY_HEADER` order) from `summary.json`'s doc."""
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
    """The rows of `settings.csv`: every solver's effective settings (solver, key, value)."""
    for s in summary["per_solver"]:
        for key, value in s["options"].items():
            yield [s["solver"], key, "" if value is None else value]


def write_outputs(res, out_dir: str | Path) -> list[Path]:
    """Write every table and `summary.json` of a compare run into `out_dir`.

    The files: `summary.csv`, one row per solver (its step budget, success rate, step and
    second quantiles of the solved chains, ERT and expected steps per solution with their
    bootstrap CIs, solutions per second, distinct solutions and fundamental classes, kernel and
    compile seconds; `ert_s_spread_low`/`_high`: the lowest and highest ERT over the timed
    repeats; a solver that solved nothing has empty ERT cells and an `ert_note`);
    `settings.csv`, every solver's effective settings (solver, key, value); `runs.csv`, every
    chain of every solver (steps and seconds until its first solution, or the budget);
    `rtd_steps.csv` / `rtd_seconds.csv`, the success rate within a budget, censored at the step
    budget; `steps_ecdf.csv` / `seconds_ecdf.csv`, the run times of the solved chains;
    `success.csv`, the success rate against the step budget on a log grid; `solutions.csv`,
    distinct solutions and classes with the exact totals; `bias.csv`, the sampling-bias tests;
    and `summary.json`.

    Args:
      res: the compare result (duck-typed: `runs`, `curves`, `summary`).
      out_dir: the output folder.

    Returns:
      The paths written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    s = res.summary
    write_json(out / "summary.json", s)  # strict JSON, with the run record
    files = [
        out / "summary.json",
        write_csv(out / "summary.csv", SUMMARY_HEADER, summary_rows(s)),
        write_csv(out / "settings.csv", schema.table("compare", "settings.csv"), settings_rows(s)),
    ]
    files.append(
        schema.write_runs(
            out / schema.FILENAME,
            [
                schema.RunTable(
                    solver=r.name,
                    solved=r.solved,
                    steps_spent=r.steps,
                    seconds=r.seconds,
                    best_attacking_pairs=getattr(r, "best_pairs", None),
                    restarts=getattr(r, "restarts", None),
                )
                for r in res.runs
            ],
        )
    )
    for name in ("rtd_steps", "rtd_seconds", "steps_ecdf", "seconds_ecdf"):
        columns = schema.table("compare", f"{name}.csv")
        fmt = (lambda v: int(v)) if columns[1].startswith("steps") else (lambda v: f"{v:.4e}")
        files.append(
            write_csv(
                out / f"{name}.csv",
                columns,
                (
                    [solver, fmt(x), f"{y:.6f}"]
                    for solver, c in res.curves.items()
                    for x, y in zip(*c[name], strict=True)
                ),
            )
        )
    files.append(
        write_csv(
            out / "success.csv",
            schema.table("compare", "success.csv"),
            (
                [solver, int(b), f"{r:.6f}"]
                for solver, c in res.curves.items()
                for b, r in zip(*c["success"], strict=True)
            ),
        )
    )
    files.append(
        write_csv(
            out / "solutions.csv",
            schema.table("compare", "solutions.csv"),
            (
                [
                    p["solver"],
                    p["solved"],
                    p["distinct_solutions"],
                    p["fundamental_classes"],
                    p["exact_solutions"],
                    p["exact_classes"],
                ]
                for p in s["per_solver"]
            ),
        )
    )
    files.append(
        write_csv(
            out / "bias.csv",
            schema.table("compare", "bias.csv"),
            _bias_rows(s),
        )
    )
    return files
