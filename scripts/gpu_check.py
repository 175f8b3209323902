"""GPU compile check (`make gpu-check`): every executable the package runs on a GPU, compiled
for described NVIDIA GPUs on a machine without one, within memory at the sizes the package
chooses, and the speed a user would see PREDICTED from the compiled program (not measured).

For each device of `scripts/gpumodel/descriptions` and each executable of
`gpumodel.workloads.executables`: the batch is chosen by
`jaxqueens.parallel.sizing.choose` against the device's memory x 0.75 and its parallelism
(or, for a batch that is the user's, checked), the executable is compiled for the device
(deviceless: HLO -> PTX -> ptxas -> cubin), and recorded: compiled or the error, argument +
output + temporary bytes, compile seconds, the model's figures per hot-loop iteration
(`gpumodel.hlo`: kernels, host syncs, bytes, predicted seconds), and
ptxas's registers and spills (`ptxas -v` over the PTX XLA dumped, the same ptxas XLA used).
Throughputs a user would see are predicted from trip counts measured here on the CPU with the
same kernels: min-conflicts steps per chain, tree edges of the count (extrapolated to n = 20,
21), generations of the GA, nodes per `complete` instance (from the CPU benchmark).

A compile error or an executable over the budget prints one line naming it and the device, and
the check exits 1. Results: `benchmarks/results/gpu-compile.json` (`records`) and the table
`benchmarks/results/gpu-compile.md`.

Run it in the GPU venv (`.venv-gpu`: jax, jax-cuda12-plugin, jax-cuda12-pjrt at the project's
jax version, nvidia-cuda-nvcc-cu12); it sets `JAX_PLATFORMS=cpu` before JAX starts (the plugin
otherwise fails without a GPU).

Usage: python scripts/gpu_check.py [--devices h100,a100,rtx4090] [--families solve,count,...]
       [--out benchmarks/results/gpu-compile.json] [--no-measure] [--merge]

`--families count` also checks the thread kernel (`jaxqueens.parallel.threads`: one search
per GPU thread) at n = 16..24: registers, spills, shared memory, its hot loop's instructions (PTX,
and SASS where `nvdisasm` is installed: `pip install nvidia-cuda-nvdisasm` in the GPU venv, or
`NVDISASM=path`), occupancy and the predicted count seconds; and the thread kernel of
`complete` and the torus (`threads_complete`): decide at n = 18..21 (instances/s), count at
n = 19, the torus at n = 13, 17, 19 (seconds). `--families threads` checks the thread kernels
alone (with the trip counts they need: the count's tree edges, the kernels' own steps, not
min-conflicts'); `--merge` keeps the other records of an earlier full run.
"""

from __future__ import annotations

import os
import tempfile

os.environ["JAX_PLATFORMS"] = "cpu"  # before JAX starts: the CUDA plugin registers without a GPU
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ["JAXQUEENS_CACHE_DIR"] = ""  # compile every time: the compile times are the check's
DUMP = tempfile.mkdtemp(prefix="jaxqueens-gpu-check-")
os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} --xla_dump_to={DUMP}".strip()

import argparse  # noqa: E402
import glob  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import ClassVar  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402
from gpumodel import hlo, model, workloads  # noqa: E402  (this folder: scripts/gpumodel)

import jaxqueens  # noqa: E402  (package settings before any JAX op)
from jaxqueens.io.atomic import write_text  # noqa: E402
from jaxqueens.parallel import complete as complete_batch  # noqa: E402
from jaxqueens.parallel import sizing, threads, threads_complete  # noqa: E402
from jaxqueens.parallel.count import TASKS_PER_LANE  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
LABEL = "predicted from the compiled program, not measured"
ANCHORS = [
    {
        "what": "count -n 20",
        "seconds": 4.14,
        "device": "H800",
        "source": "ygch/n_queens (CUDA counter), measured by its author",
    },
    {
        "what": "count -n 21",
        "seconds": 29.2,
        "device": "H800",
        "source": "ygch/n_queens (CUDA counter), measured by its author",
    },
    {
        "what": "count -n 20",
        "seconds": 5.85,
        "device": "RTX 3080",
        "source": "NQueensFAF OpenCL kernel, measured by its authors",
    },
]


# --------------------------------------------------------------- trip counts, measured on the CPU


def measure_steps(ns=(8, 32, 100, 1000), chains=(2000, 1000, 500, 100)) -> dict:
    """Mean min-conflicts steps per solved chain (package defaults, init=permutation), CPU."""
    out = {}
    for n, c in zip(ns, chains, strict=True):
        r = jaxqueens.solve(n, chains=c, seed=1)
        out[n] = float(np.mean(r.run.steps))
    return out


def measure_edges(ns=range(12, 17)) -> dict:
    """Tree edges the count kernel walks at n (the driver's own plan, tasks and kernel,
    `jaxqueens.parallel.count.count_items`), on the CPU: its work output is edges taken."""
    from jaxqueens.drivers import count_chunks
    from jaxqueens.parallel import count as batched
    from jaxqueens.solvers import count as solver

    out = {}
    for n in ns:
        plan = count_chunks.make_plan(n, None, None)
        batch = plan.items(np.arange(len(plan.tasks)))
        states, work = batched.count_items(
            batch, np.int32(solver.MAX_BUDGET), plan.config, 1, sizing.CPU_SIZES
        )
        if (np.asarray(states)[:, 0].view(np.int32) >= 0).any():  # word 0: d, -1 once searched
            raise RuntimeError(f"n = {n}: the edge count did not finish in one call")
        out[n] = int(np.asarray(work, np.int64).sum())
    return out


