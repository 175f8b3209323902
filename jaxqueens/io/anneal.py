"""What `jaxqueens anneal --out DIR` holds: the chain outputs of each method, one folder each.

With one method, `DIR` itself holds that method's chain outputs (`solutions.npy`, `runs.csv`,
`summary.json`) and, while a run is unfinished, its `checkpoint.npz`; with several methods
(`--method all` or a comma list), `DIR/<method>/` holds them, one folder per method. `--plot`
adds `DIR/traces.png` (the best-so-far traces of every method in one figure). Where chains end
unsolved, the method's folder also holds `best_boards.npy` (the best board of every unsolved
chain, [U, n] int32) and `best_boards.csv` (run, best_attacking_pairs, the best objective in its
unit, best_step: one row per board, in the same order). The methods run in the order given;
`--resume DIR` skips the finished ones, continues the one with a checkpoint and starts the ones
not started yet (`method_state`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from jaxqueens.io import chains as chain_out
from jaxqueens.io import checkpoint, jsonl
from jaxqueens.io.chains import BEST_BOARDS, BEST_COLUMNS, BEST_TABLE
from jaxqueens.io.provenance import Record
from jaxqueens.io.tables import SUMMARY

TRACES = "traces.png"  # best-so-far traces, one line per method, in the top folder
#: what a method's run writes into its folder (`write`, and its checkpoint while unfinished)
OUTPUTS = ("solutions.npy", "runs.csv", SUMMARY, checkpoint.FILENAME, BEST_BOARDS, BEST_TABLE)


def folders(out: str | Path | None, methods: Sequence[str]) -> dict[str, Path]:
    """Each method's folder of outputs: `out` itself for the run's only method, else
    `out/<method>` (none without `out`)."""
    if out is None:
        return {}
    return {m: Path(out) / m if len(methods) > 1 else Path(out) for m in methods}


def write(folder: Path, res, record: Record | None) -> list[Path]:
    """Write one method's `AnnealResult` `res` (taken duck-typed: io imports no driver) into
    `folder`: the best boards of its unsolved chains where it recovered them (`chains.write_best`;
    their objective in its own column of `BEST_COLUMNS`, none for attacking pairs), then
    `runs.csv`, `solutions.npy` and `summary.json` with the run's `record`
    (`chains.write_outputs`). Returns the two best-boards files (none without best boards)."""
    run = res.run
    saved: list[Path] = []
    if res.best_boards is not None and len(res.best_boards):
        unsolved, other = ~run.solved, BEST_COLUMNS.get(run.best_unit)
        columns = {"run": res.best_chains, "best_attacking_pairs": res.best_pairs}
        columns.update({other: run.best[unsolved]} if other else {})
        columns["best_step"] = run.best_step[unsolved]
        saved = chain_out.write_best(folder, "anneal", res.best_boards, columns)
    table = chain_out.run_table(run, pairs=res.best_pairs)
    chain_out.write_outputs(run, folder, res.summary, table, record)
    return saved


def solved_before(folder: Path) -> int:
    """Chains a finished method's run solved, from its summary (0 when it cannot be read)."""
    try:
        return int(jsonl.loads((folder / SUMMARY).read_text()).get("solved", 0))
    except (OSError, ValueError, TypeError, AttributeError):
        return 0


def method_state(folder: Path) -> str:
    """Where a method's run stands, for `--resume`: "finished" (its summary was written),
    "saved" (a checkpoint of finished chains), "not started" (none of its files) or "incomplete"
    (some outputs but neither summary nor checkpoint: not resumable)."""
    if (folder / SUMMARY).exists():
        return "finished"
    if (folder / checkpoint.FILENAME).exists():
        return "saved"
    if not any((folder / name).exists() for name in OUTPUTS):
        return "not started"
    return "incomplete"
