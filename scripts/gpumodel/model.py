"""Described NVIDIA GPUs (hardware facts, deviceless compilation) and the thread kernels' model.

Each description in `descriptions/` is an XLA `GpuTargetConfig` text proto of public spec-sheet
figures (H100 SXM 80 GB, A100 SXM 80 GB, GeForce RTX 4090; `docs/gpu.md`): with the CUDA plugin
installed, XLA compiles a jitted function for that device on a machine with no GPU (HLO -> PTX ->
ptxas -> cubin), which `make gpu-check` (`scripts/gpu_check.py`) does for every executable the
package runs on a GPU. `predict_threads` prices the hot loop of a one-search-per-thread kernel
from its SASS, the device's integer rate, clock and occupancy. PREDICTED, NOT MEASURED.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import NamedTuple

import jax
from jax.experimental import topologies

from jaxqueens.parallel.sizing import MEMORY_FRACTION, Target

FOLDER = Path(__file__).resolve().parent / "descriptions"
# Two figures are not in a spec sheet and are assumed, the same on every device. LAUNCH_S: the
# device time one kernel launch costs back to back on a stream (NVIDIA's "Getting Started with
# CUDA Graphs" blog, 2019: ~3.8 us per short kernel launched on a stream, ~3.4 us inside a graph).
# SYNC_S: the round trip of a host-evaluated loop condition or branch predicate (XLA:GPU copies
# the predicate to the host and waits for the stream before the next iteration: `WhileThunk` /
# `ConditionalThunk`, `kWhile` / `kConditional` in the thunk sequence; on-device loops via CUDA
# graph conditional nodes are openxla/xla#6973): a device-to-host copy of a few bytes plus a
# stream synchronisation over PCIe, taken as 10 us.
LAUNCH_S = 3e-6
SYNC_S = 10e-6
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
    clock_ghz: float = 1.5  # clock_rate_ghz (boost clock): the thread kernels' model
    shared_per_sm: int = 102400  # shared_memory_per_core, bytes

    @property
    def parallelism(self) -> int:
        """Threads the device keeps resident: the lanes that fill it."""
        return self.sms * self.threads_per_sm

    @property
    def target(self) -> Target:
        """The sizing target: memory x `jaxqueens.parallel.sizing.MEMORY_FRACTION`."""
        return Target(int(self.memory_bytes * MEMORY_FRACTION), self.parallelism, self.name)

    @property
    def arch(self) -> str:
        """ptxas's architecture name: `sm_90a` (XLA targets the `a` variant on 9.0)."""
        major, minor = self.compute_capability
        return f"sm_{major}{minor}{'a' if major >= 9 else ''}"


def _field(text: str, name: str) -> str:
    found = re.search(rf"\b{name}\s*:\s*\"?([^\"\s}}]+)", text)
    if found is None:
        raise ValueError(f"the GPU description has no {name}")
    return found.group(1)


def parse(text: str, key: str = "") -> Description:
    """A `Description` from a `GpuTargetConfig` text proto."""
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
        clock_ghz=float(_field(text, "clock_rate_ghz")),
        shared_per_sm=int(_field(text, "shared_memory_per_core")),
    )


def load(key: str) -> Description:
    """The description `descriptions/<key>.txtpb` (`h100`, `a100`, `rtx4090`)."""
    return parse((FOLDER / f"{key}.txtpb").read_text(), key)


def placement(desc: Description):
    """A sharding that puts an argument on the described device, for a deviceless compile.

    Needs the CUDA plugin (`jax-cuda12-plugin`) and `JAX_PLATFORMS=cpu` set before JAX
    started (`shared/gpu/README.md`); arguments are `jax.ShapeDtypeStruct(..., sharding=)`.
    """
    topo = topologies.get_topology_desc(platform="cuda", target_config=desc.text, topology="1x1x1")
    mesh = topologies.make_mesh(topo, (1,), ("x",))
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())


# --- one search per thread (jaxqueens.parallel.threads): a model from the compiled loop ---------
#
# Per compute capability, from NVIDIA's CUDA C++ Programming Guide ("Compute Capabilities":
# resident blocks, warps and registers per SM; "Arithmetic Instructions": 64 results per clock
# and SM for 32-bit integer add, compare, logic, shift and multiply-add on 8.x and 9.0, 16 for
# conversions). ALU: the integer pipe (LOP3, SEL, ISETP, SHF, IADD3, ...); FMA: the pipe of
# IMAD and its moves, which ptxas uses to offload the ALU; each at 64 lanes a clock and SM,
# and 4 warp instructions issued a clock and SM in all.
SM_LIMITS = {  # (major, minor): (blocks, warps, registers) resident per SM
    (8, 0): (32, 64, 65536),
    (8, 6): (16, 48, 65536),
    (8, 9): (24, 48, 65536),
    (9, 0): (32, 64, 65536),
}
LANES_PER_CLOCK = 64  # integer results per clock and SM on either pipe (8.x, 9.0)
ISSUE_PER_CLOCK = 4  # warp instructions issued per clock and SM (4 schedulers)
HIDING_WARPS = 16  # resident warps an SM needs to issue every cycle (4 a scheduler), assumed
FMA_OPS = ("IMAD", "VIADD", "IADD", "FFMA", "FMUL", "FADD")  # SASS on the FMA pipe (VIADD: sm_90)
OTHER_PIPES = ("LD", "ST", "BRA", "U", "EXIT", "BAR", "RED", "ATOM", "NOP")  # not the ALU (SASS)
QUARTER_RATE = ("I2F", "F2I", "I2FP", "F2FP", "cvt", "POPC", "popc", "FLO", "BREV")  # 16 a clock
SHARED_OPS = ("LDS", "STS", "ld.shared", "st.shared")  # 128 bytes a clock and SM


