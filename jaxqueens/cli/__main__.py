"""`python -m jaxqueens.cli`: the `jaxqueens` command."""

from jaxqueens.cli.main import entry

entry()
