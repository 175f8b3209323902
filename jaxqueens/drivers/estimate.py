"""Knuth's random-probe estimator of Q(n) and of the backtrack tree's size: `estimate`.

Knuth (1975, "Estimating the efficiency of backtrack programs", Math. Comp. 29), with partial
enumeration of the top `depth` levels as strata, and Hall's (1992, "On the removal of skewness
by transformation", JRSS B 54) skewness-corrected studentized intervals
(`jaxqueens.drivers.estimate_result`). The probes run in kernel calls of about `lanes` probes
(`run_call`) through the one chunked loop (`jaxqueens.drivers.loop.run_chunks`); the host sums
every call's group sums in float64, in call order. The docs' estimate page describes the strata
and the intervals.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import arguments, prefixes, rng
from jaxqueens.core.board import as_size
from jaxqueens.core.oeis import A000170
from jaxqueens.drivers import estimate_setup, settings
from jaxqueens.drivers.estimate_result import SUMS, Estimate, stratified, stratum_sums
from jaxqueens.drivers.loop import Tick, run_chunks
from jaxqueens.errors import QueensError
from jaxqueens.io import checkpoint as ckpt
from jaxqueens.parallel import cache, gather, items, memory, sizing
from jaxqueens.parallel import devices as backend
from jaxqueens.parallel.shard import over_devices
from jaxqueens.solvers import estimate as knuth
from jaxqueens.solvers.estimate import words_of

SIMKIN_ALPHA = 1.942
GROUP = 256
"""Probes reduced together on device (float32 sums of <= 256 scaled terms)."""
MAX_STRATA = 1 << 16
LANES_PER_CALL = 1 << 20
MIN_PER_STRATUM = 64
COPY_ROWS = 64
"""Fewer strata than this are copied to at least this many rows, so that the devices share them."""
"""Auto depth: the deepest level with at most probes / MIN_PER_STRATUM (and MAX_STRATA) nodes."""
STRATUM_BYTES = 256
"""Host and device bytes per stratum: masks, words and their device copy, sums, call outputs."""
METHOD = "Knuth 1975 random probes, top levels enumerated"


@dataclasses.dataclass(frozen=True)
class Plan:
    """The static layout of one kernel call (jit-static): the probe's config and the batch.

    Attributes:
        probe: the kernel's `Config` (n, depth).
        per_call: probes per stratum and call (a multiple of `group`).
        group: probes per on-device reduction group
            (`group_sums`).
        block: probes vmapped per `lax.map` iteration (0: all at once, the accelerator way;
            `blocks`).
    """

    probe: knuth.Config
    per_call: int
    group: int
    block: int = 0


def call_seed(seed: int, call) -> jax.Array:
    """The 64-bit stream seed of one kernel call: `chain_seeds` of the run seed's key at `call`.
    The call's probes are the lanes `stratum * per_call + j` of this stream (`walk`).

    Args:
      seed: the run's seed.
      call: the call's index.

    Returns:
      uint32 `[2]`.
    """
    return rng.chain_seeds(rng.seed_key(seed), jnp.asarray([call], jnp.uint32))[0]


@jax.jit
def _call_hash(data, calls):
    return rng.chain_seeds(rng.wrap_threefry(data), calls)


def call_seeds(seed: int, calls: int) -> np.ndarray:
    """`call_seed` of every call of a run, by one executable loaded from the cache folder where the
    key is known on the host (`seed_data`).

    Args:
      seed: the run's seed.
      calls: calls in the run.

    Returns:
      uint32 `[calls, 2]`.
    """
    ids = np.arange(calls, dtype=np.uint32)
    data = rng.seed_data(seed)
    if data is None:
        return np.asarray(rng.chain_seeds(jax.random.key(seed), ids))
    return np.asarray(cache.call("estimate-seeds", _call_hash, (data, ids)))


CallSums = knuth.GroupSums
"""A call's probes reduced per group (the kernel's `group_sums`)."""


def strata_block(masks, ids, seed, plan: Plan) -> CallSums:
    """`plan.per_call` probes for each stratum of a block, reduced per group (the kernel's
    `group_sums`). Probe j of stratum `ids[s]` is the kernel's `walk` of lane
    `ids[s] * per_call + j` of the stream `seed`; the probes run in lockstep blocks (`blocks`).

    Args:
      masks: `[S, 3, W]` the strata's prefixes.
      ids: `[S]` the strata's indices.
      seed: uint32 `[2]` stream seed of the call (`call_seed`).
      plan: the call's static plan.

    Returns:
      `CallSums`: group sums `[S, G]`.
    """
    s, per = ids.shape[0], plan.per_call
    config = plan.probe
    params = knuth.default_params(config)
    lanes = ids[:, None].astype(jnp.uint32) * jnp.uint32(per) + jnp.arange(per, dtype=jnp.uint32)
    stratum = jnp.arange(s * per, dtype=jnp.int32) // per

    def one(item):
        k, lane = item
        return knuth.walk(seed, lane, config, params, knuth.Problem(masks[k]))

    out = items.blocks(one, (stratum, lanes.reshape(-1)), plan.block)
    return knuth.group_sums(jax.tree.map(lambda x: x.reshape(s, per), out), plan.group)


@functools.partial(jax.jit, static_argnums=(3, 4))
def run_call(masks, ids, seed, plan: Plan, devices: int) -> CallSums:
    """One kernel call: `plan.per_call` probes for each stratum, strata split over `devices`.

    Args:
      masks: uint32 `[S, 3, W]` strata (S a multiple of `devices`); ids: int32 `[S]`.
      seed: uint32 `[2]` stream seed of the call (`call_seed`).

    Returns:
      `CallSums`, eight `[S, G]` arrays.
    """
    return over_devices(
        lambda mk, i, s: strata_block(mk, i, s, plan),
        masks,
        ids,
        seed,
        num_devices=devices,
        sharded=(True, True, False),
    )


def call_plan(
    n: int, depth: int, strata: int, probes: int, lanes: int, devices: int, block: int | None = None
) -> tuple[Plan, int, int, int, int]:
    """How `probes` probes over `strata` strata run in calls of about `lanes` probes.

    Which probes run, and how they are grouped and added, depends on the settings and `lanes`
    alone: `devices` only pads the rows (dead rows) so that they split evenly, so a run walks and
    adds the same probes on any number of devices and processes.

    Args:
      n: board size.
      depth: the strata's level.
      strata: strata in the run.
      probes: probes in the run.
      lanes: probes a call should hold.
      devices: devices a call spans.
      block: the plan's lockstep block (default: the backend's).

    Returns:
      `(plan, copies, rows, padded, calls)`: the call's static `Plan`, copies of each stratum,
      rows (strata x copies), rows padded to a multiple of `devices`, and calls.
    """
    copies = -(-COPY_ROWS // strata) if strata < COPY_ROWS else 1  # few strata: rows to split
    rows = strata * copies
    padded = -(-rows // devices) * devices
    want = -(-probes // rows)  # probes per stratum copy
    group = max(1, min(GROUP, want // 8, lanes // rows))  # whole groups overshoot <= 1/8
    group = 1 << (group.bit_length() - 1)
    per_call = max(group, min(-(-want // group) * group, max(1, lanes // rows) // group * group))
    calls = -(-want // per_call)
    block = sizing.sizes().estimator_block if block is None else block
    plan = Plan(knuth.Config(n=n, depth=depth), per_call=per_call, group=group, block=block)
    return plan, copies, rows, padded, calls


PROBES_PER_THREAD = 4
"""Accelerator: probes per call for each thread the device keeps resident."""


def call_builder(n: int, depth: int, strata: int, probes: int, devices: int = 1, place=None):
    """The builder `choose` sizes (and `make gpu-check` compiles): `run_call` as an accelerator runs
    it, all probes of a call vmapped at once.

    Args:
      n: board size.
      depth: the strata's level.
      strata: strata in the run.
      probes: probes in the run.
      devices: devices a call spans.
      place: places the example arguments on the target devices (default: as they are).

    Returns:
      `lanes -> jax.stages.Lowered` for calls of about `lanes` probes.
    """
    place = place or (lambda tree: tree)

    def build(lanes: int):
        plan, _, _, padded, _ = call_plan(n, depth, strata, probes, lanes, devices, block=0)
        words = plan.probe.words
        masks, ids, seed = place(
            (
                jax.ShapeDtypeStruct((padded, 3, words), jnp.uint32),
                jax.ShapeDtypeStruct((padded,), jnp.int32),
                jax.ShapeDtypeStruct((2,), jnp.uint32),  # the call's 64-bit stream seed
            )
        )
        return run_call.trace(masks, ids, seed, plan, devices).lower()

    return build


def accelerator_lanes(
    n: int, depth: int, strata: int, probes: int, devices: int, target=None
) -> int:
    """Probes per call on an accelerator: `PROBES_PER_THREAD` per resident thread, or as many as the
    device's memory holds (`choose`).

    Args:
      n: board size.
      depth: the strata's level.
      strata: strata in the run.
      probes: probes in the run.
      devices: devices a call spans.
      target: the device's budget and parallelism (default: the local device's).

    Returns:
      The lanes.
    """
    target = target or sizing.device_target()
    choice = sizing.choose(
        call_builder(n, depth, strata, probes, devices),
        target,
        PROBES_PER_THREAD * target.parallelism * devices,
        floor=devices,
        key=("estimate", n, depth, strata, probes, devices),
    )
    if not choice.fits:
        raise QueensError(
            f"--depth {depth} (n = {n}: {strata:,} strata) needs {choice.bytes:,} bytes of device "
            "memory for one probe per stratum: use a smaller --depth"
        )
    return choice.batch


def default_probes() -> int:
    """Probes of a run by default: 10^7 on a CPU, 10^8 on an accelerator (`sizes`).

    Returns:
      The probes.
    """
    return sizing.sizes().estimator_probes


def default_depth(n: int, probes: int) -> int:
    """The deepest level whose nodes number at most `min(MAX_STRATA, probes / MIN_PER_STRATUM)`.

    Args:
      n: board size.
      probes: probes in the run.

    Returns:
      The depth.
    """
    return prefixes.deepest_level(n, max(1, min(MAX_STRATA, probes // MIN_PER_STRATUM)))


def run_summary(results: list[Estimate], seed: int) -> dict:
    """The `summary.json` document of a run over several sizes.

    Args:
      results: one estimate per size.
      seed: the run's seed.

    Returns:
      The document, a dict.
    """
    return {
        "method": METHOD,
        "seed": seed,
        "simkin_alpha": SIMKIN_ALPHA,
        "backend": jax.default_backend(),
        "estimates": [r.as_dict() for r in results],
    }


def estimate(
    n: int,
    probes: int | None = None,
    *,
    depth: int | None = None,
    seed: int = 0,
    level: float = settings.CONFIDENCE,
    lanes: int | None = None,
    quiet: bool | None = True,
    checkpoint=None,
    resume: bool = False,
    checkpoint_every: float = settings.CHECKPOINT_EVERY,
) -> Estimate:
    """Estimate Q(n) and the backtrack tree's size with Knuth's probes, stratified on the top
    levels.

    Args:
      n: board size, 1..64.
      probes: probes in all (default `default_probes`), at least
        `ESTIMATE_MIN_PROBES` and
        `ESTIMATE_MIN_PER_STRATUM` per stratum, so that the
        interval holds its level; rounded up to whole calls.
      depth: levels enumerated exactly (default: `default_depth`); 0 is Knuth's plain
        estimator, n enumerates every walk (exact).
      seed: random seed (call c of a run uses the stream `call_seed` `(seed, c)`).
      level: confidence level of the reported intervals.
      lanes: about this many probes per kernel call (default: `LANES_PER_CALL` on a CPU,
        sized from the device on an accelerator: `accelerator_lanes`).
      quiet: no progress line (None: a progress line on a terminal only).
      checkpoint: file for the sums of finished calls (every `checkpoint_every` seconds, on
        Ctrl-C and when done); `resume` continues from it.

    Returns:
      The `Estimate`; after Ctrl-C (or SIGTERM), as the other drivers do, the estimate from the
      calls finished by then (`stopped_by="interrupted"`, `probes` the probes walked; NaN when
      none finished), their sums saved in `checkpoint`.

    Raises:
      QueensError: an argument out of range (naming it and the range).

    With several processes (`jax.distributed`), call c runs on process `c % P` and every
    process adds all calls' sums in call order, so the estimate equals a single-process run.
    """
    n, probes, level, seed = estimate_setup.check_estimate(as_size(n), probes, level, seed)
    probes = default_probes() if probes is None else probes
    lanes = arguments.integer(lanes, "lanes", 1, optional=True)
    depth = default_depth(n, probes) if depth is None else estimate_setup.check_depth(depth, n)
    masks64, top = prefixes.expand(n, depth, reserve=functools.partial(_reserve, n, depth))
    strata = len(masks64)
    estimate_setup.check_strata(probes, strata, depth, n)
    exact = A000170.get(n)
    if strata == 0 or depth == n:  # all dead above, or every walk enumerated
        return _enumerated(n, strata, depth, top, level, exact)
    run = _Calls.compile(n, depth, masks64, probes, lanes, seed)
    procs = gather.process_count()
    if procs > 1:
        _same_plan(run.calls, run.plan.per_call, run.copies, run.plan.group)
    fingerprint = run.fingerprint(n, probes, depth, seed, procs)
    acc, start = np.zeros((len(SUMS), strata)), 0
    if resume and checkpoint is not None and Path(checkpoint).exists():
        acc, start = _load_sums(checkpoint, fingerprint, strata)
    done, stopped, seconds = run.sweep(acc, start, quiet, checkpoint, fingerprint, checkpoint_every)
    m = (done if stopped else run.calls) * run.plan.per_call * run.copies
    return _estimated(n, depth, strata, top, level, exact, acc, m, seconds, run.compile_s, stopped)


def _estimated(
    n: int,
    depth: int,
    strata: int,
    top,
    level: float,
    exact,
    acc: np.ndarray,
    m: int,
    seconds: float,
    compile_s: float,
    stopped: bool,
) -> Estimate:
    """The `Estimate` from the strata's sums `acc` over `m` probes per stratum."""
    q, q_se, q_skew = stratified(acc[0], acc[1], acc[5], m)
    v, v_se, v_skew = stratified(acc[2], acc[3], acc[6], m)
    return Estimate(
        n,
        m * strata,
        depth,
        strata,
        q,
        q_se,
        float(sum(top)) + v,
        v_se,
        level,
        float(acc[4].sum() / (m * strata)) if m else math.nan,
        seconds,
        compile_s,
        exact,
        top,
        "interrupted" if stopped else "finished",
        q_skew,
        v_skew,
    )


