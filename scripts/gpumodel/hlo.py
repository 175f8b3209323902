"""A model of GPU time from a compiled program: kernels, host syncs and bytes per loop iteration.

PREDICTED, NOT MEASURED. It reads the optimised GPU HLO (`compiled.as_text()`) and prices one
iteration of the hot loop. Kernels: every instruction of a control computation (entry, while body
or condition, conditional branch, `call`) that is not bookkeeping launches a kernel or a copy.
Syncs: XLA:GPU evaluates a while condition and a conditional's predicate on the host (a copy and
a stream wait per iteration) unless the thunk sequence shows the loop in a CUDA graph
(`host_control`). Bytes: each kernel's operands and results, a slice read or an update written
in place counted as such. Nested loops multiply by their trip count (XLA's `known_trip_count`,
else the caller's `inner_trips`); a conditional counts its costliest branch (an upper bound).
One iteration takes `max(kernels x launch + syncs x sync, bytes / bandwidth)`, the bandwidth
scaled by the share of the device the batch fills; turning that into a rate is the caller's.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import NamedTuple

DTYPE_BYTES = {
    "pred": 1,
    "s8": 1,
    "u8": 1,
    "s4": 1,
    "u4": 1,
    "f8e4m3fn": 1,
    "f8e5m2": 1,
    "s16": 2,
    "u16": 2,
    "f16": 2,
    "bf16": 2,
    "s32": 4,
    "u32": 4,
    "f32": 4,
    "s64": 8,
    "u64": 8,
    "f64": 8,
    "c64": 8,
    "c128": 16,
}
BOOKKEEPING = frozenset(
    {
        "parameter",
        "constant",
        "tuple",
        "get-tuple-element",
        "bitcast",
        "after-all",
        "add-dependency",
        "opt-barrier",
        "partition-id",
        "replica-id",
        "domain",
    }
)
CONTROL = frozenset({"while", "conditional", "call"})
_ARRAY = re.compile(r"\b([a-z]+[0-9]*[a-z0-9]*)\[([0-9,]*)\]")
_HEADER = re.compile(r"^(ENTRY\s+)?%?([\w.\-]+)\s*\(.*\)\s*->\s*.*\{\s*$")


class Instruction(NamedTuple):
    name: str
    type: str  # the result type text: "s32[4096,158]{1,0}" or a tuple "(s32[], pred[8])"
    opcode: str
    operands: tuple[str, ...]  # operand names (without %)
    attrs: str  # the text after the operand list
    root: bool
    number: int | None = None  # a parameter's number


@dataclasses.dataclass
class Module:
    """A parsed HLO module: computations by name, each a list of instructions, and the entry."""

    computations: dict[str, list[Instruction]]
    entry: str

    def table(self, comp: str) -> dict[str, Instruction]:
        return {i.name: i for i in self.computations[comp]}


def type_bytes(text: str) -> int:
    """Bytes of an HLO type (arrays summed over a tuple; `token[]` is 0)."""
    total = 0
    for dtype, dims in _ARRAY.findall(text):
        if dtype not in DTYPE_BYTES:
            continue
        total += DTYPE_BYTES[dtype] * math.prod(int(d) for d in dims.split(",") if d)
    return total


def _closing(text: str, start: int) -> int:
    """Index of the bracket closing the one at `start`."""
    depth = 0
    pairs = {"(": ")", "{": "}", "[": "]"}
    open_ = text[start]
    for k in range(start, len(text)):
        c = text[k]
        if c == open_:
            depth += 1
        elif c == pairs[open_]:
            depth -= 1
            if depth == 0:
                return k
    raise ValueError(f"unbalanced {open_!r} in HLO: {text[start : start + 80]!r}")


def _instruction(line: str) -> Instruction | None:
    body = line.strip()
    root = body.startswith("ROOT ")
    if root:
        body = body[5:]
    if not body.startswith("%") or " = " not in body:
        return None
    name, rest = body[1:].split(" = ", 1)
    rest = re.sub(r"/\*.*?\*/", "", rest)
    if rest.startswith("("):
        end = _closing(rest, 0)
        type_, rest = rest[: end + 1], rest[end + 1 :].lstrip()
    else:
        type_, _, rest = rest.partition(" ")
    match = re.match(r"([a-z][\w\-]*)\(", rest)
    if match is None:
        return None
    opcode = match.group(1)
    end = _closing(rest, match.end() - 1)
    args = rest[match.end() : end]
    operands = tuple(re.findall(r"%([\w.\-]+)", args))
    index = int(args) if opcode == "parameter" and args.strip().isdigit() else None
    return Instruction(name, type_, opcode, operands, rest[end + 1 :], root, index)


def parse(text: str) -> Module:
    """Computations of an HLO module's text (`compiled.as_text()`)."""
    comps: dict[str, list[Instruction]] = {}
    entry, current = "", None
    for line in text.splitlines():
        if current is None:
            head = _HEADER.match(line.strip())
            if head:
                current = head.group(2)
                comps[current] = []
                if head.group(1):
                    entry = current
            continue
        if line.strip() == "}":
            current = None
            continue
        inst = _instruction(line)
        if inst is not None:
            comps[current].append(inst)
    if not entry:
        raise ValueError("no ENTRY computation in the HLO text")
    return Module(comps, entry)


