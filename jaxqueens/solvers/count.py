"""Bitmask depth-first search over ONE partial board: the exact-counting kernels.

Method: bitmask backtracking after Richards (1997, "Backtracking algorithms in MCPL using bit
patterns and recursion") as popularised by Jeff Somers' counter (``shared/baselines/count_c.c``),
over the constellation tasks of :mod:`jaxqueens.core.constellations` (after the Q27 project and
NQueensFAF). A level holds uint32 masks of the rows attacked along rows (``cols``), diagonals
(``ld``, shifted left per column) and anti-diagonals (``rd``, shifted right), plus ``av``, the
free rows still to try there (lowest bit first).

Each ``lax.while_loop`` iteration handles exactly one edge of the search tree, branch-free: take
the lowest bit of the current level's ``av``; count the child's free rows if the child is the
last level, else go down to it if it has a free row; no iteration is spent popping: every stack
row stores ``back``, the stack row to resume when its subtree is done (the nearest ancestor with
rows left). The words an edge changes -- the parent's ``av`` and the child's row -- are 6
contiguous words of a flat stack, written with one ``dynamic_update_slice``, and XLA:CPU
compiles the loop as one native function (:mod:`jaxqueens.parallel.devices`).

**The constellation search** (:class:`Config`, :func:`step`, :func:`run`, :func:`search`; issue
27) walks the levels of a *level table* (:func:`jaxqueens.core.constellations.level_tables`):

- a column holding a border queen is never searched (its queen is fixed and the other columns'
  allowed rows already avoid it): the next level is ``GAP`` columns on and the diagonals shift by
  the gap; the last level's free rows (at most one) are counted without an edge;
- a child is entered only if its level and the next two each keep a free row (the look-ahead
  ignores the queens still to come, so it never cuts a solution; after NQueensFAF's check of the
  row after next);
- the level index is masked to the table size (a power of two) and the gaps to 0..31, which lets
  LLVM drop every index clamp and shift select: 113 instructions an edge in the compiled loop;
- a search stops after ``Params.budget`` edges with its stack intact (:func:`pack` /
  :func:`unpack`), and a later call resumes it with the same total (issue 28: no call runs for
  minutes). The completions found in one call never exceed its edges (the last level has at most
  one free row), so a uint32 count per call is exact.

Measured against the kernel before it (a plain DFS over every column, per-column allow masks):
146.5 M edges at n = 16 against 236.0 M (NQueensFAF: 193.1 M), 6.8-7.2 ns of CPU per edge
against 8.0 (one core of the 2-core machine, loaded; with ``-x86-cmov-converter=false``, see
:mod:`jaxqueens.parallel.devices`, 6.1 ns for the old kernel).

**The prefix kernel** (:class:`KernelConfig`, :func:`init_prefix`, :func:`step_prefix`,
:func:`count_prefix`, :func:`enumerate_prefix`) searches every column of a mirror-symmetric
prefix and lists the solutions it finds: the enumeration route (n <= 14). Counts are two uint32
words with an explicit carry (exact below 2^64).

Everything here is written for ONE task. Batching is the backend's choice, made in
:mod:`jaxqueens.parallel.items` and called from :mod:`jaxqueens.drivers.count`: on the CPU, one
task after the other (:func:`search`, one budget per call) per host device; on accelerators,
lockstep ``vmap`` lanes with refill (:func:`step` on every live lane).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import lax

COLS, LD, RD, BACK, AV = range(5)  # the words of a stack row
WORDS = 5
DONE = 0xFFFFFFFF  # ``back`` of the root level: returning there ends the search


@dataclasses.dataclass(frozen=True)
class KernelConfig:
    """Static shape of a search (hashable, a jit-static argument): board size and how many
    queens every prefix has placed."""

    n: int
    depth: int

    @property
    def rows(self) -> int:
        """Stack rows: one per level below the prefix, plus one for the write past the last."""
        return self.n - self.depth + 1

    @property
    def width(self) -> int:
        """Words per enumerated solution: the ``cols`` mask of every level, then the full board."""
        return self.n - self.depth + 1


class Lane(NamedTuple):
    """The DFS state of one prefix (``R`` = ``config.rows``)."""

    d: jax.Array  # [] int32 stack row of the current level; -1 once the subtree is searched
    lo: jax.Array  # [] uint32 solutions found, low word
    hi: jax.Array  # [] uint32 solutions found, high word
    stack: jax.Array  # [5 R] uint32: row r = words 5r..5r+4 = (cols, ld, rd, back, av) of level r
    allow: jax.Array  # [n] uint32 rows each column may use (a constellation's masks; all rows else)


def add64(lo, hi, x):
    """``(hi, lo) + x`` on two uint32 words with carry: exact where a uint32 sum would wrap."""
    lo2 = lo + x
    return lo2, hi + (lo2 < x).astype(jnp.uint32)


def init_prefix(prefix, config: KernelConfig, allow=None) -> Lane:
    """Lane for ``prefix`` = uint32 ``[4]`` (cols, ld, rd, av) of a partial board; ``allow``
    uint32 ``[n]``: the rows column k may use (default: every row)."""
    prefix = prefix.astype(jnp.uint32)
    root = jnp.stack([prefix[0], prefix[1], prefix[2], jnp.uint32(DONE), prefix[3]])
    stack = jnp.concatenate([root, jnp.zeros(WORDS * (config.rows - 1), jnp.uint32)])
    d = jnp.where(prefix[3] == 0, -1, 0).astype(jnp.int32)
    if allow is None:
        allow = jnp.full((config.n,), (1 << config.n) - 1, jnp.uint32)
    return Lane(d, jnp.uint32(0), jnp.uint32(0), stack, allow.astype(jnp.uint32))


def _advance(lane: Lane, config: KernelConfig):
    """One tree edge. Returns the new lane, whether the child is the last column, and the child's
    ``cols`` and ``av`` masks (the enumeration kernel needs them)."""
    n, depth = config.n, config.depth
    all_rows = jnp.uint32((1 << n) - 1)
    start = lane.d * WORDS
    row = lax.dynamic_slice(lane.stack, (start,), (WORDS,), allow_negative_indices=False)
    cols, ld, rd, back, av = row[COLS], row[LD], row[RD], row[BACK], row[AV]
    bit = av & (jnp.uint32(0) - av)
    rest = av ^ bit
    nc, nl, nr = cols | bit, (ld | bit) << 1, (rd | bit) >> 1
    # stack row d is column depth + d, so the child's column is known without a popcount
    allow = lax.dynamic_slice(
        lane.allow, (lane.d + (depth + 1),), (1,), allow_negative_indices=False
    )[0]
    nav = all_rows & ~(nc | nl | nr) & allow
    last = lane.d == n - depth - 2
    push = ~last & (nav != 0)
    here = lane.d.astype(jnp.uint32)
    resume = jnp.where(rest != 0, here, back)  # where to go once the child's subtree is done
    # the words that change are contiguous: the parent's av, then the child's whole row
    stack = lax.dynamic_update_slice(
        lane.stack,
        jnp.stack([rest, nc, nl, nr, resume, nav]),
        (start + AV,),
        allow_negative_indices=False,
    )
    lo, hi = add64(lane.lo, lane.hi, jnp.where(last, lax.population_count(nav), jnp.uint32(0)))
    d = jnp.where(push, here + 1, resume).astype(jnp.int32)  # DONE -> -1
    return Lane(d, lo, hi, stack, lane.allow), last, nc, nav


def step_prefix(lane: Lane, config: KernelConfig) -> Lane:
    """One counting iteration (the lane must be live: ``d >= 0``)."""
    return _advance(lane, config)[0]


def run_prefix(lane: Lane, config: KernelConfig):
    """Search a lane's subtree to the end: uint32 ``[2]`` solutions (low word, high word)."""
    lane = lax.while_loop(lambda s: s.d >= 0, lambda s: step_prefix(s, config), lane)
    return jnp.stack([lane.lo, lane.hi])


