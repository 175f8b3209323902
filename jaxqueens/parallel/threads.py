"""One depth-first search per GPU thread: the exact count as a Pallas (Triton) kernel.

The constellation tasks of `constellations` (the CPU counter's plan: same canonical classes,
weights and host-placed columns), searched with no stack of masks: every border queen is placed
up front and the diagonals are absolute (bit `row + col` and `row - col + n - 1` of two-word
masks), so a level is undone by XOR from its queen's row alone (rows packed 5 bits each,
`row_words`). A task's levels are its columns without a border queen. Each block (one warp)
searches a range of the tasks, one a lane, a lane that is done taking the range's next. One loop
iteration is one tree edge (place the lowest free row; enter the child if it and the next two
levels keep a free row; at the child before the last level count its free row) or one pop (undo
the parent's queen, take its next row), branch-free across the lanes. Weighted completions are
summed per lane in two uint32 words (exact below 2^64).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as pl_triton

from jaxqueens.core import constellations
from jaxqueens.errors import QueensError

COLS, LD_LO, LD_HI, RD_LO, RD_HI, START, LAST, SKIP = range(8)  # the words of a task
TASK_WORDS = 8
MAX_N = 27
BLOCK = 32  # lanes (threads) per program: one warp
NUM_WARPS = 1
UNROLL = 4  # steps between two checks of the block's loop condition


class Tasks(NamedTuple):
    """The count of n as lanes (host NumPy): `Q(n) = base + sum(weights * found)`."""

    words: np.ndarray  #: [TASK_WORDS, T] uint32 per task: masks, start and last level, skips
    weights: np.ndarray  #: [T] int64 each task's weight (its constellation's class size)
    base: int  #: weighted completions of tasks with at most one level left (counted on the host)
    depth: int  #: columns placed on the host (as the CPU plan)
    order: np.ndarray  #: [T] int64 each task's place in the CPU plan's (constellations.tasks)


def _col(k, lo, hi):
    """The board column of level `k` (the k-th column of 1..n-2 without a border queen;
    `lo < hi` the interior columns of the queens of rows 0 and n-1, n where there is none)."""
    c = k + 1
    c = c + (c >= lo)
    return c + (c >= hi)


def tasks(n: int, depth: int) -> Tasks:
    """Every task of the count of n with `depth` host-placed columns (the CPU plan's split,
    `tasks`, in its order), as kernel lanes.

    Args:
      n: board size, 4..`MAX_N`.
      depth: columns placed on the host, 1..n-2.

    Returns:
      `Tasks`: the lanes' words and weights, and the completions counted on the host.

    Raises:
      QueensError: n outside 4..`MAX_N` or `depth` outside 1..n-2.
    """
    if not 4 <= n <= MAX_N:
        raise QueensError(f"the thread kernel counts n = 4..{MAX_N}, not n = {n}")
    if not 1 <= depth <= n - 2:
        raise QueensError(f"depth {depth} is out of range for n = {n}: give 1 to {n - 2} columns")
    cfg, weights = constellations.constellations(n)
    _, owner, rows = constellations.placements(n, constellations.allow_masks(n, cfg), depth)
    a, b, c, d = cfg[owner].T
    cols, ld, rd = (np.zeros(len(owner), np.uint64) for _ in range(3))
    queens = [(0 * a, a), (0 * b + n - 1, b), (c, 0 * c), (d, 0 * d + n - 1)]  # the border
    queens += [(np.full(len(owner), j), rows[:, j]) for j in range(depth)]  # the placed ones
    for x, y in queens:  # a queen on two lists (a corner, a placed border one) ORs in twice
        x, y = x.astype(np.uint64), y.astype(np.uint64)
        cols |= np.uint64(1) << y
        ld |= np.uint64(1) << (y + x)
        rd |= np.uint64(1) << (y + np.uint64(n - 1) - x)
    inner = np.sort(np.stack([c, d], 1), axis=1)
    inner = np.where((inner >= 1) & (inner <= n - 2), inner, n)  # interior border-row columns
    lo, hi = inner[:, 0], inner[:, 1]
    last = n - 3 - (lo < n) - (hi < n)  # the last level (levels: columns without a border queen)
    start = depth - 1 - (lo < depth) - (hi < depth)  # the first level at or after column depth
    words = np.zeros((TASK_WORDS, len(owner)), np.uint32)
    mask32 = np.uint64(0xFFFFFFFF)
    words[COLS] = cols
    words[LD_LO], words[LD_HI] = ld & mask32, ld >> np.uint64(32)
    words[RD_LO], words[RD_HI] = rd & mask32, rd >> np.uint64(32)
    words[START], words[LAST] = start, last
    words[SKIP] = lo | (hi << 8) | (weights[owner] << 16)
    # at most one level left: no edge to take; its completions are counted here
    short = last - start <= 0
    free = np.zeros(len(owner), np.int64)
    k = short & (last == start)  # one level: its free rows (at most one)
    col = np.minimum(_col(start, lo, hi), n - 2)
    diag = (ld >> col.astype(np.uint64)) | (rd >> (np.uint64(n - 1) - col.astype(np.uint64)))
    free[k] = np.bitwise_count(~(cols | diag)[k] & np.uint64((1 << n) - 1))
    free[short & (last < start)] = 1  # no level left: every queen is placed
    base = int((free * weights[owner]).sum())
    order = np.flatnonzero(~short)
    return Tasks(words[:, ~short], weights[owner][~short], base, depth, order)


def _shr(lo, hi, s):
    """The low word of the 64-bit `(hi, lo) >> s`, `s` uint32 in 1..31."""
    return (lo >> s) | ((hi << 1) << (31 - s))


def _flip(lo, hi, idx):
    """`(hi, lo)` with bit `idx` (0..63) flipped."""
    m = jnp.uint32(1) << (idx & 31)
    high = idx >> 5  # 0 or 1
    return lo ^ (m & (high - 1)), hi ^ (m & (jnp.uint32(0) - high))


def _log2(bit):
    """The row of a one-bit mask (uint32, below 2^24 exact in float32): its float exponent
    (Triton lowers no population count)."""
    f = lax.bitcast_convert_type(bit.astype(jnp.float32), jnp.uint32)
    return (f >> 23) - 127


def _init(w, n: int, row_words: int, dead):
    """A lane's state at the start of task words `w` (a list of TASK_WORDS uint32 arrays);
    `dead` lanes start finished."""
    full = jnp.uint32((1 << n) - 1)
    start = w[START].astype(jnp.int32)
    skip_lo, skip_hi = (w[SKIP] & 255).astype(jnp.int32), ((w[SKIP] >> 8) & 255).astype(jnp.int32)
    cols = w[COLS]
    ld, rd = (w[LD_LO], w[LD_HI]), (w[RD_LO], w[RD_HI])
    c = _col(start, skip_lo, skip_hi).astype(jnp.uint32)
    lo, hi = skip_lo.astype(jnp.uint32), skip_hi.astype(jnp.uint32)
    n1 = _after(c, lo, hi, n)
    n2 = _after(n1, lo, hi, n)
    ahead = (n1, n2, _after(n2, lo, hi, n))
    av = _free(cols, ld, rd, c, n)
    zero = jnp.zeros_like(cols)
    packed = tuple(zero for _ in range(row_words))
    d = jnp.where(dead, start - 1, start)
    return Lane(
        d,
        c,
        ahead,
        jnp.where(dead, zero, av & full),
        cols,
        ld,
        rd,
        packed,
        w[START],
        w[LAST],
        w[SKIP],
    )


class Lane(NamedTuple):
    """One lane's search (`B` = lanes of a block, `W` = `row_words`)."""

    d: jax.Array  #: [B] int32 current level; start - 1 once the task is searched
    c: jax.Array  #: [B] uint32 the board column of level d
    ahead: tuple  #: 3 x [B] uint32 the columns of levels d + 1, d + 2, d + 3 (at most n - 2)
    av: jax.Array  #: [B] uint32 rows still to try at level d
    cols: jax.Array  #: [B] uint32 rows taken
    ld: tuple  #: 2 x [B] uint32 diagonals taken, bit row + column (low, high word)
    rd: tuple  #: 2 x [B] uint32 anti-diagonals taken, bit row - column + n - 1
    packed: tuple  #: W x [B] uint32 the queens' rows of levels start..d-1, 5 bits each (`_stack`)
    start: jax.Array  #: [B] uint32 the task's first level
    last: jax.Array  #: [B] uint32 its last level
    skip: jax.Array  #: [B] uint32 its interior border columns and weight (SKIP word)


