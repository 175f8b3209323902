"""What `jaxqueens complete` writes: one CSV row per instance and the solutions found.

- `DIR/results.csv`: `file, d, n, status, solutions, nodes, seconds, reason` per instance,
  in input order (status SAT, UNSAT or unknown; `solutions` empty unless counted; `d` empty
  for instances that are not excluded-diagonals files; `reason` why an instance is UNSAT with
  no search, e.g. "fixed queens at (0,0) and (1,1) attack each other"): the result's `rows`;
- `DIR/solutions.jsonl`: every reported solution (verified), one JSON line each,
  `{"n": 8, "rows": [...], "file": ..., "d": ...}` (readable by `boards`);
- `DIR/summary.json`: the result's `summary`: totals, settings and timings;
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
from jaxqueens.io.instances_formats import Instance
from jaxqueens.io.provenance import Record
from jaxqueens.io.tables import SUMMARY

RESULTS = "results.csv"
SOLUTIONS = "solutions.jsonl"
HEADER = schema.table("complete", RESULTS)


def write_outputs(
    out: str | Path, inputs: Sequence[Instance], result, record: Record | None = None, **extra
) -> list[Path]:
    """Write `out/results.csv` (`result.rows(inputs)`, `inputs` the instances as read), the
    listed boards and `out/summary.json` (`result.summary(**extra)`, the run's `record` in it),
    `result` a `jaxqueens.drivers.complete.CompleteResult`. The boards go as JSON lines, each
    with its instance's `file` and `d`, one file per board size: `SOLUTIONS`, and for sizes
    other than the first `solutions-n<N>.jsonl`. Returns the CSV's and the summary's paths."""
    written = schema.write(out, "complete", {RESULTS: result.rows(inputs)})
    by_n: dict[int, tuple[list, list]] = {}
    for inst, r in zip(inputs, result.instances, strict=True):
        for b in r.boards:
            boards, tags = by_n.setdefault(r.n, ([], []))
            boards.append(np.asarray(b, np.int32))
            tags.append({"file": inst.source, "d": inst.d})
    for k, (n, (boards, tags)) in enumerate(sorted(by_n.items())):
        path = Path(out) / (SOLUTIONS if k == 0 else f"solutions-n{n}.jsonl")
        boardio.write_jsonl(path, np.stack(boards), tags)
    return written + schema.write(out, "complete", {SUMMARY: result.summary(**extra)}, record)


def written_bytes(inputs: Sequence[Instance], listed: int) -> int:
    """At most the bytes `complete --out` writes, before any search (the preflight of
    `prepare_out`): per instance its CSV row, and the JSON lines of at most `listed` boards
    (`--cap` for `--enumerate`, 1 otherwise; never more than A000170(n): every instance's
    solutions are n-queens solutions), each board also held in the checkpoint (int16 cells) and
    its temporary copy."""
    total = 0
    for inst in inputs:
        n = inst.model.n
        boards = min(listed, A000170.get(n, listed))
        name = len(json.dumps(inst.source)) + len(str(inst.d))
        line = 40 + len(str(n)) + n * (len(str(max(n - 1, 0))) + 2) + name
        total += 160 + 2 * name + boards * (line + 2 * 2 * n)
    return total
