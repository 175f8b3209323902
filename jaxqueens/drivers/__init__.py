"""Host loops over jitted chunks returning NumPy result dataclasses; every driver runs through
the one chunked loop of `loop` (progress, checkpoints, Ctrl-C)."""
