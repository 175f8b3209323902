"""Host loops over jitted chunks returning NumPy result dataclasses; every driver runs through
the one chunked loop of :mod:`jaxqueens.drivers.loop` (progress, checkpoints, Ctrl-C)."""
