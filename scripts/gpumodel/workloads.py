"""Every executable the package runs on a GPU, as a list: the one place `make gpu-check` reads.

Each `Executable` is a workload at one size with the builder its driver uses on an
accelerator (`batch -> jax.stages.Lowered` of the real jitted function, never a copy of it):
`jaxqueens.parallel.chains.lockstep_builder` for the chain solvers (solve, anneal, the
samples of stats), `jaxqueens.parallel.count.items_builder`,
`jaxqueens.parallel.complete.chunk_builder`, `jaxqueens.drivers.estimate.call_builder`,
`jaxqueens.drivers.ga_size.chunk_builder`, and where a driver has no builder the jitted
functions it calls: `jaxqueens.drivers.large`'s QS4 column call and repair round, the
`jaxqueens.core.symmetry_jax` kernels of stats' on-device analysis. `want` is the batch the
driver asks `jaxqueens.parallel.sizing.choose` for on that device; `sized` False marks a batch
that is the user's (a population, the samples, one large board): checked against the budget, not
chosen.

The check (`scripts/gpu_check.py`) places the arguments on a described GPU
(`gpumodel.model.placement`) through `place`; the drivers call the same builders
with their real arguments. To add or re-point a workload, edit `executables`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from jaxqueens.core import constellations, prefixes, symmetry_jax
from jaxqueens.drivers import anneal_setup, ga_setup, ga_size, settings
from jaxqueens.drivers import complete as completing
from jaxqueens.drivers import count as counting
from jaxqueens.drivers import estimate as estimating
from jaxqueens.drivers import large as large_driver
from jaxqueens.drivers import minconflicts as mcsolve
from jaxqueens.drivers import stats as statistics
from jaxqueens.parallel import chains as chain_batch
from jaxqueens.parallel import complete as complete_batch
from jaxqueens.parallel import count as count_batch
from jaxqueens.parallel.sizing import ACCELERATOR_DEFAULTS, Target
from jaxqueens.solvers import anneal as sls
from jaxqueens.solvers import ga_crossover, ga_mutation, large, minconflicts, variants
from jaxqueens.solvers.complete import Config as CompleteConfig
from jaxqueens.solvers.constrained import Mask

SOLVE_N = (8, 32, 100, 1000, 10_000)
TOROIDAL_N = (7, 31, 101, 1001, 10_001)
"""Toroidal boards need n prime to 6 (the driver refuses others): the nearest such sizes."""
ANNEAL_N = (8, 1000)
GA_N = (8, 64)
GA_POP = (10_000, 1_000_000)
ENCODINGS = ("permutation", "combination")
COUNT_N = tuple(range(16, 25))
COMPLETE_N = tuple(range(12, 22))
ESTIMATE_N = (27, 64)
STATS_N = (8, 14)
STATS_SAMPLES = (1_000_000,)
LARGE_N = (10**6, 10**7, 10**8)


@dataclasses.dataclass(frozen=True)
class Executable:
    """One executable a GPU user would run, and how to build it at a batch size."""

    workload: str  # "solve", "anneal", "evolve", "count", "complete", "estimate", "stats", ...
    variant: str  # what else picks the executable: "init=qs4", "method=ta", "decide", ...
    n: int
    build: Callable[[int], Any]  # batch -> jax.stages.Lowered
    want: int  # the batch the driver asks for (sized) or runs (not sized)
    unit: str  # what the batch counts: "lanes", "probes/call", "generations/call", ...
    sized: bool = True  # chosen by jaxqueens.parallel.sizing.choose, or the user's
    floor: int = 1
    same_as: str | None = None  # another workload that runs this very executable
    extra: dict = dataclasses.field(default_factory=dict)  # what the speed model needs


def _mask_shapes(n: int) -> Mask:
    """An instance's `Mask` as shapes only (`jax.eval_shape`: nothing allocated)."""
    i32 = jnp.int32
    return jax.eval_shape(
        lambda: Mask(jnp.zeros((n, n), jnp.bool_), jnp.zeros(n, i32), i32(0), jnp.zeros(n, i32))
    )


