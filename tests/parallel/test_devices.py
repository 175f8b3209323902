"""parallel.devices: one CPU device per core by default, and one table of sizes per backend."""

import jax

from jaxqueens.parallel import devices


def test_cpu_devices_and_sizes():
    assert jax.default_backend() == "cpu" or devices.is_accelerator()
    s = devices.sizes()
    assert s is (devices.ACCELERATOR_SIZES if devices.is_accelerator() else devices.CPU_SIZES)
    assert s.chain_lanes >= 1 and s.count_prefixes >= 1 and s.estimator_probes >= 1
