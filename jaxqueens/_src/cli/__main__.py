"""`python -m jaxqueens._src.cli`: the `jaxqueens` command."""

from jaxqueens._src.cli.main import entry

entry()