def _enumerated(n: int, strata: int, depth: int, top, level: float, exact) -> Estimate:
    """The exact `Estimate` when no probe is needed (every walk enumerated, or all dead above)."""
    return Estimate(
        n,
        strata,
        depth,
        strata,
        float(top[-1] if depth == n else 0),
        0.0,
        float(sum(top)),
        0.0,
        level,
        1.0 if strata else 0.0,
        0.0,
        0.0,
        exact,
        top,
    )


@dataclasses.dataclass(frozen=True)
class _Calls:
    """`estimate`'s kernel calls: their layout, host inputs and compiled executable."""

    plan: Plan
    copies: int  # copies of every stratum's rows
    rows: int  # stratum rows in all (copies included), before padding
    calls: int  # kernel calls of the run
    strata: int
    masks: np.ndarray  # [padded, 3, words] uint32 the rows' masks (padding rows dead)
    ids: np.ndarray  # [padded] int32 row ids
    seeds: np.ndarray  # [calls] the calls' seeds
    compiled: Any  # (masks, ids, seed) -> CallSums
    compile_s: float

    @classmethod
    def compile(
        cls, n: int, depth: int, masks64: np.ndarray, probes: int, lanes: int | None, seed: int
    ) -> _Calls:
        """Lay the probes out in calls of about `lanes` probes and compile the call."""
        strata = len(masks64)
        devices = backend.local_device_count()
        if lanes is None:
            lanes = (
                LANES_PER_CALL
                if not backend.is_accelerator()
                else accelerator_lanes(n, depth, strata, probes, devices)
            )
        plan, copies, rows, padded, calls = call_plan(n, depth, strata, probes, lanes, devices)
        words = plan.probe.words
        tiled = np.tile(words_of(masks64, words), (copies, 1, 1))
        pad = np.full((padded - rows, 3, words), 0xFFFFFFFF, np.uint32)  # no free row: dead
        masks = np.concatenate([tiled, pad])  # host arrays: placed by the executable, no program
        ids = np.arange(padded, dtype=np.int32)
        t0 = time.perf_counter()
        seeds = call_seeds(seed, calls)
        compiled = cache.loaded(  # loaded from the cache folder, kept in the process
            "estimate-call",
            (plan, devices),
            (masks, ids, seeds[0]),
            lambda: run_call.lower(masks, ids, seeds[0], plan, devices),
        )
        compile_s = time.perf_counter() - t0
        return cls(plan, copies, rows, calls, strata, masks, ids, seeds, compiled, compile_s)

    def fingerprint(self, n: int, probes: int, depth: int, seed: int, procs: int) -> dict:
        """The settings a checkpoint must match to be resumed."""
        return {
            "n": n,
            "probes": probes,
            "depth": depth,
            "seed": seed,
            "calls": self.calls,
            "per_call": self.plan.per_call,
            "strata": self.strata,
            "copies": self.copies,
            "processes": procs,
        }

    def sweep(
        self,
        acc: np.ndarray,
        start: int,
        quiet: bool | None,
        checkpoint,
        fingerprint: dict,
        checkpoint_every: float,
    ) -> tuple[int, bool, float]:
        """Run calls `start`.. adding their sums to `acc` (in place): (calls done, interrupted,
        seconds)."""
        procs, me = gather.process_count(), gather.process_index()
        calls, strata = self.calls, self.strata
        done = start  # calls whose sums are in acc
        rounds = iter(range(start, calls, procs))

        def call() -> Tick:
            """One round: call `c0 + me` here, every process's sums added in call order."""
            nonlocal done
            c0 = next(rounds)
            c = c0 + me
            mine = np.zeros((len(SUMS), strata))
            if c < calls:
                sums = self.compiled(self.masks, self.ids, self.seeds[c])
                mine = stratum_sums(sums, self.rows, self.copies, strata)
            for k, part in enumerate(gather.allgather(mine)):  # in call order on every process
                if c0 + k < calls:
                    acc[...] += part
            done = min(calls, c0 + procs)
            return Tick(done, finished=done >= calls)

        save = None
        if checkpoint is not None and gather.is_writer():
            save = lambda: _save_sums(checkpoint, acc, done, fingerprint)
        t0 = time.perf_counter()
        stopped = start < calls and run_chunks(
            call, total=calls, unit="calls", quiet=quiet, save=save, every=checkpoint_every
        )  # interrupted: the sums of the finished calls are saved
        seconds = time.perf_counter() - t0
        if save is not None and not stopped:
            _save_sums(checkpoint, acc, calls, fingerprint)
        return done, stopped, seconds


