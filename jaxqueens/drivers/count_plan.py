"""Planning an exact count without running it (`count --plan`): its tasks, and its run time
predicted from Knuth's probes (1975) of the tasks' trees and timed kernel calls of a bounded
number of edges (`plan_count`).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jaxqueens.core.board import as_size
from jaxqueens.core.oeis import A000170
from jaxqueens.drivers import count_chunks as chunks
from jaxqueens.drivers import count_setup
from jaxqueens.parallel import cache, devices
from jaxqueens.parallel import count as batched
from jaxqueens.parallel.scheduler import Launch, Scheduler


class CountPlan(NamedTuple):
    """What `plan_count` found (`count --plan`): the tasks, and the run time predicted
    from Knuth probes of the search trees and a timed sample of bounded kernel calls."""

    n: int  #: board size
    constellations: int  #: symmetry classes of border configurations
    tasks: int  #: independent subtrees the count would search
    depth: int  #: columns placed on the host
    chunks: int  #: kernel-call chunks the tasks are split into
    devices: int  #: local devices the count would run on
    sampled: int  #: Knuth probes taken (each a random task's random root-to-leaf walk)
    sample_seconds: float  #: the probes' and the timed calls' seconds together
    estimate_seconds: float  #: predicted search time of the whole count (compilation excluded)
    compile_seconds: float  #: compiling the kernels and the probes, apart from the samples
    low_seconds: float = 0.0  #: the 95% interval of the prediction from the probes' spread
    high_seconds: float = 0.0  #: (its upper end)
    edges: float = 0.0  #: the tree edges the count will take, estimated (exact for n <= 3)
    edges_error: float = 0.0  #: the estimate's standard error
    edge_rate: float = 0.0  #: edges per second of the kernel on every stream together, timed
    timed_edges: int = 0  #: edges the timed calls took (accelerator: lanes x iterations)
    solutions: float = 0.0  #: Q(n) estimated by the same probes (a check of the estimator)
    solutions_error: float = 0.0  #: its standard error
    lower_bound: bool = False  #: accelerator: the rate assumes every lane busy (time at least)


PLAN_PROBES = 1 << 13  # Knuth probes per estimator call of count --plan
PLAN_CALL_EDGES = 1 << 24  # edges per timed kernel call of count --plan (a fraction of a second)
PLAN_TARGET_ERROR = 0.01  # the probes stop early once the edge estimate's relative error is this


def _tree_size(plan: chunks.Plan, seconds: float, seed: int = 0):
    """Knuth's estimate of the count's tree (every task's edges and completions, weighted):
    calls of `PLAN_PROBES` probes of uniformly drawn tasks, until `seconds` have passed
    (at least one call) or the edge estimate's relative standard error is below
    `PLAN_TARGET_ERROR`. Returns (edges, its standard error, solutions, its standard
    error, probes, compile seconds)."""
    num = len(plan.tasks)
    rng = np.random.default_rng(seed)
    tables = jnp.asarray(plan.tables)
    args = (np.zeros((PLAN_PROBES, 4), np.uint32), np.zeros(PLAN_PROBES, np.int32))
    c0 = time.perf_counter()
    compiled = cache.kept(  # a repeated call in this process reuses it
        "count-probes",
        plan.config,
        (*args, tables, np.uint32(0)),
        lambda: batched.probe_chunk.lower(*args, tables, np.uint32(0), plan.config).compile(),
    )
    compile_s = time.perf_counter() - c0
    sums = np.zeros(4)  # sums of edges, edges^2, solutions, solutions^2 per probe
    t0, calls = time.perf_counter(), 0
    while True:
        pick = rng.integers(0, num, PLAN_PROBES)
        out = compiled(
            plan.tasks[pick], plan.owner[pick].astype(np.int32), tables, np.uint32(calls)
        )
        e = np.asarray(out.edges, np.float64) * num
        s = np.asarray(out.found, np.float64) * num * plan.weights[pick]
        sums += [e.sum(), (e * e).sum(), s.sum(), (s * s).sum()]
        calls += 1
        probes = calls * PLAN_PROBES
        mean = sums[[0, 2]] / probes
        error = np.sqrt(np.maximum(sums[[1, 3]] / probes - mean**2, 0) / max(probes - 1, 1))
        if time.perf_counter() - t0 >= seconds or error[0] <= PLAN_TARGET_ERROR * mean[0]:
            break
    return mean[0], error[0], plan.base + mean[1], error[1], probes, compile_s


def _edge_rate(plan: chunks.Plan, seconds: float) -> tuple[float, int]:
    """Edges a second the count kernel takes on the plan's streams together, timed on the first
    chunks' tasks (a random sample: the tasks are shuffled), one call at a time per stream,
    each bounded by `PLAN_CALL_EDGES` (a stopped search resumes in the next round), until
    `seconds` have passed or the chunks are searched. Each stream's rate is its edges over its
    calls' own durations (they run side by side). Returns (rate, edges timed); on an accelerator
    the edges are lanes x lockstep iterations (every lane taken as busy)."""
    short = plan._replace(budget=min(plan.budget, PLAN_CALL_EDGES))
    scale = plan.sizes.count_lanes if plan.sizes.accelerator else 1
    bounds = plan.bounds
    nxt = len(plan.streams)
    jobs = [chunks.Chunk(short, k, *bounds[k]) if k < len(bounds) else None for k in range(nxt)]
    busy = np.zeros((len(plan.streams), 2))  # per stream: edges, seconds
    t0 = time.perf_counter()

    def take(k: int) -> Launch[int] | None:  # stream k times its own chunk, until time is up
        job = jobs[k]
        if job is None or time.perf_counter() - t0 >= seconds:
            return None
        return Launch(k, short.call, short.padded(job.batch))

    calls: Scheduler[int] = Scheduler(plan.streams, depth=1, ordered=False, name="jaxqueens-plan")
    with calls:
        calls.fill(take)
        while len(calls):
            call = calls.next()
            k = call.job
            job = jobs[k]
            assert job is not None
            before = job.edges
            job.absorb(short, *call.outputs)
            busy[k] += [(job.edges - before) * scale, call.end - call.start]
            if not len(job.batch):  # searched: the next chunk (none left: the stream rests)
                jobs[k] = chunks.Chunk(short, nxt, *bounds[nxt]) if nxt < len(bounds) else None
                nxt += 1
            calls.fill(take)
    rate = sum(e / s for e, s in busy if s > 0)
    return rate, int(busy[:, 0].sum())


def plan_count(
    n: int, budget: float = 2.0, depth: int | None = None, chunk: int | None = None
) -> CountPlan:
    """Plan a count without running it: the tasks, and the run time predicted from bounded samples,
    in about `budget` seconds (plus planning and compilation) at every n.

    The size of the search is Knuth's estimate (1975) of every task's tree (`_tree_size`: random
    probes of random tasks, unbiased, with its standard error); the speed is timed on kernel calls
    of at most `PLAN_CALL_EDGES` edges (`_edge_rate`), so no sample ever waits for a whole task.
    The prediction is edges / rate, its interval from the estimate's standard error (the machine's
    load moves the rate as well; it is timed now). Each half of `budget` goes to one of the two.

    Args:
      n: board size, 1..32.
      budget: seconds of sampling.
      depth: override the columns placed on the host (as `count_solutions`).
      chunk: override the tasks per kernel call.

    Returns:
      `CountPlan`.
    """
    s = count_setup.CountSettings(plan=True, depth=depth, chunk=chunk)
    n = count_setup.check_count_n(as_size(n))
    if n <= 3:
        return CountPlan(n, 0, 0, 0, 0, 1, 0, 0.0, 0.0, 0.0, solutions=float(A000170[n]))
    plan = chunks.make_plan(n, s.depth, s.chunk)
    num = len(plan.tasks)
    compile_s = plan.compile()
    t0 = time.perf_counter()
    edges = edges_se = found = found_se = probe_compile = 0.0
    probes, rate, timed = 0, 0.0, 0
    if num:
        rate, timed = _edge_rate(plan, budget / 2)
        edges, edges_se, found, found_se, probes, probe_compile = _tree_size(plan, budget / 2)
    seconds = time.perf_counter() - t0 - probe_compile
    compile_s += probe_compile
    estimate = edges / rate if rate > 0 else 0.0
    spread = 1.96 * edges_se / rate if rate > 0 else 0.0
    return CountPlan(
        n,
        plan.constellations,
        num,
        plan.depth,
        -(-num // plan.chunk),
        devices.local_device_count(),
        probes,
        seconds,
        estimate,
        compile_s,
        max(estimate - spread, 0.0),
        estimate + spread,
        edges,
        edges_se,
        rate,
        timed,
        float(plan.base) if not num else found,
        found_se,
        plan.sizes.accelerator,
    )
