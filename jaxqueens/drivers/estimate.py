"""Knuth's random-probe estimator of Q(n) and of the backtrack tree's size: `estimate`.

Knuth (1975, "Estimating the efficiency of backtrack programs", Math. Comp. 29), with partial
enumeration of the top `depth` levels as strata, and Hall's (1992) skewness-corrected studentized
intervals (`jaxqueens.drivers.estimate_result`). The probes run in kernel calls of about `lanes`
probes (laid out by `call_plan`, run by `run_call`) through the one chunked loop
(`drivers.loop.run_chunks`); the host adds every call's group sums in float64, in call order,
and checkpoints them. The docs' estimate page describes the strata and the intervals.
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

from jaxqueens.core import prefixes, rng
from jaxqueens.core.board import as_size
from jaxqueens.core.oeis import A000170
from jaxqueens.drivers import settings
from jaxqueens.drivers.estimate_result import (
    SIMKIN_ALPHA,
    Estimate,
    EstimateSettings,
    check_strata,
    estimate_settings,
    stratified,
)
from jaxqueens.drivers.loop import RunControl, Tick, run_chunks
from jaxqueens.errors import QueensError
from jaxqueens.io import checkpoint as ckpt
from jaxqueens.parallel import cache, gather, items, memory, sizing
from jaxqueens.parallel import devices as backend
from jaxqueens.parallel.shard import over_devices
from jaxqueens.solvers import estimate as knuth

MAX_STRATA = 1 << 16
LANES_PER_CALL = 1 << 20
MIN_PER_STRATUM = 64
"""Auto depth: the deepest level with at most probes / MIN_PER_STRATUM (and MAX_STRATA) nodes."""
STRATUM_BYTES = 256
"""Host and device bytes per stratum: masks, words and their device copy, sums, call outputs."""
METHOD = "Knuth 1975 random probes, top levels enumerated"
PROBES_PER_THREAD = 4  # accelerator: probes per call for each thread the device keeps resident
GROUP = 256  # probes reduced together on device (float32 sums of <= 256 scaled terms)
COPY_ROWS = 64  # fewer strata are copied to at least this many rows, for the devices to share
SUMS = ("w", "w2", "nodes", "nodes2", "hits", "w3", "nodes3")
"""The host's float64 sums per stratum, in this order (rows of `stratum_sums`)."""


@dataclasses.dataclass(frozen=True)
class Plan:
    """The static layout of one kernel call (jit-static): the probe's config and the batch."""

    probe: knuth.Config  #: n, depth
    per_call: int  #: probes per stratum and call (a multiple of `group`)
    group: int  #: probes per on-device reduction group (`group_sums`)
    block: int = 0  #: probes vmapped per `lax.map` iteration (0: all at once, the accelerator way)


def estimate(
    n: int,
    probes: int | None = None,
    *,
    depth: int | None = None,
    seed: int = 0,
    level: float = settings.CONFIDENCE,
    lanes: int | None = None,
    control: RunControl | None = None,
) -> Estimate:
    """Estimate Q(n) and the backtrack tree's size with Knuth's probes, stratified on the top
    levels.

    Args:
      n: board size, 1..64.
      probes: probes in all (default: 10^7 on a CPU, 10^8 on an accelerator, `sizes()`), at least
        `ESTIMATE_MIN_PROBES` and `ESTIMATE_MIN_PER_STRATUM` per stratum, so that the interval
        holds its level; rounded up to whole calls.
      depth: levels enumerated exactly (default: `default_depth`); 0 is Knuth's plain
        estimator, n enumerates every walk (exact).
      seed: random seed (call c of a run uses the stream `call_seed` `(seed, c)`).
      level: confidence level of the reported intervals.
      lanes: about this many probes per kernel call (default: `LANES_PER_CALL` on a CPU,
        sized from the device on an accelerator: `accelerator_lanes`).
      control: progress and checkpoints (None: `RunControl()`): the checkpoint holds the sums
        of finished calls (written periodically, on Ctrl-C and when done).

    Returns:
      The `Estimate`; after Ctrl-C (or SIGTERM), as the other drivers do, the estimate from the
      calls finished by then (`stopped_by="interrupted"`, `probes` the probes walked; NaN when
      none finished), their sums saved in the checkpoint.

    Raises:
      QueensError: an argument out of range (naming it and the range).

    With several processes (`jax.distributed`), call c runs on process `c % P` and every
    process adds all calls' sums in call order, so the estimate equals a single-process run.
    """
    n = as_size(n)
    given = {"probes": probes, "depth": depth, "seed": seed, "level": level, "lanes": lanes}
    return _run(n, estimate_settings(n, **given), RunControl() if control is None else control)


