"""The chain driver's data: what a kernel call returns (`ChunkResult`), when a run stops
(`Budget`), and what a run gathered (`ChainRun`, `summarize`): the one result of the chain
solvers, from the chunk results to the files.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, NamedTuple

import numpy as np

from jaxqueens.core import arguments
from jaxqueens.core.oeis import A000170
from jaxqueens.errors import QueensError


class ChunkResult(NamedTuple):
    """What `run_chunk` returns for `count` chains (host arrays), read and built by field
    name only (`of`), never by position: a kernel's `Result` has the first fields."""

    rows: np.ndarray  #: [count, n] final boards
    solved: np.ndarray  #: [count] bool
    steps: np.ndarray  #: [count] steps spent (over all attempts), solved or not
    restarts: np.ndarray  #: [count]
    best: np.ndarray | None = None  #: [count] best objective, for solvers that have one
    best_step: np.ndarray | None = None  #: [count] step of the best board (annealing), or None
    #: [count] bool: stopped at the call's work bound, unfinished; run_chunk(offset, count) called
    #: again continues them (the runner keeps their state)
    paused: np.ndarray | None = None

    @classmethod
    def of(cls, out, **replace) -> ChunkResult:
        """`out` (a ChunkResult, or a kernel's Result: the same field names) as host arrays,
        field by field by name (a field `out` lacks is None), then `replace`'s fields."""
        fields: dict[str, Any] = {f: getattr(out, f, None) for f in cls._fields}
        fields.update(replace)
        host: dict[str, Any] = {f: None if v is None else np.asarray(v) for f, v in fields.items()}
        return cls(**host)


@dataclasses.dataclass(frozen=True)
class Budget:
    """When to stop: the first of these that is met (at least one must be set)."""

    chains: int | None = None  #: this many chains solved
    solutions: int | None = None  #: this many distinct solutions found
    seconds: float | None = None  #: this much wall time spent
    max_chains: int | None = None  #: never run more chains than this

    def __post_init__(self):
        if all(v is None for v in (self.chains, self.solutions, self.seconds, self.max_chains)):
            raise QueensError("no budget: give --chains, --solutions or --time")
        for name in ("chains", "solutions", "max_chains"):  # integers (2.5 is not), >= 1
            value = arguments.integer(  # no upper bound: counted on the host, as Python ints
                getattr(self, name), name, 1, None, optional=True
            )
            object.__setattr__(self, name, value)
        object.__setattr__(
            self, "seconds", arguments.seconds(self.seconds, "seconds", optional=True)
        )

    def check(self, n: int) -> None:
        """Refuse, before any work, a budget that cannot be met on an n x n board: more distinct
        solutions than exist (OEIS A000170, n <= 27; beyond the table nothing is checked)."""
        exist = A000170.get(n)
        if self.solutions is not None and exist is not None and self.solutions > exist:
            raise QueensError(
                f"--solutions {self.solutions}: n = {n} has only {exist:,} distinct "
                f"solutions; ask for at most {exist:,} (or give --chains or --time)"
            )

    def describe(self) -> str:
        """The budget in words, for the progress line ("budget: 1,000 chains or 60 s")."""
        parts = [
            f"{self.chains:,} chains solved" if self.chains else "",
            f"{self.solutions:,} distinct" if self.solutions else "",
            f"{self.seconds:g} s" if self.seconds else "",
            f"{self.max_chains:,} chains run" if self.max_chains else "",
        ]
        return "budget: " + " or ".join(p for p in parts if p)

    def fingerprint(self) -> dict:
        """The budget as checkpoint settings: a run resumes only with the budget it began with."""
        return {
            "chains": self.chains,
            "solutions": self.solutions,
            "time": self.seconds,
            "max_chains": self.max_chains,
        }