def _free(cols, ld, rd, c, n: int):
    """The free rows of column `c` (uint32 in 1..n-2) under the masks."""
    diag = _shr(ld[0], ld[1], c) | _shr(rd[0], rd[1], jnp.uint32(n - 1) - c)
    return ~(cols | diag) & jnp.uint32((1 << n) - 1)


def _after(c, skip_lo, skip_hi, n: int, end: int | None = None):
    """The column of the level after column `c`, at most `end` (default n - 2, the count's last
    column; past the last level its masks are never used)."""
    c = c + 1
    c = c + (c == skip_lo).astype(jnp.uint32)
    c = c + (c == skip_hi).astype(jnp.uint32)
    return jnp.minimum(c, jnp.uint32(n - 2 if end is None else end))


def _stack(packed, r, push, pop):
    """The packed rows after a push of row `r` (uint32 below 32) or a pop, where `push` or
    `pop`: a stack of 5-bit slots across the words, the newest in the low bits of word 0 (a
    push shifts `r` in, a pop shifts the newest out)."""
    words = len(packed)
    out = []
    for i, p in enumerate(packed):
        pushed = (p << 5) | (r if i == 0 else packed[i - 1] >> 27)
        popped = (p >> 5) | (packed[i + 1] << 27 if i + 1 < words else jnp.uint32(0))
        out.append(jnp.where(push, pushed, jnp.where(pop, popped, p)))
    return tuple(out)


