"""One search per GPU thread for `complete` (decide, count) and the torus: a Pallas kernel.

The items of `jaxqueens.solvers.complete` (sub-trees of constrained instances, the `complete`
driver's batches) searched by the step of `jaxqueens.parallel.threads` (absolute two-word
diagonals undone by XOR from the packed queen rows, two-level look-ahead, lane refill), with
each column's allowed rows read from the item and, on a torus, doubled masks (a diagonal mod n
is bits `k` and `k + n`). An item stops at its edge budget (checked every `UNROLL` steps) or,
deciding, at its first solution; a lane snapshots the first solution of an item that asks for
one. `search_chunk` takes and returns what `jaxqueens.parallel.complete.search_chunk` does
(the driver's format: head, stacks rebuilt from the packed rows, the solution's path), so the
host splits an unfinished item's frontier as it does the other kernel's. Enumeration is not
here: its per-item solution lists do not fit a thread's registers.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental.pallas import triton as pl_triton

from jaxqueens.errors import QueensError
from jaxqueens.parallel import threads
from jaxqueens.solvers import complete as solver
from jaxqueens.solvers.complete import Config

COLS, LD_LO, LD_HI, RD_LO, RD_HI, LEVEL, AV, BUDGET, STOP = range(9)  # the words of an item
ALLOWED = 9  # then its columns' allowed rows, n words
D, STEPS, LO, HI, AV_OUT, PATH = range(6)  # the words read back, then the packed rows ...
BLOCK = threads.BLOCK
NUM_WARPS = threads.NUM_WARPS
UNROLL = threads.UNROLL
DONE = 0xFFFFFFFF  # `D` of an item searched to its end


def row_words(n: int) -> int:
    """Words of packed queen rows a lane keeps.

    Args:
      n: board size.

    Returns:
      5 bits a row, at most n - 2 levels packed, in 32-bit words (at least one).
    """
    return threads.row_words(n + 2)


def out_words(n: int) -> int:
    """Words read back per item.

    Args:
      n: board size.

    Returns:
      d, steps, found (two), the frontier's rows, the packed rows, and the first solution's
      packed rows and its last two rows.
    """
    return PATH + 2 * row_words(n) + 1


class Extra(NamedTuple):
    """A lane's item bookkeeping beside its search (`threads.Lane`; `W` = `row_words`)."""

    steps: jax.Array  #: [B] uint32 loop iterations on the item in this call
    lo: jax.Array  #: [B] uint32 solutions found, low word
    hi: jax.Array  #: [B] uint32 high word
    budget: jax.Array  #: [B] uint32 iterations the item may take in this call
    stop: jax.Array  #: [B] uint32 nonzero: snapshot its first solution (deciding: stop there)
    got: jax.Array  #: [B] uint32 nonzero once the snapshot is taken
    sol: tuple  #: W x [B] uint32 the snapshot's packed rows (levels start..n-3)
    tail: jax.Array  #: [B] uint32 its rows of columns n-2 and n-1 (bits 0.. and 8..)


def _live(s: threads.Lane, x: Extra, decide: bool):
    go = (s.d >= s.start.astype(jnp.int32)) & (x.steps < x.budget)
    return go & (x.got == 0) if decide else go


def _load(w_ref, task, end, *, n: int, items: int):
    """The lanes' state at the start of item `task` (uint32 [B]; at or past `end`: done)."""
    idx = jnp.clip(task, 0, items - 1)
    w = [w_ref[i, idx] for i in range(ALLOWED)]
    zero = jnp.zeros_like(w[COLS])
    start = w[LEVEL]
    dead = (task >= end) | (w[AV] == 0)
    ahead = tuple(jnp.minimum(start + k, jnp.uint32(n - 1)) for k in (1, 2, 3))
    s = threads.Lane(
        jnp.where(dead, start.astype(jnp.int32) - 1, start.astype(jnp.int32)),
        start,
        ahead,
        jnp.where(dead, zero, w[AV]),
        w[COLS],
        (w[LD_LO], w[LD_HI]),
        (w[RD_LO], w[RD_HI]),
        tuple(zero for _ in range(row_words(n))),
        start,
        zero + jnp.uint32(n - 1),
        zero + jnp.uint32(255 | 255 << 8),  # no column skipped
    )
    sol = tuple(zero for _ in range(row_words(n)))
    return s, Extra(zero, zero, zero, w[BUDGET], w[STOP], zero, sol, zero)


