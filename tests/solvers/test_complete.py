"""The constrained bitmask kernel (solvers/complete.py), against a plain Python reference."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxqueens.core import constraints as C
from jaxqueens.solvers import complete as S

DONE = 0xFFFFFFFF


def plain_solutions(m):
    """Every solution of a constrained instance by plain recursion over columns, each rule taken
    from the raw fields (no masks)."""
    n, out = m.n, []

    def ok(rows, x, y):
        if y in m.rows or x in m.columns or x + y in m.sums or x - y + n - 1 in m.diffs:
            return False
        if (x, y) in m.blocked or any(fx == x and fy != y for fx, fy in m.fixed):
            return False
        for i, r in enumerate(rows):
            if r == y:
                return False
            if m.toroidal and ((i + r - x - y) % n == 0 or (i - r - x + y) % n == 0):
                return False
            if not m.toroidal and abs(r - y) == x - i:
                return False
        return True

    def rec(rows):
        if len(rows) == n:
            out.append(tuple(rows))
            return
        for y in range(n):
            if ok(rows, len(rows), y):
                rec([*rows, y])

    rec([])
    return out


def item(m, budget=1 << 30, stop=0, t=0):
    masks = C.column_masks(m, t).astype(np.uint32)
    return np.concatenate([[0, 0, 0, masks[0], 0, budget, stop], masks]).astype(np.uint32)


def decode(sol_words, level=0):
    w = np.asarray(sol_words).astype(np.uint64)
    return np.log2((w[1:] ^ w[:-1]).astype(np.float64)).astype(int).tolist()


CASES = [
    C.Constraints(6),
    C.completion(8, [(1, 3), (3, 4)]),
    C.Constraints(7, toroidal=True),
    C.excluded_diagonals(7, [[3, 1], [6, 0], [9, 1]]),
    C.Constraints(6, blocked=[(0, 1), (2, 2)]),
]


class KernelTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_run_counts_like_the_reference(self):
        for m in (C.Constraints(5), C.completion(6, [(0, 1)]), C.Constraints(5, toroidal=True)):
            cfg = S.Config(m.n, m.toroidal)
            lane = self.variant(lambda it, cfg=cfg: S.search(it, cfg))(jnp.asarray(item(m)))
            chex.assert_shape(
                [lane.stack, lane.allowed, lane.sols], [(m.n + 1, 5), (m.n + 1,), (1, m.n + 1)]
            )
            chex.assert_type([lane.d, lane.lo, lane.stack], [jnp.int32, jnp.uint32, jnp.uint32])
            assert int(lane.d) == -1 and int(lane.lo) + (int(lane.hi) << 32) == len(
                plain_solutions(m)
            )

    @chex.variants(with_jit=True, without_jit=True)
    def test_step_walks_the_tree(self):
        m = C.excluded_diagonals(5, [[4, 1]])
        cfg = S.Config(5)
        init, step = (
            self.variant(lambda it: S.start(it, cfg)),
            self.variant(lambda s: S.edge(s, cfg)),
        )
        lane, steps = init(jnp.asarray(item(m))), 0
        while bool(S.live(lane, cfg)):
            lane, steps = step(lane), steps + 1
        assert int(lane.lo) == len(plain_solutions(m)) and int(lane.steps) == steps > 0


@pytest.mark.parametrize("m", CASES)
def test_stop_reads_the_first_solution_off_the_stack(m):
    cfg = S.Config(m.n, m.toroidal)
    head, _, sols = jax.jit(lambda it: S.readout(S.search(it, cfg), cfg))(item(m, stop=1))
    want = plain_solutions(m)
    assert int(head[2]) == min(1, len(want))
    if want:
        assert tuple(decode(sols[0])) == min(want)  # lowest rows first: lexicographic order


def test_enumeration_lists_every_solution():
    m = C.excluded_diagonals(7, [[3, 1]])
    cfg = S.Config(m.n, False, cap=64)
    head, _, sols = jax.jit(lambda it: S.readout(S.search(it, cfg), cfg))(item(m))
    want = plain_solutions(m)
    assert int(head[2]) == len(want) and 0 < len(want) <= 64
    assert sorted(tuple(decode(s)) for s in np.asarray(sols)[: len(want)]) == sorted(want)


def test_budget_stops_and_the_stack_is_the_frontier():
    """A budget-stopped search's stack rows are untried sub-trees: searching each as a new root
    and adding what was found gives the total."""
    m = C.Constraints(8)
    cfg = S.Config(8)
    run = jax.jit(lambda it: S.readout(S.search(it, cfg), cfg))
    head, stack, _ = map(np.asarray, run(item(m, budget=100)))
    assert head[1] == 100 and head[0] != DONE
    total, d = int(head[2]), int(head[0])
    masks = C.column_masks(m).astype(np.uint32)
    for k in range(d + 1):
        if stack[k, 3]:
            sub = np.concatenate([[*stack[k, :4], k, 1 << 30, 0], masks]).astype(np.uint32)
            total += int(np.asarray(run(sub)[0])[2])
    assert total == 92


def test_one_compilation_per_config():
    cfg = S.Config(6)
    fn = jax.jit(chex.assert_max_traces(lambda it: S.search(it, cfg).lo, n=1))
    for m in (C.Constraints(6), C.Constraints(6, sums=[3]), C.completion(6, [(0, 1)])):
        fn(item(m))


class DecideTest(chex.TestCase):
    @chex.variants(with_jit=True, without_jit=True)
    def test_decide_kernel_walks_like_a_stop_item_and_reads_its_solution(self):
        for m in CASES[2:4]:  # toroidal, excluded diagonals
            lean, full = S.Config(m.n, m.toroidal, decide=True), S.Config(m.n, m.toroidal)
            got = self.variant(lambda it, c=lean: S.readout(S.search(it, c), c))(
                jnp.asarray(item(m))
            )
            ref = jax.jit(lambda it, c=full: S.readout(S.search(it, c), c))(item(m, stop=1))
            want = plain_solutions(m)
            chex.assert_shape(got[0], (4,))
            assert int(got[0][2]) == min(1, len(want)) and int(got[0][3]) == 0
            assert np.array_equal(got[0][:2], ref[0][:2]) and np.array_equal(got[1], ref[1])
            if want:
                assert tuple(decode(got[2][0])) == min(want)


@pytest.mark.parametrize("decide", [False, True])
def test_a_stopped_search_leaves_its_untried_frontier(decide):
    """After the first solution, the head's d is the deepest untried stack row: the sub-trees of
    rows 0..d, counted as new roots, hold every other solution."""
    m = C.Constraints(8)
    cfg, counter = S.Config(8, decide=decide), S.Config(8)
    head, stack, _ = map(
        np.asarray, jax.jit(lambda it: S.readout(S.search(it, cfg), cfg))(item(m, stop=1))
    )
    assert head[2] == 1 and head[0] != DONE
    count = jax.jit(lambda it: S.readout(S.search(it, counter), counter)[0])
    masks = C.column_masks(m).astype(np.uint32)
    total = 1
    for k in range(int(head[0]) + 1):
        if stack[k, 3]:
            total += int(
                np.asarray(
                    count(np.concatenate([[*stack[k, :4], k, 1 << 30, 0], masks]).astype(np.uint32))
                )[2]
            )
    assert total == 92


def test_defect_masks_with_rows_off_the_board_counted_and_decided_them():
    """Problem(np.full(8, 0xFFFF)) counted 15,324,708 "solutions" and answered SAT with rows
    [0, 2, 4, 1, 3, 8, 10, 12]; -1 and 255.5 masks were accepted. A concrete mask with bits at or
    above n is refused; a traced one has them dropped: the plain board's 92."""
    from jaxqueens.errors import QueensError

    config = S.Config(8)
    params = S.default_params(config)
    for masks, needle in (
        (np.full(8, 0xFFFF, np.uint32), "off the board"),
        (np.full(8, -1), "off the board"),
        (np.full(8, 255.5), "integer row masks"),
    ):
        with pytest.raises(QueensError, match=needle):
            S.run(None, config, params, S.Problem(masks))
    out = jax.jit(lambda m: S.run(None, config, params, S.Problem(m)))(
        jnp.full(8, 0xFFFF, jnp.uint32)
    )
    assert int(out.found[0]) == 92 and int(out.found[1]) == 0
    assert (np.asarray(out.rows) < 8).all()


@pytest.mark.parametrize("kw", [{"n": 0}, {"n": 33}, {"n": 8.0}, {"n": 8, "cap": -1}])
def test_defect_complete_configs_out_of_range_were_accepted(kw):
    from jaxqueens.errors import QueensError

    with pytest.raises(QueensError, match=r"n must|cap must"):
        S.Config(**kw)
