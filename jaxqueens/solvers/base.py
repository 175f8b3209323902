"""The contract every chain solver keeps: one chain, written for one board.

A chain solver (min-conflicts, LS/TA/SA) subclasses :class:`ChainKernel`, a frozen dataclass
holding its static ``config`` (hashable, so it can be a jit-static argument), and implements
``init``, ``step``, ``finished``, ``result`` and ``solve_one``. Solvers with restarts also
override ``retry`` and ``restart``; the defaults describe a chain that never restarts.
:mod:`jaxqueens.parallel.chains` runs many chains of any such kernel, one per ``lax.map``
iteration on a CPU and in lockstep lanes on an accelerator, with identical results.

``data`` is a dynamic pytree shared by every chain of a run (a start board, a threshold
schedule, or None), so changing it never recompiles. A kernel whose chains can pause between
calls (to bound a call's work) also takes a per-chain dynamic input (:meth:`resume_input`,
:meth:`init_from`, :meth:`solve_from`); the defaults describe a kernel without one.
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Any

import jax
import jax.numpy as jnp


@dataclasses.dataclass(frozen=True)
class ChainKernel(abc.ABC):
    """One chain of a solver; subclasses add nothing but methods (``config`` is the state)."""

    config: Any  # the solver's frozen static Config

    @property
    def unroll(self) -> int:
        """Steps per lockstep iteration."""
        return getattr(self.config, "unroll", 1)

    def lockstep(self) -> ChainKernel:
        """The kernel lockstep lanes run: the same chains and results, formulated for lanes (a
        vector op where the one-chain kernel loops: on a GPU a loop is host-driven); default
        ``self``."""
        return self

    @abc.abstractmethod
    def init(self, seed: jax.Array, data: Any) -> Any:
        """The state of a fresh chain from its uint32 ``seed``."""

    @abc.abstractmethod
    def step(self, s: Any, data: Any) -> Any:
        """One step; a no-op once the attempt has stopped."""

    def retry(self, s: Any) -> jax.Array:
        """The attempt is over, unsolved, with restarts left (default: never)."""
        return jnp.bool_(False)

    def restart(self, s: Any, data: Any) -> Any:
        """The next attempt of the same chain (default: unchanged)."""
        return s

    @abc.abstractmethod
    def finished(self, s: Any) -> jax.Array:
        """The chain is done for good."""

    @abc.abstractmethod
    def result(self, s: Any) -> Any:
        """What the chain reports."""

    @abc.abstractmethod
    def solve_one(self, seed: jax.Array, data: Any) -> Any:
        """The whole chain in one ``while_loop`` (the CPU path)."""

    def resume_input(self) -> Any:
        """The input that runs every chain of a call fresh and to the end (0-d leaves: shared by
        the chains; a [C] leading axis gives each chain its own), or None (default) for a
        kernel whose chains never pause."""
        return None

    def init_from(self, seed: jax.Array, data: Any, resume: Any) -> Any:
        """:meth:`init`, starting where one chain's row of the per-chain input says."""
        return self.init(seed, data)

    def solve_from(self, seed: jax.Array, data: Any, resume: Any) -> Any:
        """:meth:`solve_one`, starting where one chain's row of the per-chain input says."""
        return self.solve_one(seed, data)
