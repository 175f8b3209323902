"""What `jaxqueens anneal --out DIR` holds: the chain outputs of each method, one folder each.

With one method, `DIR` itself holds that method's chain outputs (`solutions.npy`,
`runs.csv`, `summary.json`: `write_outputs`) and, while a run is
unfinished, its `checkpoint.npz`; with several methods (`--method all` or a comma list),
`DIR/<method>/` holds them, one folder per method. `--plot` adds `DIR/traces.png`
(the best-so-far traces of every method in one figure). Where chains end unsolved, the method's
folder also holds `best_boards.npy` (the best board of every unsolved chain, [U, n] int32)
and `best_boards.csv` (run, best_attacking_pairs, the best objective in its unit, best_step:
one row per board, in the same order; `write_best`). The methods run in the order given;
`--resume DIR` skips the finished ones, continues the one with a checkpoint and starts the
ones not started yet (`method_state`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import overload

import numpy as np

from jaxqueens.io import chains as chain_out
from jaxqueens.io import checkpoint, jsonl
from jaxqueens.io.chains import BEST_BOARDS, BEST_COLUMNS, BEST_TABLE
from jaxqueens.io.tables import SUMMARY

TRACES = "traces.png"  # best-so-far traces, one line per method, in the top folder


@overload
def method_folder(out: str | Path, method: str, methods: Sequence[str]) -> Path: ...
@overload
def method_folder(out: None, method: str, methods: Sequence[str]) -> None: ...
def method_folder(out: str | Path | None, method: str, methods: Sequence[str]) -> Path | None:
    """The folder of one method's outputs: `out` itself when it is the run's only method, else
    `out/<method>` (None without `out`)."""
    if out is None:
        return None
    return Path(out) / method if len(methods) > 1 else Path(out)


@overload
def checkpoint_file(folder: Path) -> Path: ...
@overload
def checkpoint_file(folder: None) -> None: ...
def checkpoint_file(folder: Path | None) -> Path | None:
    """The checkpoint of a method's run (None without a folder)."""
    return folder / checkpoint.FILENAME if folder is not None else None


def run_finished(folder: Path) -> bool:
    """Whether a method's run has finished (its summary was written)."""
    return (folder / SUMMARY).exists()


def write_best(
    folder: str | Path,
    chains: np.ndarray,
    boards: np.ndarray,
    objective: np.ndarray,
    pairs: np.ndarray,
    steps: np.ndarray,
    unit: str = "nmof_attacks",
) -> list[Path]:
    """Write the best boards of a method's unsolved chains (`chains.write_best`): [U] `chains`,
    [U, n] `boards`, [U] `objective` in `unit` (its own column, `BEST_COLUMNS`; none for
    attacking pairs), [U] `pairs` and the `steps` at which each was found."""
    other = BEST_COLUMNS.get(unit)
    columns = {
        "run": chains,
        "best_attacking_pairs": pairs,
        **({other: objective} if other else {}),
    }
    return chain_out.write_best(folder, "anneal", boards, {**columns, "best_step": steps})


OUTPUTS = ("solutions.npy", "runs.csv", SUMMARY, checkpoint.FILENAME, BEST_BOARDS, BEST_TABLE)
"""What a method's run writes into its folder (`chains.write_outputs`, `write_best`)."""


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
    if run_finished(folder):
        return "finished"
    if checkpoint_file(folder).exists():
        return "saved"
    if not any((folder / name).exists() for name in OUTPUTS):
        return "not started"
    return "incomplete"


def traces_file(out: str | Path) -> Path:
    """Where `--plot` writes the traces figure."""
    return Path(out) / TRACES
