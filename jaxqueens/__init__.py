"""jaxqueens: array-parallel N-Queens on JAX.

Boards are integer arrays `rows[..., n]` (`rows[c]` is the row of the queen in column `c`).
This module is the public API: the board kernels, the independent NumPy checker, board files,
symmetry, the host drivers (`solve`, `solve_large`, `anneal`, `evolve`, `count_solutions`,
`estimate`, `solve_instances`, ...) and every kernel family's `<Family>Config` and
`<Family>Params`. Each name is imported from its module at its first use, so importing the
package does not import JAX and changes nothing in the process; `configure` is the one call
that sets JAX up for jaxqueens.
"""

import importlib

from jaxqueens._version import __version__ as __version__

_PUBLIC = {
    "jaxqueens.core.board": (
        "LineCounts",
        "attacking_pairs",
        "conflicted_mask",
        "is_solution",
        "line_counts",
        "n_attacks",
        "queen_conflicts",
    ),
    "jaxqueens.core.checker": ("CheckReport", "are_solutions", "check_board"),
    "jaxqueens.core.symmetry": ("canonical", "fundamental"),
    "jaxqueens.drivers.anneal": ("AnnealResult", "anneal"),
    "jaxqueens.drivers.backtrack": ("first_solution", "random_first_solutions"),
    "jaxqueens.drivers.compare": ("CompareResult", "compare"),
    "jaxqueens.drivers.complete": ("CompleteResult", "solve_instances"),
    "jaxqueens.drivers.count": ("CountResult", "count_solutions", "enumerate_solutions"),
    "jaxqueens.drivers.count_plan": ("CountPlan", "plan_count"),
    "jaxqueens.drivers.estimate": ("estimate",),
    "jaxqueens.drivers.estimate_result": ("Estimate",),
    "jaxqueens.drivers.ga": ("EvolveResult", "evolve"),
    "jaxqueens.drivers.large": ("LargeResult", "solve_large"),
    "jaxqueens.drivers.loop": ("RunControl",),
    "jaxqueens.drivers.minconflicts": ("SolveResult", "solve"),
    "jaxqueens.drivers.stats": ("StatsResult", "stats"),
    "jaxqueens.core.constraints": ("Constraints",),
    "jaxqueens.errors": ("BoardFileError", "QueensError", "SolutionCheckError"),
    "jaxqueens.io.boards": ("load_boards", "write_board", "write_boards_npy", "write_jsonl"),
    "jaxqueens.io.instances": ("load_instances",),
    "jaxqueens.parallel.devices": ("Configuration", "configure"),
}
"""Module -> the public names it defines (the package re-exports them, imported at first use)."""
_KERNELS = {
    "jaxqueens.solvers.anneal": "Anneal",
    "jaxqueens.solvers.backtrack": "Backtrack",
    "jaxqueens.solvers.complete": "Complete",
    "jaxqueens.solvers.count": "Count",
    "jaxqueens.solvers.estimate": "Estimate",
    "jaxqueens.solvers.ga": "GA",
    "jaxqueens.solvers.large": "Large",
    "jaxqueens.solvers.minconflicts": "MinConflicts",
}
"""Kernel module -> the prefix its `Config` and `Params` are exported under (`GAConfig`,
`AnnealParams`; the backtracking kernel has no `Params`)."""
_HOME = {name: (module, name) for module, names in _PUBLIC.items() for name in names} | {
    f"{prefix}{kind}": (module, kind)
    for module, prefix in _KERNELS.items()
    for kind in ("Config", "Params")
    if (prefix, kind) != ("Backtrack", "Params")
}
_LAYERS = ("core", "solvers", "parallel")
"""The public subpackages, imported at first use too (`jaxqueens.core` after a bare
`import jaxqueens`)."""
_INTERNAL = (
    "io",
    "drivers",
    "plots",
    "cli",
    "parallel.cache",
    "parallel.complete",
    "parallel.count",
    "parallel.gather",
    "parallel.jax_options",
    "parallel.memory",
    "parallel.processes",
    "parallel.rendezvous",
    "parallel.scheduler",
    "parallel.sizing",
    "parallel.streams",
    "parallel.threads",
    "parallel.threads_complete",
)
"""What lies behind the API (layers, and modules of `parallel`): the drivers, files, plots and
CLI, and the batching backend's own machinery (caches, processes, sizing, streams, the thread
kernels). Import the names this module exports, not these modules; they may change."""


def __getattr__(name: str):
    """A public name, imported from its module at its first use (then kept as a global)."""
    if name in _LAYERS:
        return importlib.import_module(f"{__name__}.{name}")
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = home
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME) | set(_LAYERS))


__all__ = sorted([*_HOME, "__version__"])
"""Every public name, listed once (in `_PUBLIC` and `_KERNELS`)."""
