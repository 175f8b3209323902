"""Many chains of a chain family (jaxqueens.parallel.chains): the CPU strategy (one chain per
lax.map iteration, split over devices) and the accelerator one (lockstep lanes with refill) give
the same chains, whatever the batch, offset, lanes or device count."""

import contextlib

import jax
import numpy as np
import pytest

from jaxqueens.errors import QueensError
from jaxqueens.parallel import chains, memory
from jaxqueens.solvers import minconflicts as mc

KEY = jax.random.key(42)


def family(**kw) -> tuple[chains.Chains, mc.Params]:
    """min-conflicts bound to a config, and its params (max_steps, max_restarts from ``kw``)."""
    given = {k: kw.pop(k) for k in ("max_steps", "max_restarts") if k in kw}
    cfg = mc.Config(**kw)
    return chains.Chains(mc, cfg), mc.default_params(cfg, **given)


def _assert_same(a, b):
    for x, y in zip(jax.device_get(a), jax.device_get(b), strict=True):
        np.testing.assert_array_equal(x, y)


def test_chain_results_independent_of_batching_and_strategy():
    kernel, prm = family(n=12, max_steps=48, init="qs4", unroll=2)
    ref = jax.device_get(chains.run_mapped(kernel, KEY, 20, prm, num_devices=1))
    bigger = jax.device_get(
        chains.run_mapped(kernel, KEY, 33, prm, num_devices=jax.local_device_count())
    )
    _assert_same(ref, jax.tree.map(lambda x: x[:20], bigger))  # on the host: no slicing program
    # a later chunk: chains 10..29, ref's program (the offset is traced), against the bigger run
    chunk = chains.run_mapped(kernel, KEY, 20, prm, offset=10, num_devices=1)
    _assert_same(jax.tree.map(lambda x: x[10:30], bigger), chunk)
    lock = chains.run_lockstep(kernel, KEY, 20, prm, lanes=6)
    _assert_same(ref, lock)
    # compiled (outside jit the vmapped run compiled its while loop and its init op by op: 45
    # programs); the family's run with and without jit is compared in its own kernel tests
    one = jax.jit(jax.vmap(lambda i: mc.run(jax.random.fold_in(KEY, i), kernel.config, prm)))(
        jax.numpy.arange(20)
    )
    _assert_same(ref, one)  # the family's own run, chain by chain


def test_defect_chains_21617_and_73597_of_seed_0_ran_as_one_chain():
    """Their 32-bit seeds were equal, so ``solve -n 32 --chains 100000`` reported the same steps
    and board twice; with 64-bit stream seeds the two chains are different searches."""
    kernel, prm = family(n=32)
    a, b = (
        jax.device_get(chains.run_mapped(kernel, jax.random.key(0), 1, prm, offset=i))
        for i in (21617, 73597)
    )
    assert bool(a.solved[0]) and bool(b.solved[0])
    assert not np.array_equal(a.rows, b.rows) or int(a.steps[0]) != int(b.steps[0])


def test_lockstep_with_restart_cap_matches_mapped():
    kernel, prm = family(n=30, max_steps=20, max_restarts=2)
    _assert_same(
        chains.run_mapped(kernel, KEY, 9, prm, num_devices=1),
        chains.run_lockstep(kernel, KEY, 9, prm, lanes=4),
    )


def test_lockstep_over_all_devices_with_a_start_board():
    kernel, prm = family(n=10, max_steps=30, max_restarts=3)
    start = mc.Problem(start=np.array([0, 2, 4, 6, 8, 1, 3, 5, 7, 9], np.int32))
    ref = chains.run_mapped(kernel, KEY, 12, prm, start, num_devices=1)
    d = jax.local_device_count()
    _assert_same(ref, chains.run_lockstep(kernel, KEY, 12, prm, start, lanes=3, num_devices=d))


@pytest.mark.parametrize("method", ["ls", "ta", "sa"])
def test_anneal_lockstep_lanes_match_mapped(method):
    """LS/TA/SA chains never restart: their lockstep lanes (a GPU's strategy) skip the restart
    step (make gpu-check found the lockstep path calling a restart anneal does not have)."""
    from jaxqueens.solvers import anneal as sls

    cfg = sls.Config(n=10, method=method, rounds=4, steps_per_round=60)
    kernel, prm = chains.Chains(sls, cfg), sls.default_params(cfg)
    assert not kernel.restarts
    _assert_same(
        chains.run_mapped(kernel, KEY, 11, prm, num_devices=1),
        chains.run_lockstep(kernel, KEY, 11, prm, lanes=4),
    )