def count_prefix(prefix, config: KernelConfig):
    """Solutions extending one prefix: uint32 ``[2]`` (low word, high word)."""
    return run_prefix(init_prefix(prefix, config), config)


def enumerate_prefix(prefix, config: KernelConfig, cap: int):
    """Solutions extending one prefix, listed: (count uint32 ``[2]``, uint32 ``[cap, W]``).

    Row i of the list holds the ``cols`` masks of levels 0..n-depth-1 of solution i and then the
    full mask; consecutive differences are the rows of the queens (decoded on the host). At most
    ``cap`` solutions are written; the count is exact regardless.
    """
    levels = config.n - config.depth - 1

    def body(carry):
        lane, out = carry
        new, last, nc, nav = _advance(lane, config)
        vec = jnp.concatenate(
            [new.stack.reshape(-1, WORDS)[:levels, COLS], jnp.stack([nc, nc | nav])]
        )
        hit = last & (nav != 0) & (lane.lo < cap)
        out = lax.cond(
            hit,
            lambda o: lax.dynamic_update_slice(o, vec[None], (lane.lo.astype(jnp.int32), 0)),
            lambda o: o,
            out,
        )
        return new, out

    lane, out = lax.while_loop(
        lambda c: c[0].d >= 0,
        body,
        (init_prefix(prefix, config), jnp.zeros((cap, config.width), jnp.uint32)),
    )
    return jnp.stack([lane.lo, lane.hi]), out