def _attr(attrs: str, key: str) -> str | None:
    found = re.search(rf"\b{key}=%?([\w.\-]+)", attrs)
    return found.group(1) if found else None


def _branches(attrs: str) -> list[str]:
    found = re.search(r"branch_computations=\{([^}]*)\}", attrs)
    if found:
        return re.findall(r"%?([\w.\-]+)", found.group(1))
    return [b for b in (_attr(attrs, "true_computation"), _attr(attrs, "false_computation")) if b]


def trip_count(inst: Instruction) -> int | None:
    """XLA's known trip count of a while loop, or None."""
    found = re.search(r'"known_trip_count"\s*:\s*\{\s*"n"\s*:\s*"(\d+)"', inst.attrs)
    return int(found.group(1)) if found else None


def _fusion_bytes(module: Module, inst: Instruction, table: dict[str, Instruction]) -> int:
    """Bytes one kernel reads and writes (see the module docstring)."""
    operand_bytes = [type_bytes(table[o].type) if o in table else 0 for o in inst.operands]
    written = type_bytes(inst.type)
    called = _attr(inst.attrs, "calls")
    if inst.opcode != "fusion" or called not in module.computations:
        return sum(operand_bytes) + written
    fused = module.computations[called]
    ftable = {i.name: i for i in fused}
    users: dict[str, list[tuple[Instruction, int]]] = {}
    for i in fused:
        for pos, o in enumerate(i.operands):
            users.setdefault(o, []).append((i, pos))
    read = 0
    for p in fused:
        if p.opcode != "parameter" or p.number is None or p.number >= len(operand_bytes):
            continue
        uses = users.get(p.name, [])
        partial = bool(uses) and all(
            pos == 0 and u.opcode in ("dynamic-slice", "gather", "dynamic-update-slice", "scatter")
            for u, pos in uses
        )
        if not partial:
            read += operand_bytes[p.number]
            continue
        for u, _ in uses:
            if u.opcode in ("dynamic-slice", "gather"):
                read += type_bytes(u.type)
                continue
            update = u.operands[1] if u.opcode == "dynamic-update-slice" else u.operands[-1]
            ub = type_bytes(ftable[update].type) if update in ftable else 0
            if u.opcode == "scatter":  # a combining scatter reads the slots it updates
                read += ub
            written -= type_bytes(u.type) - ub  # in place: only the update is written
    return read + max(written, 0)


@dataclasses.dataclass
class Cost:
    """What some work launches: kernels, host syncs and bytes moved."""

    kernels: float = 0.0
    syncs: float = 0.0
    bytes: float = 0.0

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.kernels + other.kernels, self.syncs + other.syncs, self.bytes + other.bytes
        )

    def __mul__(self, k: float) -> Cost:
        return Cost(self.kernels * k, self.syncs * k, self.bytes * k)

    def seconds(self, launch_s: float, sync_s: float, bandwidth: float) -> float:
        """`max(kernels x launch + syncs x sync, bytes / bandwidth)`."""
        return max(self.kernels * launch_s + self.syncs * sync_s, self.bytes / bandwidth)


def computation_cost(
    module: Module,
    comp: str,
    inner_trips: float = 1.0,
    host_sync: bool = True,
    branch_share: float = 1.0,
) -> Cost:
    """Kernels, syncs and bytes of running computation `comp` once (nested loops expanded:
    known trip counts, else `inner_trips` iterations; a conditional costs its cheapest branch
    plus `branch_share` of the difference to its costliest: 1, the default, is the upper
    bound; a caller who knows how often the costly branch runs says so)."""
    table = module.table(comp)
    cost = Cost()
    for inst in module.computations[comp]:
        if inst.opcode in BOOKKEEPING:
            continue
        if inst.opcode == "while":
            trips = trip_count(inst)
            cost += loop_iteration(module, inst, inner_trips, host_sync, branch_share) * (
                inner_trips if trips is None else trips
            )
        elif inst.opcode == "conditional":
            branches = [
                computation_cost(module, b, inner_trips, host_sync, branch_share)
                for b in _branches(inst.attrs)
            ]
            key = lambda c: (c.kernels * 3e-6 + c.syncs * 1e-5, c.bytes)
            worst = max(branches, key=key, default=Cost())
            least = min(branches, key=key, default=Cost())
            share = min(max(branch_share, 0.0), 1.0)
            cost += least * (1 - share) + worst * share + Cost(syncs=1.0 if host_sync else 0.0)
        elif inst.opcode == "call":
            target = _attr(inst.attrs, "to_apply")
            if target in module.computations:
                cost += computation_cost(module, target, inner_trips, host_sync, branch_share)
        else:
            cost += Cost(kernels=1.0, bytes=float(_fusion_bytes(module, inst, table)))
    return cost


