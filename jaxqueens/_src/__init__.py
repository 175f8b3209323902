"""The implementation behind the public API: drivers, files, plots and the command line.

Nothing here is a stable interface; import the names `jaxqueens` exports instead.
"""
