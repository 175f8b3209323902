"""``python -m jaxqueens.cli``: the ``jaxqueens`` command."""

import sys

from jaxqueens.cli.main import main

sys.exit(main())
