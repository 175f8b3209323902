"""The GA kernel's static `Config` and dynamic `Params` (`jaxqueens.solvers.ga`), validated.

A `Config` fixes shapes and code paths (a jit static argument) and checks its values and its
user operators when it is built; `default_params` builds `Params` from host numbers, each
checked in its range.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import NamedTuple

import jax
import numpy as np

from jaxqueens.errors import QueensError
from jaxqueens.solvers import base, ga_crossover, ga_fitness, ga_mutation, ga_selection
from jaxqueens.solvers.ga_ops import check_operators, operator_tables

ENCODINGS = ("permutation", "combination")
SCHEMES = ("steady", "generational")
MAX_N = 32767
"""Largest board (int16 genes)."""


@dataclasses.dataclass(frozen=True)
class Config:
    """Static configuration: fixes shapes and code paths (hashable, a jit static argument)."""

    n: int  #: board size (4..32767).
    pop: int  #: individuals per island.
    #: `permutation` (rows distinct) or `combination` (rows may repeat).
    encoding: str = "permutation"
    scheme: str = "steady"  #: `steady` or `generational`.
    #: a name of `ga_crossover.CROSSOVERS[encoding]` or a function; None: the encoding's (`cut` /
    #: `one_point`).
    crossover: str | Callable | None = None
    #: a name of `ga_mutation.MUTATIONS[encoding]` or a function; None: `swap` / `reset`.
    mutation: str | Callable | None = None
    tournament: int = 5  #: the most aspirants per tournament (`Params.tournament` is at most this).
    elite: int = 0  #: generational: the most best parents kept (`Params.elite` is at most this).
    islands: int = 1  #: populations per trial, on a migration ring.
    migrants: int = 1  #: the most individuals sent along the ring (`Params.migrants` at most this).
    #: a name of `ga_fitness.FITNESS` or a function `[n] int32 -> []` (minimised).
    fitness: str | Callable = "pairs"
    #: the generational loop's compacted crossover batch, in 32nds (`masked_apply`): results never
    #: depend on it, only the speed does (set from the rates: `check_setup`).
    cx_cap32: int = 32
    mut_cap32: int = 32  #: as `cx_cap32`, for the mutation batch.
    eval_cap32: int = 32  #: as `cx_cap32`, for the evaluation batch.
    toroidal: bool = False  #: queens attack along diagonals modulo n.
    #: the kernels read an instance `Problem.mask`: fixed queens, forbidden squares.
    constrained: bool = False
    #: a name of `ga_selection.SELECTIONS` or a `ga_selection.Selection`; None: the scheme's
    #: (`distinct_tournament` steady, `tournament` generational).
    selection: str | Callable | None = None

    def __post_init__(self):
        def need(ok, msg):
            if not ok:
                raise QueensError(f"ga.Config: {msg}")

        for name in ("n", "pop", "islands", "tournament", "elite", "migrants"):
            try:
                base.check_whole(name, getattr(self, name))
            except QueensError as err:
                raise QueensError(f"ga.Config: {err}") from None
        need(4 <= self.n <= MAX_N, f"n = {self.n} must lie in 4..{MAX_N}")
        need(self.encoding in ENCODINGS, f"encoding {self.encoding!r} is not one of {ENCODINGS}")
        need(self.scheme in SCHEMES, f"scheme {self.scheme!r} is not one of {SCHEMES}")
        need(self.pop >= 2 and self.islands >= 1, "pop >= 2 and islands >= 1 required")
        steady = self.scheme == "steady"
        need(
            (2 if steady else 1) <= self.tournament <= self.pop,
            f"tournament = {self.tournament} must lie in {2 if steady else 1}..pop ({self.pop})",
        )
        need(0 <= self.elite < self.pop, f"elite = {self.elite} must lie in 0..pop-1")
        need(not (steady and self.elite), "elite applies to the generational scheme only")
        need(1 <= self.migrants < self.pop, f"migrants = {self.migrants} must lie in 1..pop-1")
        for name in ("cx_cap32", "mut_cap32", "eval_cap32"):
            need(0 <= getattr(self, name) <= 32, f"{name} must lie in 0..32")
        defaults = {
            "selection": ga_selection.DEFAULT_SELECTION[self.scheme],
            "crossover": ga_crossover.DEFAULT_CROSSOVER[self.encoding],
            "mutation": ga_mutation.DEFAULT_MUTATION[self.encoding],
        }
        for name, default in defaults.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, default)
        for name, table in operator_tables(self).items():
            v = getattr(self, name)
            need(
                callable(v) or (isinstance(v, str) and v in table),
                f"{name} {v!r} is neither a function nor one of {', '.join(table)}"
                + (" (toroidal)" if name == "fitness" and self.toroidal else ""),
            )
        need(
            not self.constrained or (self.n + 1) * ga_fitness.forbidden_weight(self.n) < 2**31,
            f"n = {self.n} is too large for a constrained GA (int32 penalties); use n <= 1000",
        )
        check_operators(self)

    @property
    def sols_per_gen(self) -> int:
        """Candidates per island and generation checked for solutions (children, or the best)."""
        return 2 if self.scheme == "steady" else 1

    @property
    def parents(self) -> int:
        """Parents one selection call returns per island (the `count` of a selection)."""
        return 2 if self.scheme == "steady" else self.pop


class Params(NamedTuple):
    """Dynamic parameters (0-d arrays): new values never recompile; `jax.vmap` sweeps them.
    Integer counts above their [`Config`][jaxqueens.solvers.ga_config.Config] capacity are
    clipped to it.
    """

    cxpb: jax.Array  #: [] float32: crossover probability per pair
    mutpb: jax.Array  #: [] float32: mutation probability per child
    indpb: jax.Array  #: [] float32: per-gene rate of swap / reset mutation; <= 0: one gene
    tournament: jax.Array  #: [] int32 in 1..Config.tournament (steady: 2..): aspirants
    elite: jax.Array  #: [] int32 in 0..Config.elite: best parents kept (generational)
    migrants: jax.Array  #: [] int32 in 1..Config.migrants: individuals sent per migration
    migrate_every: jax.Array  #: [] int32 >= 0: generations between migrations; 0: never
    generations: jax.Array  #: [] int32 >= 0: the budget of run / step
    target: jax.Array  #: [] float32: solved when the best fitness is at most this


def default_params(
    config: Config,
    *,
    cxpb: float | None = None,
    mutpb: float | None = None,
    indpb: float = 0.0,
    tournament: int | None = None,
    elite: int | None = None,
    migrants: int | None = None,
    migrate_every: int = 0,
    generations: int = 1000,
    target: float = 0.0,
) -> Params:
    """The package's defaults, any of them overridden: cxpb and mutpb 1 (steady) or DEAP's 0.5
    and 0.2 (generational), one gene per mutation, the config's tournament, elite and migrant
    capacities, no migration, 1000 generations, target 0.

    Args:
      config: the static `Config`.
      cxpb: crossover probability per pair, 0..1 (None: 1 steady, 0.5 generational).
      mutpb: mutation probability per child, 0..1 (None: 1 steady, 0.2 generational).
      indpb: per-gene rate of swap/reset mutation; 0 mutates exactly one gene.
      tournament: tournament size, up to `config.tournament` (None: that capacity).
      elite: generational only: best parents kept, up to `config.elite` (None: that capacity).
      migrants: individuals that migrate, up to `config.migrants` (None: that capacity).
      migrate_every: generations between migrations (0: never).
      generations: the generation budget.
      target: a trial is solved when its best fitness is at most this.

    Returns:
      `Params` of NumPy scalars.

    Raises:
      QueensError: a value outside its range, naming it.
    """
    steady = config.scheme == "steady"
    cxpb = (1.0 if steady else 0.5) if cxpb is None else cxpb
    mutpb = (1.0 if steady else 0.2) if mutpb is None else mutpb
    tournament = config.tournament if tournament is None else tournament
    elite = config.elite if elite is None else elite
    migrants = config.migrants if migrants is None else migrants
    values = (cxpb, mutpb, indpb, tournament, elite, migrants, migrate_every, generations, target)
    given = dict(zip(Params._fields, values, strict=True))
    check_values(given, config)
    # NumPy leaves: building them dispatches no XLA operation (each eager conversion compiles a
    # program at a process's first use); jit and vmap take them as they take JAX arrays.
    floats = ("cxpb", "mutpb", "indpb", "target")  # the rest are counts
    return Params._make(
        np.asarray(v, np.float32 if f in floats else np.int32) for f, v in given.items()
    )


def check_values(v: dict, config: Config, prefix: str = "ga.default_params: ") -> None:
    """The values of a `Params` (host numbers), each in its range.

    Args:
      v: `{field: host number}` for every field of `Params`.
      config: the static `Config` (the capacities).
      prefix: what the error message starts with.

    Raises:
      QueensError: the first value out of its range, naming it.
    """
    steady = config.scheme == "steady"
    ranges = {
        "tournament": (2 if steady else 1, config.tournament),
        "elite": (0, config.elite),
        "migrants": (1, config.migrants),
        "migrate_every": (0, 2**31 - 1),
        "generations": (0, 2**31 - 1),
    }
    try:
        for name in ("cxpb", "mutpb", "indpb"):
            base.check_real(name, v[name], 0, 1)
        for name, (lo, hi) in ranges.items():
            base.check_whole(name, v[name], lo, hi)
        base.check_real("target", v["target"])
    except QueensError as err:
        raise QueensError(f"{prefix}{err}") from None
