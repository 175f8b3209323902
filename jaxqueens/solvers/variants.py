"""What the kernels accept, in one JAX-free module: the names of their variants, their size
limits and min-conflicts' default restart period.

The command line builds its parser (``choices=``, help texts) and checks its arguments from these
before JAX is imported, so ``jaxqueens --help`` and every argument error stay instant
(:mod:`jaxqueens._lazy`). Each is the one source of truth: the kernels import their names from
here (``solvers.minconflicts.INITS`` is this ``INITS``). The drivers' policy (default chains, the
``solve --mode auto`` path, presets) is in :mod:`jaxqueens.drivers.settings`. Import nothing heavy
here.
"""

from __future__ import annotations

# solvers.minconflicts
INITS = ("random", "permutation", "greedy", "qs4")
MOVES = ("minconflicts", "cisc352")

MAX_BATCHED_N = 46340
"""Largest n of the batched min-conflicts kernel (square index c * n + r fits int32)."""

# solvers.anneal
METHODS = ("ls", "ta", "sa")
NEIGHBOURS = ("step", "swap")
EDGES = ("wrap", "nmof")
OBJECTIVES = ("attacks", "pairs")

# solvers.estimate
ESTIMATE_MAX_N = 64
"""Largest board of Knuth's estimator: two uint32 words of search state."""

# solvers.count
COUNT_MAX_N = 32
"""Largest board the counting kernels take: uint32 line masks."""

# solvers.minconflicts: the default restart period (Params.max_steps)
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
"""The CP468 program's give-up limit, ``max(CLASSIC_MAX_STEPS_FLOOR, MAX_STEPS_PER_QUEEN * n)``,
the period on toroidal and constrained boards, whose attempts were not measured
(:func:`default_max_steps`)."""


def default_max_steps(n: int, plain: bool = True) -> int:
    """Steps per attempt before a restart when ``--maxsteps`` is not given: the measured restart
    period on a plain board (:data:`RESTART_FLOOR`), the classic ``max(4000, 2 n)`` on a toroidal
    or constrained one (``plain=False``)."""
    if not plain:
        return max(CLASSIC_MAX_STEPS_FLOOR, MAX_STEPS_PER_QUEEN * n)
    return max(1, min(n * n // RESTART_SQUARE_DIVISOR, max(RESTART_FLOOR, MAX_STEPS_PER_QUEEN * n)))


def solver_name(
    family: str,
    *,
    init: str = "permutation",
    tabu: int = 0,
    move: str = "minconflicts",
    method: str = "ta",
    encoding: str = "permutation",
) -> str:
    """The one name a solver has in every output (the `solver` column and field, figures).

    Min-conflicts is `mc-<init>` (`mc-tabu` from permutations with a tabu tenure, `-tabu` after
    another start, `-cisc352` after the CISC 352 move); LS/TA/SA are `ls`, `ta`, `sa`; the GA is
    `ga-<encoding>`; other families (`backtrack`, `large`) are their own name. These are the
    names `compare --solvers` takes.

    Args:
      family: "minconflicts", "anneal", "ga", "backtrack" or "large".
      init: min-conflicts' start.
      tabu: min-conflicts' plateau tabu tenure.
      move: min-conflicts' move.
      method: the annealing method.
      encoding: the GA's encoding.

    Returns:
      The solver's name.
    """
    if family == "minconflicts":
        name = "mc-tabu" if tabu and init == "permutation" else f"mc-{init}"
        name += "-tabu" if tabu and init != "permutation" else ""
        return name if move == "minconflicts" else f"{name}-{move}"
    if family == "anneal":
        return method
    if family == "ga":
        return f"ga-{encoding}"
    return family
