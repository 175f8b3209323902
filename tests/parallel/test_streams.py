"""parallel/streams.py: one stream of calls per host device, each in its own worker thread."""

import threading

import jax
import jax.numpy as jnp
import numpy as np

from jaxqueens.parallel import streams


def test_plan_has_one_stream_per_host_device_on_a_cpu_and_one_over_all_elsewhere():
    num_dev = jax.local_device_count()
    cpu = streams.plan(4 * num_dev, accelerator=False)
    if num_dev > 1:
        assert [s.device for s in cpu] == jax.local_devices()
        assert all(s.shards == 1 and s.rows == 4 for s in cpu)
    else:
        assert cpu == [streams.Stream(None, 1, 4)]
    assert streams.plan(4 * num_dev, accelerator=True) == [
        streams.Stream(None, num_dev, 4 * num_dev)
    ]


def test_calls_run_on_their_stream_device_in_their_own_thread():
    plan = streams.plan(2 * jax.local_device_count(), accelerator=False)
    seen = {}

    def fn(batch, shards):
        seen[threading.current_thread().name] = (getattr(batch, "devices", lambda: None)(), shards)
        return (jnp.asarray(batch) * 2,)

    with streams.Workers(plan, "test-streams") as workers:
        futures = [workers.submit(k, fn, np.arange(3)) for k in range(len(plan))]
        results = [f.result() for f in futures]
    for (out,), t0, t1 in results:
        assert isinstance(out, np.ndarray) and out.tolist() == [0, 2, 4] and t1 >= t0
    assert "MainThread" not in seen and len(seen) == len(plan)
    for k, s in enumerate(plan):
        devs, shards = seen[f"test-streams-{k}_0"]
        assert shards == s.shards
        if s.device is not None:
            assert devs == {s.device}
