"""The only code that knows devices and backends: JAX device setup, one mesh/shard helper, the
lockstep-with-refill and map-over-items batching, gathers across processes, distributed init."""