def solve_config(n: int, variant: str) -> tuple[minconflicts.Config, minconflicts.Params]:
    """The kernel config and params `jaxqueens solve` builds for one of the check's variants
    (the command line's defaults: `--move cisc352` brings QS4 boards, 99 restarts and its step
    limit)."""
    init, tabu, move, toroidal, constrained = "permutation", 0, "minconflicts", False, False
    max_restarts = 1_000_000
    max_steps = variants.default_max_steps(n)
    key, _, value = variant.partition("=")
    if key == "init":
        init = value
    elif key == "tabu":
        tabu = int(value)
    elif key == "move":
        move, init, max_restarts = "cisc352", "qs4", 99
        max_steps = max(1, math.ceil(2 * n / math.log2(n)))
    elif variant == "toroidal":
        toroidal = True
        max_steps = variants.default_max_steps(n, plain=False)
    elif variant == "constrained":
        constrained, max_restarts = True, mcsolve.INSTANCE_MAX_RESTARTS
        max_steps = variants.default_max_steps(n, plain=False)
    config = minconflicts.Config(
        n=n,
        init=init,
        tabu=tabu,
        move=move,
        keep_best=True,
        toroidal=toroidal,
        constrained=constrained,
    )
    params = minconflicts.default_params(config, max_steps=max_steps, max_restarts=max_restarts)
    return config, params


SOLVE_VARIANTS = (
    "init=random",
    "init=permutation",
    "init=greedy",
    "init=qs4",
    "move=cisc352",
    "tabu=4",
    "constrained",
    "toroidal",
)


def _chains(
    workload, variant, n, chains: chain_batch.Chains, params, problem, target: Target, place
) -> Executable:
    chunk = chain_batch.accelerator_chunk(None, n, target)
    key = jax.random.key(0)
    build = chain_batch.lockstep_builder(chains, key, chunk, params, problem, 1, place)
    return Executable(
        workload,
        variant,
        n,
        build,
        min(target.parallelism, chunk),
        "lanes",
        extra={"chunk": chunk, "config": chains.config},
    )


def solve_executables(target: Target, place) -> list[Executable]:
    out = []
    for variant in SOLVE_VARIANTS:
        for n in TOROIDAL_N if variant == "toroidal" else SOLVE_N:
            config, params = solve_config(n, variant)
            problem = minconflicts.Problem(mask=_mask_shapes(n)) if config.constrained else None
            chains = chain_batch.Chains(minconflicts, config)
            out.append(_chains("solve", variant, n, chains, params, problem, target, place))
    return out


def anneal_executables(target: Target, place) -> list[Executable]:
    out = []
    for method in ("ls", "ta", "sa"):
        for n in ANNEAL_N:
            config = anneal_setup.make_config(n, method, 10_000, 10, "step", 3, "attacks")
            params = jax.eval_shape(lambda config=config: sls.default_params(config))
            chains = chain_batch.Chains(sls, config)
            out.append(
                _chains("anneal", f"method={method}", n, chains, params, None, target, place)
            )
    return out


def evolve_executables(target: Target, place) -> list[Executable]:
    out = []
    cases = [(encoding, "steady", pop, n) for encoding in ENCODINGS for pop in GA_POP for n in GA_N]
    cases += [("permutation", "generational", GA_POP[-1], n) for n in GA_N]  # DEAP's eaSimple
    for encoding, scheme, pop, n in cases:
        config, _ = ga_setup.check_setup(
            settings.ga_settings("classic", encoding, scheme, pop=pop),  # (the classic rates)
            n=n,
            generations=1000,
            trials=1,
            crossover=ga_crossover.DEFAULT_CROSSOVER[encoding],
            mutation=ga_mutation.DEFAULT_MUTATION[encoding],
        )
        want = ga_size.default_chunk(config, 1, 1000)
        out.append(
            Executable(
                "evolve",
                f"{encoding},{scheme},pop={pop}",
                n,
                ga_size.chunk_builder(config, 1, 1, None, place),
                want,
                "generations/call",
                extra={"config": config, "individuals": pop},
            )
        )
    return out