def _flip_torus(lo, hi, idx, n: int):
    """`_flip` of a torus's doubled masks: bits `idx mod n` and `idx mod n + n` (`idx` in
    0..2n-2), so that the count's shifted reads see the diagonal modulo n."""
    a = idx - jnp.uint32(n) * (idx >= n).astype(jnp.uint32)
    lo, hi = _flip(lo, hi, a)
    return _flip(lo, hi, a + jnp.uint32(n))


def _step(s: Lane, n: int, *, end=None, allowed=None, torus: bool = False, hit: bool = False):
    """One iteration of every lane: (the new lane, uint32 [B] completions found: 0 or 1).

    It either takes an edge from level d (its lowest free row `r`) or, with no row left at
    level d, pops to level d - 1 (its queen's row `r`, the newest of the packed rows): both
    toggle one queen in the masks and take the free rows of one column, so the two paths share
    every mask operation and differ only in which queen and column they pick. The defaults are
    the count's search; a constrained one (`jaxqueens.parallel.threads_complete`) gives its
    last column `end`, `allowed(col)` (the allowed rows of a column, uint32 [B]) and `torus`
    (doubled masks, `_flip_torus`), and with `hit` also gets the queen's row `r` and the free
    rows `f` of the child (its one row at a completion) as a third and fourth result.
    """
    full = jnp.uint32((1 << n) - 1)
    top = jnp.uint32(n - 1)
    d, c, av, cols, ld, rd, packed = s.d, s.c, s.av, s.cols, s.ld, s.rd, s.packed
    start, last = s.start.astype(jnp.int32), s.last.astype(jnp.int32)
    skip_lo, skip_hi = s.skip & 255, (s.skip >> 8) & 255
    live = d >= start
    has = av != 0
    back = live & ~has  # no row left at level d: pop, or (at the first level) finish
    pop = back & (d > start)
    bit = av & (jnp.uint32(0) - av)
    prev = c - 1
    prev = prev - (prev == skip_hi).astype(jnp.uint32)
    prev = prev - (prev == skip_lo).astype(jnp.uint32)
    nxt, c2, c3 = s.ahead
    r = jnp.where(has, _log2(bit), packed[0] & 31)
    qc = jnp.where(has, c, prev)
    qbit = jnp.where(has, bit, jnp.uint32(1) << r)
    # the toggled masks are kept only on a push or a pop, so they are toggled unconditionally
    ncols = cols ^ qbit
    flip = functools.partial(_flip_torus, n=n) if torus else _flip
    nld = flip(ld[0], ld[1], r + qc)
    nrd = flip(rd[0], rd[1], r + top - qc)
    fc = jnp.where(has, nxt, prev)
    above = jnp.where(has, full, qbit * jnp.uint32(0xFFFFFFFE))  # a pop: rows above r
    f = _free(ncols, nld, nrd, fc, n) & above
    if allowed is not None:
        f = f & allowed(fc)
    at_last = d + 1 == last
    add = (has & at_last & (f != 0)).astype(jnp.uint32)

    def free(col):
        rows = _free(ncols, nld, nrd, col, n)
        return rows if allowed is None else rows & allowed(col)

    # look-ahead: enter the child only if the next two levels keep a free row too (ignoring the
    # queens still to come, so no solution is cut; after NQueensFAF and the CPU kernel)
    ahead2 = (free(c2) != 0) | (d + 2 > last)
    ahead3 = (free(c3) != 0) | (d + 3 > last)
    push = has & ~at_last & (f != 0) & ahead2 & ahead3
    commit = push | pop
    d = d + push.astype(jnp.int32) - back.astype(jnp.int32)
    # the columns ahead move up by one level on a push, down by one on a pop
    beyond = _after(c3, skip_lo, skip_hi, n, end)
    ahead = (
        jnp.where(push, c2, jnp.where(pop, c, nxt)),
        jnp.where(push, c3, jnp.where(pop, nxt, c2)),
        jnp.where(push, beyond, jnp.where(pop, c2, c3)),
    )
    c = jnp.where(commit, fc, c)
    av = jnp.where(commit, f, av ^ bit)
    cols = jnp.where(commit, ncols, cols)
    ld = tuple(jnp.where(commit, a, o) for a, o in zip(nld, ld, strict=True))
    rd = tuple(jnp.where(commit, a, o) for a, o in zip(nrd, rd, strict=True))
    packed = _stack(packed, r, push, pop)
    new = s._replace(d=d, c=c, ahead=ahead, av=av, cols=cols, ld=ld, rd=rd, packed=packed)
    return (new, add, r, f) if hit else (new, add)