def test_defect_7_batch_checked_against_memory_before_allocating(monkeypatch):
    """A kernel call's results ([chunk, n] boards and more) must fit: refused before compiling."""
    monkeypatch.setattr(memory, "available_memory", lambda: 2**20)
    kernel, prm = family(n=64, max_steps=48)
    with pytest.raises(QueensError, match=r"--batch 5000 .*needs about .* of memory"):
        chains.compile_runner(kernel, KEY, 5000, prm)
    monkeypatch.setattr(memory, "available_memory", lambda: 2**40)
    chains.compile_runner(kernel, KEY, 4, prm)  # fits


@contextlib.contextmanager
def compile_events():
    """The JAX compile events (tracing, lowering, backend compilation) fired inside the block."""
    events: list[str] = []

    def listen(event, duration, **kwargs):
        if event.startswith("/jax/core/compile/"):
            events.append(event)

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        yield events
    finally:  # public from JAX 0.8; the floor (0.7.2) has only the private one
        unregister = getattr(jax.monitoring, "unregister_event_duration_listener", None)
        if unregister is None:
            from jax._src import monitoring

            unregister = monitoring._unregister_event_duration_listener_by_callback
        unregister(listen)


def test_defect_short_last_chunk_compiled_inside_the_timed_call():
    """5 chains in chunks of 3 leave a last chunk of 2: compile_runner compiles it with the
    chunk, so the call the driver times compiles nothing (it compiled there: seconds per
    solution of those chains counted their compilation)."""
    kernel, prm = family(n=8, max_steps=40)
    run_chunk = chains.compile_runner(kernel, KEY, 3, prm, total=5)
    with compile_events() as events:
        first, last = run_chunk(0, 3), run_chunk(3, 2)
        jax.block_until_ready((first, last))
    assert events == []
    _assert_same(last, chains.run_mapped(kernel, KEY, 2, prm, offset=3))
    with compile_events() as events:  # another count still compiles its own, on use
        run_chunk(0, 1)
    assert events


def test_defect_5_pausing_chains_match_across_strategies():
    # Chains that pause after their second attempt (the per-chain input bounds a call's work)
    # pause at the same point, with the same state, in lockstep lanes and one per lax.map step.
    kernel, prm = family(n=12, max_steps=5, max_restarts=50)
    shared = mc.fresh(until=1)  # the same input for every chain of the call
    mapped = jax.device_get(chains.run_mapped(kernel, KEY, 10, prm, num_devices=1, resume=shared))
    paused = np.asarray(mc.paused(mapped, prm))
    assert paused.any() and (mapped.restarts[paused] == 1).all()
    per_chain = jax.tree.map(lambda x: np.full(10, x), shared)  # one row per chain
    d = jax.local_device_count()
    for resume in (shared, per_chain):
        _assert_same(mapped, chains.run_lockstep(kernel, KEY, 10, prm, lanes=3, resume=resume))
        _assert_same(mapped, chains.run_mapped(kernel, KEY, 10, prm, resume=resume, num_devices=d))


def test_run_inside_a_user_jit_and_over_a_params_sweep():
    """parallel.chains.run composes: inside jit, and vmapped over Params (one compile)."""
    cfg = mc.Config(n=10)
    base = mc.default_params(cfg)
    periods = jax.numpy.array([5, 20, 80], jax.numpy.int32)
    sweep = jax.jit(jax.vmap(lambda m: chains.run(mc, cfg, KEY, 16, base._replace(max_steps=m))))(
        periods
    )
    assert sweep.rows.shape == (3, 16, 10) and np.asarray(sweep.solved).all()
    for i, m in enumerate(periods.tolist()):
        one = chains.run(mc, cfg, KEY, 16, base._replace(max_steps=m))
        _assert_same(jax.tree.map(lambda x, i=i: np.asarray(x)[i], sweep), one)


@pytest.mark.parametrize("seed", [0, 7, 2**31, 2**32 - 1])
@pytest.mark.parametrize("num", [2, 3])
def test_seed_keys_are_jaxs_split_of_the_seed(seed, num):
    made = chains.seed_keys(seed, num)
    jaxs = jax.random.split(jax.random.key(seed), num)
    assert len(made) == num and all(k.dtype == jaxs.dtype and k.shape == () for k in made)
    np.testing.assert_array_equal(
        np.stack([jax.random.key_data(k) for k in made]), jax.random.key_data(jaxs)
    )
    previous = jax.config.jax_default_prng_impl
    jax.config.update("jax_default_prng_impl", "rbg")  # not threefry: JAX's own split
    try:
        other = chains.seed_keys(seed, num)
        want = jax.random.split(jax.random.key(seed), num)
        np.testing.assert_array_equal(
            np.stack([jax.random.key_data(k) for k in other]), jax.random.key_data(want)
        )
    finally:
        jax.config.update("jax_default_prng_impl", previous)
