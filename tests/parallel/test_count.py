"""The count kernels batched per backend (parallel/count.py): each prefix's count against a plain
reference, the same counts from every strategy, device split and lane count, one compilation per
shape."""

import dataclasses

import chex
import jax
import numpy as np
import pytest
import reference

from jaxqueens.core.prefixes import expand_mirror
from jaxqueens.parallel import count as batched
from jaxqueens.parallel import devices, sizing
from jaxqueens.parallel.shard import pad_rows
from jaxqueens.solvers.count_prefix import KernelConfig


@pytest.mark.parametrize("n,depth", [(8, 2), (9, 3), (10, 3)])
def test_kernel_counts_each_prefix_like_the_reference(n, depth, monkeypatch):
    masks, _ = expand_mirror(n, depth)
    cfg = KernelConfig(n, depth)
    got = np.asarray(batched.count_chunk(masks, cfg, 1, sizing.CPU_SIZES))
    want = [reference.count_completions(n, int(c), int(l), int(r), depth) for c, l, r, _ in masks]
    assert got[:, 1].sum() == 0 and got[:, 0].tolist() == want
    # the accelerator strategy (lockstep lanes with refilling) gives the same, whatever the lanes
    monkeypatch.setattr(devices, "is_accelerator", lambda: True)
    for lanes in (1, 7, 64):
        sizes = dataclasses.replace(sizing.ACCELERATOR_DEFAULTS, count_lanes=lanes)
        assert (np.asarray(batched.count_chunk(masks, cfg, 1, sizes)) == got).all()


def test_both_strategies_split_over_every_host_device(monkeypatch):
    masks, _ = expand_mirror(9, 3)
    cfg = KernelConfig(9, 3)
    d = jax.local_device_count()
    got = np.asarray(batched.count_chunk(masks, cfg, 1, sizing.CPU_SIZES))
    split = np.asarray(batched.count_chunk(pad_rows(masks, d), cfg, d, sizing.CPU_SIZES))
    assert (split[: len(masks)] == got).all() and not split[len(masks) :].any()
    monkeypatch.setattr(devices, "is_accelerator", lambda: True)
    split = batched.count_chunk(
        pad_rows(masks, d),
        cfg,
        d,
        dataclasses.replace(sizing.ACCELERATOR_DEFAULTS, count_lanes=64),
    )
    assert (np.asarray(split)[: len(masks)] == got).all()


def test_enumerate_chunk_lists_as_many_as_it_counts():
    masks, _ = expand_mirror(9, 3)
    cfg = KernelConfig(9, 3)
    counts, lists = batched.enumerate_chunk(masks, cfg, 8, 1, sizing.CPU_SIZES)
    chex.assert_shape(lists, (len(masks), 8, cfg.width))
    assert (
        np.asarray(counts) == np.asarray(batched.count_chunk(masks, cfg, 1, sizing.CPU_SIZES))
    ).all()


def test_chunk_functions_compile_once_per_shape():
    masks, _ = expand_mirror(8, 2)
    cfg = KernelConfig(8, 2)
    before = batched.count_chunk._cache_size()
    for k in (1, 2, 3):
        batched.count_chunk(np.roll(masks, k, axis=0), KernelConfig(8, 2), 1, sizing.CPU_SIZES)
    assert batched.count_chunk._cache_size() - before <= 1
    batched.count_chunk(masks, cfg, 1, sizing.CPU_SIZES)
    assert batched.count_chunk._cache_size() - before <= 1