def fit_log_quadratic(xs: dict, at) -> dict:
    """log(y) = a + b n + c n^2 by least squares over `xs`; the fit evaluated at `at`."""
    n = np.array(sorted(xs), float)
    y = np.log([xs[k] for k in sorted(xs)])
    coef = np.polyfit(n, y, 2)
    return {k: float(np.exp(np.polyval(coef, k))) for k in at}


def complete_nodes() -> dict:
    """Tree nodes per instance of `complete` (decide, prob079 at the SAT/UNSAT transition),
    from the CPU benchmark (`benchmarks/results/complete-cpu.json`), n = 12..18."""
    path = RESULTS / "complete-cpu.json"
    if not path.exists():
        return {}
    rows = json.loads(path.read_text())["rows"]
    return {r["n"]: r["jq_nodes"] / r["instances"] for r in rows if r["set"] == "transition"}


# --------------------------------------------------------------- compiling and reading the dump


class Tracked:
    """A builder's lowering whose `compile()` notes which dump module it wrote."""

    modules: ClassVar[dict] = {}

    def __init__(self, lowered, batch: int):
        self.lowered, self.batch = lowered, batch

    def compile(self):
        before = set(glob.glob(f"{DUMP}/module_*.thunk_sequence_after_thunk_passes.txt"))
        t0 = time.perf_counter()
        compiled = self.lowered.compile()
        Tracked.seconds += time.perf_counter() - t0
        new = set(glob.glob(f"{DUMP}/module_*.thunk_sequence_after_thunk_passes.txt")) - before
        Tracked.modules[self.batch] = sorted(new)[-1].split(".", 1)[0] if new else None
        return compiled

    seconds = 0.0


