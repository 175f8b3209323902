"""Board kernels against the brute-force reference and the independent checker."""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import reference
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxqueens.core import board, checker
from jaxqueens.errors import QueensError

SOLUTION_8 = [0, 4, 7, 5, 2, 6, 1, 3]
SOLUTION_17 = [0, 2, 4, 1, 7, 10, 14, 6, 15, 13, 16, 3, 5, 8, 11, 9, 12]

# The kernels branch on n only at the pairwise/scatter switch: the edge sizes 1..4, one size
# inside each side, both sizes at the switch and a large one, each with one batch shape (in
# turn). The public kernels are jitted per shape, so a bounded set of shapes compiles each
# kernel 9 times (not once per example) and hypothesis spends its examples on the boards'
# contents.
BATCHES = [(), (1,), (3,), (2, 3)]
SHAPES = [
    (n, BATCHES[i % len(BATCHES)])
    for i, n in enumerate([1, 2, 3, 4, 13, board.PAIRWISE_MAX_N, board.PAIRWISE_MAX_N + 1, 64, 97])
]


@st.composite
def boards(draw, encoding=None):
    """(rows [*batch, n], encoding): permutation or combination boards."""
    n, batch = draw(st.sampled_from(SHAPES))
    encoding = encoding or draw(st.sampled_from(["permutation", "combination"]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    shape = (*batch, n)
    if encoding == "permutation":
        rows = rng.permuted(np.broadcast_to(np.arange(n), shape), axis=-1)
    else:
        # Small value ranges make collisions (and so conflicts) frequent.
        hi = draw(st.integers(1, n))
        rows = rng.integers(0, hi, size=shape)
    return rows.astype(np.int32), encoding


def _flat(rows):
    return rows.reshape(-1, rows.shape[-1])


@settings(max_examples=60, deadline=None)
@given(boards())
def test_kernels_match_reference(case):
    rows, _ = case
    flat = _flat(rows)
    batch = rows.shape[:-1]
    want_pairs = np.array([reference.attacking_pairs(b) for b in flat]).reshape(batch)
    want_conf = np.array([reference.queen_conflicts(b) for b in flat]).reshape(rows.shape)
    want_att = np.array([reference.n_attacks(b) for b in flat]).reshape(batch)

    np.testing.assert_array_equal(board.attacking_pairs(rows), want_pairs)
    np.testing.assert_array_equal(board.queen_conflicts(rows), want_conf)
    np.testing.assert_array_equal(board.conflicted_mask(rows), want_conf > 0)
    np.testing.assert_array_equal(board.n_attacks(rows), want_att)
    np.testing.assert_array_equal(board.is_solution(rows), want_pairs == 0)
    # The independent checker agrees on every board.
    np.testing.assert_array_equal(checker.attacking_pairs(rows), want_pairs)
    np.testing.assert_array_equal(checker.are_solutions(flat).reshape(batch), want_pairs == 0)


@settings(max_examples=30, deadline=None)
@given(boards())
def test_line_counts_match_reference(case):
    rows, _ = case
    counts = jax.device_get(board.line_counts(rows))  # NumPy: per-board reads compile nothing
    n = rows.shape[-1]
    chex.assert_shape(counts.rows, (*rows.shape[:-1], n))
    chex.assert_shape(counts.diag, (*rows.shape[:-1], 2 * n - 1))
    chex.assert_shape(counts.anti, (*rows.shape[:-1], 2 * n - 1))
    for b, rc, dc, ac in zip(
        _flat(rows), _flat(counts.rows), _flat(counts.diag), _flat(counts.anti), strict=True
    ):
        want = reference.line_counts(list(b))
        for got, exp in zip((rc, dc, ac), want, strict=True):
            np.testing.assert_array_equal(got, exp)
        assert rc.sum() == dc.sum() == ac.sum() == n


class OneBoardKernelTest(chex.TestCase):
    """The one-board kernels, batched by vmap, with and without jit."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_batched_kernels(self):
        rng = np.random.default_rng(7)
        # op by op every operation compiles per size: there the sizes on each side of the
        # pairwise/scatter switch, with jit two more beyond them
        switch = (board.PAIRWISE_MAX_N, board.PAIRWISE_MAX_N + 1)
        op_by_op = self.variant.type is chex.ChexVariantType.WITHOUT_JIT
        for n in switch if op_by_op else (6, *switch, 50):
            rows = jnp.asarray(rng.integers(0, n, size=(5, n)), jnp.int32)

            @self.variant
            def evaluate(rows):
                return (
                    jax.vmap(board.attacking_pairs_one)(rows),
                    jax.vmap(board._queen_conflicts_one)(rows),
                    jax.vmap(board.n_attacks_one)(rows),
                    jax.vmap(board._is_solution_one)(rows),
                )

            pairs, conf, att, sol = evaluate(rows)
            chex.assert_shape([pairs, att, sol], (5,))
            chex.assert_shape(conf, (5, n))
            # read as NumPy: indexing device arrays runs (and compiles) one op per element read
            pairs, conf, att, sol = jax.device_get((pairs, conf, att, sol))
            for i, b in enumerate(np.asarray(rows)):
                assert pairs[i] == reference.attacking_pairs(b)
                assert att[i] == reference.n_attacks(b)
                np.testing.assert_array_equal(conf[i], reference.queen_conflicts(b))
                assert bool(sol[i]) == (reference.attacking_pairs(b) == 0)


@pytest.mark.parametrize("n", [8, 100])
def test_no_retrace_for_same_shape(n):
    chex.clear_trace_counter()
    traced = chex.assert_max_traces(board.attacking_pairs_one, n=1)
    fn = jax.jit(jax.vmap(traced))
    rng = np.random.default_rng(n)
    for _ in range(3):
        fn(jnp.asarray(rng.integers(0, n, size=(4, n)), jnp.int32)).block_until_ready()
    # The public entry keeps one compiled version per shape too.
    board.attacking_pairs(rng.integers(0, n, size=(4, n)).astype(np.int32))
    size = board._attacking_pairs._cache_size()
    board.attacking_pairs(rng.integers(0, n, size=(4, n)).astype(np.int32))
    assert board._attacking_pairs._cache_size() == size


def test_known_solutions_and_non_solutions():
    for sol in ([0], SOLUTION_8, SOLUTION_17, [1, 3, 0, 2]):
        assert bool(board.is_solution(np.array(sol)))
        assert int(board.attacking_pairs(np.array(sol))) == 0
        assert int(board.n_attacks(np.array(sol))) == 0
    for sol in reference.all_solutions(6):
        assert bool(board.is_solution(np.array(sol)))
    # Hand-counted: the main diagonal of n = 5 is one anti-diagonal line of 5 queens.
    assert int(board.attacking_pairs(np.arange(5))) == 10
    assert int(board.n_attacks(np.arange(5))) == 4
    # All queens on row 0 of a 4-board: 6 pairs on the row, diagonals all distinct.
    np.testing.assert_array_equal(board.queen_conflicts(np.zeros(4, np.int32)), [3, 3, 3, 3])
    # Out-of-range values are never a solution.
    assert not bool(board.is_solution(np.array([0, 4, 7, 5, 2, 6, 1, 8])))
    assert not bool(board.is_solution(np.array([-1, 1])))


def test_all_8_queens_solutions_found_by_kernel():
    import itertools

    perms = np.array(list(itertools.permutations(range(8))), np.int32)  # 40320 boards
    sols = perms[np.asarray(board.is_solution(perms))]
    assert len(sols) == 92
    assert checker.are_solutions(sols).all()


def test_pair_count_never_wraps_without_x64():
    assert not jax.config.jax_enable_x64
    n = 70000
    diagonal = np.arange(n, dtype=np.int32)  # 2,449,965,000 pairs > 2^31 - 1
    with pytest.raises(OverflowError, match="JAX_ENABLE_X64"):
        board.attacking_pairs(diagonal)
    assert int(jax.jit(board.attacking_pairs)(diagonal)) == board.PAIRS_SATURATED
    # A random permutation of the same size is exact.
    perm = np.random.default_rng(0).permutation(n).astype(np.int32)
    assert int(board.attacking_pairs(perm)) == int(checker.attacking_pairs(perm))


def test_pair_count_exact_with_x64():
    import subprocess
    import sys

    code = (
        "import numpy as np; from jaxqueens.core import board; "
        "r = board.attacking_pairs(np.arange(70000)); print(int(r), r.dtype)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "JAX_ENABLE_X64": "1"},
        check=True,
    )
    assert out.stdout.split() == [str(70000 * 69999 // 2), "int64"]


def _explicit_solution(n: int) -> np.ndarray:
    """A solution by the classic explicit construction (n mod 6 not 3), 0-based."""
    evens, odds = list(range(2, n + 1, 2)), list(range(1, n + 1, 2))
    if n % 6 == 2:
        odds = [3, 1, *odds[3:], 5]
    return np.asarray(evens + odds) - 1


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint16, np.uint32, np.int64])
def test_defect_9_narrow_and_unsigned_boards_are_exact(dtype):
    """A valid n = 200 solution stored as uint8 (or any integer dtype) is a solution."""
    sol = _explicit_solution(200)
    assert checker.are_solutions(sol[None]).all()
    bad = sol.copy()
    bad[[0, 1]] = bad[[1, 0]]
    for rows in (sol, bad, np.stack([sol, bad])):
        want = rows.astype(np.int32)
        x = rows.astype(dtype)
        np.testing.assert_array_equal(board.is_solution(x), board.is_solution(want))
        np.testing.assert_array_equal(board.attacking_pairs(x), checker.attacking_pairs(want))
        np.testing.assert_array_equal(board.n_attacks(x), board.n_attacks(want))
        np.testing.assert_array_equal(board.queen_conflicts(x), board.queen_conflicts(want))
        for got, ref in zip(board.line_counts(x), board.line_counts(want), strict=True):
            np.testing.assert_array_equal(got, ref)
    assert (
        bool(board.is_solution(sol.astype(dtype)))
        and int(board.attacking_pairs(sol.astype(dtype))) == 0
    )


@pytest.mark.parametrize("dtype,n", [(np.int8, 300), (np.uint8, 300), (np.int16, 40000)])
def test_defect_9_narrow_boards_at_large_n_do_not_overflow(dtype, n):
    """n beyond the dtype's range: the kernels widen inside instead of raising OverflowError."""
    rows = np.random.default_rng(0).integers(0, min(n, np.iinfo(dtype).max + 1), n).astype(dtype)
    want = rows.astype(np.int32)
    assert int(board.attacking_pairs(rows)) == int(checker.attacking_pairs(want))
    assert not bool(board.is_solution(rows))
    np.testing.assert_array_equal(board.queen_conflicts(rows), board.queen_conflicts(want))
    assert int(board.n_attacks(rows)) == int(board.n_attacks(want))
    assert board.line_counts(rows).diag.shape == (2 * n - 1,)


@pytest.mark.parametrize("value", [8, np.int64(8), np.int32(8), np.uint8(8)])
def test_defect_10_as_size_accepts_numpy_integers(value):
    n = board.as_size(value)
    assert n == 8 and type(n) is int


@pytest.mark.parametrize("value", [8.0, "8", True, None, np.float64(8)])
def test_defect_10_as_size_refuses_non_integers(value):
    with pytest.raises(QueensError, match="integer"):
        board.as_size(value)


@pytest.mark.parametrize(
    "rows,n,needle",
    [
        ([9] * 8, 8, "out of range 0..7"),
        ([0, 1], 8, "2 columns"),
        ([[0, 1], [1, 0]], 2, "one board"),
        ([0.5, 1.0], 2, "integer"),
    ],
)
def test_defect_10_as_board_range_checks(rows, n, needle):
    with pytest.raises(QueensError, match=needle):
        board.as_board(rows, n, what="start board")
    got = board.as_board(np.arange(8, dtype=np.uint8), 8)
    assert got.dtype == np.int32 and got.tolist() == list(range(8))


_SOL8 = np.array([0, 4, 7, 5, 2, 6, 1, 3])


@pytest.mark.parametrize(
    "bad",
    [_SOL8 + 0.5, _SOL8.astype(np.float32), _SOL8 + 0j, _SOL8.astype(bool), _SOL8.astype(object)],
    ids=["plus-half", "float32", "complex", "bool", "object"],
)
def test_defect_28_11_non_integer_boards_are_an_error_never_true(bad):
    """board + 0.5, complex and bool boards were truncated to the board and called solutions."""
    for kernel in (
        board.is_solution,
        board.attacking_pairs,
        board.queen_conflicts,
        board.n_attacks,
        board.line_counts,
        board.conflicted_mask,
    ):
        with pytest.raises(QueensError, match="must hold integers"):
            kernel(bad)


def test_defect_28_11_wide_rows_are_never_wrapped_into_range():
    """board + 2**32 wrapped to the board in int32 and was called a solution."""
    batch = np.stack([_SOL8, _SOL8 + 2**32, _SOL8 - 2**32])
    assert board.is_solution(batch).tolist() == [True, False, False]
    assert not bool(board.is_solution(_SOL8.astype(np.uint64) + np.uint64(2**33)))
    assert not bool(board.is_solution(_SOL8.astype(np.uint32) + np.uint32(2**31)))
    with pytest.raises(QueensError, match=r"board 1, column 0: row 4294967296 out of range 0\.\.7"):
        board.attacking_pairs(batch)
    with pytest.raises(QueensError, match="column 2: row 9 out of range"):
        board.queen_conflicts(np.array([0, 1, 9, 3, 4, 5, 6, 7]))


def test_defect_28_11_traced_and_device_boards_keep_their_fast_path():
    """Integer device arrays and traced values pass the boundary without a host round trip."""
    dev = jnp.asarray(_SOL8, jnp.int32)
    assert bool(board.is_solution(dev)) and int(board.attacking_pairs(dev)) == 0
    assert bool(jax.jit(board.is_solution)(dev))
    with pytest.raises(QueensError, match="must hold integers"):
        jax.jit(board.is_solution)(dev.astype(jnp.float32))
