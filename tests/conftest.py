import gc
import os
import sys

import jaxqueens

# Python's cyclic garbage collector, in the test processes only (the package never touches it):
# tracing makes many short-lived objects and a worker's heap (JAX, compiled programs, test data)
# is large, so its default thresholds run slow full collections often. Fewer collections: the
# suite took 5% less CPU (12 min 49 s -> 12 min 8 s user time, one run each).
gc.set_threshold(50_000, 20, 20)

# Tests import the plain reference implementations as a module.
sys.path.insert(0, os.path.dirname(__file__))

# No persistent compilation cache in the suite (never the user's ~/.cache; every run compiles, as
# before): set before jaxqueens is configured, inherited by the CLI subprocesses. The cache itself
# is tested in tests/parallel/test_devices_cache.py with its own folders.
os.environ["JAXQUEENS_CACHE_DIR"] = ""

# Importing jaxqueens changes nothing; the suite asks, before any JAX computation, for what the
# command line has: one CPU device per core (the multi-device paths run) and the XLA:CPU loop
# flags, without the cache. Inherited by subprocesses (JAX_NUM_CPU_DEVICES, XLA_FLAGS) too.
# Without LLVM's loop unrolling, as `evolve` runs: the suite compiles ~5,000 programs and runs
# most for milliseconds, and they compile faster so (no result depends on the XLA flags).
jaxqueens.configure(cache=False, loop_unrolling=False)

# The longest files run first: under `make test` (pytest-xdist, --dist worksteal) a worker that
# runs out of tests takes over another's queued ones, but a test that has started runs to its end
# on its worker; a several-minute subprocess benchmark collected last (top-level files come after
# the folders) kept one core busy alone at the end of the run. Order inside a file is kept.
SLOW_FIRST = ("tests/test_scripts.py", "tests/test_scaleout.py", "tests/solvers/test_ga.py")


def pytest_collection_modifyitems(config, items):
    def rank(item):
        path = item.nodeid.split("::", 1)[0]
        return SLOW_FIRST.index(path) if path in SLOW_FIRST else len(SLOW_FIRST)

    items.sort(key=rank)  # stable: every other test keeps its place
