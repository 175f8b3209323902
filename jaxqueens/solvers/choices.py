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
ANNEAL_PRESETS = ("default", "classic", "nmof")
"""``anneal --preset``: measured defaults, the earlier (NMOF TAopt/SAopt) ones, NMOF's vignette
(:data:`jaxqueens.drivers.settings.ANNEAL_PRESET_SETTINGS`)."""

# solvers.estimate
ESTIMATE_MAX_N = 64
"""Largest board of Knuth's estimator: two uint32 words of search state."""

# drivers.minconflicts (and the path choice of ``solve --mode auto``)
MAX_BATCHED_N = 46340
"""Largest n of the batched kernel (square index c * n + r fits int32)."""

RESTART_SQUARE_DIVISOR = 2
RESTART_FLOOR = 500
MAX_STEPS_PER_QUEEN = 2
"""The default restart period (steps per attempt) on a plain board, :func:`default_max_steps`:
``min(n^2 // RESTART_SQUARE_DIVISOR, max(RESTART_FLOOR, MAX_STEPS_PER_QUEEN * n))``, chosen by
measurement (``scripts/bench_restarts.py``, ``benchmarks/results/restarts-cpu.json``): for every
init (random, permutation, greedy, qs4) and with tabu, at n = 8, 12, 16, 32, 64, 100, 1000 and
10^4, its expected seconds per solution are within 7% of the best fixed period's (its steps within
2% for random and permutation boards), where the CP468 program's give-up limit ``max(4000, 2n)``
cost up to 7x at n = 8 (6% of n = 8 attempts never solve; the best period there is about 30-50
steps). Small boards have heavy-tailed attempts, best cut after ~n^2/2 steps; from n ~ 32 on
attempts rarely stall and any period past the slowest attempt is as good: from a random board
min-conflicts needs about 0.5 n steps (0.59 n at n = 1000, the slowest of 200 0.87 n), hence the
2 n. Geometric growth (best: 1.05x worse) and Luby's sequence (1.14x with a unit of n^2/4,
13x and more with a fixed unit) were measured and lost to the fixed period."""

CLASSIC_MAX_STEPS_FLOOR = 4000
"""The earlier default period, ``max(CLASSIC_MAX_STEPS_FLOOR, MAX_STEPS_PER_QUEEN * n)`` (the CP468
program's give-up limit), kept for toroidal and constrained boards, whose attempts were not
measured (:func:`default_max_steps`)."""

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


def default_max_steps(n: int, plain: bool = True) -> int:
    """Steps per attempt before a restart when ``--maxsteps`` is not given: the measured restart
    period on a plain board (:data:`RESTART_FLOOR`), the classic ``max(4000, 2 n)`` on a toroidal
    or constrained one (``plain=False``)."""
    if not plain:
        return max(CLASSIC_MAX_STEPS_FLOOR, MAX_STEPS_PER_QUEEN * n)
    return max(1, min(n * n // RESTART_SQUARE_DIVISOR, max(RESTART_FLOOR, MAX_STEPS_PER_QUEEN * n)))


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

# drivers.ga
GA_PRESETS = ("default", "classic")
"""``evolve --preset``: measured defaults, the classic course GA
(:data:`jaxqueens.drivers.settings.GA_PRESET_SETTINGS`)."""
