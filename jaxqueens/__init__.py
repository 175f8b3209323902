"""jaxqueens: array-parallel N-Queens on JAX.

Boards are integer arrays ``rows[..., n]`` (``rows[c]`` is the row of the queen
in column ``c``). The kernels in :mod:`jaxqueens.board` are jitted and work on
any leading batch shape; :mod:`jaxqueens.checker` is the independent NumPy
checker every reported solution passes; :mod:`jaxqueens.boardio` reads and
writes board files; :func:`jaxqueens.solve` runs batched min-conflicts chains, :func:`jaxqueens.anneal` LS, TA
and SA chains, :func:`jaxqueens.evolve` genetic algorithms.
"""

from jaxqueens import backend as _backend

_backend.configure_cpu_devices()  # before any JAX computation; see backend.py

from jaxqueens.board import (  # noqa: E402
    LineCounts,
    attacking_pairs,
    conflicted_mask,
    is_solution,
    line_counts,
    n_attacks,
    queen_conflicts,
)
from jaxqueens.errors import BoardFileError, QueensError, SolutionCheckError  # noqa: E402
from jaxqueens.annealing import AnnealResult, anneal  # noqa: E402
from jaxqueens.ga import EvolveResult, GAConfig, GAParams, evolve  # noqa: E402
from jaxqueens.knuth import Estimate, estimate  # noqa: E402
from jaxqueens.mcsolve import SolveResult, solve  # noqa: E402
from jaxqueens.solstats import StatsResult, stats  # noqa: E402

__version__ = "0.1.0"

__all__ = [
    "AnnealResult",
    "BoardFileError",
    "Estimate",
    "EvolveResult",
    "GAConfig",
    "GAParams",
    "LineCounts",
    "QueensError",
    "SolutionCheckError",
    "SolveResult",
    "StatsResult",
    "anneal",
    "attacking_pairs",
    "conflicted_mask",
    "estimate",
    "evolve",
    "is_solution",
    "line_counts",
    "n_attacks",
    "queen_conflicts",
    "solve",
    "stats",
]