def _advance(s: threads.Lane, x: Extra, allowed, *, n: int, toroidal: bool):
    """One step of every lane (`threads._step` over the item's columns), its completions
    counted and an item's first one snapshot where asked."""
    busy = (s.d >= s.start.astype(jnp.int32)).astype(jnp.uint32)
    packed = s.packed
    s, add, r, f = threads._step(s, n, end=n - 1, allowed=allowed, torus=toroidal, hit=True)
    take = (add != 0) & (x.stop != 0) & (x.got == 0)
    lo = x.lo + add
    x = Extra(
        x.steps + busy,
        lo,
        x.hi + (lo < add).astype(jnp.uint32),
        x.budget,
        x.stop,
        x.got | take.astype(jnp.uint32),
        tuple(jnp.where(take, a, b) for a, b in zip(packed, x.sol, strict=True)),
        jnp.where(take, r | (threads._log2(f) << 8), x.tail),
    )
    return s, x


def _write(out_ref, s: threads.Lane, x: Extra, idx, mask, decide: bool) -> None:
    """The lanes' item words into column `idx` of `out_ref`, where `mask`."""
    done = s.d < s.start.astype(jnp.int32)
    found = ((x.lo | x.hi) != 0).astype(jnp.uint32)
    head = [
        jnp.where(done, jnp.uint32(DONE), s.d.astype(jnp.uint32)),
        x.steps,
        found if decide else x.lo,
        jnp.zeros_like(x.hi) if decide else x.hi,
        s.av,
    ]
    for k, v in enumerate([*head, *s.packed, *x.sol, x.tail]):
        pl_triton.store(out_ref.at[k, idx], v, mask=mask)


def _kernel(w_ref, out_ref, *, config: Config, items, programs, block, unroll, stats):
    """Program p searches the items of its range (as `threads`' count kernel); a lane whose
    item is done, out of budget or decided writes its words (column = the item; columns past
    the items: one spare per lane, where `stats` leaves the block's loop iterations in row
    `STEPS`) and takes the range's next item."""
    n, toroidal, decide = config.n, config.toroidal, config.decide
    p, first, end, lane = threads._span(items, programs, block)
    load = functools.partial(_load, w_ref, end=end, n=n, items=items)

    def inner(c):
        s, x, task, nxt, its = c
        idx = jnp.clip(task, 0, items - 1)
        allowed = lambda col: w_ref[ALLOWED + col.astype(jnp.int32), idx]
        for _ in range(unroll):  # a halted lane steps on until the check: its budget is soft
            s, x = _advance(s, x, allowed, n=n, toroidal=toroidal)
        return s, x, task, nxt, its + unroll if stats else its

    def running(c):
        return threads._running(_live(c[0], c[1], decide).astype(jnp.int32), c[2], end)

    def outer(c):
        s, x, task, nxt, its = lax.while_loop(running, inner, c)
        idle = ~_live(s, x, decide) & (task < end)
        # a lane not writing aims at its own spare column (so no two lanes share an address)
        _write(out_ref, s, x, jnp.where(idle, task, items + p * block + lane), idle, decide)
        task, nxt, (s, x) = threads._refill(idle, task, nxt, load, (s, x))
        return s, x, task, nxt, its

    task = first + lane
    s, x = load(task)
    c = (s, x, task, first + block, jnp.zeros((block,), jnp.uint32))
    c = lax.while_loop(lambda c: jnp.max((c[2] < end).astype(jnp.int32)) > 0, outer, c)
    if stats:
        pl_triton.store(out_ref.at[STEPS, items + p * block + lane], c[4])


def _shl(x, s):
    """The 64-bit `x << s` (uint32 `x`, `s` in 0..31) as (low, high) words."""
    return x << s, jnp.where(s == 0, jnp.uint32(0), x >> (jnp.uint32(32) - s))


def _rotl(x, k, n: int):
    """`x` rotated left by `k` (0..n-1) within n bits."""
    full = jnp.uint32((1 << n) - 1)
    return jnp.where(k == 0, x, ((x << k) | (x >> (jnp.uint32(n) - k))) & full)


def _doubled(x, n: int):
    """The n-bit `x` at bits 0.. and n.. of a 64-bit word pair (a torus's diagonals)."""
    if n == 32:
        return x, x
    return x | (x << n), x >> (32 - n)