def loop_iteration(
    module: Module,
    loop: Instruction,
    inner_trips: float = 1.0,
    host_sync: bool = True,
    branch_share: float = 1.0,
) -> Cost:
    """One iteration of while loop `loop`: its condition, its body and (host-evaluated
    condition) one sync."""
    body, cond = _attr(loop.attrs, "body"), _attr(loop.attrs, "condition")
    if body is None or cond is None:
        raise ValueError(f"{loop.name} is not a while loop (no body or condition)")
    cost = computation_cost(module, body, inner_trips, host_sync, branch_share)
    cost += computation_cost(module, cond, inner_trips, host_sync, branch_share)
    return cost + Cost(syncs=1.0 if host_sync else 0.0)


def hot_loop(module: Module) -> Instruction | None:
    """The entry's main loop: the top-level while with an unknown trip count and the most
    kernels per iteration (a loop of known trip count only when there is no other), or None."""
    loops = [i for i in module.computations[module.entry] if i.opcode == "while"]
    if not loops:
        return None

    def rank(loop):
        return (trip_count(loop) is None, loop_iteration(module, loop).kernels)

    return max(loops, key=rank)


def host_control(thunks: str | None) -> bool:
    """Whether the compiled program evaluates loop conditions on the host: its thunk sequence
    (the `*.thunk_sequence_after_thunk_passes.txt` of an XLA dump) has `kWhile` or
    `kConditional` thunks (None: not known, taken as True, XLA:GPU's default)."""
    return True if thunks is None else bool(re.search(r"\bk(While|Conditional)\b", thunks))


class Prediction(NamedTuple):
    """The model's figures for one iteration of an executable's hot loop (PREDICTED)."""

    kernels: float  # kernel and copy launches per iteration
    syncs: float  # host round trips per iteration
    bytes: float  # bytes read and written per iteration
    launch_s: float  # kernels x launch + syncs x sync
    memory_s: float  # bytes / effective bandwidth
    seconds: float  # the larger: predicted time per iteration
    bound: str  # "launch" or "memory"
    trip_known: int | None  # the loop's known trip count (a scan), or None


def predict(
    text: str,
    *,
    launch_s: float,
    sync_s: float,
    bandwidth: float,
    fill: float = 1.0,
    inner_trips: float = 1.0,
    branch_share: float = 1.0,
    thunks: str | None = None,
) -> Prediction | None:
    """Predicted time of one iteration of the hot loop of HLO `text` (None: no loop).

    Args:
      launch_s, sync_s, bandwidth: the device's assumed launch and sync costs, bytes/s.
      fill: share of the device the batch fills (0..1]; the bandwidth is scaled by it.
      inner_trips: iterations assumed for nested loops of unknown trip count.
      branch_share: share of iterations in which a conditional takes its costly branch.
      thunks: the dump's thunk sequence (`host_control`).
    """
    module = parse(text)
    loop = hot_loop(module)
    if loop is None:
        return None
    cost = loop_iteration(module, loop, inner_trips, host_control(thunks), branch_share)
    launch = cost.kernels * launch_s + cost.syncs * sync_s
    memory = cost.bytes / (bandwidth * max(min(fill, 1.0), 1e-9))
    return Prediction(
        cost.kernels,
        cost.syncs,
        cost.bytes,
        launch,
        memory,
        max(launch, memory),
        "launch" if launch >= memory else "memory",
        trip_count(loop),
    )


_PTXAS_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_PTXAS_SPILL = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
_PTXAS_REGS = re.compile(r"Used (\d+) registers")


class KernelResources(NamedTuple):
    name: str
    registers: int
    spill_stores: int
    spill_loads: int


def ptxas_resources(log: str) -> list[KernelResources]:
    """Per kernel registers and spill bytes from `ptxas -v` output."""
    out, name, spill = [], None, (0, 0)
    for line in log.splitlines():
        if m := _PTXAS_ENTRY.search(line):
            name, spill = m.group(1), (0, 0)
        elif m := _PTXAS_SPILL.search(line):
            spill = (int(m.group(1)), int(m.group(2)))
        elif (m := _PTXAS_REGS.search(line)) and name is not None:
            out.append(KernelResources(name, int(m.group(1)), *spill))
            name = None
    return out
