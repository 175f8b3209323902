"""What ``jaxqueens compare`` writes to ``--out``: one CSV per measure and ``summary.json``.

- ``summary.csv``: one row per solver (its step budget, success rate, step and second quantiles
  of the solved chains, ERT = expected seconds per solution and expected steps per solution with
  their bootstrap CIs, solutions per second, distinct solutions and fundamental classes, kernel
  and compile seconds; ``ert_s_spread_low``/``_high``: the lowest and highest ERT over the timed
  repeats, empty with one; a solver that solved nothing has empty ERT cells and ``ert_note``
  "not solved ...");
- ``settings.csv``: every solver's effective settings, defaults filled in (solver, key, value);
- ``runs.csv``: every chain of every solver, the per-run table of :mod:`jaxqueens.io.schema`
  (a run's steps and seconds are those until its first solution, or the budget: each solver is
  timed as if it stopped there; its seconds are the mean over the timed repeats; ``restarts``
  for min-conflicts; ``best_attacking_pairs`` 0 where solved, the best board's where the solver
  keeps it within the budget, else empty);
- ``rtd_steps.csv`` / ``rtd_seconds.csv``: the run-time distributions (Hoos & Stuetzle): the
  success rate (fraction of ALL chains solved) within a budget, censored at the step budget
  (solver, steps_budget or seconds_budget, success_rate);
- ``steps_ecdf.csv`` / ``seconds_ecdf.csv``: the run-time distributions conditional on success
  (empirical CDF over the solved chains: solver, steps_to_solution or seconds_to_solution,
  fraction_of_solved);
- ``success.csv``: success rate against the step budget (solver, steps_budget, success_rate; the
  unconditional RTD in steps on a log grid);
- ``solutions.csv``: distinct solutions and fundamental classes found, with the exact totals;
- ``bias.csv``: the sampling-bias chi-square tests (over solutions and over classes);
- ``summary.json``: the settings, every solver's figures and the recommendation, strict JSON
  (no Infinity or NaN: a figure that does not exist is null, with its reason beside it).

The result is taken duck-typed (a :class:`~jaxqueens.drivers.compare.CompareResult`: ``runs``
with ``name``, ``solved``, ``steps``, ``seconds``, ``restarts`` and ``best_pairs``; ``curves``;
``summary``), since io never
imports a driver. The figures are drawn by :mod:`jaxqueens.plots.compare`.
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
    """The rows of ``summary.csv`` (in :data:`SUMMARY_HEADER` order) from ``summary.json``'s doc."""
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
    """The rows of ``settings.csv``: every solver's effective settings (solver, key, value)."""
    for s in summary["per_solver"]:
        for key, value in s["options"].items():
            yield [s["solver"], key, "" if value is None else value]


def write_outputs(res, out_dir: str | Path) -> list[Path]:
    """Write every table and ``summary.json`` of a compare run into ``out_dir``; the paths."""
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