@dataclasses.dataclass
class ChainRun:
    """Everything a run gathered, chain by chain: the one result of the chain solvers from the
    chunk results to the files (host arrays, built once by `run_chains`); `summary.json`
    (`summarize`), `runs.csv` (`run_table`) and the command's
    printed lines are read from it."""

    n: int  #: board size
    chain_id: np.ndarray  #: [C] int64
    rows: np.ndarray  #: [C, n] final boards (solutions where solved)
    solved: np.ndarray  #: [C] bool
    steps: np.ndarray  #: [C] int64 steps spent, solved or not (runs.csv's steps_spent)
    restarts: np.ndarray  #: [C] int64
    wall_share: np.ndarray  #: [C] float64 seconds: each chunk's kernel time split by steps spent
    best: np.ndarray | None  #: [C] best objective (local search), or None
    wall_s: float  #: kernel time, compilation excluded
    compile_s: float  #: compilation seconds
    stopped_by: str  #: "chains", "solutions", "time", "max_chains", "kept_chains" or "interrupted"
    unfinished: np.ndarray | None = None  #: [C] bool: paused when the time was up, unsolved
    best_step: np.ndarray | None = None  #: [C] int64 step of the best board (annealing), or None
    solver: str = ""  #: the solver's name ("min-conflicts", "annealing-sa")
    best_unit: str = "attacking_pairs"  #: what `best` counts: "attacking_pairs", "nmof_attacks"

    @property
    def chains(self) -> int:
        """Chains run (and kept)."""
        return int(self.chain_id.size)

    @property
    def solved_count(self) -> int:
        return int(self.solved.sum())

    @property
    def unfinished_count(self) -> int:
        """Chains still running when the time was up (counted unsolved)."""
        return int(self.unfinished.sum()) if self.unfinished is not None else 0

    @property
    def solutions(self) -> np.ndarray:
        """[S, n] verified boards of the solved chains, in chain order."""
        return self.rows[self.solved]

    @functools.cached_property
    def distinct_solutions(self) -> np.ndarray:
        """[D, n] distinct solutions, sorted (computed once)."""
        sols = self.solutions
        if not len(sols):
            return sols
        _, first = np.unique(row_keys(sols), return_index=True)  # bytewise: fast
        return np.unique(sols[first], axis=0)  # the few distinct rows, in numeric order

    @property
    def solutions_per_s(self) -> float | None:
        """Solved chains per kernel second (None before any kernel time)."""
        return self.solved_count / self.wall_s if self.wall_s > 0 else None

    def step_quantiles(self) -> dict:
        """`step_quantiles` of the solved chains' steps."""
        return step_quantiles(self.steps[self.solved])


def step_quantiles(steps: np.ndarray) -> dict:
    """Mean, median, 90th and 99th percentile and maximum of [S] steps to solution, by name (None
    when `steps` is empty)."""
    if not steps.size:
        return dict.fromkeys(("mean", "median", "p90", "p99", "max"))
    q = lambda p: float(np.percentile(steps, p))
    return {
        "mean": float(steps.mean()),
        "median": q(50),
        "p90": q(90),
        "p99": q(99),
        "max": int(steps.max()),
    }


def row_keys(rows: np.ndarray) -> np.ndarray:
    """One opaque value per row of [R, n] boards, equal exactly where the rows are: [R] values, each
    holding its row's bytes (`row.tobytes()`)."""
    rows = np.ascontiguousarray(rows)
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()


def summarize(run: ChainRun, model: Any = None, **extra) -> dict:
    """The figures of `summary.json` (success rate, step quantiles, throughput), the solver's
    settings and figures in `extra` added after the run's; with `model` (a constrained instance)
    the instance and its status last ("SAT" when a chain solved it, else "unknown")."""
    chains = run.chains
    summary = {
        "n": run.n,
        "chains": chains,
        "solved": run.solved_count,
        "success_rate": float(run.solved.mean()) if chains else None,
        "steps": run.step_quantiles(),
        "restarts_mean": float(run.restarts.mean()) if chains else None,
        "distinct_solutions": len(run.distinct_solutions),
        "wall_s": run.wall_s,
        "compile_s": run.compile_s,
        "solutions_per_s": run.solutions_per_s,
        "stopped_by": run.stopped_by,
        "unfinished": run.unfinished_count,
        **extra,
    }
    if model is not None:
        summary.update(instance=model.to_dict(), status="SAT" if run.solved.any() else "unknown")
    return summary
