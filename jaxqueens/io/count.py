"""What `jaxqueens count` writes: `summary.json` of a count, the solution files of
`--enumerate`.

- `count -n N --out DIR`: `DIR/summary.json` (this module) beside `DIR/checkpoint.npz`
  (`checkpoint`, kept after the count: `--resume DIR` of a finished count
  recounts nothing);
- `count -n N --enumerate --out FILE.npy`: every solution `[S, n]` uint8 in `FILE.npy` and
  the fundamental representatives in `FILE_fundamental.npy` (the historic form);
  `--enumerate --out DIR` (no `.npy` suffix): `DIR/solutions.npy` and
  `DIR/solutions_fundamental.npy`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxqueens.core.oeis import A000170, A002562, A051906
from jaxqueens.io import boards as boardio
from jaxqueens.io.tables import write_json

SUMMARY = "summary.json"
SOLUTIONS = "solutions.npy"
FIELDS = (
    "n",
    "total",
    "unique",
    "seconds",
    "compile_seconds",
    "depth",
    "prefixes",
    "chunks",
    "resumed_chunks",
    "constellations",
)
"""`prefixes` is the number of independent tasks searched (subtrees of the canonical
constellations, `count`); `constellations` the symmetry classes of
border configurations they come from."""


def summary(result, **extra) -> dict:
    """JSON-ready summary of a count result, with the OEIS values where known (A000170 for `total`,
    A002562 for `unique`).

    Args:
      result: any object with the `FIELDS` attributes (a `CountResult`).
      **extra: further keys of the summary.

    Returns:
      The summary, a dict.
    """
    doc = {key: getattr(result, key) for key in FIELDS}
    doc["oeis_A000170"] = A000170.get(result.n)
    doc["oeis_A002562"] = A002562.get(result.n) if result.unique is not None else None
    return {**doc, **extra}


def write_summary(out: str | Path, result, **extra) -> Path:
    """Write `out/summary.json` (`summary`).

    Args:
      out: the output folder.
      result: the count result.
      **extra: further keys of the summary.

    Returns:
      The file's path.
    """
    return write_json(Path(out) / SUMMARY, summary(result, **extra))


def write_toroidal_summary(
    out: str | Path, n: int, total: int, seconds: float, compile_seconds: float, **extra
) -> Path:
    """Write `out/summary.json` of a toroidal count (`count --toroidal`), with OEIS A051906; its
    times have the names the count's summary gives them.

    Args:
      out: the output folder.
      n: board size.
      total: the count.
      seconds: search time.
      compile_seconds: compilation time.
      **extra: further keys of the summary.

    Returns:
      The file's path.
    """
    doc = {
        "n": n,
        "toroidal": True,
        "total": total,
        "seconds": seconds,
        "compile_seconds": compile_seconds,
        "oeis_A051906": A051906.get(n),
        **extra,
    }
    return write_json(Path(out) / SUMMARY, doc)


def solution_paths(out: str | Path) -> tuple[Path, Path]:
    """Where `--enumerate --out OUT` writes: `OUT` and `OUT_fundamental.npy` when `OUT` ends in
    `.npy`, else the two files inside folder OUT.

    Args:
      out: the `--out` value.

    Returns:
      `(all solutions, fundamental representatives)` paths.
    """
    out = Path(out)
    if out.suffix == ".npy":
        return out, out.with_name(out.stem + "_fundamental.npy")
    first = out / SOLUTIONS
    return first, first.with_name(first.stem + "_fundamental.npy")


def write_solutions(out: str | Path, boards: np.ndarray, reps: np.ndarray) -> tuple[Path, Path]:
    """Write every solution and the fundamental ones atomically (`solution_paths`).

    Args:
      out: the `--out` value.
      boards: uint8 `[S, n]` every solution.
      reps: uint8 `[F, n]` one per symmetry class.

    Returns:
      The two paths written.
    """
    every, fund = solution_paths(out)
    boardio.write_boards_npy(every, boards, dtype=np.uint8)
    boardio.write_boards_npy(fund, reps, dtype=np.uint8)
    return every, fund
