"""Fit the member-choice rule of constellation counting (``core/constellations.preference``).

Every member of a symmetry class of border configurations has the same completions, but the
counting DFS walks trees of very different sizes. This script searches EVERY border
configuration of each n (its tasks of 2 host-placed columns, with the package's kernel, which
returns the edges it took), fits log(tree edges) against the class mean by least squares on
the quadratic terms of :func:`jaxqueens.core.constellations.preference_features`, and reports,
for every n (fitted or held out), the edges walked with the member each rule picks against the
best member of every class. Prints ``PREFERENCE_COEFFICIENTS`` to paste and writes
``benchmarks/results/count-preference-cpu.json``.

Usage: python scripts/fit_count_preference.py [--fit 12 13 14 15] [--check 16] [--out-dir DIR]
(n = 16 takes about 25 s of CPU, n = 17 about 4 minutes.)
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import benchlib
import jax
import jax.numpy as jnp

import jaxqueens
from jaxqueens.core import constellations as con
from jaxqueens.parallel.shard import map_items, pad_rows
from jaxqueens.solvers import count as solver

jaxqueens.configure()  # before any JAX op: one CPU device per core, XLA:CPU loop flags, cache


def member_edges(n: int, depth: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every border configuration of n, its class (smallest image key), and the tree edges the
    counting kernel (:func:`jaxqueens.solvers.count.walk`, level tables and look-ahead) walks to
    count its completions, over its tasks of ``depth`` host-placed columns."""
    cfg = con.border_configurations(n)
    orbit = con._key(n, con.images(n, cfg)).min(axis=0)
    allow = con.allow_masks(n, cfg)
    masks, owner = con.tasks(n, allow, depth)
    config = solver.Config(n, con.table_levels(n, depth))
    tables = con.level_tables(n, cfg, allow, depth).reshape(len(cfg), -1)
    items = np.zeros((len(owner), config.width), np.uint32)
    for word, col in [(solver.COLS, 0), (solver.LD, 1), (solver.RD, 2), (solver.AV, 3)]:
        items[:, solver.HEAD + word] = masks[:, col]
    items[:, solver.HEAD + solver.BACK] = solver.DONE
    items[:, config.state_width :] = tables[owner]
    # a task whose first searched column is its last is counted on the host: no edges
    _, levels = con.level_columns(n, cfg, depth)
    items[levels[owner] == 1, 0] = solver.DONE

    def edges(item):
        state, table = solver.unpack(item, config)
        return solver.walk(state, table, solver.Params(jnp.int32(solver.MAX_BUDGET)), config)[1]

    devices = jax.local_device_count()
    walked = np.asarray(jax.jit(lambda t: map_items(edges, t, devices))(pad_rows(items, devices)))
    out = np.zeros(len(cfg), np.int64)
    np.add.at(out, owner, walked[: len(owner)])
    return cfg, orbit, out


def picked(score: np.ndarray, orbit: np.ndarray, edges: np.ndarray) -> int:
    """Edges walked when every class searches its member with the smallest score."""
    _, cls = np.unique(orbit, return_inverse=True)
    order = np.lexsort((score, cls))
    first = np.ones(len(order), bool)
    first[1:] = cls[order][1:] != cls[order][:-1]
    return int(edges[order[first]].sum())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fit", type=int, nargs="+", default=[12, 13, 14, 15])
    ap.add_argument("--check", type=int, nargs="*", default=[16])
    ap.add_argument("--out-dir", type=str, default=None)
    args = ap.parse_args()
    data, xs, ys = {}, [], []
    for n in sorted(set(args.fit) | set(args.check)):
        t0 = time.perf_counter()
        data[n] = member_edges(n)
        print(
            f"n = {n}: {len(data[n][0]):,} configurations searched in "
            f"{time.perf_counter() - t0:.1f} s",
            flush=True,
        )
    for n in args.fit:
        cfg, orbit, edges = data[n]
        _, cls = np.unique(orbit, return_inverse=True)
        x, y = con.preference_features(n, cfg), np.log(np.maximum(edges, 1))
        size = np.bincount(cls)
        x_mean = np.stack([np.bincount(cls, x[:, j]) / size for j in range(x.shape[1])], 1)
        xs.append(x - x_mean[cls])
        ys.append(y - (np.bincount(cls, y) / size)[cls])
    coef = np.linalg.lstsq(np.concatenate(xs), np.concatenate(ys), rcond=None)[0]
    rows, results = [], []
    for n, (cfg, orbit, edges) in data.items():
        _, cls = np.unique(orbit, return_inverse=True)
        best = np.full(cls.max() + 1, np.iinfo(np.int64).max)
        np.minimum.at(best, cls, edges)
        worst = np.zeros(cls.max() + 1, np.int64)
        np.maximum.at(worst, cls, edges)
        row = {
            "n": n,
            "fitted": n in args.fit,
            "best": int(best.sum()),
            "worst": int(worst.sum()),
            "package": picked(con.preference(n, cfg), orbit, edges),
            "this_fit": picked(con.preference_features(n, cfg) @ coef, orbit, edges),
        }
        results.append(row)
        rows.append(
            [
                n,
                "fit" if row["fitted"] else "held out",
                f"{row['package']:,}",
                f"{row['this_fit']:,}",
                f"{row['best']:,}",
                f"{row['worst']:,}",
            ]
        )
    print(
        benchlib.table(
            ["n", "role", "package rule", "this fit", "best member", "worst member"], rows
        )
    )
    print("PREFERENCE_COEFFICIENTS =", tuple(round(float(c), 3) for c in coef))
    path = benchlib.write_results(
        "count-preference",
        {
            "fit": args.fit,
            "check": args.check,
            "coefficients": [float(c) for c in coef],
            "rows": results,
        },
        args.out_dir and os.path.abspath(args.out_dir),
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
