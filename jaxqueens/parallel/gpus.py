"""Described NVIDIA GPUs: hardware facts, and where to compile for one without having it.

Each description in ``gpu_descriptions/`` is an XLA ``GpuTargetConfig`` text proto (public
spec-sheet figures; ``shared/gpu/README.md``): with the CUDA plugin installed, XLA compiles a
jitted function for that device on a machine with no GPU ("deviceless" compilation: HLO -> PTX ->
ptxas -> cubin), which ``make gpu-check`` (``scripts/gpu_check.py``) does for every executable
the package runs on a GPU. The executable cannot run here; its memory analysis, optimised HLO
and ptxas figures are what the check and the speed model (:mod:`jaxqueens.parallel.hlo_model`)
read.

| file | device | CC | SMs | threads/SM | memory | bandwidth |
| --- | --- | --- | --- | --- | --- | --- |
| ``h100.txtpb`` | H100 SXM 80 GB | 9.0 | 132 | 2048 | 79.1 GiB | 3.35 TB/s |
| ``a100.txtpb`` | A100 SXM 80 GB | 8.0 | 108 | 2048 | 80 GiB | 2.04 TB/s |
| ``rtx4090.txtpb`` | GeForce RTX 4090 | 8.9 | 128 | 1536 | 24 GiB | 1.01 TB/s |

Two figures are not in a spec sheet and are *assumed* by the model, the same on every device:
:data:`LAUNCH_S`, the device time one kernel launch costs back to back on a stream (NVIDIA's
"Getting Started with CUDA Graphs" blog, 2019, measured ~3.8 us per short kernel launched on a
stream and ~3.4 us inside a graph; "a few microseconds" in ``shared/gpu/README.md``), and
:data:`SYNC_S`, the round trip of a host-evaluated loop condition or branch predicate (XLA:GPU
copies the predicate to the host and waits for the stream before it launches the next
iteration: ``WhileThunk``/``ConditionalThunk``, visible as ``kWhile``/``kConditional`` in the
compiled program's thunk sequence; on-device loops via CUDA graph conditional nodes are
openxla/xla#6973), taken as 10 us: a device-to-host copy of a few bytes plus a stream
synchronisation over PCIe.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from jaxqueens import _lazy
from jaxqueens.parallel.sizing import MEMORY_FRACTION, Target

jax = _lazy.load("jax")

FOLDER = Path(__file__).resolve().parent / "gpu_descriptions"
LAUNCH_S = 3e-6
"""Assumed device time per kernel launch (see the module docstring)."""
SYNC_S = 10e-6
"""Assumed cost of one host-evaluated loop condition or branch predicate (see above)."""
NAMES = ("h100", "a100", "rtx4090")


@dataclasses.dataclass(frozen=True)
class Description:
    """One described GPU: its target config text and the facts the sizing and the model use."""

    key: str  # file stem: "h100"
    name: str  # device_description_str
    text: str  # the GpuTargetConfig text proto
    compute_capability: tuple[int, int]
    sms: int  # core_count
    threads_per_sm: int  # threads_per_core_limit (resident threads per SM)
    memory_bytes: int  # device_memory_size
    bandwidth: float  # memory_bandwidth, bytes/s
    launch_s: float = LAUNCH_S
    sync_s: float = SYNC_S

    @property
    def parallelism(self) -> int:
        """Threads the device keeps resident: the lanes that fill it."""
        return self.sms * self.threads_per_sm

    @property
    def target(self) -> Target:
        """The sizing target: memory x :data:`~jaxqueens.parallel.sizing.MEMORY_FRACTION`."""
        return Target(int(self.memory_bytes * MEMORY_FRACTION), self.parallelism, self.name)

    @property
    def arch(self) -> str:
        """ptxas's architecture name: ``sm_90a`` (XLA targets the ``a`` variant on 9.0)."""
        major, minor = self.compute_capability
        return f"sm_{major}{minor}{'a' if major >= 9 else ''}"


def _field(text: str, name: str) -> str:
    found = re.search(rf"\b{name}\s*:\s*\"?([^\"\s}}]+)", text)
    if found is None:
        raise ValueError(f"the GPU description has no {name}")
    return found.group(1)


def parse(text: str, key: str = "") -> Description:
    """A :class:`Description` from a ``GpuTargetConfig`` text proto."""
    cc = re.search(r"cuda_compute_capability\s*{\s*major:\s*(\d+)\s+minor:\s*(\d+)", text)
    if cc is None:
        raise ValueError("the GPU description has no cuda_compute_capability")
    name = re.search(r'device_description_str:\s*"([^"]*)"', text)
    return Description(
        key=key,
        name=name.group(1) if name else key,
        text=text,
        compute_capability=(int(cc.group(1)), int(cc.group(2))),
        sms=int(_field(text, "core_count")),
        threads_per_sm=int(_field(text, "threads_per_core_limit")),
        memory_bytes=int(_field(text, "device_memory_size")),
        bandwidth=float(_field(text, "memory_bandwidth")),
    )


def load(key: str) -> Description:
    """The description ``gpu_descriptions/<key>.txtpb`` (``h100``, ``a100``, ``rtx4090``)."""
    return parse((FOLDER / f"{key}.txtpb").read_text(), key)


def placement(desc: Description):
    """A sharding that puts an argument on the described device, for a deviceless compile.

    Needs the CUDA plugin (``jax-cuda12-plugin``) and ``JAX_PLATFORMS=cpu`` set before JAX
    started (``shared/gpu/README.md``); arguments are ``jax.ShapeDtypeStruct(..., sharding=)``.
    """
    from jax.experimental import topologies  # third-party, needed by the GPU check only

    topo = topologies.get_topology_desc(platform="cuda", target_config=desc.text, topology="1x1x1")
    mesh = topologies.make_mesh(topo, (1,), ("x",))
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())
