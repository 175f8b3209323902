"""The names and limits of the solvers' variants, in one JAX-free module.

The command line builds its parser (``choices=``, help texts) and checks its arguments from these
before JAX is imported, so ``jaxqueens --help`` and every argument error stay instant
(:mod:`jaxqueens._lazy`). Each is the one source of truth: the solver and driver modules import
their names from here (``solvers.minconflicts.INITS`` is this ``INITS``). Import nothing heavy here.
"""

from __future__ import annotations

# solvers.minconflicts
INITS = ("random", "permutation", "greedy", "qs4")
MOVES = ("minconflicts", "cisc352")

# solvers.anneal
METHODS = ("ls", "ta", "sa")
NEIGHBOURS = ("step", "swap")
EDGES = ("wrap", "nmof")
OBJECTIVES = ("attacks", "pairs")

# solvers.estimate
ESTIMATE_MAX_N = 64
"""Largest board of Knuth's estimator: two uint32 words of search state."""

# drivers.minconflicts (and the path choice of ``solve --mode auto``)
MAX_BATCHED_N = 46340
"""Largest n of the batched kernel (square index c * n + r fits int32)."""

MAX_STEPS_FLOOR = 4000
MAX_STEPS_PER_QUEEN = 2
"""Default steps per attempt: ``max(MAX_STEPS_FLOOR, MAX_STEPS_PER_QUEEN * n)``. From a random
permutation min-conflicts needs about 0.5 n steps (measured: mean 0.59 n at n = 1000, 0.51 n at
n = 3000, the slowest of 40 chains 0.66 n); a fixed 4000 restarted every attempt just before it
would solve from n ~ 8500 on, so such runs never finished."""

DEFAULT_CHAIN_WORK = 4e8
"""Default number of chains: ``DEFAULT_CHAIN_WORK / n^2`` (at most 1000, at least 1), about a
quarter second of batched search; it falls smoothly with n (1000 up to n = 632, 16 at n = 5000,
1 from n = 20,000), so no n doubles or halves the job of its neighbour."""

BATCHED_S_PER_QUEEN2 = 6.1e-10
"""Batched min-conflicts, wall seconds per chain per n^2 on the reference 2-core CPU (2 devices;
measured 5.5 ms per chain at n = 3000)."""
LARGE_S_PER_CHAIN = 0.02
LARGE_S_PER_QUEEN = 1e-6
"""Large-n path, wall seconds per chain: ``LARGE_S_PER_CHAIN + LARGE_S_PER_QUEEN * n`` (measured
20 ms per chain for n = 1000 .. 20,000; 1.0 s at n = 10^6), one chain after another."""

CALL_WORK = 1 << 30
"""Bound on the queen-steps (steps x n) of one attempt of every chain of a kernel call, per
device (about a second on the reference CPU): :func:`default_chunk` keeps ``chunk * max_steps * n``
under ``devices * CALL_WORK``, so the progress line ticks within a second or two even when no
chain has solved yet."""


def default_max_steps(n: int) -> int:
    """Steps per attempt before a restart, by default (:data:`MAX_STEPS_PER_QUEEN`)."""
    return max(MAX_STEPS_FLOOR, MAX_STEPS_PER_QUEEN * n)


def default_chains(n: int) -> int:
    """Chains a run solves when no budget is given (:data:`DEFAULT_CHAIN_WORK`)."""
    return int(min(1000, max(1, DEFAULT_CHAIN_WORK // (n * n))))


def predicted_seconds(n: int, chains: int, path: str, devices: int = 2) -> float:
    """Predicted wall seconds of ``chains`` chains on ``path`` ("batched" or "large"), from the
    per-chain figures measured on the reference CPU (compilation, about equal, left out)."""
    if path == "batched":
        return chains * BATCHED_S_PER_QUEEN2 * n * n * 2 / max(1, devices)
    return chains * (LARGE_S_PER_CHAIN + LARGE_S_PER_QUEEN * n)


def auto_path(
    n: int,
    chains: int | None,
    solutions: int | None = None,
    seconds: float | None = None,
    devices: int = 2,
) -> str:
    """The path ``--mode auto`` takes: "large" when it is predicted faster for ``chains`` chains
    (default :func:`default_chains`) and the run needs nothing only the batched path has (a
    ``solutions`` or ``seconds`` budget), or when n is beyond the batched kernel; else "batched".
    With the measured figures the large path wins from n ~ 5,900 on for any number of chains."""
    if n > MAX_BATCHED_N:
        return "large"
    if solutions is not None or seconds is not None or n < 4:
        return "batched"
    k = chains if chains is not None else default_chains(n)
    faster = predicted_seconds(n, k, "large", devices) < predicted_seconds(n, k, "batched", devices)
    return "large" if faster else "batched"


# drivers.count
COUNT_MAX_N = 32  # uint32 masks
COUNT_ENUMERATE_MAX_N = 14

# drivers.stats
STATS_SOLVERS = ("minconflicts", "anneal", "ga")