# --- the constellation search: level tables, look-ahead, a per-call edge budget ----------------
#
# A task is one partial board of a canonical constellation (jaxqueens.core.constellations.tasks)
# searched over its *levels*: the board columns from the task's first free column on that hold
# no border queen. A border queen's column is never searched (its queen is fixed and every other
# column's allowed rows already avoid it), so a level's child lies ``gap`` columns further on and
# the diagonals shift by the gap. A level table row (TABLE_WORDS uint32, built on the host by
# jaxqueens.core.constellations.level_tables) holds what an edge from that level needs:

GAP, ALLOW1, GAP2, ALLOW2, GAP3, ALLOW3, COUNT_MASK = range(7)  # the words of a level table row
TABLE_WORDS = 8
HEAD = 4  # a search item: (d, count, 0, 0), then the stack, then the level table
MAX_BUDGET = 2**31 - 1  # edges one call may take (a count never exceeds the edges taken)


@dataclasses.dataclass(frozen=True)
class Config:
    """Static shape of a constellation search (hashable, jit-static).

    Attributes:
      n: board size (uint32 masks: n <= 32).
      levels: rows of a level table, a power of two above the most levels any task has (the
        level index is masked to it, so no index is ever clamped: 17% fewer instructions per
        edge than clamped indices, measured).
    """

    n: int
    levels: int

    def __post_init__(self):
        if not 1 <= self.n <= 32 or self.levels < 2 or self.levels & (self.levels - 1):
            raise ValueError(f"need 1 <= n <= 32 and levels a power of two >= 2, got {self}")

    @property
    def rows(self) -> int:
        """Stack rows: twice the table rows, so the masked row and its child are in range."""
        return 2 * self.levels

    @property
    def state_width(self) -> int:
        """uint32 words of a search's resumable state: :data:`HEAD`, then the stack."""
        return HEAD + WORDS * self.rows

    @property
    def width(self) -> int:
        """uint32 words of a search item: its state, then its level table."""
        return self.state_width + TABLE_WORDS * self.levels


class Params(NamedTuple):
    """Dynamic parameters: a new value never recompiles."""

    budget: jax.Array  # [] int32 in 0..MAX_BUDGET: tree edges a call may take


class State(NamedTuple):
    """One task's search, resumable (``R`` = ``config.rows``)."""

    d: jax.Array  # [] int32 stack row (= level) of the current node; -1 once searched
    found: jax.Array  # [] uint32 completions found since the state was unpacked (<= edges taken)
    stack: jax.Array  # [5 R] uint32: row r = (cols, ld, rd, back, av) of level r


def unpack(item, config: Config) -> tuple[State, jax.Array]:
    """A search item, uint32 ``[config.width]``: its state (count reset to 0) and its level
    table uint32 ``[TABLE_WORDS * levels]``."""
    state = State(item[0].astype(jnp.int32), jnp.uint32(0), item[HEAD : config.state_width])
    return state, item[config.state_width :]


