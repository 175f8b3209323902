"""Exact counting on the CPU: one DFS per task against a lockstep batch of DFS stacks (issue 27).

An experiment, not a package kernel. Issue 27 asks whether, on the CPU, a lockstep batch of tasks
wide enough for the vector units (one step advancing many independent DFS stacks with
``jnp.where``, no gathers) beats the per-task loop of :mod:`jaxqueens.solvers.count`. Before
porting the constellation search, this measures the two layouts on the same, plain search:

- ``plain, per task``: a bitmask DFS over the columns after a prefix of ``d`` columns, one task
  after the other (``lax.map``), its stack ``[levels]`` words indexed by the level;
- ``plain, lockstep L``: the same DFS on ``L`` tasks at once, stacks ``[levels, L]``, every level
  read and written through a one-hot mask of the lanes' levels (no gather or scatter in the
  step), a lane that finishes its task takes the next one from the task table.

Both walk the same tree with the same iterations (an edge, or a pop), so their seconds per
iteration compare directly. The package's counter (``jaxqueens count``'s kernel: constellations
under the symmetries, gaps over the border queens' columns, look-ahead, no pop iterations) is
timed beside them on the same device, with its tree edges, as the figure to beat: a smaller
tree at a higher cost per edge.

Everything runs on ONE CPU device (one core), reps alternated, best and median.

Usage: python scripts/bench_count_lockstep.py [--reps 3] [--quick] [--out-dir DIR]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

import jaxqueens

jaxqueens.configure(cpu_devices=1)  # before any JAX op: one device (one core), XLA:CPU loop flags

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

from jaxqueens.core.oeis import A000170  # noqa: E402
from jaxqueens.drivers import count as counting  # noqa: E402

sys.path.insert(0, __import__("os").path.dirname(__file__))
import benchlib  # noqa: E402

U32 = jnp.uint32
LEVELS = 10  # columns searched after the prefix (the tasks are every prefix of n - LEVELS)
SIZES, QUICK_SIZES = (14, 15), (11,)
LANES, QUICK_LANES = (16, 32, 64), (8, 32)


def prefixes(n: int, d: int) -> np.ndarray:
    """Every placement of the first ``d`` columns: uint32 ``[T, 3]`` root masks (rows, ld, rd)."""
    full, out = (1 << n) - 1, []

    def place(col, rows, ld, rd):
        if col == d:
            out.append((rows, ld, rd))
            return
        free = ~(rows | ld | rd) & full
        while free:
            bit = free & -free
            free ^= bit
            place(col + 1, rows | bit, ((ld | bit) << 1) & full, (rd | bit) >> 1)

    place(0, 0, 0, 0)
    return np.asarray(out, np.uint32)


def _child(av, rows, ld, rd, mask):
    """The lowest free row of a level and the child's masks and free rows."""
    bit = av & (U32(0) - av)
    nr, nl, nd = rows | bit, ((ld | bit) << 1) & mask, (rd | bit) >> 1
    return bit, nr, nl, nd, ~(nr | nl | nd) & mask


def per_task(task, levels: int, mask):
    """One task's DFS: (completions, iterations), uint32 each. Stack: ``[levels]`` words."""
    zero = jnp.zeros(levels, U32)
    free0 = ~(task[0] | task[1] | task[2]) & mask
    init = (
        jnp.int32(0),
        zero.at[0].set(free0),
        zero.at[0].set(task[0]),
        zero.at[0].set(task[1]),
        zero.at[0].set(task[2]),
        U32(0),
        U32(0),
    )

    def body(s):
        lvl, av, rows, ld, rd, found, its = s
        a = av[lvl]
        has = a != 0
        bit, nr, nl, nd, free = _child(a, rows[lvl], ld[lvl], rd[lvl], mask)
        last = lvl == levels - 1
        av = av.at[lvl].set(a ^ bit)
        push = has & ~last & (free != 0)
        up = jnp.minimum(lvl + 1, levels - 1)
        av = av.at[up].set(jnp.where(push, free, av[up]))
        rows = rows.at[up].set(jnp.where(push, nr, rows[up]))
        ld = ld.at[up].set(jnp.where(push, nl, ld[up]))
        rd = rd.at[up].set(jnp.where(push, nd, rd[up]))
        lvl = jnp.where(push, lvl + 1, jnp.where(has, lvl, lvl - 1))
        return lvl, av, rows, ld, rd, found + (has & last).astype(U32), its + U32(1)

    out = lax.while_loop(lambda s: s[0] >= 0, body, init)
    return out[5], out[6]