def _run(n: int, s: EstimateSettings, control: RunControl) -> Estimate:
    """`estimate` of an n-board by the checked settings `s`: the strata enumerated, then probed
    below (unless every walk is enumerated, or all die above: the exact values)."""
    probes = sizing.sizes().estimator_probes if s.probes is None else s.probes
    depth = default_depth(n, probes) if s.depth is None else s.depth
    masks64, top = prefixes.expand(n, depth, reserve=functools.partial(_reserve, n, depth))
    strata = len(masks64)
    check_strata(probes, strata, depth, n)
    # what the estimate holds whether or not probes run
    known: dict[str, Any] = {"n": n, "depth": depth, "strata": strata, "top_nodes": top}
    known.update(level=s.level, exact=A000170.get(n))
    if strata == 0 or depth == n:  # all dead above, or every walk enumerated: exact
        return Estimate(
            probes=strata,
            solutions=float(top[-1] if depth == n else 0),
            solutions_se=0.0,
            nodes=float(sum(top)),
            nodes_se=0.0,
            hit_rate=float(strata > 0),
            seconds=0.0,
            compile_s=0.0,
            **known,
        )
    devices = backend.local_device_count()
    lanes = s.lanes or (
        LANES_PER_CALL
        if not backend.is_accelerator()
        else accelerator_lanes(n, depth, strata, probes, devices)
    )
    keys = {"n": n, "probes": probes, "depth": depth, "seed": s.seed}
    acc, m, stopped, seconds, compile_s = _sweep(masks64, keys, lanes, devices, control)
    q, q_se, q_skew = stratified(acc[0], acc[1], acc[5], m)
    v, v_se, v_skew = stratified(acc[2], acc[3], acc[6], m)
    return Estimate(
        probes=m * strata,
        solutions=q,
        solutions_se=q_se,
        nodes=float(sum(top)) + v,
        nodes_se=v_se,
        hit_rate=float(acc[4].sum() / (m * strata)) if m else math.nan,
        seconds=seconds,
        compile_s=compile_s,
        stopped_by="interrupted" if stopped else "finished",
        solutions_skew=q_skew,
        nodes_skew=v_skew,
        **known,
    )