def pack(state: State) -> jax.Array:
    """A state as uint32 ``[config.state_width]`` (its item without the table): the words a
    call returns, from which the host resumes an unfinished search."""
    head = jnp.stack([state.d.astype(jnp.uint32), state.found, jnp.uint32(0), jnp.uint32(0)])
    return jnp.concatenate([head, state.stack])


def step(state: State, table, config: Config) -> State:
    """One tree edge (the state must be live: ``d >= 0``).

    Takes the lowest untried row of level d; counts the child's free rows when the child is the
    task's last level (``COUNT_MASK`` is all ones only on the row before it, and the last level
    has at most one free row: every other column then holds a queen); otherwise goes down to the
    child if its level and the next two levels each keep a free row (the look-ahead ignores the
    queens still to come, so it never cuts a solution). Whatever happens, the parent's ``av`` and
    the child's row are written as 6 contiguous words, and ``back`` (the nearest level with rows
    left) spares every iteration spent popping.
    """
    d = state.d
    level = d & (config.levels - 1)  # == d in a live search; lets LLVM drop the index clamps
    start = level * WORDS
    row = lax.dynamic_slice(state.stack, (start,), (WORDS,), allow_negative_indices=False)
    t = lax.dynamic_slice(table, (level * TABLE_WORDS,), (TABLE_WORDS,))
    cols, ld, rd, back, av = row[COLS], row[LD], row[RD], row[BACK], row[AV]
    # gaps masked to 0..31: a shift by >= 32 is 0 in XLA, and the mask lets LLVM drop that select
    g0, g2, g3 = t[GAP] & 31, t[GAP2] & 31, t[GAP3] & 31
    bit = av & (jnp.uint32(0) - av)
    rest = av ^ bit
    nc, nl, nr = cols | bit, (ld | bit) << g0, (rd | bit) >> g0
    nav = ~(nc | nl | nr) & t[ALLOW1]
    ahead2 = ~(nc | (nl << g2) | (nr >> g2)) & t[ALLOW2]  # 0 on the row before the last level
    ahead3 = ~(nc | (nl << g3) | (nr >> g3)) & t[ALLOW3]
    push = (nav != 0) & (ahead2 != 0) & (ahead3 != 0)
    here = d.astype(jnp.uint32)
    keep = jnp.uint32(0) - (rest != 0).astype(jnp.uint32)
    resume = back ^ ((back ^ here) & keep)  # here if rows are left, else the parent's back
    stack = lax.dynamic_update_slice(
        state.stack,
        jnp.stack([rest, nc, nl, nr, resume, nav]),
        (start + AV,),
        allow_negative_indices=False,
    )
    count = state.found + lax.population_count(nav & t[COUNT_MASK])
    return State(jnp.where(push, here + 1, resume).astype(jnp.int32), count, stack)


def run(state: State, table, params: Params, config: Config) -> tuple[State, jax.Array]:
    """Search until the task is done (``d < 0``) or ``params.budget`` edges are taken: the state
    (to resume in a later call with the same total) and the edges taken, [] int32."""
    # a countdown to 0, not a count up to the budget: one load and compare fewer per edge
    state, left = lax.while_loop(
        lambda c: (c[0].d >= 0) & (c[1] > 0),
        lambda c: (step(c[0], table, config), c[1] - 1),
        (state, params.budget),
    )
    return state, params.budget - left


def search(items, params: Params, config: Config):
    """Search items uint32 ``[B, config.width]`` one after the other with ONE shared budget (the
    CPU strategy: a call then takes at most ``params.budget`` edges whatever its items).

    Returns:
      states: uint32 ``[B, config.state_width]`` (:func:`pack`): a finished search has ``d = -1``,
        an item the budget did not reach comes back unchanged (count 0);
      taken: [] int32, the edges taken.
    """

    def body(left, item):
        state, table = unpack(item, config)
        state, taken = run(state, table, Params(left), config)
        return left - taken, pack(state)

    left, states = lax.scan(body, params.budget, items)
    return states, params.budget - left
