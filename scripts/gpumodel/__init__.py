"""The GPU model behind `make gpu-check` (dev tooling, not part of the package): `model` (the
described GPUs and the thread kernels' model), `hlo` (kernels, syncs and bytes of a compiled
XLA program), `workloads` (every executable the package runs on a GPU), `descriptions/` (the
devices' XLA target configs). The scripts beside it import it from their own folder."""