def row_words(n: int) -> int:
    """Words of packed queen rows a lane keeps.

    Args:
      n: board size.

    Returns:
      5 bits a row, at most n - 4 levels packed, in 32-bit words (at least one).
    """
    return max(1, -(-5 * (n - 4) // 32))


def _span(tasks: int, programs: int, block: int):
    p = pl.program_id(0)
    first, end = (p * tasks) // programs, ((p + 1) * tasks) // programs
    return p, first, end, lax.broadcasted_iota(jnp.int32, (block,), 0)


def _running(live, task, end):  # every lane live or out of tasks, and some lane live
    out = (task >= end).astype(jnp.int32)
    return (jnp.min(live | out) > 0) & (jnp.max(live) > 0)


def _refill(idle, task, nxt, load, state):
    """The `idle` lanes take the range's next tasks (numbered by a prefix sum), `load`ed."""
    count = idle.astype(jnp.int32)
    task = jnp.where(idle, nxt + jnp.cumsum(count) - count, task)
    nxt = nxt + jnp.sum(count)
    fresh = load(task)
    return task, nxt, jax.tree.map(lambda a, b: jnp.where(idle, a, b), fresh, state)


def _call(kernel, words, out: tuple, spec: tuple, programs: int, num_warps: int, interpret: bool):
    """`kernel` on `programs` blocks reading `words`; `spec`: their out columns and index map."""
    params = None if interpret else pl_triton.CompilerParams(num_warps=num_warps, num_stages=1)
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct(out, jnp.uint32),
        grid=(programs,),
        in_specs=[pl.BlockSpec(words.shape, lambda i: (0, 0))],
        out_specs=pl.BlockSpec((out[0], spec[0]), spec[1]),
        interpret=interpret,
        compiler_params=params,
    )(words)


def _kernel(w_ref, out_ref, *, n, tasks, programs, block, unroll, stats):
    """Program p searches the tasks of its range: a lane whose task is done takes the range's
    next one, so no lane of the warp idles until the range runs out. Out: the lane's weighted
    completions, uint32 `[2, block]` (low, high words), and with `stats` a third row: the
    block's loop iterations (the same in every lane) and a fourth: the lane's own."""
    _, first, end, lane = _span(tasks, programs, block)
    words = row_words(n)

    def load(task):
        idx = jnp.clip(task, 0, tasks - 1)
        return _init([w_ref[i, idx] for i in range(TASK_WORDS)], n, words, task >= end)

    def inner(c):
        s, task, nxt, lo, hi, its = c
        for _ in range(unroll):  # a finished lane's steps change nothing until it refills
            busy = (s.d >= s.start.astype(jnp.int32)).astype(jnp.uint32)
            s, add = _step(s, n)
            add = add * (s.skip >> 16)  # the task's weight
            lo = lo + add
            hi = hi + (lo < add).astype(jnp.uint32)
            if stats:  # block iterations, then the lane's busy ones
                its = (its[0] + 1, its[1] + busy)
        return s, task, nxt, lo, hi, its

    def running(c):
        return _running((c[0].d >= c[0].start.astype(jnp.int32)).astype(jnp.int32), c[1], end)

    def outer(c):
        s, task, nxt, lo, hi, its = lax.while_loop(running, inner, c)
        idle = (s.d < s.start.astype(jnp.int32)) & (task < end)
        task, nxt, s = _refill(idle, task, nxt, load, s)
        return s, task, nxt, lo, hi, its

    zero = jnp.zeros((block,), jnp.uint32)
    task = first + lane
    c = (load(task), task, first + block, zero, zero, (zero, zero))
    c = lax.while_loop(lambda c: jnp.max((c[1] < end).astype(jnp.int32)) > 0, outer, c)
    out_ref[0, :] = c[3]
    out_ref[1, :] = c[4]
    if stats:
        out_ref[2, :] = c[5][0]
        out_ref[3, :] = c[5][1]


@functools.partial(
    jax.jit,
    static_argnames=("n", "programs", "block", "num_warps", "unroll", "interpret", "stats"),
)
def count_tasks(
    words,
    *,
    n: int,
    programs: int,
    block: int = BLOCK,
    num_warps: int = NUM_WARPS,
    unroll: int = UNROLL,
    interpret: bool = False,
    stats: bool = False,
):
    """Weighted completions of every task, summed per lane: uint32 `[2, programs * block]`
    (low, high words; `Q(n) = base + sum`).

    Args:
      words: uint32 `[TASK_WORDS, T]` (`tasks`; the weight in bits 16.. of `SKIP`).
      programs: blocks of `block` lanes (threads) the grid runs, each over its range of the
        tasks (size them to fill the device; many tasks a lane even out the lanes' work).
      unroll: steps per check of the block's loop condition (the same counts at any value).
      stats: also return each lane's block's loop iterations and its own busy ones (uint32
        rows 2 and 3: for the speed model at small n; they wrap past 2^32).
    """
    if words.ndim != 2 or words.shape[0] != TASK_WORDS or words.dtype != jnp.uint32:
        raise QueensError(
            f"words must be uint32 [{TASK_WORDS}, T] (threads.tasks), not {words.shape}"
        )
    if programs < 1 or block < 1 or block & (block - 1):
        raise QueensError(
            f"programs must be >= 1 and block a power of two, not {programs}, {block}"
        )
    t = words.shape[1]
    kernel = functools.partial(
        _kernel, n=n, tasks=t, programs=programs, block=block, unroll=unroll, stats=stats
    )
    out = (4 if stats else 2, programs * block)
    return _call(kernel, words, out, (block, lambda i: (0, i)), programs, num_warps, interpret)


def lane_total(found) -> int:
    """The exact sum of per-lane two-word counts.

    Args:
      found: uint32 `[2, L]` (low, high) words, or more rows (the rest ignored).

    Returns:
      The sum, a Python int.
    """
    f = np.asarray(found).astype(np.uint64)
    return int(f[0].astype(object).sum()) + (int(f[1].astype(object).sum()) << 32)


def count(
    n: int, depth: int, *, programs: int = 2, unroll: int = UNROLL, interpret: bool = False
) -> int:
    """Q(n): every task of `tasks` through `count_tasks`, summed exactly.

    Args:
      n: board size, 4..`MAX_N`.
      depth: columns placed on the host.
      programs: blocks the grid runs.
      unroll: steps per check of the loop condition.
      interpret: run on the CPU (Pallas' interpreter).

    Returns:
      The number of solutions, a Python int.
    """
    plan = tasks(n, depth)
    if plan.words.shape[1] == 0:
        return plan.base
    words = jnp.asarray(plan.words)
    found = count_tasks(words, n=n, programs=programs, unroll=unroll, interpret=interpret)
    return plan.base + lane_total(found)