def default_depth(n: int, probes: int) -> int:
    """The deepest level whose nodes number at most `min(MAX_STRATA, probes / MIN_PER_STRATUM)`."""
    return prefixes.deepest_level(n, max(1, min(MAX_STRATA, probes // MIN_PER_STRATUM)))


def run_summary(results: list[Estimate], seed: int) -> dict:
    """The `summary.json` document of a run over several sizes (one estimate per size)."""
    return {
        "method": METHOD,
        "seed": seed,
        "simkin_alpha": SIMKIN_ALPHA,
        "backend": jax.default_backend(),
        "estimates": [r.as_dict() for r in results],
    }


def _reserve(n: int, depth: int, level: int, nodes: int, nbytes: int) -> None:
    """Refuse, before it is built, a level of the enumeration that cannot fit in memory (the last
    level also holds the strata's arrays, `STRATUM_BYTES` each)."""
    need = nbytes + (STRATUM_BYTES * nodes if level == depth else 0)
    memory.check_memory(
        need,
        f"--depth {depth} (n = {n}: {nodes:,} partial boards at level {level})",
        "use a smaller --depth, or leave it out (the default fits)",
    )


# --- the kernel calls ------------------------------------------------------------------------


def call_plan(
    n: int, depth: int, strata: int, probes: int, lanes: int, devices: int, block: int | None = None
) -> tuple[Plan, int, int, int, int]:
    """How `probes` probes over `strata` strata (at level `depth`) run in calls of about `lanes`
    probes: `(plan, copies, rows, padded, calls)`, the call's static `Plan`, copies of each stratum,
    rows (strata x copies), rows padded to a multiple of `devices`, and calls. `block` is the plan's
    lockstep block (default: the backend's).

    Which probes run, and how they are grouped and added, depends on the settings and `lanes` alone:
    `devices` only pads the rows (dead rows) so that they split evenly, so a run walks and adds the
    same probes on any number of devices and processes."""
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


def call_seed(seed: int, call) -> jax.Array:
    """The 64-bit stream seed (uint32 `[2]`) of kernel call `call`: `chain_seeds` of the run seed's
    key at `call`. The call's probes are the lanes `stratum * per_call + j` of this stream
    (`walk`)."""
    return rng.chain_seeds(rng.seed_key(seed), jnp.asarray([call], jnp.uint32))[0]


@jax.jit
def _call_hash(data, calls):
    return rng.chain_seeds(rng.wrap_threefry(data), calls)


def call_seeds(seed: int, calls: int) -> np.ndarray:
    """`call_seed` of every call of a run, uint32 `[calls, 2]`, by one executable loaded from the
    cache folder where the key is known on the host (`seed_data`)."""
    ids = np.arange(calls, dtype=np.uint32)
    data = rng.seed_data(seed)
    if data is None:
        return np.asarray(rng.chain_seeds(jax.random.key(seed), ids))
    return np.asarray(cache.call("estimate-seeds", _call_hash, (data, ids)))


def strata_block(masks, ids, seed, plan: Plan) -> knuth.GroupSums:
    """`plan.per_call` probes for each stratum of a block, reduced per group (the kernel's
    `group_sums`): `GroupSums` of `[S, G]`. `masks` `[S, 3, W]` are the strata's prefixes, `ids`
    `[S]` their indices, `seed` the call's uint32 `[2]` stream seed (`call_seed`). Probe j of
    stratum `ids[s]` is the kernel's `walk` of lane `ids[s] * per_call + j` of the stream `seed`;
    the probes run in lockstep blocks (`blocks`)."""
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
def run_call(masks, ids, seed, plan: Plan, devices: int) -> knuth.GroupSums:
    """One kernel call: `plan.per_call` probes for each stratum, strata split over `devices`;
    `GroupSums`, eight `[S, G]` arrays. `masks` are uint32 `[S, 3, W]` strata (S a multiple of
    `devices`), `ids` int32 `[S]`, `seed` the call's uint32 `[2]` stream seed (`call_seed`)."""
    return over_devices(
        lambda mk, i, s: strata_block(mk, i, s, plan),
        masks,
        ids,
        seed,
        num_devices=devices,
        sharded=(True, True, False),
    )


def call_builder(n: int, depth: int, strata: int, probes: int, devices: int = 1, place=None):
    """The builder `choose` sizes (and `make gpu-check` compiles), `lanes -> jax.stages.Lowered` for
    calls of about `lanes` probes: `run_call` as an accelerator runs it, all probes of a call
    vmapped at once. `depth` is the strata's level; `place` puts the example arguments on the target
    devices (default: as they are)."""
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
    device's memory holds (`choose`). `depth` is the strata's level; `target` the device's budget
    and parallelism (default: the local device's)."""
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


def stratum_sums(sums: knuth.GroupSums, rows: int, copies: int, strata: int) -> np.ndarray:
    """A call's group sums (`[padded, G]` each, the first `rows` = `strata * copies` real) as
    float64 sums per stratum, `[len(SUMS), strata]` named by `SUMS`: the `copies` of a stratum and
    its groups added up, the scaling undone."""
    top, *parts = (np.asarray(x)[:rows].reshape(copies, strata, -1) for x in sums)
    e = top.astype(np.int64)
    power = {"w": 1, "w2": 2, "nodes": 1, "nodes2": 2, "hits": 0, "w3": 3, "nodes3": 3}
    named = dict(zip(knuth.GroupSums._fields[1:], parts, strict=True))
    return np.stack([np.ldexp(named[k].astype(np.float64), power[k] * e).sum((0, 2)) for k in SUMS])


def _sweep(
    masks64: np.ndarray, keys: dict, lanes: int, devices: int, control: RunControl
) -> tuple[np.ndarray, int, bool, float, float]:
    """Lay the strata `masks64`' probes out in calls of about `lanes` probes on `devices`, compile
    the call and run the calls (after those the checkpoint holds when resuming), every process's
    sums added in call order and saved as `control` says, on Ctrl-C and when done. `keys` (n,
    probes, depth, seed) and the layout are the checkpoint's fingerprint; several processes must
    lay out the same calls (`_same_plan`). Returns (the strata's sums `[len(SUMS), strata]`,
    probes walked per stratum, interrupted, seconds, compile seconds)."""
    strata = len(masks64)
    plan, copies, rows, padded, calls = call_plan(
        keys["n"], keys["depth"], strata, keys["probes"], lanes, devices
    )
    words = plan.probe.words
    tiled = np.tile(knuth.words_of(masks64, words), (copies, 1, 1))
    pad = np.full((padded - rows, 3, words), 0xFFFFFFFF, np.uint32)  # no free row: dead
    masks = np.concatenate([tiled, pad])  # host arrays: placed by the executable, no program
    ids = np.arange(padded, dtype=np.int32)
    t0 = time.perf_counter()
    seeds = call_seeds(keys["seed"], calls)
    compiled = cache.loaded(  # loaded from the cache folder, kept in the process
        "estimate-call",
        (plan, devices),
        (masks, ids, seeds[0]),
        lambda: run_call.lower(masks, ids, seeds[0], plan, devices),
    )
    compile_s = time.perf_counter() - t0
    procs, me = gather.process_count(), gather.process_index()
    if procs > 1:
        _same_plan(calls, plan.per_call, copies, plan.group)
    layout = {"calls": calls, "per_call": plan.per_call, "strata": strata, "copies": copies}
    fingerprint = {**keys, **layout, "processes": procs}
    acc, done = np.zeros((len(SUMS), strata)), 0  # done: calls whose sums are in acc
    checkpoint = control.checkpoint
    if control.resume and checkpoint is not None and Path(checkpoint).exists():
        schema = {"acc": ckpt.Spec(np.float64, (len(SUMS), strata)), "done": ckpt.Spec(np.integer)}
        z = ckpt.load(checkpoint, fingerprint, schema)
        acc, done = z["acc"], int(z["done"])
    start = done
    rounds = iter(range(start, calls, procs))

    def call() -> Tick:
        """One round: call `c0 + me` here, every process's sums added in call order."""
        nonlocal done
        c0 = next(rounds)
        c = c0 + me
        mine = np.zeros((len(SUMS), strata))
        if c < calls:
            mine = stratum_sums(compiled(masks, ids, seeds[c]), rows, copies, strata)
        for k, part in enumerate(gather.allgather(mine)):  # in call order on every process
            if c0 + k < calls:
                acc[...] += part
        done = min(calls, c0 + procs)
        return Tick(done, finished=done >= calls)

    save = None
    if checkpoint is not None and gather.is_writer():
        save = lambda: ckpt.save(checkpoint, {"acc": acc, "done": done}, fingerprint)
    t0 = time.perf_counter()
    stopped = start < calls and run_chunks(
        call, total=calls, unit="calls", control=control, save=save
    )  # interrupted: the sums of the finished calls are saved
    seconds = time.perf_counter() - t0
    if save is not None and not stopped:
        save()
    return acc, done * plan.per_call * copies, stopped, seconds, compile_s


def _same_plan(*layout: int) -> None:
    """Refuse, on every process alike, a multi-process run whose processes laid out different calls
    (an accelerator sizes its calls from its devices): they would walk other probes. `layout` is
    this process's calls, probes per row and call, copies and group; the QueensError names the first
    process whose layout differs from process 0's."""
    plans = gather.allgather(np.asarray(layout, np.int32))
    for k, other in enumerate(plans):
        if not np.array_equal(other, plans[0]):
            raise QueensError(
                f"process {k} would run {other[0]} calls of {other[1]} probes a row, process 0 "
                f"{plans[0][0]} of {plans[0][1]}: their devices differ; run every process on "
                "the same kind and number of devices"
            )
