"""Knuth's random-probe estimator of Q(n) and of the backtrack tree's size: `estimate`.

Knuth (1975, "Estimating the efficiency of backtrack programs", Math. Comp. 29), with partial
enumeration of the top `depth` levels as strata, and Hall's (1992, "On the removal of skewness
by transformation", JRSS B 54) skewness-corrected studentized intervals
(`jaxqueens.drivers.estimate_result`). The probes run in kernel calls of about `lanes` probes
(`jaxqueens.drivers.estimate_calls`) through the one chunked loop
(`drivers.loop.run_chunks`); the host sums every call's group sums in float64, in call
order. The docs' estimate page describes the strata and the intervals.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.core import prefixes
from jaxqueens.core.board import as_size
from jaxqueens.core.oeis import A000170
from jaxqueens.drivers import estimate_setup, settings
from jaxqueens.drivers.estimate_calls import Calls, call_plan, run_call
from jaxqueens.drivers.estimate_result import Estimate, stratified
from jaxqueens.drivers.loop import RunControl
from jaxqueens.errors import QueensError
from jaxqueens.parallel import devices as backend
from jaxqueens.parallel import memory, sizing

SIMKIN_ALPHA = 1.942
MAX_STRATA = 1 << 16
LANES_PER_CALL = 1 << 20
MIN_PER_STRATUM = 64
"""Auto depth: the deepest level with at most probes / MIN_PER_STRATUM (and MAX_STRATA) nodes."""
STRATUM_BYTES = 256
"""Host and device bytes per stratum: masks, words and their device copy, sums, call outputs."""
METHOD = "Knuth 1975 random probes, top levels enumerated"
PROBES_PER_THREAD = 4  # accelerator: probes per call for each thread the device keeps resident


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
    s = estimate_setup.estimate_settings(n, **given)
    probes = sizing.sizes().estimator_probes if s.probes is None else s.probes
    depth = default_depth(n, probes) if s.depth is None else s.depth
    masks64, top = prefixes.expand(n, depth, reserve=functools.partial(_reserve, n, depth))
    strata = len(masks64)
    estimate_setup.check_strata(probes, strata, depth, n)
    exact = A000170.get(n)
    if strata == 0 or depth == n:  # all dead above, or every walk enumerated
        return _enumerated(n, strata, depth, top, s.level, exact)
    devices = backend.local_device_count()
    lanes = s.lanes or (
        LANES_PER_CALL
        if not backend.is_accelerator()
        else accelerator_lanes(n, depth, strata, probes, devices)
    )
    run = Calls.compile(n, depth, masks64, probes, lanes, s.seed, devices)
    keys = {"n": n, "probes": probes, "depth": depth, "seed": s.seed}
    acc, m, stopped, seconds = run.sweep(keys, RunControl() if control is None else control)
    return _estimated(n, depth, top, s.level, exact, acc, m, seconds, run.compile_s, stopped)


def _estimated(
    n: int,
    depth: int,
    top,
    level: float,
    exact,
    acc: np.ndarray,
    m: int,
    seconds: float,
    compile_s: float,
    stopped: bool,
) -> Estimate:
    """The estimate from the strata's sums `acc` `[len(SUMS), strata]` over `m` probes per
    stratum (`stopped`: from the calls finished before Ctrl-C)."""
    strata = acc.shape[1]
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
    """The exact estimate when no probe is needed (every walk enumerated, or all dead above)."""
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


def _reserve(n: int, depth: int, level: int, nodes: int, nbytes: int) -> None:
    """Refuse, before it is built, a level of the enumeration that cannot fit in memory (the last
    level also holds the strata's arrays, `STRATUM_BYTES` each)."""
    need = nbytes + (STRATUM_BYTES * nodes if level == depth else 0)
    memory.check_memory(
        need,
        f"--depth {depth} (n = {n}: {nodes:,} partial boards at level {level})",
        "use a smaller --depth, or leave it out (the default fits)",
    )