def ptxas_log(prefix: str, arch: str) -> str:
    ptx = sorted(glob.glob(f"{prefix}.*.ptx"))
    if not ptx:
        return ""
    ptxas = shutil.which("ptxas") or next(
        iter(glob.glob(f"{sys.prefix}/lib/python3*/site-packages/nvidia/cuda_nvcc/bin/ptxas")),
        None,
    )
    if ptxas is None:
        return ""
    out = subprocess.run(
        [ptxas, "-v", f"-arch={arch}", *ptx, "-o", os.devnull],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout + out.stderr


def clean_dump() -> None:
    for f in glob.glob(f"{DUMP}/*"):
        if os.path.isdir(f):
            shutil.rmtree(f, ignore_errors=True)
        else:
            os.remove(f)


# --------------------------------------------------------------- the model's rates


def steps_per_chain(n: int, trips: dict) -> float:
    """Min-conflicts steps per chain at n: measured (init=permutation) or, where not, 0.6 n
    (`solvers/variants.py`: about 0.5-0.66 n from a random board), at least 60."""
    return trips["steps"].get(n) or max(60.0, 0.6 * n)


def loop_figures(ex, batch: int, trips: dict) -> tuple[float, float]:
    """(iterations of a nested loop of unknown trip count, share of hot-loop iterations whose
    conditionals take their costly branch) for the model, by workload (stated rules):

    - chains: the pick loop of min-conflicts (`pick_tries` 16 from n = 13) runs vmapped until
      its slowest lane is done: 16; restart/refill branches run once per `lanes / REFILL_SHARE`
      finished or restarting lanes (`parallel.lanes.gate`): share = REFILL_SHARE / steps per
      chain (an annealing chain runs its 10,000 steps);
    - count and complete: a lane takes a new task every (edges per task) iterations;
    - everything else: 1 and 1 (the costly branch every iteration, an upper bound).
    """
    from jaxqueens.parallel.lanes import REFILL_SHARE

    w, n = ex.workload, ex.n
    if w == "solve":
        return (16.0 if n > 12 else 1.0), min(1.0, REFILL_SHARE / steps_per_chain(n, trips))
    if w == "anneal":
        return 1.0, min(1.0, REFILL_SHARE / 10_000)
    if w in ("count", "count --unique") and trips["edges"].get(n):
        per_task = trips["edges"][n] / (TASKS_PER_LANE * batch)
        return 1.0, min(1.0, REFILL_SHARE / max(per_task, 1.0))
    if w == "complete" and trips["nodes"].get(n):
        return 1.0, min(1.0, REFILL_SHARE / trips["nodes"][n])
    return 1.0, 1.0


def rates(rec: dict, pred: hlo.Prediction | None, trips: dict) -> dict:
    """What a user would see, from the predicted time of one hot-loop iteration."""
    if pred is None:
        return {}
    t, w, n, batch = pred.seconds, rec["workload"], rec["n"], rec["batch"]
    out = {"seconds_per_iteration": t}
    if w in ("solve", "anneal"):
        out["lane_steps_per_s"] = batch / t
        steps = trips["steps"].get(n) if rec["variant"] == "init=permutation" else None
        if w == "solve" and steps:
            out["steps_per_chain_cpu"] = steps
            out["chains_per_s"] = batch / (steps * t)
    elif w in ("count", "count --unique"):
        out["edges_per_s"] = batch / t
        edges = trips["edges"].get(n)
        if edges:
            out["tree_edges"] = edges
            out["count_seconds"] = edges / out["edges_per_s"]
    elif w == "complete":
        out["edges_per_s"] = batch / t
        nodes = trips["nodes"].get(n)
        if nodes and rec["variant"] == "decide":
            out["nodes_per_instance"] = nodes
            out["instances_per_s"] = batch / (t * nodes)
    elif w == "evolve":
        # individuals made and evaluated per generation: the steady scheme's two children, the
        # generational scheme's whole offspring population
        made = 2 if ",steady," in rec["variant"] else rec["extra"]["individuals"]
        out["generations_per_s"] = 1 / t
        out["individuals_per_s"] = made / t
    elif w == "estimate":
        levels = n - rec["extra"]["depth"]
        out["probes_per_s"] = batch / (t * levels)
    elif w == "solve_large" and rec["variant"] == "init_columns":
        out["init_seconds"] = n * t  # one column per iteration
    elif w == "solve_large":
        out["swap_attempts_per_s"] = 1 / t
    return out


# --------------------------------------------------------------- the thread kernel (Pallas)

THREAD_N = tuple(range(16, 25))
THREAD_WORKLOAD = "count (threads)"
THREADS = "threads"  # --families: the thread kernel alone


def measure_thread_steps(ns=range(12, 16)) -> dict:
    """Search steps of the thread kernel (`jaxqueens.parallel.threads`, interpreted on the
    CPU with its `stats`) at n, with the driver's tasks per lane: busy lane steps, and the
    share of the lanes' steps that are busy (a warp runs until its slowest lane is done)."""
    from jaxqueens.drivers.count import THREAD_TASKS_PER_LANE

    out = {}
    for n in ns:
        plan = threads.tasks(n, 3)
        t = plan.words.shape[1]
        programs = max(1, t // (threads.BLOCK * THREAD_TASKS_PER_LANE))
        got = np.asarray(
            threads.count_tasks(
                jax.numpy.asarray(plan.words), n=n, programs=programs, interpret=True, stats=True
            )
        ).astype(np.int64)
        busy = int(got[3].sum())
        block = int(got[2].reshape(-1, threads.BLOCK)[:, 0].sum()) * threads.BLOCK
        out[n] = {"steps": busy, "efficiency": busy / block, "tasks": t, "programs": programs}
    return out


def thread_steps(trips: dict) -> dict:
    """Steps of the thread kernel per n: measured where measured; else the CPU kernel's tree
    edges (`trips["edges"]`, measured or fitted) times the ratio steps / edges, linear in n
    by least squares over the n where both were measured."""
    measured = {n: v["steps"] for n, v in trips.get("thread", {}).items()}
    both = sorted(n for n in measured if n in trips.get("edges_measured", {}))
    out = dict(measured)
    if len(both) >= 2:
        ratio = np.polyfit(both, [measured[n] / trips["edges_measured"][n] for n in both], 1)
        for n, edges in trips["edges"].items():
            out.setdefault(n, float(edges * np.polyval(ratio, n)))
    return out


def nvdisasm() -> str | None:
    """NVIDIA's disassembler (nvidia-cuda-nvdisasm), if installed: SASS of the cubin."""
    found = shutil.which("nvdisasm") or next(
        iter(glob.glob(f"{sys.prefix}/lib/python3*/site-packages/nvidia/*/bin/nvdisasm")), None
    )
    return found or os.environ.get("NVDISASM")


def _ptxas_bin() -> str | None:
    return shutil.which("ptxas") or next(
        iter(glob.glob(f"{sys.prefix}/lib/python3*/site-packages/nvidia/cuda_nvcc/bin/ptxas")),
        None,
    )


def compile_thread_kernel(desc: model.Description, fn, args, rec: dict, records, failures):
    """Compile a thread kernel (`fn(args)`, jitted) for the device and fill `rec` with its
    memory, ptxas's registers, spills and shared memory and its hot loop's instructions a step
    (PTX; SASS where nvdisasm is installed); the model's `ThreadPrediction`, or None (the
    error recorded in `records` and `failures`). Its PTX: the dumped module with the longest
    innermost loop (the Pallas kernel, beside any XLA fusions)."""
    before = set(glob.glob(f"{DUMP}/*.ptx"))
    t0 = time.perf_counter()
    try:
        compiled = fn.trace(args).lower().compile()
    except Exception as err:
        msg = (str(err).strip().splitlines() or [type(err).__name__])[0][:300]
        failures.append(
            f"gpu-check: {rec['workload']} n={rec['n']} does not compile for {desc.name}: {msg}"
        )
        records.append({**rec, "compiled": False, "error": msg})
        clean_dump()
        return None
    m = compiled.memory_analysis()
    rec.update(
        compiled=True,
        compile_s=round(time.perf_counter() - t0, 3),
        argument_bytes=int(m.argument_size_in_bytes),
        output_bytes=int(m.output_size_in_bytes),
        temp_bytes=int(m.temp_size_in_bytes),
    )
    ptx = [f for f in sorted(set(glob.glob(f"{DUMP}/*.ptx")) - before) if os.path.getsize(f)]
    texts = [Path(f).read_text() for f in ptx]
    pick = max(range(len(ptx)), key=lambda i: len(model.loop_body(texts[i])), default=None)
    text = texts[pick] if pick is not None else ""
    body, sass_body, log = model.loop_body(text), [], ""
    ptxas = _ptxas_bin()
    if pick is not None and ptxas:
        cubin = f"{DUMP}/threads.cubin"
        run = subprocess.run(
            [ptxas, "-v", f"-arch={desc.arch}", ptx[pick], "-o", cubin],
            capture_output=True,
            text=True,
            check=False,
        )
        log = run.stdout + run.stderr
        dis = nvdisasm()
        if dis and os.path.exists(cubin):
            out = subprocess.run([dis, "-c", cubin], capture_output=True, text=True)
            sass_body = model.loop_body(out.stdout)
    res = hlo.ptxas_resources(log)
    regs = max((r.registers for r in res), default=0)
    shared = re.search(r"(\d+) bytes smem", log)
    rec["ptxas"] = {
        "kernels": len(res),
        "max_registers": regs,
        "spilling": [r._asdict() for r in res if r.spill_stores or r.spill_loads],
        "shared_bytes": int(shared.group(1)) if shared else 0,
        "local_memory_ops": sum(op.startswith(("ld.local", "st.local")) for op in body),
    }
    use_sass = bool(sass_body)
    pred = model.predict_threads(
        desc, sass_body or body, threads.UNROLL, regs, threads.NUM_WARPS, sass=use_sass
    )
    rec["loop"] = {
        "ptx_instructions_per_step": len(body) / threads.UNROLL,
        "sass_instructions_per_step": len(sass_body) / threads.UNROLL if use_sass else None,
        "read_from": "SASS" if use_sass else "PTX",
    }
    return pred


def check_threads(desc: model.Description, trips: dict, records: list, failures: list) -> None:
    """The thread kernel compiled for the device at every n of `THREAD_N`, with the lanes
    the driver runs (one warp a block, 32 blocks an SM): registers, spills, shared memory, the
    instructions of its hot loop (PTX; SASS where nvdisasm is installed), occupancy, and the
    model's seconds (`gpumodel.model.predict_threads`)."""
    from jaxqueens.drivers.count import THREAD_TASKS_PER_LANE

    sharding = model.placement(desc)
    programs = max(1, desc.parallelism // (2 * threads.BLOCK))
    lanes = programs * threads.BLOCK
    steps_n = thread_steps(trips)
    eff_n = {n: v["efficiency"] for n, v in trips.get("thread", {}).items()}
    lane_eff = eff_n[max(eff_n)] if eff_n else 1.0  # at the largest n measured
    for n in THREAD_N:
        rec: dict = {
            "device": desc.name,
            "device_key": desc.key,
            "workload": THREAD_WORKLOAD,
            "variant": f"block={threads.BLOCK},unroll={threads.UNROLL}",
            "n": n,
            "unit": "lanes",
            "batch": lanes,
            "parallelism": desc.parallelism,
        }
        tasks = THREAD_TASKS_PER_LANE * lanes
        words = jax.ShapeDtypeStruct((threads.TASK_WORDS, tasks), np.uint32, sharding=sharding)
        fn = jax.jit(lambda w, n=n: threads.count_tasks(w, n=n, programs=programs))
        pred = compile_thread_kernel(desc, fn, words, rec, records, failures)
        if pred is None:
            continue
        rec["tasks"] = tasks
        rec["predicted"] = {"label": LABEL, **pred._asdict(), "lane_efficiency": lane_eff}
        steps = steps_n.get(n)
        if steps:
            rate = pred.lane_steps_per_s * lane_eff
            rec["predicted"].update(steps=steps, count_seconds=steps / rate)
        records.append(rec)
        p = rec["predicted"]
        print(
            f"{desc.key:8} {THREAD_WORKLOAD} n={n:<3} {rec['ptxas']['max_registers']} regs, "
            f"{len(rec['ptxas']['spilling'])} spilling, {p['instructions']:.1f} instr/step "
            f"({rec['loop']['read_from']}), {pred.warps_per_sm} warps/SM"
            + (f", {p['count_seconds']:.2f} s" if "count_seconds" in p else ""),
            flush=True,
        )
        clean_dump()


THREAD_COMPLETE = "complete (threads)"
THREAD_TORUS = "count --toroidal (threads)"
COMPLETE_THREAD_N = (18, 19, 20, 21)
TORUS_THREAD_N = (13, 17, 19)  # where the CPU benchmark counted the torus's tree edges


def _thread_items(models, stop: int):
    """Instance roots as `complete` items in the driver's orientation (most constrained)."""
    from jaxqueens.core.constraints import search_masks
    from jaxqueens.solvers import complete as csolver

    rows = []
    for m in models:
        mk = search_masks(m, True)[1].astype(np.uint32)
        rows.append([0, 0, 0, mk[0], 0, csolver.MAX_BUDGET, stop, *mk])
    return np.array(rows, np.uint32)


def _thread_vs_xla(models, config, stop: int) -> dict:
    """The thread kernel's steps (interpreted, `stats`) and the XLA kernel's tree edges on the
    same items, each searched to its end, per item; the lanes' busy share."""
    from jaxqueens.solvers import complete as csolver

    batch = _thread_items(models, stop)
    b = jax.numpy.asarray(batch)
    programs = max(1, len(batch) // (threads_complete.BLOCK * complete_batch.ITEMS_PER_LANE))
    words = threads_complete.item_words(b, config)
    out = threads_complete.search_words(
        words, config, programs=programs, interpret=True, stats=True
    )
    out = np.asarray(out).astype(np.int64)
    busy = int(out[threads_complete.STEPS, : len(batch)].sum())
    spare = out[threads_complete.STEPS, len(batch) :].reshape(programs, threads_complete.BLOCK)
    run = jax.jit(jax.vmap(lambda it: csolver.readout(csolver.search(it, config), config)[0]))
    edges = int(np.asarray(run(b)).astype(np.int64)[:, 1].sum())
    return {
        "steps": busy / len(batch),
        "edges": edges / len(batch),
        "efficiency": busy / int(spare[:, 0].sum() * threads_complete.BLOCK),
        "items": len(batch),
    }


def measure_thread_complete(ns=(12, 13), torus=(11,), count: int = 256) -> dict:
    """The complete thread kernel's steps per instance against the XLA kernel's tree edges,
    on the CPU: deciding `count` prob079 instances at the CPU benchmark's transition d
    (`complete-cpu.json`) and the torus's whole tree, at small n."""
    from jaxqueens.core.constraints import Constraints
    from jaxqueens.io import instances as instio
    from jaxqueens.solvers.complete import Config

    path = RESULTS / "complete-cpu.json"
    bench = json.loads(path.read_text()) if path.exists() else {"rows": [], "toroidal": []}
    ds = {r["n"]: r["d"] for r in bench["rows"] if r["set"] == "transition"}
    out: dict = {"thread_complete": {}, "thread_torus": {}}
    for n in ns:
        if n not in ds:
            continue
        arc = ROOT / "instances" / "prob079" / f"diag-{n}.tar.gz"
        models = [i.model for i in instio.load_instances([str(arc)], diags=ds[n]).instances]
        got = _thread_vs_xla(models[:count], Config(n, decide=True), 1)
        out["thread_complete"][n] = got
    for n in torus:
        got = _thread_vs_xla([Constraints(n, toroidal=True)], Config(n, True), 0)
        out["thread_torus"][n] = got
    out["torus_edges"] = {t["n"]: t["nodes"] for t in bench.get("toroidal", [])}
    return out


def _ratio(measured: dict) -> float:
    """Thread kernel steps per XLA tree edge, at the largest n measured (1: none measured)."""
    return measured[max(measured)]["steps"] / measured[max(measured)]["edges"] if measured else 1.0


def check_thread_complete(desc: model.Description, trips: dict, records, failures) -> None:
    """`complete` (decide at `COMPLETE_THREAD_N`, count at n = 19) and the torus's count (at
    `TORUS_THREAD_N`) on the thread kernel (`jaxqueens.parallel.threads_complete`), compiled for
    the device with the lanes and items a call of the driver's would run: as `check_threads`,
    with the model's instances/s (the XLA kernel's tree edges per instance, `trips["nodes"]`,
    times the thread kernel's steps per edge measured on the CPU) and the torus's seconds (its
    tree edges as the CPU benchmark counted them, `trips["torus_edges"]`, the same way)."""
    from jaxqueens.solvers.complete import Config

    sharding = model.placement(desc)
    programs = max(1, desc.parallelism // (2 * threads_complete.BLOCK))
    lanes = programs * threads_complete.BLOCK
    items = complete_batch.ITEMS_PER_LANE * lanes
    measured = trips.get("thread_complete", {})
    eff = measured[max(measured)]["efficiency"] if measured else 1.0
    ratio, torus_ratio = _ratio(measured), _ratio(trips.get("thread_torus", {}))
    cases = [(THREAD_COMPLETE, "decide", n, Config(n, decide=True)) for n in COMPLETE_THREAD_N]
    cases += [(THREAD_COMPLETE, "count", 19, Config(19))]
    cases += [(THREAD_TORUS, "count", n, Config(n, True)) for n in TORUS_THREAD_N]
    for workload, mode, n, config in cases:
        rec = {
            "device": desc.name,
            "device_key": desc.key,
            "workload": workload,
            "variant": f"{mode},block={threads_complete.BLOCK},unroll={threads_complete.UNROLL}",
            "n": n,
            "unit": "lanes",
            "batch": lanes,
            "parallelism": desc.parallelism,
            "items": items,
        }
        rows = threads_complete.ALLOWED + n
        words = jax.ShapeDtypeStruct((rows, items), np.uint32, sharding=sharding)
        fn = jax.jit(lambda w, c=config: threads_complete.search_words(w, c, programs=programs))
        pred = compile_thread_kernel(desc, fn, words, rec, records, failures)
        if pred is None:
            continue
        rate = pred.lane_steps_per_s * eff
        p: dict = {"label": LABEL, **pred._asdict(), "lane_efficiency": eff}
        nodes = trips.get("nodes", {}).get(n)
        if workload == THREAD_COMPLETE and mode == "decide" and nodes:
            p.update(steps_per_instance=nodes * ratio, instances_per_s=rate / (nodes * ratio))
        edges = trips.get("torus_edges", {}).get(n)
        if workload == THREAD_TORUS and edges:
            p.update(steps=edges * torus_ratio, count_seconds=edges * torus_ratio / rate)
        rec["predicted"] = p
        records.append(rec)
        what = (
            f", {p['instances_per_s']:,.0f} instances/s"
            if "instances_per_s" in p
            else (f", {p['count_seconds']:.2f} s" if "count_seconds" in p else "")
        )
        print(
            f"{desc.key:8} {workload} {mode} n={n:<3} {rec['ptxas']['max_registers']} regs, "
            f"{len(rec['ptxas']['spilling'])} spilling, {p['instructions']:.1f} instr/step "
            f"({rec['loop']['read_from']}), {pred.warps_per_sm} warps/SM{what}",
            flush=True,
        )
        clean_dump()


def thread_table(records: list) -> str:
    """The thread kernels' predictions per device: the count's times (n = 18..21), then
    `complete`'s instances/s and the torus's count times."""
    kinds = (THREAD_WORKLOAD, THREAD_COMPLETE, THREAD_TORUS)
    if not any(r.get("workload") in kinds and r.get("compiled") for r in records):
        return ""
    rows = [r for r in records if r.get("workload") == THREAD_WORKLOAD and r.get("compiled")]
    lines = [
        "",
        f"Count on the thread kernel (jaxqueens.parallel.threads), {LABEL}:",
        "",
        "| device | n | registers | spills | instructions/step | warps/SM | steps | seconds |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        p = r["predicted"]
        if r["n"] not in (18, 19, 20, 21) or "count_seconds" not in p:
            continue
        lines.append(
            f"| {r['device']} | {r['n']} | {r['ptxas']['max_registers']} | "
            f"{len(r['ptxas']['spilling'])} | {p['instructions']:.1f} ({r['loop']['read_from']}) | "
            f"{p['warps_per_sm']} | {p['steps']:.3g} | {p['count_seconds']:,.2f} |"
        )
    lines += [
        "",
        f"`complete` and the torus's count on the thread kernel "
        f"(jaxqueens.parallel.threads_complete), {LABEL}:",
        "",
        "| device | workload | n | registers | spills | instructions/step | warps/SM | "
        "steps | predicted |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in records:
        if r.get("workload") not in (THREAD_COMPLETE, THREAD_TORUS) or not r.get("compiled"):
            continue
        p = r["predicted"]
        if "instances_per_s" in p:
            steps, what = p["steps_per_instance"], f"{p['instances_per_s']:,.0f} instances/s"
        elif "count_seconds" in p:
            steps, what = p["steps"], f"{p['count_seconds']:.3g} s"
        else:
            steps, what = None, "(compiled only: no trip count)"
        lines.append(
            f"| {r['device']} | {r['workload']} {r['variant'].split(',')[0]} | {r['n']} | "
            f"{r['ptxas']['max_registers']} | {len(r['ptxas']['spilling'])} | "
            f"{p['instructions']:.1f} ({r['loop']['read_from']}) | {p['warps_per_sm']} | "
            f"{'' if steps is None else f'{steps:.3g}'} | {what} |"
        )
    lines += [
        "",
        "Instances/s: a batch filling the device (every lane with items of its own); the torus "
        "seconds: the kernel's steps alone, at full occupancy (its one root reaches the lanes "
        "only as the driver splits it, call by call, which this does not model).",
    ]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------- main


def check_device(desc: model.Description, families, trips: dict, records: list, failures: list):
    if "count" in families or THREADS in families:
        check_threads(desc, trips, records, failures)
        check_thread_complete(desc, trips, records, failures)
    families = [f for f in families if f != THREADS]
    if not families:  # the thread kernel alone
        return
    target = desc.target
    sharding = model.placement(desc)
    place = lambda tree: sizing.abstract(tree, sharding)
    done: dict = {}
    for ex in workloads.executables(target, place, families):
        label = f"{ex.workload} {ex.variant} n={ex.n}"
        rec = {
            "device": desc.name,
            "device_key": desc.key,
            "workload": ex.workload,
            "variant": ex.variant,
            "n": ex.n,
            "unit": ex.unit,
            "sized": ex.sized,
            "want": ex.want,
            "budget_bytes": target.budget_bytes,
            "parallelism": target.parallelism,
        }
        if ex.same_as is not None and (ex.same_as, ex.variant, ex.n) in done:
            twin = done[ex.same_as, ex.variant, ex.n]
            rec.update({k: v for k, v in twin.items() if k not in rec or k == "want"})
            rec["same_as"] = ex.same_as
            rec["predicted"] = {**twin["predicted"]}
            if twin.get("predicted"):
                rec["predicted"].update(rates(rec, _pred_of(twin), trips))
            records.append(rec)
            continue
        Tracked.modules, Tracked.seconds = {}, 0.0
        build = lambda b, ex=ex: Tracked(ex.build(b), b)
        try:
            if ex.sized:
                choice = sizing.choose(build, target, ex.want, floor=ex.floor)
                batch, nbytes, fits, compiled = (
                    choice.batch,
                    choice.bytes,
                    choice.fits,
                    choice.compiled,
                )
                compiles = choice.compiles
            else:
                compiled = build(ex.want).compile()
                batch, nbytes = ex.want, sizing.footprint(compiled)
                fits, compiles = nbytes <= target.budget_bytes, 1
        except Exception as err:  # a compile error: one line naming the kernel and device
            msg = (str(err).strip().splitlines() or [type(err).__name__])[0][:300]
            failures.append(f"gpu-check: {label} does not compile for {desc.name}: {msg}")
            rec.update(compiled=False, error=msg)
            records.append(rec)
            clean_dump()
            continue
        m = compiled.memory_analysis()
        rec.update(
            compiled=True,
            batch=batch,
            bytes=nbytes,
            argument_bytes=int(m.argument_size_in_bytes),
            output_bytes=int(m.output_size_in_bytes),
            temp_bytes=int(m.temp_size_in_bytes),
            fits=fits,
            compiles=compiles,
            compile_s=round(Tracked.seconds, 3),
            extra={k: v for k, v in ex.extra.items() if isinstance(v, (int, float, str))},
        )
        if not fits:
            failures.append(
                f"gpu-check: {label} needs {nbytes:,} bytes on {desc.name} at batch {batch}, "
                f"over the budget of {target.budget_bytes:,}"
            )
        prefix = Tracked.modules.get(batch)
        thunks = None
        if prefix and os.path.exists(f"{prefix}.thunk_sequence_after_thunk_passes.txt"):
            thunks = Path(f"{prefix}.thunk_sequence_after_thunk_passes.txt").read_text()
        text = compiled.as_text()
        fill = min(1.0, batch / target.parallelism) if ex.unit == "lanes" else 1.0
        if ex.unit == "probes/call":
            fill = min(1.0, batch / target.parallelism)
        if ex.unit == "generations/call":
            fill = min(1.0, ex.extra.get("individuals", 1) / target.parallelism)
        # one chain (the large path): a scalar loop, latency-bound; its bytes are few and its
        # kernels one thread each, so no bandwidth share applies
        inner, share = loop_figures(ex, batch, trips)
        pred = hlo.predict(
            text,
            launch_s=desc.launch_s,
            sync_s=desc.sync_s,
            bandwidth=desc.bandwidth,
            fill=fill,
            inner_trips=inner,
            branch_share=share,
            thunks=thunks,
        )
        if pred is None:  # no loop: the whole program once
            module = hlo.parse(text)
            cost = hlo.computation_cost(module, module.entry)
            rec["predicted"] = {
                "label": LABEL,
                "kernels_total": cost.kernels,
                "bytes_total": cost.bytes,
                "seconds": cost.seconds(desc.launch_s, desc.sync_s, desc.bandwidth * fill),
            }
        else:
            rec["predicted"] = {"label": LABEL, **pred._asdict()}
            rec["predicted"].update(inner_trips=inner, branch_share=share, fill=fill)
            rec["predicted"].update(rates(rec, pred, trips))
        rec["host_control"] = hlo.host_control(thunks)
        res = hlo.ptxas_resources(ptxas_log(prefix, desc.arch)) if prefix else []
        rec["ptxas"] = {
            "kernels": len(res),
            "max_registers": max((r.registers for r in res), default=None),
            "spilling": [r._asdict() for r in res if r.spill_stores or r.spill_loads],
        }
        records.append(rec)
        done[ex.workload, ex.variant, ex.n] = rec
        pr = rec["predicted"]
        print(
            f"{desc.key:8} {label:44} batch {batch:>9,} {nbytes / 2**30:8.2f} GiB "
            f"{rec['compile_s']:6.1f} s ({compiles}) "
            + (
                f"{pr.get('kernels', 0):5.0f} k {pr.get('syncs', 0):4.0f} s "
                f"{pr['seconds'] * 1e6:9.1f} us/it"
                if "kernels" in pr
                else f"{pr['seconds'] * 1e6:9.1f} us"
            ),
            flush=True,
        )
        clean_dump()


def _pred_of(rec: dict) -> hlo.Prediction | None:
    p = rec.get("predicted") or {}
    if "kernels" not in p:
        return None
    return hlo.Prediction(*(p[f] for f in hlo.Prediction._fields))


def table(records: list) -> str:
    """The README table: H100 predictions beside the published anchors."""
    h100 = [r for r in records if r.get("device_key") == "h100" and r.get("compiled")]
    lines = [
        f"| workload | n | lanes / batch | kernels/it | syncs/it | bytes/it | {LABEL} |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]

    def row(r, what):
        p = r["predicted"]
        lines.append(
            f"| {r['workload']} {r['variant']} | {r['n']:,} | {r['batch']:,} | "
            f"{p.get('kernels', 0):.0f} | {p.get('syncs', 0):.0f} | "
            f"{p.get('bytes', 0) / 2**20:,.1f} MiB | {what} |"
        )

    for r in h100:
        p = r["predicted"]
        if r["workload"] == "solve" and "chains_per_s" in p:
            row(
                r,
                f"{p['chains_per_s']:,.0f} chains/s "
                f"({p['seconds_per_iteration'] * 1e6:,.0f} us/step)",
            )
        elif r["workload"] == "count" and r["n"] in (20, 21) and "count_seconds" in p:
            row(r, f"{p['edges_per_s']:.3g} tree edges/s, {p['count_seconds']:,.0f} s")
        elif r["workload"] == "evolve" and "individuals_per_s" in p and r["n"] == 64:
            row(r, f"{p['individuals_per_s']:.3g} individuals/s")
        elif r["workload"] == "complete" and "instances_per_s" in p and r["n"] >= 18:
            row(r, f"{p['instances_per_s']:,.1f} instances/s")
    lines.append("")
    lines.append("Published anchors (measured by their authors, other devices):")
    lines.append("")
    for a in ANCHORS:
        lines.append(f"- {a['what']}: {a['seconds']} s on an {a['device']} ({a['source']})")
    return "\n".join(lines) + "\n"


def _load_trips(path: Path) -> dict:
    """The trip counts a parent measured (JSON keys are strings: the sizes become ints again)."""
    raw = json.loads(path.read_text())
    return {
        k: {int(a): b for a, b in v.items()} if isinstance(v, dict) else v for k, v in raw.items()
    }


def _run_workers(keys, args, trips, records, failures, per_device) -> None:
    """Check the devices in `args.jobs` worker processes at once (compiling is single-threaded
    in XLA's GPU backend for these programs, so the devices overlap on a multi-core machine),
    each with the trip counts measured here; their records are gathered in device order."""
    work = Path(tempfile.mkdtemp(prefix="jaxqueens-gpu-check-parts-"))
    trips_path = work / "trips.json"
    trips_path.write_text(json.dumps(trips, default=str))
    base = [sys.executable, str(Path(__file__).resolve()), "--families", args.families]
    pending = list(keys)
    running: dict = {}
    try:
        while pending or running:
            while pending and len(running) < args.jobs:
                key = pending.pop(0)
                cmd = [*base, "--devices", key, "--trips", str(trips_path)]
                running[key] = subprocess.Popen([*cmd, "--part", str(work / f"{key}.json")])
            time.sleep(0.5)
            for key, proc in list(running.items()):
                if proc.poll() is not None:
                    del running[key]
                    if proc.returncode != 0:
                        failures.append(f"gpu-check: {key}: the worker exited {proc.returncode}")
        for key in keys:
            part_path = work / f"{key}.json"
            if part_path.exists():
                part = json.loads(part_path.read_text())
                records.extend(part["records"])
                failures.extend(part["failures"])
                per_device.update(part["per_device"])
    finally:
        for proc in running.values():
            proc.kill()
        shutil.rmtree(work, ignore_errors=True)


def merged(old: dict, new: dict, families: str) -> dict:
    """`old` with the records of the workloads `new` checked replaced by `new`'s, its trip
    counts updated, and a line in `updates` saying so."""
    redone = {r["workload"] for r in new["records"]}
    keep = [r for r in old.get("records", []) if r.get("workload") not in redone]
    doc = {**old, "records": keep + new["records"], "jax": new["jax"]}
    fresh = {k: v for k, v in new["trip_counts"].items() if v or v == 0}  # {}: not measured
    doc["trip_counts"] = {**old.get("trip_counts", {}), **fresh}
    doc["failures"] = new["failures"]
    doc["updates"] = [
        *old.get("updates", []),
        f"{', '.join(sorted(redone))} recompiled: scripts/gpu_check.py --families {families} "
        f"--merge, {sum(r.get('compiled', False) for r in new['records'])} of "
        f"{len(new['records'])} compiled",
    ]
    return doc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--devices", default=",".join(model.NAMES))
    ap.add_argument("--families", default=",".join(workloads.FAMILIES))
    ap.add_argument("--out", default=str(RESULTS / "gpu-compile.json"))
    ap.add_argument("--no-measure", action="store_true", help="skip the CPU trip counts")
    ap.add_argument(
        "--merge",
        action="store_true",
        help="replace only the records of the workloads checked in an existing --out file",
    )
    ap.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        help="devices checked at once, one process each (default: one per core)",
    )
    ap.add_argument("--trips", help=argparse.SUPPRESS)  # a worker: the parent's trip counts
    ap.add_argument("--part", help=argparse.SUPPRESS)  # a worker: write its records here
    args = ap.parse_args(argv)
    t_start = time.perf_counter()
    families = [f for f in args.families.split(",") if f]
    known = [*workloads.FAMILIES, THREADS]
    unknown = [f for f in families if f not in known]
    if unknown:
        print(f"gpu-check: unknown family {unknown[0]!r}: use {', '.join(known)}")
        return 2
    try:
        import jax_plugins.xla_cuda12  # noqa: F401
    except ImportError:
        print("gpu-check: the CUDA plugin is not installed: run it with make gpu-check")
        return 2
    trips = {"steps": {}, "edges": {}, "nodes": complete_nodes()}
    if args.trips:
        trips = _load_trips(Path(args.trips))
    elif not args.no_measure:
        t0 = time.perf_counter()
        if families != [THREADS]:  # min-conflicts' steps: every workload but the thread kernel
            trips["steps"] = measure_steps()
        measured = measure_edges()
        trips["edges_measured"] = measured
        trips["edges"] = {**measured, **fit_log_quadratic(measured, range(16, 25))}
        if "count" in families or THREADS in families:
            trips["thread"] = measure_thread_steps()
            trips.update(measure_thread_complete())
        nodes = trips["nodes"]
        if nodes:
            trips["nodes"] = {
                **nodes,
                **fit_log_quadratic({k: v for k, v in nodes.items() if k >= 14}, range(19, 22)),
            }
        trips["measure_s"] = time.perf_counter() - t0
        print(f"trip counts measured on the CPU in {trips['measure_s']:.1f} s", flush=True)
    records: list = []
    failures: list = []
    per_device: dict = {}
    keys = [k for k in args.devices.split(",") if k]
    if args.part is None and args.jobs > 1 and len(keys) > 1:
        _run_workers(keys, args, trips, records, failures, per_device)
    else:
        for key in keys:
            desc = model.load(key)
            t0 = time.perf_counter()
            check_device(desc, families, trips, records, failures)
            per_device[desc.name] = time.perf_counter() - t0
    if args.part is not None:  # a worker: the parent writes the results
        part = {"records": records, "failures": failures, "per_device": per_device}
        write_text(Path(args.part), json.dumps(part, default=str))
        shutil.rmtree(DUMP, ignore_errors=True)
        return 0
    doc = {
        "label": LABEL,
        "jax": jax.__version__,
        "devices": {k: model.load(k).__dict__ | {"text": None} for k in args.devices.split(",")},
        "assumptions": {
            "launch_s": model.LAUNCH_S,
            "sync_s": model.SYNC_S,
            "budget": f"memory x {sizing.MEMORY_FRACTION}",
            "count_edges_rule": "log(edges) quadratic in n, least squares over the measured n",
            "complete_nodes_rule": "log(nodes per instance) quadratic in n over n = 14..18",
        },
        "trip_counts": {
            k: {str(a): b for a, b in v.items()} if isinstance(v, dict) else v
            for k, v in trips.items()
        },
        "anchors": ANCHORS,
        "seconds_per_device": per_device,
        "seconds": time.perf_counter() - t_start,
        "failures": failures,
        "records": records,
    }
    out = Path(args.out)
    if args.merge and out.exists():
        doc = merged(json.loads(out.read_text()), doc, args.families)
        records = doc["records"]
    write_text(out, json.dumps(doc, indent=1, default=str) + "\n")
    write_text(out.with_suffix(".md"), table(records) + thread_table(records))
    shutil.rmtree(DUMP, ignore_errors=True)
    total = sum(r.get("compile_s", 0) for r in records)
    print(
        f"gpu-check: {sum(r.get('compiled', False) for r in records)} of {len(records)} "
        f"executables compiled for {len(per_device)} devices in {total:.0f} s of compiling, "
        f"{time.perf_counter() - t_start:.0f} s in all; {out}"
    )
    for line in failures:
        print(line)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
