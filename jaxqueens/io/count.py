"""What `jaxqueens count` writes: `DIR/summary.json` of a count (`--out DIR`; its checkpoint
`DIR/checkpoint.npz` while counting), and with `--enumerate` every solution, uint8 `[S, n]`, in
`FILE.npy` and the fundamental representatives in `FILE_fundamental.npy` (`--out FILE.npy`; a
folder gets `solutions.npy` and `solutions_fundamental.npy`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxqueens import _lazy
from jaxqueens.core.oeis import A000170, A002562, A051906
from jaxqueens.io import boards as boardio
from jaxqueens.io import checkpoint as ckpt
from jaxqueens.io.provenance import Record
from jaxqueens.io.tables import SUMMARY, write_json

gather = _lazy.load("jaxqueens.parallel.gather")  # JAX loads only when a count gathers or saves

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


def write_summary(out: str | Path, result, processes: int, record: Record | None = None) -> Path:
    """Write `out/summary.json` of a count result (any object with the `FIELDS` attributes, a
    `CountResult`) counted by `processes` processes, with the OEIS values where known (A000170
    for `total`, A002562 for `unique`); returns its path."""
    doc = {key: getattr(result, key) for key in FIELDS}
    doc["oeis_A000170"] = A000170.get(result.n)
    doc["oeis_A002562"] = A002562.get(result.n) if result.unique is not None else None
    return write_json(Path(out) / SUMMARY, {**doc, "processes": processes}, record)


def write_toroidal_summary(
    out: str | Path,
    n: int,
    total: int,
    seconds: float,
    compile_seconds: float,
    record: Record | None = None,
) -> Path:
    """Write `out/summary.json` of a toroidal count (`count --toroidal`), with OEIS A051906; its
    times have the names the count's summary gives them. Returns its path."""
    doc = {
        "n": n,
        "toroidal": True,
        "total": total,
        "seconds": seconds,
        "compile_seconds": compile_seconds,
        "oeis_A051906": A051906.get(n),
    }
    return write_json(Path(out) / SUMMARY, doc, record)


def solution_paths(out: str | Path) -> tuple[Path, Path]:
    """Where `--enumerate --out OUT` writes `(all solutions, fundamental representatives)`:
    `OUT` and `OUT_fundamental.npy` when `OUT` ends in `.npy`, else the two files inside folder
    OUT."""
    out = Path(out)
    if out.suffix == ".npy":
        return out, out.with_name(out.stem + "_fundamental.npy")
    first = out / SOLUTIONS
    return first, first.with_name(first.stem + "_fundamental.npy")


def write_solutions(out: str | Path, boards: np.ndarray, reps: np.ndarray) -> tuple[Path, Path]:
    """Write every solution (uint8 `[S, n]` `boards`) and one per symmetry class (`[F, n]`
    `reps`) as uint8 `.npy` (`solution_paths`); returns the two paths."""
    every, fund = solution_paths(out)
    boardio.write_boards_npy(every, boards, dtype=np.uint8)
    boardio.write_boards_npy(fund, reps, dtype=np.uint8)
    return every, fund


# A count's finished chunks: {chunk index: [weighted solutions, unweighted completions]} (exact
# ints), stored as gather.INT_WORDS 32-bit words per value in checkpoints and gathers.


def pack_chunks(done: dict[int, list[int]], chunks: int) -> tuple[np.ndarray, np.ndarray]:
    """The finished chunks of a plan of `chunks` as arrays `(have, words)`: bool `[C]` and
    uint32 `[C, 2, INT_WORDS]`."""
    have = np.zeros(chunks, bool)
    values = [[0, 0]] * chunks
    for i, vals in done.items():
        have[i] = True
        values[i] = vals
    return have, gather.int_words(values).reshape(chunks, 2, gather.INT_WORDS)


def unpack_chunks(have: np.ndarray, words: np.ndarray) -> dict[int, list[int]]:
    """The finished chunks from their arrays (`pack_chunks`)."""
    ints = gather.word_ints(words)
    return {int(i): ints[i] for i in np.flatnonzero(have)}


def gather_chunks(done: dict[int, list[int]], chunks: int) -> dict[int, list[int]]:
    """Every process's finished chunks, merged (each process gives its own)."""
    have, words = pack_chunks(done, chunks)
    all_have, all_words = gather.allgather(have), gather.allgather(words)
    merged = {}
    for p in range(all_have.shape[0]):
        merged.update(unpack_chunks(all_have[p], all_words[p]))
    return merged


def load_checkpoint(path: Path, fingerprint: dict, chunks: int) -> dict[int, list[int]]:
    """The finished chunks of a count's checkpoint (`pack_chunks`' arrays); one of other
    settings (`fingerprint`) or of a plan of other than `chunks` chunks is refused."""
    words = ckpt.Spec(np.uint32, (chunks, 2, gather.INT_WORDS))
    tree = ckpt.load(path, fingerprint, {"done": ckpt.Spec(np.bool_, (chunks,)), "words": words})
    return unpack_chunks(tree["done"], tree["words"])


def save_checkpoint(path: Path, fingerprint: dict, done: dict[int, list[int]], chunks: int) -> None:
    """Save a count's finished chunks, with its settings (`fingerprint`), atomically."""
    have, words = pack_chunks(done, chunks)
    ckpt.save(path, {"done": have, "words": words}, fingerprint)