def loop_body(text: str) -> list[str]:
    """The opcodes of the hottest loop of a kernel's PTX or SASS (`nvdisasm`) listing: the
    body of the innermost backward branch with the most instructions (its own branch
    included)."""
    lines = [ln.strip() for ln in text.splitlines()]
    labels: dict[str, int] = {}  # label -> index of the next instruction
    ops: list[str] = []  # opcode per instruction
    branches = []  # (index of the branch, its target label)
    for ln in lines:
        if m := re.match(r"^(\$?\.?L\w*):", ln):
            labels[m.group(1)] = len(ops)
            continue
        ln = re.sub(r"^/\*[0-9a-f]+\*/\s*", "", ln)
        if not ln or ln.startswith(("//", ".", "{", "}", "/*")) or ln.endswith(":"):
            continue
        ln = re.sub(r"^@!?%?\w+\s+", "", ln)  # a predicate
        op = ln.split()[0].rstrip(";")
        if m := re.search(r"\b(?:bra|BRA)\S*\s+`?\(?(\$?\.?L\w+)", ln):
            branches.append((len(ops), m.group(1)))
        ops.append(op)
    loops = [(labels[t], i) for i, t in branches if t in labels and labels[t] <= i]
    inner = [a for a in loops if not any(b != a and a[0] <= b[0] and b[1] <= a[1] for b in loops)]
    if not inner:
        return []
    start, end = max(inner, key=lambda a: a[1] - a[0])
    return ops[start : end + 1]


class ThreadPrediction(NamedTuple):
    """The model's figures for a thread kernel's hot loop on one device (all predicted)."""

    instructions: float  # warp instructions per search step (the loop body / steps it holds)
    alu: float  # of which on the integer ALU pipe
    fma: float  # of which on the FMA pipe (0 when only PTX was read: every op counts as ALU)
    conversions: float  # of which at a quarter of the ALU's rate (conversions, popc)
    shared: float  # shared-memory accesses (32-bit words a lane)
    cycles_per_step: float  # SM clocks per warp step: max(ALU, FMA, issue, shared memory)
    warps_per_sm: int  # resident warps (blocks, warps and registers per SM)
    efficiency: float  # issue share the resident warps sustain (HIDING_WARPS)
    lane_steps_per_s: float  # search steps per second over the whole device


def occupancy(desc: Description, registers: int, warps_per_block: int, shared: int = 0) -> int:
    """Resident warps per SM of a kernel using `registers` per thread (allocated in units of
    8, whole warps per block) and `shared` bytes of shared memory per block."""
    blocks, warps, regs = SM_LIMITS.get(desc.compute_capability, (16, 48, 65536))
    per_warp = 32 * -(-max(registers, 1) // 8) * 8
    by_regs = (regs // per_warp) // warps_per_block * warps_per_block
    if shared:
        blocks = min(blocks, desc.shared_per_sm // shared)
    return max(0, min(blocks * warps_per_block, warps, by_regs))


def predict_threads(
    desc: Description,
    body: list[str],
    steps: int,
    registers: int,
    warps_per_block: int,
    sass: bool,
    shared: int = 0,
) -> ThreadPrediction:
    """Search steps per second of a thread kernel whose hot loop (`body`: opcodes from
    `loop_body`) takes `steps` search steps per pass, from the device's integer rate,
    clock and occupancy. From PTX (`sass=False`) every instruction counts on the ALU pipe (an
    upper bound on the time); from SASS the FMA pipe's share runs beside it. `shared`: bytes
    of shared memory per block (occupancy)."""
    per = 1.0 / max(steps, 1)
    conv = sum(op.startswith(QUARTER_RATE) for op in body) * per
    words = {".128": 4, ".v4": 4, ".64": 2, ".v2": 2}
    accesses = sum(
        next((w for k, w in words.items() if k in op), 1)
        for op in body
        if op.startswith(SHARED_OPS)
    )
    smem = accesses * per
    fma = sum(op.startswith(FMA_OPS) for op in body) * per if sass else 0.0
    total = len(body) * per
    other = sum(op.startswith(OTHER_PIPES) for op in body) * per if sass else 0.0
    alu = total - fma - other
    rate = LANES_PER_CLOCK / 32  # warp instructions per clock and SM on one pipe
    # a conversion takes 4 of the ALU's slots (16 a clock and SM)
    # a warp's 32-bit shared access moves 128 bytes: one clock of the SM's shared bandwidth
    cycles = max((alu + 3 * conv) / rate, fma / rate, total / ISSUE_PER_CLOCK, smem)
    warps = occupancy(desc, registers, warps_per_block, shared)
    eff = min(1.0, warps / HIDING_WARPS)
    clock = desc.clock_ghz * 1e9
    lane_rate = desc.sms * clock * eff * 32 / cycles if cycles else 0.0
    return ThreadPrediction(total, alu, fma, conv, smem, cycles, warps, eff, lane_rate)
