"""The package version, in one place (`jaxqueens.__version__`, `run.json`, reports)."""

__version__ = "0.1.0"
