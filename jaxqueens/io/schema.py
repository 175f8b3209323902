"""Every table the commands write, defined once: the per-run table (`runs.csv`) of `solve`,
`anneal`, `stats`, `compare` and `evolve` and the other tables of each command (`TABLES`), their
column names' meanings in `jaxqueens.io.schema_terms`; and `write`, the one writer of a
command's `--out` files.

Every command that runs many independent runs (chains or GA trials) writes them one row per run
with the same columns in the same order: the `CORE` columns, then the per-solver extras it has
(`EXTRAS`, in their order); a cell a solver has no value for is empty. The docs' outputs page is
built from these (`runs_markdown`, `tables_markdown`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from jaxqueens.io import boards as boardio
from jaxqueens.io.provenance import Record
from jaxqueens.io.schema_terms import CORE_COLUMNS, EXTRAS, TERMS, Column
from jaxqueens.io.tables import SUMMARY, write_csv, write_json

COLUMNS: dict[str, Column] = {c.name: c for c in CORE_COLUMNS + EXTRAS}
CORE: tuple[str, ...] = tuple(c.name for c in CORE_COLUMNS)
FILENAME = "runs.csv"


def header(extras: Iterable[str] = ()) -> list[str]:
    """The header of a runs table: `CORE`, then the `extras` in their documented order
    (ValueError for an undocumented name: a bug)."""
    extras = set(extras)
    unknown = sorted(extras - {c.name for c in EXTRAS})
    if unknown:
        raise ValueError(f"undocumented runs.csv column(s) {unknown}: add them to io/schema.py")
    return [*CORE, *(c.name for c in EXTRAS if c.name in extras)]


def check_header(names: Sequence[str]) -> None:
    """Raise ValueError, naming both, unless a header is a documented one (`header`'s form)."""
    names = list(names)
    if names[: len(CORE)] != list(CORE) or names != header(names[len(CORE) :]):
        raise ValueError(f"runs.csv header {names} is not the documented one {header()} + extras")


@dataclasses.dataclass(frozen=True)
class RunTable:
    """The runs of one solver, as columns."""

    solver: str  #: the solver's name.
    solved: np.ndarray  #: bool `[R]`.
    steps_spent: np.ndarray | None  #: `[R]` steps per run (None: every cell empty, as below).
    seconds: np.ndarray | None  #: `[R]` seconds per run.
    best_attacking_pairs: np.ndarray | None  #: `[R]` the best objective per run.
    restarts: np.ndarray | None = None  #: `[R]` restarts per run.
    #: `[R]`; defaults to `steps_spent` where solved (solvers that stop when solved).
    steps_to_solution: np.ndarray | None = None
    run: np.ndarray | None = None  #: `[R]` run ids; defaults to 0..R-1.
    #: documented extra columns -> `[R]` arrays (NaN or a None entry: an empty cell).
    extras: Mapping[str, np.ndarray | None] = dataclasses.field(default_factory=dict)

    def columns(self) -> dict[str, list]:
        """Every column of this table by name, as `[R]` lists of Python values (None: an empty
        cell)."""
        count = len(self.solved)
        solved = np.asarray(self.solved, bool)
        to_solution = self.steps_to_solution
        if to_solution is None and self.steps_spent is not None:
            to_solution = np.where(solved, np.asarray(self.steps_spent, np.float64), np.nan)
        cols: dict[str, list] = {
            "solver": [self.solver] * count,
            "run": _cells(np.arange(count) if self.run is None else self.run, count),
            "solved": [int(v) for v in solved],
            "steps_spent": _cells(self.steps_spent, count),
            "steps_to_solution": _cells(to_solution, count),
            "restarts": _cells(self.restarts, count),
            "seconds": _cells(self.seconds, count, seconds=True),
            "best_attacking_pairs": _cells(self.best_attacking_pairs, count),
        }
        for name, values in self.extras.items():
            cols[name] = _cells(values, count)
        return cols


def _cells(values, count: int, seconds: bool = False) -> list:
    """A column's cells: whole numbers, or seconds in 4 significant digits; None where empty."""
    if values is None:
        return [None] * count
    out: list
    if seconds:
        out = [None if v != v else f"{v:.3e}" for v in np.asarray(values, np.float64).tolist()]
    else:
        listed = values if isinstance(values, list) else np.asarray(values, object).tolist()
        out = [None if v is None or (isinstance(v, float) and v != v) else int(v) for v in listed]
    if len(out) != count:
        raise ValueError(f"a runs.csv column has {len(out)} values for {count} runs")
    return out


def rows(tables: Sequence[RunTable]) -> tuple[list[str], list[list]]:
    """Several runs tables as one `(header, rows)`: every table's runs in order, with the
    extras any of them has."""
    names = header({k for t in tables for k in t.extras})
    out: list[list] = []
    for t in tables:
        cols = t.columns()
        count = len(t.solved)
        out.extend([cols[k][i] if k in cols else None for k in names] for i in range(count))
    return names, out


def write_runs(path: str | Path, tables: RunTable | Sequence[RunTable]) -> Path:
    """Write `runs.csv` atomically from one solver's table or several; returns `path`."""
    names, body = rows([tables] if isinstance(tables, RunTable) else tables)
    check_header(names)
    return write_csv(path, names, body)


ANY = None
"""A table whose columns its writer derives from the run (`history.csv`: one set of columns
per fitness unit, `ga`)."""

TABLES: dict[str, dict[str, tuple[str, ...] | None]] = {
    "solve": {
        FILENAME: CORE,
        "best_boards.csv": ("run", "best_attacking_pairs", "steps_spent", "restarts"),
    },
    "anneal": {
        FILENAME: CORE,
        "best_boards.csv": (
            "run",
            "best_attacking_pairs",
            "best_nmof_attacks",
            "best_pairs_plus_stranded",
            "best_step",
        ),
    },
    "evolve": {FILENAME: CORE, "history.csv": ANY},
    "stats": {
        FILENAME: CORE,
        "frequencies.csv": ("solution", "count", "canonical", "class_size"),
        "classes.csv": ("canonical", "class_size", "count"),
        "coverage.csv": (
            "chains",
            "solved",
            "distinct_solutions",
            "fundamental_classes",
            "expected_distinct_solutions_uniform",
            "expected_fundamental_classes_uniform",
        ),
        "success.csv": ("solver", "steps_budget", "generations_budget", "success_rate"),
    },
    "compare": {
        FILENAME: CORE,
        "summary.csv": (
            "solver",
            "family",
            "chains",
            "solved",
            "success_rate",
            "steps_to_solution_mean",
            "steps_to_solution_median",
            "steps_to_solution_p90",
            "seconds_to_solution_mean",
            "seconds_to_solution_median",
            "ert_s",
            "solutions_per_s",
            "distinct_solutions",
            "fundamental_classes",
            "wall_s",
            "compile_s",
            "steps_budget",
            "ert_s_ci_low",
            "ert_s_ci_high",
            "ert_steps",
            "ert_steps_ci_low",
            "ert_steps_ci_high",
            "ert_note",
            "ert_s_spread_low",
            "ert_s_spread_high",
        ),
        "settings.csv": ("solver", "key", "value"),
        "rtd_steps.csv": ("solver", "steps_budget", "success_rate"),
        "rtd_seconds.csv": ("solver", "seconds_budget", "success_rate"),
        "steps_ecdf.csv": ("solver", "steps_to_solution", "fraction_of_solved"),
        "seconds_ecdf.csv": ("solver", "seconds_to_solution", "fraction_of_solved"),
        "success.csv": ("solver", "steps_budget", "success_rate"),
        "solutions.csv": (
            "solver",
            "solved",
            "distinct_solutions",
            "fundamental_classes",
            "exact_solutions",
            "exact_classes",
        ),
        "bias.csv": ("solver", "test", "chi2", "dof", "p_value", "valid", "note"),
    },
    "estimate": {
        "estimates.csv": (
            "n",
            "solutions",
            "solutions_se",
            "ci_low",
            "ci_high",
            "exact_solutions",
            "rel_error",
            "nodes",
            "nodes_se",
            "probes",
            "depth",
            "strata",
            "hit_rate",
            "probes_per_s",
        )
    },
    "complete": {
        "results.csv": ("file", "d", "n", "status", "solutions", "nodes", "seconds", "reason")
    },
}
"""Every CSV table each command writes, by file name: the columns it may have, in their order (a
written header is these columns, or these in order with some of the optional ones left out;
`runs.csv`: `header`'s form). The writers take their headers from here."""


def table(command: str, name: str) -> tuple[str, ...]:
    """The declared columns of a command's table `name` (`TABLES`); ValueError for a table
    without fixed columns."""
    columns = TABLES[command][name]
    if columns is None:
        raise ValueError(f"{command}'s {name} has no fixed columns")
    return columns


def write(
    out: str | Path, command: str, files: Mapping[str, Any], record: Record | None = None
) -> list[Path]:
    """Write a command's output files into the folder `out` atomically, in the mapping's order.

    Each file's content goes by its name: `.json` a document (`write_json`; the run's `record`
    goes into its `SUMMARY`), `.npy` int32 boards, `.txt` one text board, `runs.csv` a
    `RunTable` or several, another `.csv` its rows under `command`'s declared columns (`table`)
    or a `(header, rows)` pair. A None content writes nothing. Returns the paths written, in
    order.
    """
    written = []
    for name, content in files.items():
        path = Path(out) / name
        if content is None:
            continue
        if name.endswith(".json"):
            write_json(path, content, record if name == SUMMARY else None)
        elif name.endswith(".npy"):
            boardio.write_boards_npy(path, content)
        elif name.endswith(".txt"):
            boardio.write_board(path, content)
        elif name == FILENAME:
            write_runs(path, content)
        elif isinstance(content, tuple):
            write_csv(path, *content)
        else:
            write_csv(path, table(command, name), content)
        written.append(path)
    return written


def meaning(name: str) -> str:
    """What a column means in any table (KeyError for an undocumented name)."""
    return COLUMNS[name].meaning if name in COLUMNS else TERMS[name]


# ----------------------------------------------------------------------------- docs tables


def runs_markdown() -> str:
    """The per-run columns as a Markdown table (the docs' outputs page is built with it)."""
    lines = ["| column | meaning | unit |", "| --- | --- | --- |"]
    lines += [f"| `{c.name}` | {c.meaning} | {c.unit} |" for c in CORE_COLUMNS]
    lines += [f"| `{c.name}` (extra) | {c.meaning} | {c.unit} |" for c in EXTRAS]
    return "\n".join(lines)


def tables_markdown() -> str:
    """Every table of every command (`TABLES`) and what each of its columns means, as Markdown (the
    docs' outputs page is built with it)."""
    lines = ["| command | file | columns |", "| --- | --- | --- |"]
    for command, tables in TABLES.items():
        for name, columns in tables.items():
            if name == FILENAME:
                shown = "the per-run columns above"
            elif columns is None:
                shown = "its own, one set per fitness unit"
            else:
                shown = ", ".join(f"`{c}`" for c in columns)
            lines.append(f"| {command} | `{name}` | {shown} |")
    lines += ["", "| column | meaning |", "| --- | --- |"]
    lines += [f"| `{name}` | {text} |" for name, text in sorted(TERMS.items())]
    return "\n".join(lines)
