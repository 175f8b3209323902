"""Kernels only, one module per solver family: a frozen static `Config`, dynamic `Params`
where values are swept, `NamedTuple` states with shape comments, and `init`/`step`/`run`
written for one board, chain, instance or individual. No host loops, no files, no devices."""
