"""Knuth's random-probe estimator of Q(n) and of the backtrack tree's size: ``jaxqueens estimate``.

Knuth (1975, "Estimating the efficiency of backtrack programs", Math. Comp. 29) walks the
backtrack tree from the root, in each column choosing a uniformly random safe row among the
``d_j`` free ones. The product ``d_0 d_1 ... d_{j-1}`` is an unbiased estimate of the number of
nodes at depth j (partial boards of j queens), so a walk that reaches depth n estimates Q(n) by
its product (0 if it dies), and ``sum_j d_0 ... d_{j-1}`` estimates the tree's node count.

Variance reduction: *partial enumeration of the top levels* (stratification). The host expands
every partial board of ``depth`` queens exactly (their number is N_depth); each becomes a stratum
that gets the same number of probes, which walk only the levels below it. Then
``Q = sum_p Q_p`` is estimated by ``sum_p mean_p`` with variance ``sum_p var_p / m_p``, and the
node count by the exact count of the top ``depth`` levels plus the strata's estimates. Depth 0 is
the plain estimator; depth n enumerates every walk and gives Q(n) exactly.

The kernel (:func:`walk`) is one probe: bitmask search state in ``W = ceil(n / 32)`` uint32
words (n <= 64), a ``fori_loop`` over the levels, the row chosen by popcount and a 5-step binary search for the
k-th set bit, ``k`` from a counter-based hash (:mod:`jaxqueens.core.rng`) by multiply-shift. Weights
would overflow float32 (Q(64) ~ 1e61, and single walks go far beyond), so a walk keeps its weight
as an exact mantissa in [1, 2) times ``2^e`` (int32) and its node sum relative to ``2^e``.
Probes are vmapped in lockstep (branch-free, so lockstep wastes nothing but dead walks' levels):
all lanes at once on a GPU, blocks of ``CPU_BLOCK`` lanes under ``lax.map`` on a CPU (the
block's state stays in cache). Strata are sharded over devices, and each group of ``GROUP``
probes is reduced on device after scaling by its largest exponent; the host sums the groups in
float64. Compilation is ~0.5 s per (n, depth, shape), the levels being a ``fori_loop``
(unrolling them was 2x slower and compiled for minutes at n = 64).

Simkin (2021): Q(n) = ((1 + o(1)) n e^-alpha)^n with alpha = 1.942 +- 3e-3, so
log Q(n) / n - log n tends to -alpha.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import statistics
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from jaxqueens.parallel import gather
from jaxqueens.parallel import devices as backend
from jaxqueens.core.oeis import A000170
from jaxqueens.errors import QueensError
from jaxqueens.core.rng import hash_bits

MAX_N = 64
"""Largest board: two uint32 words of search state."""
SIMKIN_ALPHA = 1.942
GROUP = 256
"""Probes reduced together on device (float32 sums of <= 256 scaled terms)."""
MAX_STRATA = 1 << 16
LANES_PER_CALL = 1 << 20
MIN_PER_STRATUM = 64
CPU_BLOCK = 4096
"""Lanes per ``lax.map`` iteration on a CPU: one block's walk state stays in cache (1.2-1.8x
faster than all lanes at once, measured at n = 20..64); accelerators take all lanes at once."""
"""Auto depth: the deepest level with at most probes / MIN_PER_STRATUM (and MAX_STRATA) nodes."""

U32, I32, F32 = jnp.uint32, jnp.int32, jnp.float32


@dataclasses.dataclass(frozen=True)
class Config:
    """Static configuration (shapes): a jit static argument."""

    n: int
    depth: int  # levels enumerated exactly on the host
    strata: int  # strata per call, padded to a multiple of the devices
    per_call: int  # probes per stratum and call (a multiple of ``group``)
    group: int  # probes per on-device reduction group
    block: int = 0  # lanes per lax.map iteration (0: all lanes at once, the accelerator way)

    @property
    def words(self) -> int:
        return max(1, -(-self.n // 32))


# ----------------------------------------------------------------------------- the kernel


def _popcount(x):
    return lax.population_count(x).astype(I32)


def _kth_bit(x, k):
    """Position (int32) of the k-th (0-based) set bit of uint32 ``x``; needs k < popcount(x)."""
    pos = jnp.zeros_like(k)
    for w in (16, 8, 4, 2, 1):
        low = x & U32((1 << w) - 1)
        c = _popcount(low)
        up = k >= c
        k = jnp.where(up, k - c, k)
        x = jnp.where(up, x >> U32(w), low)
        pos = pos + jnp.where(up, w, 0)
    return pos


def _below(u, d):
    """Integer in [0, d) from uint32 ``u`` by multiply-shift (bias <= d / 2^32), d < 2^16."""
    d = d.astype(U32)
    return (((u >> U32(16)) * d + (((u & U32(0xFFFF)) * d) >> U32(16))) >> U32(16)).astype(I32)


def _pow2(t):
    """2^t as float32 for int32 t (0 below 2^-126)."""
    return lax.bitcast_convert_type((jnp.maximum(t + 127, 0) << 23).astype(I32), F32)


def _level(state, level, seed, lane, config: Config):
    """Advance one probe by one column (a no-op once the walk has died)."""
    n, words = config.n, config.words
    full = [U32(((1 << n) - 1 >> (32 * w)) & 0xFFFFFFFF) for w in range(words)]
    cols, ld, rd, m, e, nodes, alive = state
    free = [~(cols[w] | ld[w] | rd[w]) & full[w] for w in range(words)]
    cnt = [_popcount(f) for f in free]
    d = sum(cnt)
    ok = alive & (d > 0)
    u = hash_bits(seed, level, lane)
    k = _below(u, jnp.maximum(d, 1))
    # pick the word holding the k-th free row, then the bit inside it
    word, x = I32(0), free[0]
    for w in range(1, words):
        later = k >= cnt[w - 1]
        k = jnp.where(later, k - cnt[w - 1], k)
        word = jnp.where(later, w, word)
        x = jnp.where(later, free[w], x)
    pos = _kth_bit(x, k)
    bit = [jnp.where(ok & (word == w), U32(1) << pos.astype(U32), U32(0)) for w in range(words)]
    cols = tuple(c | b for c, b in zip(cols, bit))
    lb = [a | b for a, b in zip(ld, bit)]
    rb = [a | b for a, b in zip(rd, bit)]
    ld = tuple(((lb[w] << U32(1)) | (lb[w - 1] >> U32(31) if w else U32(0))) & full[w]
               for w in range(words))
    rd = tuple((rb[w] >> U32(1)) | (rb[w + 1] << U32(31) if w + 1 < words else U32(0))
               for w in range(words))
    # weight *= d, renormalised to a mantissa in [1, 2) (exact: d < 2^7, 24-bit mantissa)
    md = m * d.astype(F32)
    bits = lax.bitcast_convert_type(md, I32)
    t = ((bits >> 23) & 0xFF) - 127
    md = lax.bitcast_convert_type((bits & 0x007FFFFF) | 0x3F800000, F32)
    m = jnp.where(ok, md, m)
    nodes = jnp.where(ok, nodes * _pow2(-t) + md, nodes)
    e = jnp.where(ok, e + t, e)
    return cols, ld, rd, m, e, nodes, ok


def walk(masks, seed, lane, config: Config):
    """One Knuth probe from a stratum's partial board down to depth n.

    Args:
      masks: uint32 ``[3, W]``: occupied rows, left- and right-diagonal attacks of the stratum.
      seed: uint32 stream seed of this call; lane: uint32 probe id within the call.
      config: static configuration (levels ``depth .. n-1`` are walked).

    Returns:
      ``(m, e, nodes, alive)``: the walk's weight ``m * 2^e`` (m float32 in [1, 2), e int32; 0 if
      not ``alive`` at depth n) and its node sum below the stratum, ``nodes * 2^e`` (float32).
    """
    words = config.words
    state = (tuple(masks[0, w] for w in range(words)), tuple(masks[1, w] for w in range(words)),
             tuple(masks[2, w] for w in range(words)), F32(1.0), I32(0), F32(0.0), jnp.bool_(True))
    state = lax.fori_loop(config.depth, config.n, lambda lv, s: _level(s, lv, seed, lane, config),
                          state)
    return state[3:]


def _reduce_groups(m, e, nodes, alive, group: int):
    """Per group of ``group`` probes (last axis): scaled float32 sums, for the host's float64."""
    shape = m.shape[:-1] + (m.shape[-1] // group, group)
    m, e, nodes, alive = (x.reshape(shape) for x in (m, e, nodes, alive))
    top = jnp.max(e, axis=-1)
    scale = _pow2(e - top[..., None])
    w = jnp.where(alive, m * scale, 0.0)
    v = nodes * scale
    return (top, jnp.sum(w, -1), jnp.sum(w * w, -1), jnp.sum(v, -1), jnp.sum(v * v, -1),
            jnp.sum(alive, -1, dtype=I32))


def _strata_block(masks, ids, seed, config: Config):
    """Probes of a block of strata: masks ``[S, 3, W]``, ids ``[S]`` -> group sums ``[S, G]``."""
    s, per = ids.shape[0], config.per_call
    lanes = (ids[:, None].astype(U32) * U32(per) + jnp.arange(per, dtype=U32)).reshape(-1)
    probe = jax.vmap(lambda mk, ln: walk(mk, seed, ln, config))
    total = s * per
    block = math.gcd(total, config.block) if config.block else total
    if block == total:
        out = probe(jnp.repeat(masks, per, axis=0), lanes)
    else:
        stratum = (jnp.arange(total, dtype=I32) // per).reshape(-1, block)
        out = lax.map(lambda a: probe(masks[a[0]], a[1]), (stratum, lanes.reshape(-1, block)))
    out = [x.reshape(s, per) for x in out]
    return _reduce_groups(*out, config.group)


@functools.partial(jax.jit, static_argnums=(3, 4))
def run_call(masks, ids, seed, config: Config, devices: int):
    """One call: ``config.per_call`` probes for each stratum. Returns six ``[S, G]`` arrays:
    group exponent, sum w, sum w^2, sum nodes, sum nodes^2 (scaled by 2^-exponent), hits."""
    if devices == 1:
        return _strata_block(masks, ids, seed, config)
    mesh = jax.make_mesh((devices,), ("d",), devices=jax.devices()[:devices],
                         axis_types=(jax.sharding.AxisType.Auto,))
    P = jax.sharding.PartitionSpec
    return jax.shard_map(lambda mk, i, s: _strata_block(mk, i, s, config), mesh=mesh,
                         in_specs=(P("d"), P("d"), P()), out_specs=P("d"), check_vma=False)(
        masks, ids, seed)


# ----------------------------------------------------------------------------- host side


def expand(n: int, depth: int) -> tuple[np.ndarray, list[int]]:
    """Every partial board of ``depth`` queens (columns 0..depth-1), exactly, on the host.

    Returns:
      masks: uint64 ``[N_depth, 3]`` (occupied rows, left and right diagonal attacks of the next
        column); counts: ``[N_0, ..., N_depth]`` nodes per level (N_0 = 1, the root).
    """
    full = np.uint64((1 << n) - 1)
    cols = ld = rd = np.zeros(1, np.uint64)
    counts = [1]
    shifts = np.arange(n, dtype=np.uint64)
    for _ in range(depth):
        av = ~(cols | ld | rd) & full
        parent, row = np.nonzero((av[:, None] >> shifts) & np.uint64(1))
        bit = np.uint64(1) << row.astype(np.uint64)
        cols, ld, rd = cols[parent] | bit, ((ld[parent] | bit) << np.uint64(1)) & full, (rd[parent] | bit) >> np.uint64(1)
        counts.append(int(len(cols)))
    return np.stack([cols, ld, rd], axis=1), counts


def choose_depth(n: int, probes: int) -> int:
    """The deepest level whose nodes number at most ``min(MAX_STRATA, probes / MIN_PER_STRATUM)``."""
    limit = max(1, min(MAX_STRATA, probes // MIN_PER_STRATUM))
    full = np.uint64((1 << n) - 1)
    cols = ld = rd = np.zeros(1, np.uint64)
    shifts = np.arange(n, dtype=np.uint64)
    for depth in range(n):
        av = ~(cols | ld | rd) & full
        parent, row = np.nonzero((av[:, None] >> shifts) & np.uint64(1))
        if len(parent) > limit:
            return depth
        bit = np.uint64(1) << row.astype(np.uint64)
        cols, ld, rd = cols[parent] | bit, ((ld[parent] | bit) << np.uint64(1)) & full, (rd[parent] | bit) >> np.uint64(1)
    return n


def _words(masks64: np.ndarray, words: int) -> np.ndarray:
    """uint64 ``[S, 3]`` -> uint32 ``[S, 3, W]``."""
    return np.stack([((masks64 >> np.uint64(32 * w)) & np.uint64(0xFFFFFFFF)).astype(np.uint32)
                     for w in range(words)], axis=-1)


@dataclasses.dataclass
class Estimate:
    """Result of :func:`estimate` (host floats; the exact value where OEIS knows it)."""

    n: int
    probes: int  # probes walked in all
    depth: int  # levels enumerated exactly (strata = nodes at that level)
    strata: int
    solutions: float  # estimate of Q(n)
    solutions_se: float  # standard error
    nodes: float  # estimate of the backtrack tree's node count (root included)
    nodes_se: float
    level: float  # confidence level of the intervals
    hit_rate: float  # share of probes that reached depth n
    seconds: float  # kernel time, compilation excluded
    compile_s: float
    exact: int | None  # A000170(n) where known
    top_nodes: list  # exact N_0 .. N_depth

    @property
    def z(self) -> float:
        return statistics.NormalDist().inv_cdf(0.5 + self.level / 2)

    @property
    def ci(self) -> tuple[float, float]:
        """Normal confidence interval for Q(n) at ``level``."""
        return self.solutions - self.z * self.solutions_se, self.solutions + self.z * self.solutions_se

    @property
    def nodes_ci(self) -> tuple[float, float]:
        return self.nodes - self.z * self.nodes_se, self.nodes + self.z * self.nodes_se

    @property
    def rel_error(self) -> float | None:
        """(estimate - exact) / exact, where the exact value is known."""
        return None if not self.exact else (self.solutions - self.exact) / self.exact

    @property
    def probes_per_s(self) -> float:
        return self.probes / self.seconds if self.seconds > 0 else float("inf")

    @property
    def exhaustive(self) -> bool:
        """Every walk enumerated (depth n): the values are exact."""
        return self.depth == self.n

    def as_dict(self) -> dict:
        lo, hi = self.ci
        nlo, nhi = self.nodes_ci
        return {"n": self.n, "solutions": self.solutions, "solutions_se": self.solutions_se,
                "ci_low": lo, "ci_high": hi, "level": self.level,
                "log_q_over_n": math.log(self.solutions) / self.n if self.solutions > 0 else None,
                "exact": self.exact, "rel_error": self.rel_error,
                "nodes": self.nodes, "nodes_se": self.nodes_se, "nodes_ci_low": nlo, "nodes_ci_high": nhi,
                "probes": self.probes, "depth": self.depth, "strata": self.strata,
                "exhaustive": self.exhaustive, "hit_rate": self.hit_rate, "seconds": self.seconds,
                "compile_s": self.compile_s, "probes_per_s": self.probes_per_s,
                "top_nodes": self.top_nodes}


def default_probes() -> int:
    """10^7 probes on a CPU, 10^8 on an accelerator."""
    return 10**8 if jax.default_backend() != "cpu" else 10**7


def estimate(n: int, probes: int | None = None, *, depth: int | None = None, seed: int = 0,
             level: float = 0.99, lanes: int = LANES_PER_CALL, quiet: bool = True,
             checkpoint=None, resume: bool = False, checkpoint_every: float = 30.0) -> Estimate:
    """Estimate Q(n) and the backtrack tree's size with Knuth's probes, stratified on the top levels.

    Args:
      n: board size, 1..64.
      probes: probes in all (default :func:`default_probes`); rounded up to whole calls.
      depth: levels enumerated exactly (default: :func:`choose_depth`); 0 is Knuth's plain
        estimator, n enumerates every walk (exact).
      seed: random seed (call c of a run uses the stream ``hash(seed, c)``).
      level: confidence level of the reported intervals.
      lanes: about this many probes per kernel call.
      quiet: no progress line.
      checkpoint: file for the sums of finished calls (every ``checkpoint_every`` seconds, on
        Ctrl-C, which then propagates, and when done); ``resume`` continues from it.

    With several processes (``jax.distributed``), call c runs on process ``c % P`` and every
    process adds all calls' sums in call order, so the estimate equals a single-process run.
    """
    from jaxqueens.io.progress import Progress, SafePoints

    if not 1 <= n <= MAX_N:
        raise QueensError(f"n = {n} is outside 1..{MAX_N} (the walks keep two 32-bit words); "
                          f"use -n between 1 and {MAX_N}")
    probes = default_probes() if probes is None else int(probes)
    if probes < 1:
        raise QueensError(f"--probes must be at least 1, got {probes}")
    if not 0 < level < 1:
        raise QueensError(f"--level must lie strictly between 0 and 1, got {level}")
    depth = choose_depth(n, probes) if depth is None else int(depth)
    if not 0 <= depth <= n:
        raise QueensError(f"--depth {depth} is outside 0..n ({n}); use 0 for the plain estimator")
    masks64, top = expand(n, depth)
    strata = len(masks64)
    exact = A000170.get(n)
    if strata == 0 or depth == n:  # all dead above, or every walk enumerated
        return Estimate(n, strata, depth, strata, float(top[-1] if depth == n else 0), 0.0,
                        float(sum(top)), 0.0, level, 1.0 if strata else 0.0, 0.0, 0.0, exact, top)
    devices = jax.local_device_count()
    copies = devices if strata < 4 * devices else 1  # few strata: one copy per device, no idling
    rows = strata * copies
    padded = -(-rows // devices) * devices
    want = -(-probes // rows)  # probes per stratum copy
    group = max(1, min(GROUP, want // 8, lanes // padded))  # whole groups overshoot <= 1/8
    group = 1 << (group.bit_length() - 1)
    per_call = max(group, min(-(-want // group) * group, max(1, lanes // padded) // group * group))
    calls = -(-want // per_call)
    config = Config(n=n, depth=depth, strata=padded, per_call=per_call, group=group,
                    block=0 if backend.is_accelerator() else CPU_BLOCK)
    words = np.tile(_words(masks64, config.words), (copies, 1, 1))
    pad = np.full((padded - rows, 3, config.words), 0xFFFFFFFF, np.uint32)  # no free row: dead
    masks = jnp.asarray(np.concatenate([words, pad]))
    ids = jnp.arange(padded, dtype=jnp.int32)
    seed_of = lambda c: jnp.asarray(hash_bits(jnp.uint32(seed & 0xFFFFFFFF), c, 0x5EED))  # noqa: E731
    t0 = time.perf_counter()
    compiled = run_call.lower(masks, ids, seed_of(0), config, devices).compile()
    compile_s = time.perf_counter() - t0
    fingerprint = {"n": n, "probes": probes, "depth": depth, "seed": seed, "calls": calls,
                   "per_call": per_call, "strata": strata, "copies": copies,
                   "processes": jax.process_count()}
    acc, start = np.zeros((5, strata)), 0
    if resume and checkpoint is not None and Path(checkpoint).exists():
        acc, start = _load_sums(checkpoint, fingerprint)
    procs, me = jax.process_count(), jax.process_index()
    bar = Progress(calls, "calls", quiet=quiet)
    t0 = last_save = time.perf_counter()
    done = start  # calls whose sums are in acc
    safe = SafePoints().__enter__()
    try:
        for c0 in range(start, calls, procs):
            safe.check()  # a Ctrl-C during the last call stops here, acc and done in step
            c = c0 + me
            mine = np.zeros((5, strata))
            if c < calls:
                top_e, sw, sw2, sv, sv2, hits = (
                    np.asarray(x)[:rows].astype(np.float64).reshape(copies, strata, -1)
                    for x in compiled(masks, ids, seed_of(c)))
                e = top_e.astype(np.int64)
                mine = np.stack([np.ldexp(sw, e).sum((0, 2)), np.ldexp(sw2, 2 * e).sum((0, 2)),
                                 np.ldexp(sv, e).sum((0, 2)), np.ldexp(sv2, 2 * e).sum((0, 2)),
                                 hits.sum((0, 2))])
            for k, part in enumerate(_gather_calls(mine)):  # in call order on every process
                if c0 + k < calls:
                    acc += part
            done = min(calls, c0 + procs)
            bar.update(done)
            if checkpoint is not None and time.perf_counter() - last_save >= checkpoint_every:
                _save_sums(checkpoint, acc, done, fingerprint)
                last_save = time.perf_counter()
        if checkpoint is not None:
            _save_sums(checkpoint, acc, calls, fingerprint)
    except KeyboardInterrupt:
        if checkpoint is not None:
            _save_sums(checkpoint, acc, done, fingerprint)
        raise
    finally:
        safe.__exit__(None, None, None)
    seconds = time.perf_counter() - t0
    bar.close()
    m = calls * per_call * copies
    q, q_se = _stratified(acc[0], acc[1], m)
    v, v_se = _stratified(acc[2], acc[3], m)
    return Estimate(n, m * strata, depth, strata, q, q_se, float(sum(top)) + v, v_se, level,
                    float(acc[4].sum() / (m * strata)), seconds, compile_s, exact, top)


def _gather_calls(mine: np.ndarray) -> list[np.ndarray]:
    """Every process's call sums of this round, in process (= call) order."""
    if jax.process_count() == 1:
        return [mine]
    from jax.experimental import multihost_utils

    return list(np.asarray(multihost_utils.process_allgather(mine)))


def _save_sums(path, acc: np.ndarray, done: int, fingerprint: dict) -> None:
    """Sums of the first ``done`` calls, atomically (process 0 only)."""
    from jaxqueens.io import checkpoint

    if jax.process_index() == 0:
        checkpoint.save(path, fingerprint, acc=acc, done=done)


def _load_sums(path, fingerprint: dict) -> tuple[np.ndarray, int]:
    from jaxqueens.io import checkpoint

    z = checkpoint.load(path, fingerprint)
    return z["acc"], int(z["done"])


def _stratified(s1: np.ndarray, s2: np.ndarray, m: int) -> tuple[float, float]:
    """Sum of stratum means and its standard error from per-stratum sums of x and x^2 (m each)."""
    mean = s1 / m
    var = np.maximum(s2 / m - mean**2, 0.0) * m / max(m - 1, 1)
    return float(mean.sum()), float(math.sqrt(var.sum() / m)) if m > 1 else float("nan")


# ----------------------------------------------------------------------------- command line


def parse_sizes(text: str) -> list[int]:
    """``"27"``, ``"20-27"``, ``"8,12,20-24"`` -> sorted distinct sizes."""
    sizes: set[int] = set()
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part[1:]:
                lo, hi = (int(x) for x in part.split("-", 1))
                sizes.update(range(lo, hi + 1))
            elif part:
                sizes.add(int(part))
    except ValueError:
        raise QueensError(f"-n {text!r}: give a size (27), a range (20-27) or a list (8,12,20-24)") from None
    if not sizes:
        raise QueensError(f"-n {text!r}: give at least one board size")
    return sorted(sizes)


def add_command(sub) -> None:
    """Register ``jaxqueens estimate``."""
    p = sub.add_parser(
        "estimate", help="estimate Q(n) and the backtrack tree's size with Knuth's random probes",
        description="Knuth's (1975) random-probe estimator: walk from the root choosing a uniformly "
                    "random safe row per column, multiply the branching factors. The top levels "
                    "are enumerated exactly (strata) to cut the variance. Reports the estimate, "
                    "its standard error and a confidence interval, against OEIS A000170 for n <= 27.")
    p.add_argument("-n", default="27", metavar="N",
                   help=f"board size 1..{MAX_N}, a range 20-27 or a list 8,12,32 (default 27)")
    p.add_argument("--probes", type=float, default=None,
                   help="probes per size (default 1e7 on a CPU, 1e8 on a GPU)")
    p.add_argument("--depth", type=int, default=None,
                   help="levels enumerated exactly (default: automatic; 0 = plain Knuth estimator)")
    p.add_argument("--level", type=float, default=0.99, help="confidence level (default 0.99)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="write summary.json, estimates.csv and log_q_over_n.png here")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    from jaxqueens.drivers import minconflicts as mcsolve

    mcsolve.add_checkpoint_args(p)
    p.set_defaults(func=cmd_estimate)


def _fmt(x: float) -> str:
    return f"{x:.6g}" if abs(x) < 1e15 else f"{x:.5e}"


def cmd_estimate(args) -> int:
    """The ``estimate`` command: one line per size, a table file and the log Q(n)/n plot."""
    import csv
    import io
    import json

    from jaxqueens.io.atomic import write_text

    sizes = parse_sizes(args.n)
    bad = [n for n in sizes if not 1 <= n <= MAX_N]
    if bad:
        raise QueensError(f"-n {args.n}: sizes {bad} are outside 1..{MAX_N}; pick sizes in range")
    probes = None if args.probes is None else int(args.probes)
    from jaxqueens.parallel import devices as backend
    from jaxqueens.drivers import minconflicts as mcsolve

    if args.resume:
        if not any(Path(args.resume).glob("checkpoint-n*.npz")):
            raise QueensError(f"--resume {args.resume}: no checkpoint there; check the folder, or "
                              "start without --resume")
        args.out = args.resume
    elif args.checkpoint_every <= 0:
        raise QueensError(f"--checkpoint-every must be positive, got {args.checkpoint_every}")
    results = []
    for n in sizes:
        ckpt = Path(args.out) / f"checkpoint-n{n}.npz" if args.out else None
        try:
            r = estimate(n, probes, depth=args.depth if args.depth is None else min(args.depth, n),
                         seed=args.seed, level=args.level, quiet=True if args.quiet else None,
                         checkpoint=ckpt, resume=bool(args.resume), checkpoint_every=args.checkpoint_every)
        except KeyboardInterrupt:
            return mcsolve.report_interrupt_message(f"{len(results)} finished sizes", args.out)
        results.append(r)
        lo, hi = r.ci
        line = (f"n = {n}: Q(n) ~ {_fmt(r.solutions)} +- {_fmt(r.solutions_se)} "
                f"({100 * args.level:g}% CI {_fmt(lo)} .. {_fmt(hi)})")
        if r.exact is not None:
            inside = "inside" if lo <= r.exact <= hi else "OUTSIDE"
            line += f"; exact {r.exact:,} ({inside} the CI, error {100 * r.rel_error:+.3f}%)"
        print(line)
        how = "every walk enumerated: exact" if r.exhaustive else (
            f"{r.probes:,} probes below {r.strata:,} strata of depth {r.depth}, "
            f"{r.hit_rate:.2%} reach depth n, {r.probes_per_s:,.0f} probes/s "
            f"(compile {r.compile_s:.2f} s excluded)")
        print(f"    backtrack tree: {_fmt(r.nodes)} +- {_fmt(r.nodes_se)} nodes; {how}")
    if args.out and gather.is_writer():
        from jaxqueens.plots import stats as stats_plots

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        rows = [r.as_dict() for r in results]
        write_text(out / "summary.json", json.dumps(
            {"method": "Knuth 1975 random probes, top levels enumerated", "seed": args.seed,
             "simkin_alpha": SIMKIN_ALPHA, "backend": jax.default_backend(), "estimates": rows},
            indent=2) + "\n")
        buf = io.StringIO()
        keys = ["n", "solutions", "solutions_se", "ci_low", "ci_high", "exact", "rel_error", "nodes",
                "nodes_se", "probes", "depth", "strata", "hit_rate", "probes_per_s"]
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(keys)
        for row in rows:
            w.writerow(["" if row[k] is None else row[k] for k in keys])
        write_text(out / "estimates.csv", buf.getvalue())
        path = stats_plots.log_q_plot([(r.n, r.solutions, r.solutions_se, r.z) for r in results],
                                      out / "log_q_over_n.png", alpha=SIMKIN_ALPHA)
        for ckpt in out.glob("checkpoint-n*.npz"):
            ckpt.unlink()
        print(f"wrote summary.json, estimates.csv, {path.name} to {out}")
    return 0
