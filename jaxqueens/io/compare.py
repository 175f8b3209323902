"""What ``jaxqueens compare`` writes to ``--out``: one CSV per measure and ``summary.json``.

- ``summary.csv``: one row per solver (success rate, step and second quantiles of the solved
  chains, ERT = expected seconds per solution, solutions per second, distinct solutions and
  fundamental classes, kernel and compile seconds);
- ``runs.csv``: every chain of every solver, the per-run table of :mod:`jaxqueens.io.schema`
  (a run's steps and seconds are those until its first solution, or the budget: each solver is
  timed as if it stopped there; restarts and attacking pairs are not recorded here);
- ``steps_ecdf.csv`` / ``seconds_ecdf.csv``: the run-time distributions (empirical CDF over the
  solved chains: solver, x, fraction);
- ``success.csv``: success rate against the step budget (solver, step_budget, success_rate);
- ``solutions.csv``: distinct solutions and fundamental classes found, with the exact totals;
- ``bias.csv``: the sampling-bias chi-square tests (over solutions and over classes);
- ``summary.json``: the settings, every solver's figures and the recommendation.

The result is taken duck-typed (a :class:`~jaxqueens.drivers.compare.CompareResult`: ``runs``
with ``name``, ``solved``, ``steps``, ``seconds``; ``curves``; ``summary``), since io never
imports a driver. The figures are drawn by :mod:`jaxqueens.plots.compare`.
"""

from __future__ import annotations

from pathlib import Path

from jaxqueens.io import schema
from jaxqueens.io.tables import write_csv, write_json

SUMMARY_HEADER = (
    "solver",
    "family",
    "chains",
    "solved",
    "success_rate",
    "steps_mean",
    "steps_median",
    "steps_p90",
    "seconds_mean",
    "seconds_median",
    "ert_s",
    "solutions_per_s",
    "distinct_solutions",
    "fundamental_classes",
    "wall_s",
    "compile_s",
)


def _g(x) -> str | None:
    return None if x is None else f"{x:.6g}"


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


def write_outputs(res, out_dir: str | Path) -> list[Path]:
    """Write every table and ``summary.json`` of a compare run into ``out_dir``; the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    s = res.summary
    files = [
        write_json(out / "summary.json", s),
        write_csv(out / "summary.csv", SUMMARY_HEADER, summary_rows(s)),
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
                    best_attacking_pairs=None,
                )
                for r in res.runs
            ],
        )
    )
    for name, unit in (("steps_ecdf", "steps"), ("seconds_ecdf", "seconds")):
        fmt = (lambda v: int(v)) if unit == "steps" else (lambda v: f"{v:.4e}")
        files.append(
            write_csv(
                out / f"{name}.csv",
                ["solver", unit, "fraction_of_solved"],
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
            ["solver", "step_budget", "success_rate"],
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
            [
                "solver",
                "solved",
                "distinct_solutions",
                "fundamental_classes",
                "exact_solutions",
                "exact_classes",
            ],
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
            ["solver", "test", "chi2", "dof", "p_value", "valid", "note"],
            _bias_rows(s),
        )
    )
    return files
