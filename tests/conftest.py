import os
import sys

# Tests import the plain reference implementations as a module.
sys.path.insert(0, os.path.dirname(__file__))

# No persistent compilation cache in the suite (never the user's ~/.cache; every run compiles, as
# before): set before jaxqueens is configured, inherited by the CLI subprocesses. The cache itself
# is tested in tests/parallel/test_devices_cache.py with its own folders.
os.environ["JAXQUEENS_CACHE_DIR"] = ""

import jaxqueens

# Importing jaxqueens changes nothing; the suite asks, before any JAX computation, for what the
# command line has: one CPU device per core (the multi-device paths run) and the XLA:CPU loop
# flags, without the cache. Inherited by subprocesses (JAX_NUM_CPU_DEVICES, XLA_FLAGS) too.
jaxqueens.configure(cache=False)
