import sys
from pathlib import Path

# The GPU-model tooling lives with the scripts that use it (scripts/gpumodel): the tests import it
# as those scripts do, from their folder.
SCRIPTS = str(Path(__file__).resolve().parents[2] / "scripts")
if SCRIPTS not in sys.path:
    sys.path.insert(0, SCRIPTS)
