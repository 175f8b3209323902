"""`jaxqueens solve --mode large`: huge boards, chains one after another.

Runs `jaxqueens.drivers.large.solve_large` (Sosic & Gu's QS4 start, then conflict repair by
swaps) per chain and writes through `jaxqueens.io.large`.
"""

from __future__ import annotations

from pathlib import Path

from jaxqueens import _lazy
from jaxqueens.cli import options
from jaxqueens.drivers import solve_setup
from jaxqueens.io import large as large_out
from jaxqueens.io import progress, provenance, writing
from jaxqueens.io.writing import is_writer
from jaxqueens.plots import chains as plots
from jaxqueens.plots import render

# the solver loads at its first use (jaxqueens._lazy): --help and argument errors never do
large_solve = _lazy.load("jaxqueens.drivers.large")


def cmd_large(args, n: int, setting: dict) -> int:
    """`solve` on the large-n path: `--chains` (default 1) chains one after another, with the
    settings `solve_setup.solve_setting` resolved; exit code 0 when every chain solved, else 1."""
    chains = args.chains or solve_setup.default_chains(n)
    init = setting["init"] or "qs4"
    provenance.settle(args.record, chains=chains, init=init)
    results = []
    for chain in range(chains):
        res = large_solve.solve_large(
            n,
            seed=setting["seed"],
            chain=chain,
            control=options.control(args),
            init=init,
            max_steps=setting["maxsteps"] or large_solve.NO_STEP_LIMIT,
            give_up=True,
        )
        results.append(res)
        s = res.summary
        progress.log("summary", **s)
        label = f"n = {n:,}{f' chain {chain}' if chains > 1 else ''}"
        if s["solved"]:
            print(
                f"{label}: solved and verified; "
                f"init {s.get('init_s', 0):.2f} s ({s.get('conflicted_after_init', 0)} "
                "conflicted queens "
                f"left), search {s.get('search_s', 0):.2f} s ({s['steps']} steps, "
                f"{s.get('moves', 0)} "
                f"moves, {s.get('restarts', 0)} restarts), verify {s.get('verify_s', 0):.2f} "
                "s; "
                f"compile {s.get('compile_s', 0):.2f} s excluded"
            )
        else:
            print(
                f"{label}: no solution found after {s['steps']:,} steps (--maxsteps "
                f"{setting['maxsteps']:,} "
                f"swap attempts; init {s.get('init_s', 0):.2f} s, search "
                f"{s.get('search_s', 0):.2f} s); "
                f"best board {s['pairs']} attacking pairs"
                + (" (best_boards.npy in --out)" if args.out else " (--out DIR saves it)")
            )
        if n <= 16:
            print(render.ascii_board(res.rows))
    with writing.final_write(args.out):
        if args.out and is_writer():
            out = Path(args.out)
            summary = large_solve.run_summary(results)
            files = large_out.write_outputs(results, out, summary, args.record)
            solved = [r for r in results if r.summary.get("solved", True)]
            if solved and n <= render.MAX_PNG_N:
                render.board_png(solved[0].rows, out / "solution.png")
                files.append(out / "solution.png")
            if args.plot:
                files += _plots(results, out, n)
            print(f"wrote {', '.join(f.name for f in files)} to {out}")
    return 0 if all(r.summary.get("solved", True) for r in results) else 1


def _plots(results: list, out: Path, n: int) -> list[Path]:
    """`--plot`: each chain's attacking pairs per recorded step and conflicted queens per round."""
    files = []
    for res in results:
        tag = f"_chain{res.summary.get('chain', 0)}" if len(results) > 1 else ""
        files.append(
            plots.trace_plot(
                res.trace_pairs,
                out / f"trace_conflicting_pairs{tag}.png",
                "conflicting pairs",
                f"large-n repair, n = {n:,} (recorded steps)",
            )
        )
        files.append(
            plots.trace_plot(
                res.round_conflicted,
                out / f"trace_conflicted_queens{tag}.png",
                "conflicting queens",
                f"large-n repair, n = {n:,}: per round",
                xlabel="repair round",
            )
        )
    return files
