"""What `jaxqueens stats` writes to `--out`: `summary.json`, `distinct.npy` and the tables.

`frequencies.csv` (every solution for n <= 14, else every distinct one sampled: solution,
count, canonical form, class size), `classes.csv`, `coverage.csv` (thinned to at most
`CURVE_POINTS` log-spaced rows plus the last), `runs.csv` (one row per chain or GA trial) and
`success.csv`, all from one `StatsResult` (taken duck-typed: io never imports a driver).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from jaxqueens.core import symmetry
from jaxqueens.io import chains as chain_out
from jaxqueens.io import schema
from jaxqueens.io.provenance import Record
from jaxqueens.io.tables import SUMMARY

CURVE_POINTS = 2000  # coverage rows kept in coverage.csv (log-spaced, plus the last)


def _thin(c: int) -> np.ndarray:
    """Indices 0..c-1 to keep in the coverage table: log-spaced, at most CURVE_POINTS, the last."""
    if c <= CURVE_POINTS:
        return np.arange(c)
    return np.unique(
        np.concatenate([np.round(np.logspace(0, math.log10(c), CURVE_POINTS)) - 1, [c - 1]]).astype(
            np.int64
        )
    )


def _board_text(rows: np.ndarray) -> list[str]:
    return [" ".join(map(str, r)) for r in rows.tolist()]


def run_table(sam) -> schema.RunTable:
    """The per-run table of the samples `sam` (duck-typed `Samples`): a chain solver's run as
    `solve` and `anneal` write it; GA trials as `evolve` writes them (steps in fitness
    evaluations, seconds each trial's share of its round by evaluations, generations run, the
    first solved generation; attacking pairs 0 where solved, else not counted)."""
    if getattr(sam, "run", None) is not None:
        return chain_out.run_table(sam.run)
    solved = np.asarray(sam.solved, bool)
    if sam.step_unit == "steps":  # chains that stop when solved: their steps are those spent
        return schema.RunTable(sam.name, solved, sam.steps, None, None)
    steps = np.asarray(sam.steps, np.float64)
    work = getattr(sam, "work", None)
    if work is None:  # no work records: the generations an unsolved trial ran only
        spent = to_solution = None
        generations = np.where(solved, np.nan, steps)
    else:
        work = np.where(np.asarray(work) >= 0, work, np.nan)  # -1: not recorded
        spent, generations = work[:, 0], work[:, 2]
        to_solution = np.where(solved, work[:, 1], np.nan)
    return schema.RunTable(
        solver=sam.name,
        solved=solved,
        steps_spent=spent,
        steps_to_solution=to_solution,
        seconds=getattr(sam, "seconds", None),
        best_attacking_pairs=np.where(solved, 0.0, np.nan),
        extras={
            "generations_spent": generations,
            "first_solved_generation": np.where(solved, steps, np.nan),
        },
    )


def _frequency_rows(res) -> Iterator[list]:
    """The rows of `frequencies.csv`: every solution (or every distinct one found), its count,
    class and class size."""
    every = res.all_solutions is not None
    boards, counts = (res.all_solutions, res.all_counts) if every else (res.distinct, res.counts)
    canon = symmetry.canonical(boards) if every or len(boards) else boards
    sizes = 8 // symmetry.stabilizer_sizes(boards) if every else res.distinct_sizes
    table = zip(_board_text(boards), counts, _board_text(canon), sizes, strict=True)
    for a, b, c, d in table:
        yield [a, int(b), c, int(d)]


def _coverage_rows(cov: dict, keep) -> Iterator[list]:
    """The rows of `coverage.csv` at the chain counts `keep`."""
    exp, expf = cov["expected"], cov["expected_fundamental"]
    for i in keep:
        yield [
            int(cov["chains"][i]),
            int(cov["solved"][i]),
            int(cov["distinct"][i]),
            int(cov["fundamental"][i]),
            "" if exp is None else f"{exp[i]:.4f}",
            "" if expf is None else f"{expf[i]:.4f}",
        ]


def write_outputs(res, out_dir: str | Path, record: Record | None = None) -> list[Path]:
    """Write `summary.json`, `distinct.npy` (if any sample) and the tables of a stats result
    (duck-typed `StatsResult`) into `out_dir`; returns the paths written."""
    sam = res.samples
    classes = zip(_board_text(res.classes), res.class_sizes, res.class_counts, strict=True)
    budgets, rate = res.success
    files = {
        SUMMARY: res.summary,
        "distinct.npy": res.distinct if len(res.distinct) else None,
        "frequencies.csv": _frequency_rows(res),
        "classes.csv": ([t, int(z), int(k)] for t, z, k in classes),
        "coverage.csv": _coverage_rows(res.coverage, _thin(sam.chains)),
        schema.FILENAME: run_table(sam),
        "success.csv": (
            ["solver", f"{sam.step_unit}_budget", "success_rate"],
            ([sam.name, int(b), f"{r:.6f}"] for b, r in zip(budgets, rate, strict=True)),
        ),
    }
    return schema.write(out_dir, "stats", files, record)
