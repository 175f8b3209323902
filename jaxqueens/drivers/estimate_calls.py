"""Knuth's estimator's kernel calls: their layout (`call_plan`), seeds (`call_seed`), the sharded
call (`run_call`), and a run's calls (`Calls`: compiled once, run through
`jaxqueens.drivers.loop.run_chunks`, their sums added on the host in call order, checkpointed).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import rng
from jaxqueens.drivers.estimate_result import SUMS, stratum_sums
from jaxqueens.drivers.loop import RunControl, Tick, run_chunks
from jaxqueens.errors import QueensError
from jaxqueens.io import checkpoint as ckpt
from jaxqueens.parallel import cache, gather, items, sizing
from jaxqueens.parallel.shard import over_devices
from jaxqueens.solvers import estimate as knuth
from jaxqueens.solvers.estimate import words_of

GROUP = 256  # probes reduced together on device (float32 sums of <= 256 scaled terms)
COPY_ROWS = 64  # fewer strata are copied to at least this many rows, for the devices to share


@dataclasses.dataclass(frozen=True)
class Plan:
    """The static layout of one kernel call (jit-static): the probe's config and the batch."""

    probe: knuth.Config  #: n, depth
    per_call: int  #: probes per stratum and call (a multiple of `group`)
    group: int  #: probes per on-device reduction group (`group_sums`)
    block: int = 0  #: probes vmapped per `lax.map` iteration (0: all at once, the accelerator way)


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


@dataclasses.dataclass(frozen=True)
class Calls:
    """`estimate`'s kernel calls: their layout, host inputs and compiled executable."""

    plan: Plan
    copies: int  #: copies of every stratum's rows
    rows: int  #: stratum rows in all (copies included), before padding
    calls: int  #: kernel calls of the run
    strata: int
    masks: np.ndarray  #: [padded, 3, words] uint32 the rows' masks (padding rows dead)
    ids: np.ndarray  #: [padded] int32 row ids
    seeds: np.ndarray  #: [calls] the calls' seeds
    compiled: Any  #: (masks, ids, seed) -> GroupSums
    compile_s: float

    @classmethod
    def compile(
        cls, n: int, depth: int, masks64: np.ndarray, probes: int, lanes: int, seed: int, devices
    ) -> Calls:
        """Lay the probes out in calls of about `lanes` probes on `devices` and compile the call;
        several processes must lay out the same calls (`_same_plan`)."""
        strata = len(masks64)
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
        if gather.process_count() > 1:
            _same_plan(calls, plan.per_call, copies, plan.group)
        return cls(plan, copies, rows, calls, strata, masks, ids, seeds, compiled, compile_s)

    def sweep(self, keys: dict, control: RunControl) -> tuple[np.ndarray, int, bool, float]:
        """Run the calls, after those the checkpoint holds when resuming, adding every process's
        sums in call order; the sums are saved as `control` says, on Ctrl-C and when done.
        `keys` (n, probes, depth, seed) and the layout are the checkpoint's fingerprint.
        Returns (the strata's sums `[len(SUMS), strata]`, probes walked per stratum, interrupted,
        seconds)."""
        procs, me = gather.process_count(), gather.process_index()
        calls, strata = self.calls, self.strata
        fingerprint = {
            **keys,
            "calls": calls,
            "per_call": self.plan.per_call,
            "strata": strata,
            "copies": self.copies,
            "processes": procs,
        }
        acc, done = np.zeros((len(SUMS), strata)), 0  # done: calls whose sums are in acc
        checkpoint = control.checkpoint
        if control.resume and checkpoint is not None and Path(checkpoint).exists():
            schema = {
                "acc": ckpt.Spec(np.float64, (len(SUMS), strata)),
                "done": ckpt.Spec(np.integer),
            }
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
                sums = self.compiled(self.masks, self.ids, self.seeds[c])
                mine = stratum_sums(sums, self.rows, self.copies, strata)
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
        return acc, done * self.plan.per_call * self.copies, stopped, seconds


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
