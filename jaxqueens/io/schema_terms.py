"""What every column name of the commands' tables means: the per-run columns of `runs.csv`
(`CORE_COLUMNS`, then the per-solver `EXTRAS`, with their units) and the names of every other
table (`TERMS`). `jaxqueens.io.schema` declares the tables from these names."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Column:
    """One column of the per-run table."""

    name: str  #: snake_case
    meaning: str  #: what it holds, for the docs
    unit: str  #: its unit, for the docs


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

TERMS: dict[str, str] = {
    # names of the per-run table keep their meaning everywhere; these are the others
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
`CORE_COLUMNS` and `EXTRAS`): one meaning per name across every command."""
