"""`python -m jaxqueens`: the `jaxqueens` command."""

from jaxqueens.cli.main import entry

entry()
