"""jaxqueens: array-parallel N-Queens on JAX.

Boards are integer arrays ``rows[..., n]`` (``rows[c]`` is the row of the queen
in column ``c``). The kernels in :mod:`jaxqueens.core.board` are jitted and work on
any leading batch shape; :mod:`jaxqueens.core.checker` is the independent NumPy
checker every reported solution passes; :mod:`jaxqueens.io.boards` reads and
writes board files; :func:`jaxqueens.solve` runs batched min-conflicts chains, :func:`jaxqueens.anneal` LS, TA
and SA chains, :func:`jaxqueens.evolve` genetic algorithms.
"""

from jaxqueens.parallel import devices as _backend

_backend.configure_cpu_devices()  # before any JAX computation; see backend.py

from jaxqueens.core.board import (  # noqa: E402
    LineCounts,
    attacking_pairs,
    conflicted_mask,
    is_solution,
    line_counts,
    n_attacks,
    queen_conflicts,
)
from jaxqueens.errors import BoardFileError, QueensError, SolutionCheckError  # noqa: E402
from jaxqueens.drivers.anneal import AnnealResult, anneal  # noqa: E402
from jaxqueens.solvers.ga import EvolveResult, GAConfig, GAParams, evolve  # noqa: E402
from jaxqueens.drivers.estimate import Estimate, estimate  # noqa: E402
from jaxqueens.drivers.minconflicts import SolveResult, solve  # noqa: E402
from jaxqueens.drivers.stats import StatsResult, stats  # noqa: E402

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
