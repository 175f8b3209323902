"""``python -m jaxqueens``: the ``jaxqueens`` command."""

import sys

from jaxqueens.cli.main import main

sys.exit(main())