def count_executables(target: Target, place) -> list[Executable]:
    out = []
    for n in COUNT_N:
        cfg, _ = constellations.constellations(n)
        allow = constellations.allow_masks(n, cfg)
        depth = counting.task_depth(n, allow, count_batch.TASKS_PER_LANE * target.parallelism)
        out.append(
            Executable(
                "count",
                f"depth={depth}",
                n,
                count_batch.items_builder(n, depth, 1, place),
                target.parallelism,
                "lanes",
                extra={"depth": depth},
            )
        )
        out.append(
            dataclasses.replace(
                out[-1], workload="count --unique", same_as="count"
            )  # Burnside on the host: the very same kernel
        )
    return out


def complete_executables(target: Target, place) -> list[Executable]:
    out = []
    cases = [(mode, n) for mode in ("decide", "count") for n in COMPLETE_N]
    cases += [("enumerate", COMPLETE_N[0]), ("enumerate", COMPLETE_N[-1])]  # + a solutions list
    for mode, n in cases:
        cap = completing.ENUMERATE_CAP if mode == "enumerate" else 0
        config = CompleteConfig(n, False, cap, mode == "decide")
        out.append(
            Executable(
                "complete",
                mode,
                n,
                complete_batch.chunk_builder(config, 1, place),
                target.parallelism,
                "lanes",
                extra={"config": config},
            )
        )
    return out


def estimate_executables(target: Target, place) -> list[Executable]:
    out = []
    probes = ACCELERATOR_DEFAULTS.estimator_probes
    for n in ESTIMATE_N:
        depth = estimating.default_depth(n, probes)
        strata = len(prefixes.expand(n, depth)[0])
        out.append(
            Executable(
                "estimate",
                f"depth={depth}",
                n,
                estimating.call_builder(n, depth, strata, probes, 1, place),
                estimating.PROBES_PER_THREAD * target.parallelism,
                "probes/call",
                extra={"depth": depth, "strata": strata},
            )
        )
    return out


def _lowered(kernel, args: tuple, _batch: int):
    """`kernel` (a jitted function) lowered for its abstract `args`, whatever the batch."""
    return kernel.trace(*args).lower()


def stats_executables(target: Target, place) -> list[Executable]:
    out = []
    for n in STATS_N:
        for samples in STATS_SAMPLES:
            batch = statistics.analysis_batch(samples)  # the bucket `analyse` pads to
            boards = place(jax.ShapeDtypeStruct((batch, n), jnp.int32))
            for name in ("dedup", "canonical", "stabilizer_sizes"):  # the kernels `analyse` runs
                build = functools.partial(_lowered, getattr(symmetry_jax, name), (boards,))
                out.append(
                    Executable(
                        "stats", f"{name},samples={samples}", n, build, samples, "samples", False
                    )
                )
    return out


def _large_args(n: int, place) -> tuple:
    """The config of a large-n chain and its abstract state, params and two column indices,
    placed by `place`."""
    config = large.Config(n=n)
    params = large.default_params(config)
    state = jax.eval_shape(lambda k: large.empty(k, config, params), jax.random.key(0))
    i32 = jax.ShapeDtypeStruct((), jnp.int32)
    return config, place((state, jax.eval_shape(lambda: params), i32, i32))


def large_executables(target: Target, place) -> list[Executable]:
    """One large-n chain (the batch is ignored): the driver's own jitted QS4 column call and
    repair round (`jaxqueens.drivers.large`'s `_place` and `_repair`)."""
    out = []
    for n in LARGE_N:
        config, (s, p, a, b) = _large_args(n, place or (lambda tree: tree))
        for name, kernel, args in (
            ("init_columns", large_driver._place, (s, config, p, a, b)),
            ("repair_round", large_driver._repair, (s, config, p)),
        ):
            build = functools.partial(_lowered, kernel, args)
            out.append(Executable("solve_large", name, n, build, 1, "chain", False))
    return out


FAMILIES = {
    "solve": solve_executables,
    "anneal": anneal_executables,
    "evolve": evolve_executables,
    "count": count_executables,
    "complete": complete_executables,
    "estimate": estimate_executables,
    "stats": stats_executables,
    "solve_large": large_executables,
}
"""Workload family -> the executables it runs on a GPU (`make gpu-check` compiles them all)."""


def executables(target: Target, place=None, families=None) -> list[Executable]:
    """Every executable of `families` (default: all of `FAMILIES`) for `target`, their
    arguments placed by `place`."""
    out = []
    for name in families or FAMILIES:
        out.extend(FAMILIES[name](target, place))
    return out
