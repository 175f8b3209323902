"""The `jaxqueens` command line: argparse only, one module per command (`main` builds the
parser; `options` holds the option groups and checks that several commands share)."""