def lockstep(tasks, levels: int, mask, lanes: int):
    """The same DFS on ``lanes`` tasks at once: (completions, lockstep steps), uint32 each.

    Stacks ``[levels, lanes]``; a lane's level is read and written through the one-hot mask
    ``levels == lvl``; a lane whose task is done (``lvl < 0``) takes the next task (the one
    gather, of the task table, only in the steps where some lane refills)."""
    n_tasks = tasks.shape[0]
    level = jnp.arange(levels, dtype=jnp.int32)[:, None]
    zero = jnp.zeros((levels, lanes), U32)

    def refill(s):
        lvl, av, rows, ld, rd, found, next_task = s
        want = lvl < 0
        tid = next_task + jnp.cumsum(want.astype(jnp.int32)) - 1
        ok = want & (tid < n_tasks)
        t = tasks[jnp.clip(tid, 0, n_tasks - 1)]  # [lanes, 3]
        at0 = (level == 0) & ok[None, :]
        av = jnp.where(at0, (~(t[:, 0] | t[:, 1] | t[:, 2]) & mask)[None, :], av)
        rows = jnp.where(at0, t[None, :, 0], rows)
        ld = jnp.where(at0, t[None, :, 1], ld)
        rd = jnp.where(at0, t[None, :, 2], rd)
        lvl = jnp.where(ok, 0, lvl)
        return lvl, av, rows, ld, rd, found, next_task + jnp.sum(want.astype(jnp.int32))

    def body(c):
        s, steps = c
        lvl, av, rows, ld, rd, found, next_task = s
        here = level == lvl[None, :]
        pick = lambda x: jnp.sum(jnp.where(here, x, U32(0)), axis=0)
        a = pick(av)
        live = lvl >= 0
        has = (a != 0) & live
        bit, nr, nl, nd, free = _child(a, pick(rows), pick(ld), pick(rd), mask)
        last = lvl == levels - 1
        av = jnp.where(here, (a ^ bit)[None, :], av)
        push = has & ~last & (free != 0)
        down = (level == (lvl + 1)[None, :]) & push[None, :]
        av = jnp.where(down, free[None, :], av)
        rows = jnp.where(down, nr[None, :], rows)
        ld = jnp.where(down, nl[None, :], ld)
        rd = jnp.where(down, nd[None, :], rd)
        lvl = jnp.where(live, jnp.where(push, lvl + 1, jnp.where(has, lvl, lvl - 1)), lvl)
        s = (lvl, av, rows, ld, rd, found + (has & last).astype(U32), next_task)
        s = lax.cond(jnp.any(lvl < 0) & (next_task < n_tasks), refill, lambda s: s, s)
        return s, steps + U32(1)

    start = refill(
        (jnp.full(lanes, -1, jnp.int32), zero, zero, zero, zero, jnp.zeros(lanes, U32), 0)
    )
    s, steps = lax.while_loop(lambda c: jnp.any(c[0][0] >= 0), body, (start, U32(0)))
    return jnp.sum(s[5]), steps


def measure(n: int, lanes_list, reps: int) -> tuple[list, list]:
    """The rows (JSON records and table lines) of one board size."""
    records: list = []
    lines: list = []
    d, mask = n - LEVELS, U32((1 << n) - 1)
    tasks = jnp.asarray(prefixes(n, d))
    plain = jax.jit(lambda t, mask=mask: lax.map(lambda x: per_task(x, LEVELS, mask), t))
    found, its = (np.asarray(x, np.int64) for x in plain(tasks))
    iterations = int(its.sum())
    assert int(found.sum()) == A000170[n], "the per-task DFS miscounted"
    fns = {"plain, per task": lambda: jax.block_until_ready(plain(tasks))}
    steps = {}
    for lanes in lanes_list:
        run = jax.jit(lambda t, lanes=lanes, mask=mask: lockstep(t, LEVELS, mask, lanes))
        got, taken = run(tasks)
        assert int(got) == A000170[n], f"the lockstep DFS ({lanes} lanes) miscounted"
        steps[lanes] = int(taken)
        fns[f"plain, lockstep {lanes}"] = lambda run=run: jax.block_until_ready(run(tasks))
    package = counting.count_solutions(n)  # compiles (and checks) the package's kernel
    assert package.total == A000170[n]
    seconds = {}

    def package_call():
        seconds.setdefault("package", []).append(counting.count_solutions(n).seconds)

    fns["package (constellations)"] = package_call
    times = benchlib.interleaved(fns, reps)
    times["package (constellations)"] = seconds["package"]  # its kernel time, no plan
    for name, t in times.items():
        s = benchlib.summary(t)
        work = package.edges if name.startswith("package") else iterations
        lanes = int(name.rsplit(" ", 1)[1]) if "lockstep" in name else None
        row = {
            "n": n,
            "variant": name,
            "tasks": package.prefixes if name.startswith("package") else len(tasks),
            "tree_iterations": work,
            "lockstep_steps": steps.get(lanes) if lanes else None,
            "lane_occupancy": work / (steps[lanes] * lanes) if lanes else None,
            "seconds": s,
            "ns_per_iteration": {k: v / work * 1e9 for k, v in s.items()},
        }
        records.append(row)
        lines.append(
            [
                n,
                name,
                f"{work:,}",
                f"{s['best']:.3f}",
                f"{s['median']:.3f}",
                f"{row['ns_per_iteration']['best']:.2f}",
                f"{row['ns_per_iteration']['median']:.2f}",
                f"{row['lane_occupancy']:.2f}" if lanes else "",
            ]
        )
    return records, lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="n = 11 only (a smoke test)")
    ap.add_argument(
        "--out-dir", default=None, help="where the JSON goes (default benchmarks/results)"
    )
    args = ap.parse_args()
    records: list = []
    lines: list = []
    for n in QUICK_SIZES if args.quick else SIZES:
        rec, lin = measure(n, QUICK_LANES if args.quick else LANES, args.reps)
        records += rec
        lines += lin
        print(f"done n={n}", file=sys.stderr, flush=True)
    print(f"exact counting on one CPU core, best / median of {args.reps} reps (alternated)")
    print(
        benchlib.table(
            [
                "n",
                "search",
                "iterations (package: edges)",
                "best s",
                "median s",
                "ns/it best",
                "ns/it median",
                "lane occupancy",
            ],
            lines,
        )
    )
    path = benchlib.write_results(
        "count-lockstep" + ("-quick" if args.quick else ""),
        {"reps": args.reps, "levels": LEVELS, "rows": records},
        args.out_dir,
    )
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
