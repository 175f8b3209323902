"""What `jaxqueens complete` writes: one CSV row per instance and the solutions found.

- `DIR/results.csv`: `file, d, n, status, solutions, nodes, seconds, reason` per instance,
  in input order (status SAT, UNSAT or unknown; `solutions` empty unless counted; `d` empty
  for instances that are not excluded-diagonals files; `reason` why an instance is UNSAT with
  no search, e.g. "fixed queens at (0,0) and (1,1) attack each other"), through
  `tables`;
- `DIR/solutions.jsonl`: every reported solution (verified), one JSON line each,
  `{"n": 8, "rows": [...], "file": ..., "d": ...}` (readable by `boards`);
- `DIR/summary.json`: totals, settings and timings;
- `DIR/checkpoint.npz` while running (`checkpoint`; `--resume DIR`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from jaxqueens.core.oeis import A000170
from jaxqueens.io import boards as boardio
from jaxqueens.io import schema
from jaxqueens.io.provenance import Record
from jaxqueens.io.tables import SUMMARY, write_csv, write_json

RESULTS = "results.csv"
SOLUTIONS = "solutions.jsonl"
HEADER = schema.table("complete", "results.csv")


def rows(sources: Sequence[str], ds: Sequence[int | None], results) -> list[list]:
    """The table, in `HEADER`'s order: one row per instance (its file, its excluded-diagonals
    count `d`, None for an instance that is not a `.param` file, and its `InstanceResult`);
    `reason` says why an instance is UNSAT when no search was needed (fixed queens attacking
    each other, a column or row without an allowed square), else it is empty."""
    return [
        [
            src,
            d,
            r.n,
            r.status,
            r.solutions,
            r.nodes,
            round(float(r.seconds), 6),
            getattr(r, "reason", None),
        ]
        for src, d, r in zip(sources, ds, results, strict=True)
    ]


def write_results(out: str | Path, sources, ds, results) -> Path:
    """Write `out/results.csv` (`rows`); returns its path."""
    return write_csv(Path(out) / RESULTS, HEADER, rows(sources, ds, results))


def write_solutions(out: str | Path, sources, ds, results) -> Path | None:
    """Write every listed board as JSON lines (with its instance's file and `d`, as in `rows`),
    one file per board size: `SOLUTIONS`, and for sizes other than the first
    `solutions-n<N>.jsonl`. Returns the first file, or None when no board is listed."""
    by_n: dict[int, tuple[list, list]] = {}
    for src, d, r in zip(sources, ds, results, strict=True):
        for b in r.boards:
            boards, extra = by_n.setdefault(r.n, ([], []))
            boards.append(np.asarray(b, np.int32))
            extra.append({"file": src, "d": d})
    first = None
    for k, (n, (boards, extra)) in enumerate(sorted(by_n.items())):
        path = Path(out) / (SOLUTIONS if k == 0 else f"solutions-n{n}.jsonl")
        boardio.write_jsonl(path, np.stack(boards), extra)
        first = first or path
    return first


def written_bytes(
    sources: Sequence[str], ds: Sequence[int | None], ns: Sequence[int], listed: int
) -> int:
    """At most the bytes `complete --out` writes, before any search (the preflight of
    `prepare_out`): per instance its CSV row, and the JSON lines of at most `listed` boards
    (`--cap` for `--enumerate`, 1 otherwise; never more than A000170(n): every instance's
    solutions are n-queens solutions), each board also held in the checkpoint (int16 cells) and
    its temporary copy."""
    total = 0
    for src, d, n in zip(sources, ds, ns, strict=True):
        boards = min(listed, A000170.get(n, listed))
        name = len(json.dumps(src)) + len(str(d))
        line = 40 + len(str(n)) + n * (len(str(max(n - 1, 0))) + 2) + name
        total += 160 + 2 * name + boards * (line + 2 * 2 * n)
    return total


def summary(results, **extra) -> dict:
    """The run's summary: instances, SAT, UNSAT (and those settled without a search), unknown,
    nodes, and the `extra` keys."""
    status = [r.status for r in results]
    return {
        "instances": len(results),
        "sat": status.count("SAT"),
        "unsat": status.count("UNSAT"),
        "unsat_without_search": sum(getattr(r, "reason", None) is not None for r in results),
        "unknown": status.count("unknown"),
        "nodes": sum(r.nodes for r in results),
        **extra,
    }


def write_summary(out: str | Path, results, record: Record | None = None, **extra) -> Path:
    """Write `out/summary.json` (`summary`); returns its path."""
    return write_json(Path(out) / SUMMARY, summary(results, **extra), record)
