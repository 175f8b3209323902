"""Published N-Queens counts, as exact Python ints.

- `A000170[n]`: the number of ways to place n non-attacking queens on an n x n board,
  OEIS A000170 (https://oeis.org/A000170), n = 1..27. a(27) was computed by the Q27 project
  (Preusser and Engelhardt, 2016).
- `A002562[n]`: the number of those solutions that are distinct under the 8 symmetries of the
  square (rotations and reflections), OEIS A002562 (https://oeis.org/A002562), n = 1..27.

The tests check `jaxqueens.drivers.count` against n = 1..12 of both sequences.
"""

from __future__ import annotations

A000170: dict[int, int] = dict(
    enumerate(
        (
            1,
            0,
            0,
            2,
            10,
            4,
            40,
            92,
            352,
            724,
            2680,
            14200,
            73712,
            365596,
            2279184,
            14772512,
            95815104,
            666090624,
            4968057848,
            39029188884,
            314666222712,
            2691008701644,
            24233937684440,
            227514171973736,
            2207893435808352,
            22317699616364044,
            234907967154122528,
        ),
        start=1,
    )
)

A002562: dict[int, int] = dict(
    enumerate(
        (
            1,
            0,
            0,
            1,
            2,
            1,
            6,
            12,
            46,
            92,
            341,
            1787,
            9233,
            45752,
            285053,
            1846955,
            11977939,
            83263591,
            621012754,
            4878666808,
            39333324973,
            336376244042,
            3029242658210,
            28439272956934,
            275986683743434,
            2789712466510289,
            29363495934315694,
        ),
        start=1,
    )
)

# OEIS A051906 (https://oeis.org/A051906): n nonattacking queens on an n x n TOROIDAL board
# (diagonals taken modulo n), n = 1..34; nonzero only for n coprime to 6. Reproduced by
# jaxqueens.drivers.complete.toroidal_count (tests: n = 5, 7, 11, 13; bench_complete: 17, 19).
A051906: dict[int, int] = dict(
    enumerate(
        (
            1,
            0,
            0,
            0,
            10,
            0,
            28,
            0,
            0,
            0,
            88,
            0,
            4524,
            0,
            0,
            0,
            140692,
            0,
            820496,
            0,
            0,
            0,
            128850048,
            0,
            1957725000,
            0,
            0,
            0,
            605917055356,
            0,
            13404947681712,
            0,
            0,
            0,
        ),
        start=1,
    )
)
