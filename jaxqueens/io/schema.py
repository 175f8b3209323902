"""Every table the commands write, defined once: the per-run table (`runs.csv`) of `solve`,
`anneal`, `stats`, `compare` and `evolve` (its columns, meanings and units), the other tables of
each command (`TABLES`) and what every column name means (`TERMS`).

Every command that runs many independent runs (chains or GA trials) writes them one row per run
with the same columns in the same order: the `CORE` columns, then the per-solver extras it has
(`EXTRAS`, in their order here); a cell a solver has no value for is empty. The docs' outputs
page is built from these (`runs_markdown`, `tables_markdown`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from jaxqueens.io.tables import write_csv


@dataclasses.dataclass(frozen=True)
class Column:
    """One column of the per-run table."""

    name: str  # snake_case
    meaning: str  # what it holds, for the docs
    unit: str  # its unit, for the docs


CORE_COLUMNS: tuple[Column, ...] = (
    Column(
        "solver",
        "the solver that ran, by its one name (compare --solvers takes the same): mc-<init> "
        "(mc-random, mc-permutation, mc-greedy, mc-qs4), mc-tabu, ls, ta, sa, ga-permutation, "
        "ga-combination, large",
        "text",
    ),
    Column(
        "run",
        "the run's index within its solver: chain i (seeded from fold_in(key(seed), i)), or GA "
        "trial i",
        "index from 0",
    ),
    Column(
        "solved", "1 when the run found a solution (verified by the independent checker)", "0/1"
    ),
    Column(
        "steps_spent",
        "the work the run actually spent, solved or not: min-conflicts moves over all attempts; "
        "LS/TA/SA proposals (the whole budget when unsolved); GA fitness evaluations (DEAP's "
        "count: the initial population and every changed individual) over all generations run; "
        "compare counts each run until its first solution (as if it stopped there) or the "
        "budget",
        "steps (GA: evaluations)",
    ),
    Column(
        "steps_to_solution",
        "steps_spent until the first solution (GA: evaluations until the end of the first "
        "generation holding one); empty when unsolved",
        "steps (GA: evaluations)",
    ),
    Column(
        "restarts",
        "restarts from a fresh board (min-conflicts); empty for solvers that never restart",
        "count",
    ),
    Column(
        "seconds",
        "the run's share of its kernel calls' wall time, split over the runs of a call by "
        "steps_spent; no compilation (every call size is compiled before the timed calls); "
        "compare: until the run's first solution or the budget, the mean over its timed "
        "repeats; empty where not measured",
        "seconds",
    ),
    Column(
        "best_attacking_pairs",
        "attacking pairs of the run's best board (0 when solved; GA: the last generation's "
        "best); empty where the solver's objective is another unit and the board was not "
        "counted",
        "attacking pairs",
    ),
)
"""The columns every per-run table has, in this order."""

EXTRAS: tuple[Column, ...] = (
    Column(
        "best_nmof_attacks",
        "LS/TA/SA with objective attacks: NMOF's attack count of the best board (queens minus "
        "lines occupied, over rows and both diagonals; plus queens on forbidden squares on a "
        "constrained instance)",
        "NMOF attacks",
    ),
    Column(
        "best_pairs_plus_stranded",
        "LS/TA/SA with objective pairs on a constrained instance: the best board's attacking "
        "pairs plus its queens on forbidden squares",
        "pairs + queens",
    ),
    Column(
        "best_step",
        "LS/TA/SA: the step at which the best board was found (the solution's step when solved)",
        "steps",
    ),
    Column(
        "generations_spent",
        "GA: generations run (the initial population is generation 0)",
        "generations",
    ),
    Column(
        "first_solved_generation",
        "GA: the first generation holding a verified solution; empty when unsolved",
        "generation",
    ),
    Column(
        "first_score_met_generation",
        "GA with fitness report-diagonals-only: the first generation whose best scored 0 "
        "(not always a solution); empty when never",
        "generation",
    ),
    Column(
        "best_fitness",
        "GA with a fitness other than pairs: the best score of any generation in that fitness's "
        "unit "
        "(excess: sum over lines of queens - 1; report-diagonals-only: diagonal pairs)",
        "fitness units",
    ),
    Column(
        "unfinished",
        "1 when the chain was still running when the --time budget ran out (counted unsolved)",
        "0/1",
    ),
)
"""Per-solver columns, after the core ones, in this order."""

COLUMNS: dict[str, Column] = {c.name: c for c in CORE_COLUMNS + EXTRAS}
"""Every documented column by name."""

CORE: tuple[str, ...] = tuple(c.name for c in CORE_COLUMNS)
"""The core column names, in order."""

FILENAME = "runs.csv"
"""The per-run table's file name in every command's `--out` folder."""


def header(extras: Iterable[str] = ()) -> list[str]:
    """The header of a runs table with extra columns.

    Args:
      extras: the extra columns' names.

    Returns:
      `CORE`, then the extras in their documented order.

    Raises:
      ValueError: an undocumented name (a bug).
    """
    extras = set(extras)
    unknown = sorted(extras - {c.name for c in EXTRAS})
    if unknown:
        raise ValueError(f"undocumented runs.csv column(s) {unknown}: add them to io/schema.py")
    return [*CORE, *(c.name for c in EXTRAS if c.name in extras)]


def check_header(names: Sequence[str]) -> None:
    """Raise unless a header is a documented one (`header`'s form).

    Args:
      names: the column names.

    Raises:
      ValueError: naming the header and the documented one.
    """
    names = list(names)
    if names[: len(CORE)] != list(CORE) or names != header(names[len(CORE) :]):
        raise ValueError(f"runs.csv header {names} is not the documented one {header()} + extras")


@dataclasses.dataclass(frozen=True)
class RunTable:
    """The runs of one solver, as columns.

    Attributes:
      solver: the solver's name.
      solved: bool `[R]`.
      steps_spent: `[R]` steps per run (None: every cell empty, as below).
      seconds: `[R]` seconds per run.
      best_attacking_pairs: `[R]` the best objective per run.
      restarts: `[R]` restarts per run.
      steps_to_solution: `[R]`; defaults to `steps_spent` where solved (solvers that stop when
        solved).
      run: `[R]` run ids; defaults to 0..R-1.
      extras: documented extra columns -> `[R]` arrays (NaN or a None entry: an empty cell).
    """

    solver: str
    solved: np.ndarray
    steps_spent: np.ndarray | None
    seconds: np.ndarray | None
    best_attacking_pairs: np.ndarray | None
    restarts: np.ndarray | None = None
    steps_to_solution: np.ndarray | None = None
    run: np.ndarray | None = None
    extras: Mapping[str, np.ndarray | None] = dataclasses.field(default_factory=dict)

    def columns(self) -> dict[str, list]:
        """Every column of this table by name, as Python values.

        Returns:
          `name -> [R]` lists (None: an empty cell).
        """
        count = len(self.solved)
        solved = np.asarray(self.solved, bool)
        to_solution = self.steps_to_solution
        if to_solution is None and self.steps_spent is not None:
            to_solution = np.where(solved, np.asarray(self.steps_spent, np.float64), np.nan)
        cols: dict[str, list] = {
            "solver": [self.solver] * count,
            "run": _ints(np.arange(count) if self.run is None else self.run, count),
            "solved": [int(v) for v in solved],
            "steps_spent": _ints(self.steps_spent, count),
            "steps_to_solution": _ints(to_solution, count),
            "restarts": _ints(self.restarts, count),
            "seconds": _seconds(self.seconds, count),
            "best_attacking_pairs": _ints(self.best_attacking_pairs, count),
        }
        for name, values in self.extras.items():
            cols[name] = _ints(values, count)
        return cols


def _ints(values, count: int) -> list:
    if values is None:
        return [None] * count
    out = []
    for v in values if isinstance(values, list) else np.asarray(values, object).tolist():
        out.append(None if v is None or (isinstance(v, float) and v != v) else int(v))
    if len(out) != count:
        raise ValueError(f"a runs.csv column has {len(out)} values for {count} runs")
    return out


def _seconds(values, count: int) -> list:
    if values is None:
        return [None] * count
    out = [None if v != v else f"{v:.3e}" for v in np.asarray(values, np.float64).tolist()]
    if len(out) != count:
        raise ValueError(f"a runs.csv column has {len(out)} values for {count} runs")
    return out


def rows(tables: Sequence[RunTable]) -> tuple[list[str], list[list]]:
    """Several runs tables as one.

    Args:
      tables: the tables.

    Returns:
      `(header, rows)`: every table's runs in order, with the extras any of them has.
    """
    names = header({k for t in tables for k in t.extras})
    out: list[list] = []
    for t in tables:
        cols = t.columns()
        count = len(t.solved)
        out.extend([cols[k][i] if k in cols else None for k in names] for i in range(count))
    return names, out


def write_runs(path: str | Path, tables: RunTable | Sequence[RunTable]) -> Path:
    """Write `runs.csv` atomically from one solver's table or several.

    Args:
      path: the file.
      tables: a table or several.

    Returns:
      The path written.
    """
    names, body = rows([tables] if isinstance(tables, RunTable) else tables)
    check_header(names)
    return write_csv(path, names, body)


# ----------------------------------------------------------------------------- every table

TERMS: dict[str, str] = {
    # names of the per-run table keep their meaning everywhere (COLUMNS); these are the others
    "family": "the solver's family: minconflicts, anneal or ga",
    "chains": "chains (GA: trials) run",
    "success_rate": "fraction of all runs solved (within the budget on its row, if any)",
    "steps_budget": "a budget of steps per run (GA: evaluations); rates on its row count runs "
    "solved within it",
    "seconds_budget": "a budget of seconds per run (compare's seconds column)",
    "generations_budget": "GA: a budget of generations per trial",
    "steps_to_solution_mean": "mean steps_to_solution over the solved runs",
    "steps_to_solution_median": "median steps_to_solution over the solved runs",
    "steps_to_solution_p90": "90th percentile of steps_to_solution over the solved runs",
    "seconds_to_solution": "seconds until the run's first solution (solved runs)",
    "seconds_to_solution_mean": "mean seconds until the first solution over the solved runs",
    "seconds_to_solution_median": "median seconds until the first solution over the solved runs",
    "fraction_of_solved": "fraction of the solved runs solved within the row's steps or seconds",
    "ert_s": "expected run time: seconds spent over all runs per solution found",
    "ert_s_ci_low": "ert_s's bootstrap confidence interval over runs, low end",
    "ert_s_ci_high": "ert_s's bootstrap confidence interval over runs, high end",
    "ert_s_spread_low": "the lowest ert_s of the timed repeats (empty with one repeat)",
    "ert_s_spread_high": "the highest ert_s of the timed repeats (empty with one repeat)",
    "ert_steps": "expected steps: steps spent over all runs per solution found",
    "ert_steps_ci_low": "ert_steps's bootstrap confidence interval, low end",
    "ert_steps_ci_high": "ert_steps's bootstrap confidence interval, high end",
    "ert_note": "why the ERT is empty (nothing solved), else empty",
    "solutions_per_s": "solved runs per second of kernel time as run",
    "distinct_solutions": "distinct solutions found",
    "fundamental_classes": "distinct solution classes under the 8 symmetries of the square",
    "exact_solutions": "the exact number of solutions, Q(n) (OEIS A000170), where known",
    "exact_classes": "the exact number of fundamental classes (OEIS A002562), where known",
    "expected_distinct_solutions_uniform": "distinct solutions expected after this many "
    "solved chains if every solution were equally likely",
    "expected_fundamental_classes_uniform": "fundamental classes expected after this many "
    "solved chains if every solution were equally likely",
    "wall_s": "kernel seconds of the whole run as run (compilation excluded)",
    "compile_s": "seconds spent compiling",
    "key": "a setting's name",
    "value": "a setting's value",
    "test": "what a chi-square test is over: solutions or classes",
    "chi2": "the chi-square statistic",
    "dof": "its degrees of freedom",
    "p_value": "its p-value",
    "valid": "1 when every cell expects 5 or more (the test means something)",
    "note": "why a test is not meaningful, else empty",
    "solution": "a board, row of each column's queen separated by spaces",
    "canonical": "the board's canonical form (least of its 8 symmetric images)",
    "class_size": "boards in the solution's symmetry class (1, 2, 4 or 8)",
    "count": "times the solution (or class) was sampled",
    "n": "board size",
    "solutions": "solutions: counted exactly (complete) or estimated (estimate)",
    "solutions_se": "the estimate's standard error",
    "ci_low": "the estimate's confidence interval, low end",
    "ci_high": "the estimate's confidence interval, high end",
    "rel_error": "(estimate - exact) / exact, where exact is known",
    "nodes": "backtrack tree nodes (estimated, or visited by the exact search)",
    "nodes_se": "the node estimate's standard error",
    "probes": "random probes (Knuth's estimator)",
    "depth": "the probes' prefix depth",
    "strata": "strata the probes were spread over",
    "hit_rate": "fraction of probes that reached a solution",
    "probes_per_s": "probes per second",
    "file": "the instance's file (and member of a set)",
    "d": "excluded diagonals used (prob079 .param files), empty otherwise",
    "status": "SAT, UNSAT or unknown (node budget spent)",
    "reason": "why an instance is UNSAT without a search, else empty",
}
"""What every column name means in the tables other than `runs.csv` (whose names are
`COLUMNS`): one meaning per name across every command."""

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
    """The declared columns of a command's table (`TABLES`).

    Args:
      command: the command.
      name: the table's file name.

    Returns:
      The column names.

    Raises:
      ValueError: the table has no fixed columns.
    """
    columns = TABLES[command][name]
    if columns is None:
        raise ValueError(f"{command}'s {name} has no fixed columns")
    return columns


def meaning(name: str) -> str:
    """What a column means in any table.

    Args:
      name: the column's name.

    Returns:
      Its meaning.

    Raises:
      KeyError: an undocumented name.
    """
    return COLUMNS[name].meaning if name in COLUMNS else TERMS[name]


# ----------------------------------------------------------------------------- docs tables


def runs_markdown() -> str:
    """The per-run columns as a Markdown table (the docs' outputs page is built with it).

    Returns:
      The Markdown.
    """
    lines = ["| column | meaning | unit |", "| --- | --- | --- |"]
    lines += [f"| `{c.name}` | {c.meaning} | {c.unit} |" for c in CORE_COLUMNS]
    lines += [f"| `{c.name}` (extra) | {c.meaning} | {c.unit} |" for c in EXTRAS]
    return "\n".join(lines)


def tables_markdown() -> str:
    """Every table of every command (`TABLES`) and what each of its columns means, as Markdown (the
    docs' outputs page is built with it).

    Returns:
      The Markdown.
    """
    lines = ["| command | file | columns |", "| --- | --- | --- |"]
    for command, tables in TABLES.items():
        for name, columns in tables.items():
            shown = (
                "the per-run columns above"
                if name == FILENAME
                else (
                    "its own, one set per fitness unit"
                    if columns is None
                    else ", ".join(f"`{c}`" for c in columns)
                )
            )
            lines.append(f"| {command} | `{name}` | {shown} |")
    lines += ["", "| column | meaning |", "| --- | --- |"]
    lines += [f"| `{name}` | {text} |" for name, text in sorted(TERMS.items())]
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - a maintainer's look at the tables
    print(runs_markdown())
    print()
    print(tables_markdown())