def item_words(batch, config: Config):
    """The kernel's words of a batch of items (the driver's format).

    Args:
      batch: uint32 `[P, HEAD + n]` items of `jaxqueens.solvers.complete` (root masks relative
        to the item's column, its level, budget and stop flag, then the allowed masks).
      config: the kernel's static shape (n, torus).

    Returns:
      uint32 `[ALLOWED + n, P]`: absolute masks (diagonal `row + col` in `LD`, `row - col + n
      - 1` in `RD`; on a torus both mod n, doubled), then the item's words and allowed masks.
    """
    n = config.n
    full = jnp.uint32((1 << n) - 1)
    b = batch.astype(jnp.uint32)
    level = b[:, solver.LEVEL]
    up, down = b[:, solver.LD] & full, b[:, solver.RD] & full  # row - col, row + col constant
    if config.toroidal:
        ld = _doubled(_rotl(down, level % n, n), n)
        rd = _doubled(_rotl(up, (jnp.uint32(n - 1) - level) % n, n), n)
    else:
        ld, rd = _shl(down, level), _shl(up, jnp.uint32(n - 1) - level)
    head = [b[:, solver.COLS], *ld, *rd, level, b[:, solver.AV], b[:, solver.BUDGET]]
    return jnp.concatenate([jnp.stack([*head, b[:, solver.STOP]]), b[:, solver.HEAD :].T])


def _slots(packed, count: int):
    """The first `count` 5-bit slots of the packed words (`[W, P]`): `[P, count]`, slot 0 the
    newest row."""
    out = []
    for j in range(count):
        word, off = divmod(5 * j, 32)
        if word >= len(packed):  # past the deepest level a lane packs
            out.append(jnp.zeros_like(packed[0]))
            continue
        v = packed[word] >> off
        if off > 27 and word + 1 < len(packed):
            v = v | (packed[word + 1] << (32 - off))
        out.append(v & 31)
    return jnp.stack(out, axis=1)


def _shift(ld, rd, n: int, toroidal: bool):
    full = jnp.uint32((1 << n) - 1)
    if toroidal:
        return ((ld << 1) | (ld >> (n - 1))) & full, ((rd >> 1) | (rd << (n - 1))) & full
    return (ld << 1) & full, rd >> 1


def _rows_along(batch, rows, depth, config: Config, frontier=None):
    """The stack rows of `jaxqueens.solvers.complete` along a path from the items' roots:
    `[P, n + 1, 5]` (cols, ld, rd, untried rows, 0) of stack rows 0..depth (`[P]`; zeros past
    it), the path's queens `rows` `[P, n]` (row k: stack row k's queen, k < depth), `frontier`
    the untried rows of row `depth` (None: `[P, n + 1]`, the cols masks only)."""
    n = config.n
    cols, ld, rd = (batch[:, k] for k in (solver.COLS, solver.LD, solver.RD))
    ld, rd = ld & jnp.uint32((1 << n) - 1), rd
    allowed = jnp.concatenate([batch[:, solver.HEAD :], jnp.zeros_like(batch[:, :1])], axis=1)
    level = jnp.minimum(batch[:, solver.LEVEL].astype(jnp.int32), n)
    out = []
    for k in range(n + 1):
        here = k <= depth
        if frontier is None:
            out.append(jnp.where(here, cols, 0))
        else:
            col = jnp.minimum(level + k, n)[:, None]
            free = jnp.take_along_axis(allowed, col, axis=1)[:, 0] & ~(cols | ld | rd)
            above = jnp.uint32(0xFFFFFFFE) << rows[:, min(k, n - 1)]
            rest = jnp.where(k == depth, frontier, free & above)
            if k == 0:  # (an item's root rows, as the kernel searched them)
                rest = rest & batch[:, solver.AV]
            row = jnp.stack([cols, ld, rd, rest, jnp.zeros_like(cols)], axis=1)
            out.append(jnp.where(here[:, None], row, 0))
        if k < n:
            bit = jnp.where(k < depth, jnp.uint32(1) << rows[:, k], 0)
            cols = cols | bit
            ld, rd = _shift(ld | bit, rd | bit, n, config.toroidal)
    return jnp.stack(out, axis=1)


def _readout(batch, out, config: Config):
    """`jaxqueens.parallel.complete.search_chunk`'s `(head, stacks, solutions)` from the
    kernel's words `out` `[out_words, P]`."""
    n = config.n
    words = row_words(n)
    b = batch.astype(jnp.uint32)
    level = b[:, solver.LEVEL].astype(jnp.int32)
    done = out[D] == jnp.uint32(DONE)
    depth = jnp.where(done, -1, out[D].astype(jnp.int32) - level)  # stack row of the frontier
    head = jnp.stack([depth.astype(jnp.uint32), out[STEPS], out[LO], out[HI]], axis=-1)
    slots = _slots(out[PATH : PATH + words], n)  # slot 0: the deepest level's queen
    k = jnp.arange(n)[None, :]
    along = jnp.take_along_axis(slots, jnp.clip(depth[:, None] - 1 - k, 0, n - 1), axis=1)
    stacks = _rows_along(b, along, depth, config, out[AV_OUT])
    # the snapshot: levels start..n-3 packed, then the rows of columns n-2 and n-1
    held = n - 2 - level
    sol = _slots(out[PATH + words : PATH + 2 * words], n)
    tail = out[PATH + 2 * words]
    path = jnp.take_along_axis(sol, jnp.clip(held[:, None] - 1 - k, 0, n - 1), axis=1)
    path = jnp.where(k == held[:, None], (tail & 255)[:, None], path)
    path = jnp.where(k == held[:, None] + 1, (tail >> 8)[:, None], path)
    sols = _rows_along(b, path, n - level, config)
    return head, stacks, sols[:, None, :]