def _same_plan(*layout: int) -> None:
    """Refuse, on every process alike, a multi-process run whose processes laid out different
    calls (an accelerator sizes its calls from its devices): they would walk other probes.

    Args:
      layout: this process's calls, probes per row and call, copies and group.

    Raises:
      QueensError: naming the first process whose layout differs from process 0's.
    """
    plans = gather.allgather(np.asarray(layout, np.int32))
    for k, other in enumerate(plans):
        if not np.array_equal(other, plans[0]):
            raise QueensError(
                f"process {k} would run {other[0]} calls of {other[1]} probes a row, process 0 "
                f"{plans[0][0]} of {plans[0][1]}: their devices differ; run every process on "
                "the same kind and number of devices"
            )


def _reserve(n: int, depth: int, level: int, nodes: int, nbytes: int) -> None:
    """Refuse, before it is built, a level of the enumeration that cannot fit in memory (the last
    level also holds the strata's arrays, `STRATUM_BYTES` each)."""
    need = nbytes + (STRATUM_BYTES * nodes if level == depth else 0)
    memory.check_memory(
        need,
        f"--depth {depth} (n = {n}: {nodes:,} partial boards at level {level})",
        "use a smaller --depth, or leave it out (the default fits)",
    )


def _save_sums(path, acc: np.ndarray, done: int, fingerprint: dict) -> None:
    """Sums of the first `done` calls, atomically."""
    ckpt.save(path, {"acc": acc, "done": done}, fingerprint)


def _load_sums(path, fingerprint: dict, strata: int) -> tuple[np.ndarray, int]:
    """(sums `[len(SUMS), strata]`, calls done) of a checkpoint made with the same settings."""
    schema = {"acc": ckpt.Spec(np.float64, (len(SUMS), strata)), "done": ckpt.Spec(np.integer)}
    z = ckpt.load(path, fingerprint, schema)
    return z["acc"], int(z["done"])
