"""The GA driver's sizes: generations per jitted chunk, the run's memory, its compiled programs.

`plan` lays a run out over the processes and checks its host memory before it starts; `start`
builds (or loads from the cache) the initial populations and the chunk of generations.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import rng
from jaxqueens.errors import QueensError
from jaxqueens.io import ga as ga_io
from jaxqueens.parallel import cache, gather, memory, sizing
from jaxqueens.parallel import devices as backend
from jaxqueens.parallel import trials as lockstep
from jaxqueens.parallel.devices import local_device_count
from jaxqueens.parallel.shard import batch_sharding, shard_batch
from jaxqueens.solvers import ga_genomes
from jaxqueens.solvers.constrained import Mask
from jaxqueens.solvers.ga import Config, Metrics, Params, Problem, State, default_params

RUNTIME_BYTES = 600 << 20
"""Python, JAX, XLA's CPU runtime and a compiled chunk, resident before any population (rounded
up)."""
POPULATION_COPIES = 6
"""Copies of the population the process holds at its peak (device state, the donated next
state, the generation's temporaries, the host copy a checkpoint writes)."""
HISTORY_ROW_BYTES = 48  # bytes of one per-trial history row (`io.ga`'s CSV), rounded up

run_generations = jax.jit(lockstep.run_chunk, static_argnums=(0, 5, 6), donate_argnums=(1,))
"""Jitted `run_chunk` `(config, states, params, problem, stop, length, devices)`: a chunk of
generations of every trial, split over `devices` local devices."""


def default_chunk(config: Config, trials: int, generations: int) -> int:
    """Generations per jitted chunk, 1..`generations`: all of them for small runs, ~2^26 genes of
    work per chunk for `trials` trials run at once."""
    work = trials * config.islands * config.pop * config.n
    return max(1, min(generations, max(10, (1 << 26) // max(work, 1))))


def chunk_builder(
    config: Config, trials: int, devices: int = 1, mask: Mask | None = None, place=None
) -> Callable[[int], jax.stages.Lowered]:
    """`run_generations` for `trials` trials on abstract arguments, lowered for a chunk length: the
    builder `choose` sizes on an accelerator and `make gpu-check` compiles, `generations ->
    jax.stages.Lowered` (the per-generation records grow with it).

    The population of `config` (trials x islands x pop) is the user's; `place` puts the abstract
    arguments on a described device (None: as they are)."""
    place = place or (lambda tree: tree)
    problem = None if mask is None else Problem(mask)
    params = jax.eval_shape(lambda: default_params(config))
    states = jax.eval_shape(
        lambda k, p: lockstep.init(config, k, trials, jnp.int32(0), p, problem)[0],
        jax.random.key(0),
        params,
    )
    args = place((states, params, problem, jax.ShapeDtypeStruct((), jnp.int32)))

    def build(generations: int):
        st, dyn, pr, stop = args
        return run_generations.trace(config, st, dyn, pr, stop, generations, devices).lower()

    return build


def accelerator_chunk(
    config: Config, trials: int, want: int, devices: int, mask: Mask | None = None, target=None
) -> int:
    """Generations per call on an accelerator: `want` (`default_chunk`), or as many as the device's
    memory holds beside the population (`sizing.choose`). `target` is the device described (None:
    this process's, `sizing.device_target`). A population that does not fit even one generation is a
    one-line QueensError."""
    target = target or sizing.device_target()
    choice = sizing.choose(
        chunk_builder(config, trials, devices, mask),
        target,
        want,
        key=("ga", config, trials, want, devices, mask is None),
    )
    if not choice.fits:
        raise QueensError(
            f"{trials} trials x {config.islands} islands x pop {config.pop} (n = {config.n}) need "
            f"{choice.bytes:,} bytes of device memory, over {target.name}'s "
            f"{target.budget_bytes:,}: use fewer --trials or a smaller --pop"
        )
    return choice.batch


def place(tree):
    """`tree` (a PyTree of `[T, ...]` arrays) with the leading (trial) axis of every leaf sharded
    over host devices when it divides evenly."""
    return jax.tree.map(shard_batch, tree)


def memory_estimate(
    config: Config,
    trials: int,
    generations: int,
    chunk: int,
    records: str = "summary",
    streamed: bool = False,
) -> dict[str, int]:
    """Bytes of host memory a run will hold at its peak, `{part: bytes}`, for `trials` of this
    process, `records` "all" or "summary" (`evolve`'s) and `streamed` (a sink receives every trial's
    records).

    The parts: the runtime (Python, JAX, XLA and the compiled program), the population (its device
    buffers, the generation's temporaries and the checkpoint's host copy), one chunk's records and
    candidate solutions (on the device and on the host), the per-generation statistics and per-trial
    totals, with `records="all"` the `[G+1, T]` records (kept, joined at the end and in the
    checkpoint), and for a streamed history one chunk's text. Distinct solutions are not counted (as
    many as the run finds)."""
    gene = np.dtype(ga_genomes.gene_dtype(config.n)).itemsize
    per_trial = config.islands * (config.pop * (config.n * gene + 4) + 4) + config.n * gene + 12
    per_gen = 16 + config.islands * config.sols_per_gen * (config.n * gene + 1)
    parts = {
        "runtime": RUNTIME_BYTES,
        "population": POPULATION_COPIES * trials * per_trial,
        "chunk": 3 * chunk * trials * per_gen,
        "statistics": 3 * (generations + 1) * (len(ga_io.SUMMARY_STATS) + 1) * 8 + 5 * 8 * trials,
    }
    if streamed:
        parts["history text"] = 2 * chunk * trials * HISTORY_ROW_BYTES
    if records == "all":
        parts["records"] = 4 * (generations + 1) * trials * 20
    return parts


def plan(
    config: Config,
    trials: int,
    generations: int,
    chunk: int,
    records: str,
    streamed: bool,
    mask: Mask | None,
    tell: Callable[[dict], None] | None,
) -> tuple[int, int, int, int, int]:
    """A run's layout, its memory checked (and told) before anything starts: `(generations per call,
    processes, this process, trials in all, this process's trials)`.

    `chunk` is the generations per call asked (an accelerator may take fewer); `records` and
    `streamed` as for `memory_estimate`; `tell` (or None) is called with `{"memory": parts,
    "available": bytes or None, "per_solution": bytes}` once the run is known to fit (`evolve`'s
    `plan`). A run that does not fit in the memory available now is a one-line QueensError."""
    if backend.is_accelerator():  # generations per call from the device (the records grow)
        devs = local_device_count()
        devs = devs if devs > 1 and -(-trials // gather.process_count()) % devs == 0 else 1
        chunk = accelerator_chunk(config, -(-trials // gather.process_count()), chunk, devs, mask)
    procs, me = gather.process_count(), gather.process_index()
    total_trials, trials = trials, -(-trials // procs)  # process p runs trials p*L .. p*L+L-1
    every = records == "all"
    parts = memory_estimate(
        config,
        trials if every else total_trials,  # summaries see every trial's chunk
        generations,
        chunk,
        records,
        streamed=streamed,
    )
    memory.check_memory(
        sum(parts.values()),
        f"{total_trials} trials x {generations} generations ({config.islands} x pop "
        f"{config.pop}, n = {config.n}{', every record kept' if every else ''})",
        "use fewer --trials"
        + (" or per-generation summaries (--history summary)" if every else "")
        + (" or --history summary" if streamed else "")
        + ", or run the trials in several runs with different --seed",
    )
    if tell is not None:  # a distinct solution is kept, merged, written as int32: 8 n bytes
        tell(
            {"memory": parts, "available": memory.available_memory(), "per_solution": 8 * config.n}
        )
    return chunk, procs, me, total_trials, trials


def start(
    config: Config,
    dyn: Params,
    chunk: int,
    seed: int,
    first: int,
    trials: int,
    problem: Problem | None,
) -> tuple[State, Metrics, Callable, float, float]:
    """The first populations and the compiled chunk of generations: `(states, generation 0's
    metrics, the chunk executable, compile seconds, init seconds)`. `first` is the index of this
    process's first trial, `trials` this process's trials, `problem` the kernel's `Problem` (None:
    no instance's mask). The executables load from the cache folder (a repeated run traces
    nothing) and stay in the process (`parallel.cache`)."""
    t0 = time.perf_counter()
    key, first32 = rng.seed_key(seed), np.int32(first)
    placed = batch_sharding(trials)  # the states come out where `place` puts them: no reshard
    init = cache.loaded(
        "ga-init",
        (config, trials, placed),
        (key, first32, dyn, problem),
        lambda: (
            lockstep.init
            if placed is None
            else jax.jit(lockstep.init, static_argnums=(0, 2), out_shardings=placed)
        ).lower(config, key, trials, first32, dyn, problem),
    )
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    states, m0 = init(key, first32, dyn, problem)
    states = jax.block_until_ready(place(states))
    init_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    stop = np.int32(dyn.generations)
    devices = local_device_count()
    devices = devices if devices > 1 and trials % devices == 0 else 1
    compiled = cache.loaded(
        "ga-generations",
        (config, chunk, devices),
        (states, dyn, problem, stop),
        lambda: run_generations.lower(config, states, dyn, problem, stop, chunk, devices),
    )
    compile_s += time.perf_counter() - t0
    return states, m0, compiled, compile_s, init_s
