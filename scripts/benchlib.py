"""Shared helpers for scripts/bench_*.py: timing, tables and JSON results.

Peers are measured in the same run, interleaved rep by rep, so that a noisy
shared machine slows both alike; report best and median, and compare ratios.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "results"


def timeit(fn: Callable[[], object]) -> float:
    """Seconds for one call of ``fn`` (which must block until its work is done)."""
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def interleaved(fns: dict[str, Callable[[], object]], reps: int) -> dict[str, list[float]]:
    """Time every function ``reps`` times, alternating between them each rep."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            times[name].append(timeit(fn))
    return times


def summary(times: list[float]) -> dict[str, float]:
    """Best (min), median and worst (max) seconds."""
    return {"best": min(times), "median": statistics.median(times), "worst": max(times)}


def environment() -> dict:
    """What the figures were measured on."""
    import jax

    return {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "host": platform.node(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": sys.version.split()[0],
        "jax": jax.__version__,
        "backend": jax.default_backend(),
        "devices": [str(d) for d in jax.devices()],
    }


def table(headers: list[str], rows: list[list]) -> str:
    """A plain-text table with right-aligned columns."""
    cells = [headers] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    line = lambda r: "  ".join(c.rjust(w) for c, w in zip(r, widths, strict=False))
    return "\n".join(
        [line(cells[0]), line(["-" * w for w in widths])] + [line(r) for r in cells[1:]]
    )


def write_results(name: str, payload: dict, out_dir: Path | None = None) -> Path:
    """Write ``payload`` (plus the environment) as JSON, atomically; return the path."""
    from jaxqueens.io.atomic import write_text

    out_dir = Path(out_dir or RESULTS)
    import jax

    path = out_dir / f"{name}-{jax.default_backend()}.json"
    write_text(path, json.dumps({"environment": environment(), **payload}, indent=2) + "\n")
    return path


def fmt_rate(x: float) -> str:
    """A rate with three significant digits and an SI suffix."""
    for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= div:
            return f"{x / div:.3g}{suffix}"
    return f"{x:.3g}"
