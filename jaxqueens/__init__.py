"""jaxqueens: array-parallel N-Queens on JAX.

Boards are integer arrays ``rows[..., n]`` (``rows[c]`` is the row of the queen in column ``c``).
This module is the public API: every name in ``__all__`` is a user-level function or result type,
re-exported from the layer it lives in (README, "Architecture"):

- board kernels (JAX, any leading batch shape): :func:`attacking_pairs`, :func:`queen_conflicts`,
  :func:`n_attacks`, :func:`conflicted_mask`, :func:`is_solution`, :func:`line_counts`;
- the independent NumPy checker that every reported solution passes: :func:`check_board`,
  :func:`are_solutions`; board files: :func:`load_boards`, :func:`write_board`,
  :func:`write_boards_npy`, :func:`write_jsonl`; symmetry: :func:`canonical`, :func:`fundamental`;
- solvers: :func:`solve` (batched min-conflicts), :func:`solve_large` (one huge board),
  :func:`anneal` (LS, TA, SA), :func:`evolve` (genetic algorithms), :func:`first_solution` and
  :func:`random_first_solutions` (backtracking), :func:`count_solutions` and
  :func:`enumerate_solutions` (exact), :func:`estimate` (Knuth's estimator), :func:`stats`.

Importing the package has one side effect, here and nowhere else: before any JAX computation it
asks JAX for one CPU device per core and sets XLA:CPU's loop flags
(:func:`jaxqueens.parallel.devices.configure_cpu_devices`: ``JAXQUEENS_CPU_DEVICES`` sets the
count, ``JAXQUEENS_XLA_FLAGS=0`` leaves ``XLA_FLAGS`` alone). If JAX's backend has already
started, the settings are left as they are.
"""

from jaxqueens.parallel import devices as _devices

_devices.configure_cpu_devices()  # the one side effect of `import jaxqueens` (see above)

from jaxqueens._version import __version__  # noqa: E402
from jaxqueens.core.board import (  # noqa: E402
    LineCounts,
    attacking_pairs,
    conflicted_mask,
    is_solution,
    line_counts,
    n_attacks,
    queen_conflicts,
)
from jaxqueens.core.checker import CheckReport, are_solutions, check_board  # noqa: E402
from jaxqueens.core.symmetry import canonical, fundamental  # noqa: E402
from jaxqueens.drivers.anneal import AnnealResult, anneal  # noqa: E402
from jaxqueens.drivers.backtrack import first_solution, random_first_solutions  # noqa: E402
from jaxqueens.drivers.count import CountResult, count_solutions, enumerate_solutions  # noqa: E402
from jaxqueens.drivers.estimate import Estimate, estimate  # noqa: E402
from jaxqueens.drivers.ga import EvolveResult, evolve  # noqa: E402
from jaxqueens.drivers.large import LargeResult, solve_large  # noqa: E402
from jaxqueens.drivers.minconflicts import SolveResult, solve  # noqa: E402
from jaxqueens.drivers.stats import StatsResult, stats  # noqa: E402
from jaxqueens.errors import BoardFileError, QueensError, SolutionCheckError  # noqa: E402
from jaxqueens.io.boards import load_boards, write_board, write_boards_npy, write_jsonl  # noqa: E402
from jaxqueens.solvers.ga import GAConfig, GAParams  # noqa: E402

__all__ = [
    "AnnealResult",
    "BoardFileError",
    "CheckReport",
    "CountResult",
    "Estimate",
    "EvolveResult",
    "GAConfig",
    "GAParams",
    "LargeResult",
    "LineCounts",
    "QueensError",
    "SolutionCheckError",
    "SolveResult",
    "StatsResult",
    "__version__",
    "anneal",
    "are_solutions",
    "attacking_pairs",
    "canonical",
    "check_board",
    "conflicted_mask",
    "count_solutions",
    "enumerate_solutions",
    "estimate",
    "evolve",
    "first_solution",
    "fundamental",
    "is_solution",
    "line_counts",
    "load_boards",
    "n_attacks",
    "queen_conflicts",
    "random_first_solutions",
    "solve",
    "solve_large",
    "stats",
    "write_board",
    "write_boards_npy",
    "write_jsonl",
]
