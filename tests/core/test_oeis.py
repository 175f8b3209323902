"""The published counts (core/oeis.py): A000170 (all solutions) and A002562 (fundamental)."""

from jaxqueens.core.oeis import A000170, A002562

A000170_1_12 = [1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200]
A002562_1_12 = [1, 0, 0, 1, 2, 1, 6, 12, 46, 92, 341, 1787]


def test_data_tables():
    assert [A000170[n] for n in range(1, 13)] == A000170_1_12
    assert [A002562[n] for n in range(1, 13)] == A002562_1_12
    assert set(A000170) == set(A002562) == set(range(1, 28))
    assert A000170[27] == 234907967154122528 and A002562[27] == 29363495934315694
    for n in A000170:  # a class holds 1..8 solutions
        assert A002562[n] <= A000170[n] <= 8 * A002562[n]
