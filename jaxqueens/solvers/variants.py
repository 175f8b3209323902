"""What the kernels accept, in one JAX-free module: the names of their variants, their size
limits and min-conflicts' default restart period.

The command line builds its parser and checks its arguments from these before JAX is imported
(`jaxqueens._lazy`); the kernels import their names from here (`solvers.minconflicts.INITS` is
this `INITS`). Import nothing heavy here.
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
"""The default restart period (steps per attempt) on a plain board, `default_max_steps`:
`min(n^2 // RESTART_SQUARE_DIVISOR, max(RESTART_FLOOR, MAX_STEPS_PER_QUEEN * n))` (the docs'
minconflicts page says why)."""

CLASSIC_MAX_STEPS_FLOOR = 4000
"""The CP468 program's give-up limit, `max(CLASSIC_MAX_STEPS_FLOOR, MAX_STEPS_PER_QUEEN * n)`:
the period on toroidal and constrained boards (`default_max_steps`)."""


def default_max_steps(n: int, plain: bool = True) -> int:
    """The steps per attempt before a restart when `max_steps` is not given.

    Args:
      n: board size.
      plain: a plain board, with the tuned period (`RESTART_FLOOR`); else a toroidal or
        constrained one, with the classic `max(4000, 2 n)`.

    Returns:
      The restart period.
    """
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
