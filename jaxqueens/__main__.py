"""`python -m jaxqueens`: the `jaxqueens` command."""

from jaxqueens._src.cli.main import entry

entry()
