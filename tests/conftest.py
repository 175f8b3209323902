import os
import sys

# Tests import the plain reference implementations as a module.
sys.path.insert(0, os.path.dirname(__file__))

# No persistent compilation cache in the suite (never the user's ~/.cache; every run compiles, as
# before): set before jaxqueens is imported, inherited by the CLI subprocesses. The cache itself is
# tested in tests/test_startup.py with its own folders.
os.environ["JAXQUEENS_CACHE_DIR"] = ""