@functools.partial(
    jax.jit,
    static_argnames=("config", "programs", "block", "num_warps", "unroll", "interpret", "stats"),
)
def search_words(
    words,
    config: Config,
    *,
    programs: int,
    block: int = BLOCK,
    num_warps: int = NUM_WARPS,
    unroll: int = UNROLL,
    interpret: bool = False,
    stats: bool = False,
):
    """The kernel over items as its words (`item_words`).

    Args:
      words: uint32 `[ALLOWED + n, P]`.
      config: the kernel's static shape (n, torus, decide or count; `cap` must be 0).
      programs: blocks of `block` lanes the grid runs, each over its range of the items.
      block: lanes (threads) a block, a power of two.
      num_warps: warps a block (Triton).
      unroll: steps per check of the loop condition (and of the budgets).
      interpret: run on the CPU (Pallas' interpreter).
      stats: leave each lane's block's loop iterations in its spare column (row `STEPS`).

    Returns:
      uint32 `[out_words(n), P + programs * block]`: item j's words in column j (`D`, `STEPS`,
      `LO`, `HI`, `AV_OUT`, then the packed rows and the solution's), then a spare per lane.

    Raises:
      QueensError: `words` not `[ALLOWED + n, P]` uint32, `cap` set, or bad sizes.
    """
    n = config.n
    if words.ndim != 2 or words.shape[0] != ALLOWED + n or words.dtype != jnp.uint32:
        raise QueensError(f"words must be uint32 [{ALLOWED + n}, items], not {words.shape}")
    if config.cap:
        raise QueensError("the thread kernel decides and counts; enumerate on the XLA kernel")
    if n < 2 or programs < 1 or block < 1 or block & (block - 1):
        raise QueensError(
            f"n must be >= 2, programs >= 1 and block a power of two, not {n}, {programs}, {block}"
        )
    items = words.shape[1]
    kernel = functools.partial(
        _kernel,
        config=config,
        items=items,
        programs=programs,
        block=block,
        unroll=unroll,
        stats=stats,
    )
    out = (out_words(n), items + programs * block)
    return threads._call(
        kernel, words, out, (out[1], lambda i: (0, 0)), programs, num_warps, interpret
    )


@functools.partial(
    jax.jit, static_argnames=("config", "programs", "block", "num_warps", "unroll", "interpret")
)
def search_chunk(
    batch,
    config: Config,
    *,
    programs: int,
    block: int = BLOCK,
    num_warps: int = NUM_WARPS,
    unroll: int = UNROLL,
    interpret: bool = False,
):
    """Search every item of a batch on the thread kernel (`search_words`).

    Args:
      batch: uint32 `[P, HEAD + n]` items (`jaxqueens.solvers.complete.start`); zero rows are
        empty items.
      config: the kernel's static shape (n, torus, decide or count; `cap` must be 0).
      programs: blocks of `block` lanes the grid runs, each over its range of the items.
      block: lanes (threads) a block, a power of two.
      num_warps: warps a block (Triton).
      unroll: steps per check of the loop condition (and of the budgets).
      interpret: run on the CPU (Pallas' interpreter).

    Returns:
      `(head, stacks, solutions)` as `jaxqueens.parallel.complete.search_chunk`: uint32
      `[P, 4]` (d, steps, lo, hi; steps: the kernel's loop iterations), `[P, n + 1, 5]` (rows
      0..d of an unfinished item) and `[P, 1, n + 1]` (the path of the first solution of an
      item with its stop flag set).

    Raises:
      QueensError: a batch not `[P, HEAD + n]` uint32, `cap` set, or bad sizes.
    """
    if batch.ndim != 2 or batch.shape[1] != config.width or batch.dtype != jnp.uint32:
        raise QueensError(f"batch must be uint32 [items, {config.width}], not {batch.shape}")
    out = search_words(
        item_words(batch, config),
        config,
        programs=programs,
        block=block,
        num_warps=num_warps,
        unroll=unroll,
        interpret=interpret,
    )
    return _readout(batch, out[:, : batch.shape[0]], config)
