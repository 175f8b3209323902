"""parallel.sizing: the batch from the compiled program against the device (issue 23), tested
against fake builders whose memory is known, and against a real CPU compile."""

from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxqueens.parallel import chains, devices, sizing
from jaxqueens.solvers import minconflicts


class Fake:
    """A builder whose executable at batch b takes ``base + per * b`` bytes (split over argument,
    output and temporary), counting its compiles."""

    def __init__(self, base: int, per: int, noise=lambda b: 0):
        self.base, self.per, self.noise, self.compiled = base, per, noise, []

    def bytes(self, b: int) -> int:
        return self.base + self.per * b + self.noise(b)

    def __call__(self, b: int):
        total = self.bytes(b)

        def compile_():
            self.compiled.append(b)
            stats = SimpleNamespace(
                argument_size_in_bytes=total // 4,
                output_size_in_bytes=total // 4,
                temp_size_in_bytes=total - 2 * (total // 4),
            )
            return SimpleNamespace(memory_analysis=lambda: stats, batch=b)

        return SimpleNamespace(compile=compile_)


TARGET = sizing.Target(budget_bytes=10**9, parallelism=1 << 18, name="fake")


def test_the_filling_batch_when_it_fits_costs_one_compile():
    build = Fake(10**6, 1000)
    c = sizing.choose(build, TARGET, TARGET.parallelism)
    assert (c.batch, c.fits, c.compiles, build.compiled) == (1 << 18, True, 1, [1 << 18])
    assert c.bytes == build.bytes(1 << 18) and c.compiled.batch == c.batch


@pytest.mark.parametrize("per", [5_000, 40_000, 3_999_000])
def test_too_big_a_batch_shrinks_to_the_largest_that_fits(per):
    build = Fake(10**7, per)
    c = sizing.choose(build, TARGET, TARGET.parallelism)
    best = (TARGET.budget_bytes - 10**7) // per
    assert c.fits and c.bytes <= TARGET.budget_bytes and c.compiled.batch == c.batch
    assert c.batch <= best and c.bytes > sizing.FILL * TARGET.budget_bytes - per  # fills to FILL
    assert c.compiles <= 4


def test_memory_that_is_not_quite_affine_still_ends_within_the_budget():
    build = Fake(10**7, 9_000, noise=lambda b: (b * b) // 40_000)  # grows faster than the line
    c = sizing.choose(build, TARGET, TARGET.parallelism, multiple=32)
    assert c.fits and c.bytes <= TARGET.budget_bytes and c.batch % 32 == 0
    assert build.bytes(c.batch + 32 * 8) > sizing.FILL * TARGET.budget_bytes * 0.9


def test_nothing_fits_says_so_at_the_floor():
    build = Fake(2 * 10**9, 1)
    c = sizing.choose(build, TARGET, 1000, floor=4)
    assert not c.fits and c.batch == 4 and c.bytes == build.bytes(4)


def test_the_choice_is_cached_per_key_and_device():
    build = Fake(10**7, 40_000)
    first = sizing.choose(build, TARGET, TARGET.parallelism, key=("t", 1))
    build.compiled.clear()
    again = sizing.choose(build, TARGET, TARGET.parallelism, key=("t", 1))
    assert (again.batch, again.compiles, build.compiled) == (first.batch, 1, [first.batch])
    other = sizing.Target(TARGET.budget_bytes // 2, TARGET.parallelism, "smaller")
    assert sizing.choose(build, other, other.parallelism, key=("t", 1)).batch < first.batch


def test_items_for_lanes():
    assert sizing.items_for(100, 2, None) == 200
    assert sizing.items_for(100, 2, 50) == 50
    assert sizing.items_for(100, 2, 51, multiple=4) == 52


def test_a_real_compile_is_measured_and_sized():
    """The lockstep chain executable on the CPU: bytes grow with the lanes, and a budget between
    two sizes picks the smaller."""
    config = minconflicts.Config(n=16, keep_best=True)
    kernel = chains.Chains(minconflicts, config)
    params = minconflicts.default_params(config)
    build = chains.lockstep_builder(kernel, jax.random.key(0), 256, params)
    compiled = {b: build(b).compile() for b in (8, 128)}
    small, big = (sizing.footprint(compiled[b]) for b in (8, 128))
    assert big > small
    target = sizing.Target((small + big) // 2, 128, "cpu")
    # choose tries 128 first: handed back, not compiled again (a build may return any object
    # with .compile())
    again = lambda b: SimpleNamespace(compile=lambda: compiled[b]) if b in compiled else build(b)
    c = sizing.choose(again, target, 128, multiple=8)
    assert c.fits and 8 <= c.batch < 128 and c.bytes <= target.budget_bytes


def test_compile_runner_on_the_accelerator_route_runs_the_sized_lanes():
    """compile_runner with a target takes the accelerator's route on the CPU: lanes sized from
    the compiled lockstep program, the same chains and results as the CPU strategy."""
    config = minconflicts.Config(n=8, keep_best=True)
    kernel = chains.Chains(minconflicts, config)
    params = minconflicts.default_params(config)
    key = jax.random.key(3)
    cpu = chains.compile_runner(kernel, key, 64, params)
    target = sizing.Target(10**9, 16, "test")
    acc = chains.compile_runner(kernel, key, 64, params, target=target)
    assert (cpu.lanes, acc.lanes) == (0, 16)
    a, b = cpu(0, 64), acc(0, 64)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_accelerator_chunk_fills_the_device_within_its_memory():
    target = sizing.Target(80 * 2**30, 270_336, "h100-like")
    assert chains.accelerator_chunk(None, 8, target) == chains.CHAINS_PER_LANE * 270_336
    assert chains.accelerator_chunk(1000, 8, target) == 1000
    huge = chains.accelerator_chunk(None, 40_000, target)
    assert huge * 8 * 40_004 <= chains.RESULT_SHARE * target.budget_bytes


def test_abstract_places_shapes_without_arrays():
    tree = (jnp.zeros((3, 4), jnp.int32), jax.ShapeDtypeStruct((5,), jnp.uint32), 2)
    out = sizing.abstract(tree)
    assert [(x.shape, x.dtype) for x in out] == [
        ((3, 4), jnp.int32),
        ((5,), jnp.uint32),
        ((), jnp.int32),
    ]


def test_one_table_of_sizes_per_backend():
    assert jax.default_backend() == "cpu" or devices.is_accelerator()
    s = sizing.sizes()
    assert s is (sizing.ACCELERATOR_DEFAULTS if devices.is_accelerator() else sizing.CPU_SIZES)
    assert s.estimator_probes >= 1
    cpu = sizing.CPU_SIZES
    assert cpu.chain_lanes >= 1 and cpu.count_prefixes >= 1 and cpu.count_lanes >= 1
    # on an accelerator no lane count comes from a table: choose() sizes them
    acc = sizing.ACCELERATOR_DEFAULTS
    assert acc.accelerator and (acc.chain_lanes, acc.count_prefixes, acc.count_lanes) == (0, 0, 0)
