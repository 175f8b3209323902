"""Calibrate the thread-kernel model (`gpumodel.model.predict_threads`) on a
public CUDA counter with published times: ygch/n_queens (one DFS per thread, its stack in shared
memory; times measured by its author on an A100, an RTX 4090 and an H800, README v2.1).

Its kernel is compiled here with `nvcc -cubin` for sm_80 / sm_89 / sm_90 (no GPU needed) and
disassembled with `nvdisasm`; the model reads its hot loop's SASS (one search step a pass),
registers and shared memory as it reads jaxqueens' kernel. The steps it takes (one per stack
pop) are counted on the CPU by a C transcription of its loop over its own subproblem split (the
first 6 rows placed, the mirror half; for odd n the middle column with a mirrored second row),
which also gives the warp efficiency: its lanes take subproblems in order and a warp's loop runs
until its slowest lane is done. Steps at large n: log-quadratic in n over the counted n; the warp
efficiency: linear in n. Its fixed costs (its time at n = 13) are added to every prediction.

Needs a clone of ygch/n_queens (`--ygch DIR`, not part of this repository), `nvcc`, `gcc`
and `nvdisasm` (`NVDISASM=path` or on PATH). Writes `benchmarks/results/gpu-calibration.json`
and `.md`.

Usage: python scripts/calibrate_gpu_model.py --ygch DIR [--counted 14,15,16,17] [--big 18,19]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from gpumodel import model  # this folder: scripts/gpumodel

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
ROWS = 6  # rows ygch's README places on the host for these times ("configuration 2")
BLOCK = 160  # its CU1DBLOCK under _USE_CONFIG2_ (5 warps)
PUBLISHED = {  # seconds, its README (v2.1, one GPU): device -> {n: s}
    "a100": {18: 0.267, 19: 1.074, 20: 6.415, 21: 51.741},
    "rtx4090": {18: 0.183, 19: 0.609, 20: 3.636, 21: 28.551},
    "h100": {18: 0.791, 19: 1.138, 20: 4.140, 21: 29.248},  # measured on an H800 (132 SMs)
}
ARCH = {"a100": "80", "rtx4090": "89", "h100": "90"}
STARTUP = {"a100": 0.123, "rtx4090": 0.107, "h100": 0.558}  # its n = 13 time: fixed costs

COUNTER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
static int N; static uint32_t LAST; static FILE *out; static uint64_t it;
static void dfs(uint32_t cur, uint32_t left, uint32_t right, uint32_t valid) {
  while (valid) {  /* one pass of ygch's loop: pop, take the lowest bit, maybe push */
    it++; uint32_t p = valid & -valid; valid -= p;
    uint32_t c = cur | p, l = (left | p) << 1, r = (right | p) >> 1, v = LAST & ~c & ~l & ~r;
    if (__builtin_popcount(c) == N - 1) continue;  /* counted, not pushed */
    if (v) dfs(c, l, r, v);
  }
}
static void leaf(uint32_t c, uint32_t l, uint32_t r) {
  it = 0; uint32_t v = LAST & ~c & ~l & ~r; if (v) dfs(c, l, r, v); fwrite(&it, 8, 1, out);
}
static void part(uint32_t cur, uint32_t left, uint32_t right, int rows, int odd) {
  uint32_t last = LAST;
  if (!odd && cur == 0) last = (1u << N / 2) - 1;
  if (odd && cur == 0) last = 1u << N / 2;
  else if (odd && (cur & (cur - 1)) == 0) last = (1u << (N - 2) / 2) - 1;
  uint32_t v = last & ~(cur | left | right);
  while (v) {
    uint32_t p = v & -v; v -= p;
    if (rows == 1) leaf(cur | p, (left | p) << 1, (right | p) >> 1);
    else part(cur | p, (left | p) << 1, (right | p) >> 1, rows - 1, odd);
  }
}
int main(int argc, char **argv) {
  N = atoi(argv[1]); LAST = (1u << N) - 1; out = fopen(argv[3], "wb");
  part(0, 0, 0, atoi(argv[2]), 0); if (N & 1) part(0, 0, 0, atoi(argv[2]), 1);
  fclose(out); return 0;
}
"""


def counted_steps(work: Path, ns) -> dict:
    """Steps and warp efficiency of ygch's kernel at each n (per subproblem, in its order)."""
    src, binary = work / "steps.c", work / "steps"
    src.write_text(COUNTER)
    subprocess.run(["gcc", "-O2", "-o", str(binary), str(src)], check=True)
    out = {}
    for n in ns:
        path = work / f"steps-{n}.bin"
        subprocess.run([str(binary), str(n), str(ROWS), str(path)], check=True)
        steps = np.fromfile(path, np.uint64).astype(np.float64)
        warps = np.pad(steps, (0, -len(steps) % 32)).reshape(-1, 32)
        out[n] = {
            "steps": float(steps.sum()),
            "subproblems": len(steps),
            "warp_efficiency": float(steps.sum() / (warps.max(1).sum() * 32)),
        }
        print(f"n = {n}: {steps.sum():.4g} steps, warp efficiency {out[n]['warp_efficiency']:.3f}")
    return out


def compiled(ygch: Path, work: Path, arch: str) -> tuple[list[str], int, int]:
    """ygch's kernel for sm_<arch>: its hot loop's SASS opcodes, registers, shared bytes."""
    cubin = work / f"ygch-sm{arch}.cubin"
    run = subprocess.run(
        ["nvcc", f"-gencode=arch=compute_{arch},code=sm_{arch}", "-cubin", "-O3",
         "-D_USE_CONFIG2_", "--ptxas-options=-v", "-Xcompiler", "-fopenmp",
         str(ygch / "src" / "n_queens_cuda.cu"), "-o", str(cubin)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    log = run.stdout + run.stderr
    regs = int(re.search(r"Used (\d+) registers", log).group(1))
    smem = re.search(r"(\d+) bytes smem", log)
    dis = os.environ.get("NVDISASM") or shutil.which("nvdisasm")
    sass = subprocess.run([dis, "-c", str(cubin)], capture_output=True, text=True, check=True)
    return model.loop_body(sass.stdout), regs, int(smem.group(1)) if smem else 0


def fit(steps: dict, at) -> dict:
    n = np.array(sorted(steps), float)
    coef = np.polyfit(n, np.log([steps[k] for k in sorted(steps)]), 2)
    return {k: float(np.exp(np.polyval(coef, k))) for k in at}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ygch", required=True, help="a clone of ygch/n_queens")
    ap.add_argument("--counted", default="14,15,16,17", help="n whose steps are counted here")
    ap.add_argument("--big", default="", help="n counted too, total steps only (slow)")
    ap.add_argument("--out", default=str(RESULTS / "gpu-calibration.json"))
    args = ap.parse_args(argv)
    ygch = Path(args.ygch)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        ns = [int(x) for x in args.counted.split(",") if x]
        counted = counted_steps(work, ns + [int(x) for x in args.big.split(",") if x])
        steps = {n: v["steps"] for n, v in counted.items()}
        steps = {**fit(steps, range(18, 22)), **steps}
        # the warp efficiency grows with n (longer subproblems vary less): linear in n
        slope = np.polyfit(ns, [counted[n]["warp_efficiency"] for n in ns], 1)
        eff = {n: float(min(1.0, np.polyval(slope, n))) for n in range(min(ns), 22)}
        eff.update({n: v["warp_efficiency"] for n, v in counted.items()})
        rows, devices = [], {}
        for key, times in PUBLISHED.items():
            desc = model.load(key)
            body, regs, smem = compiled(ygch, work, ARCH[key])
            pred = model.predict_threads(desc, body, 1, regs, BLOCK // 32, sass=True, shared=smem)
            devices[key] = {"registers": regs, "shared_bytes": smem, **pred._asdict()}
            for n, published in times.items():
                seconds = steps[n] / (pred.lane_steps_per_s * eff[n]) + STARTUP[key]
                rows.append({
                    "device": key, "n": n, "steps": steps[n], "counted": n in counted,
                    "warp_efficiency": eff[n],
                    "predicted_s": seconds, "published_s": published,
                    "ratio": seconds / published,
                })  # fmt: skip
    doc = {
        "label": "the thread-kernel model (predicted) against ygch/n_queens' published times",
        "method": __doc__.split("\n\n")[1].replace("\n", " "),
        "warp_efficiency": eff,
        "devices_note": "h100: the published times were measured on an H800 (132 SMs, as the H100)",
        "startup_s": STARTUP,
        "counted": counted,
        "devices": devices,
        "rows": rows,
    }
    out = Path(args.out)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    lines = [
        "| device | n | steps | predicted s | published s | predicted / published |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        lines.append(
            f"| {r['device']} | {r['n']} | {r['steps']:.3g}{'' if r['counted'] else ' (fit)'} | "
            f"{r['predicted_s']:.2f} | {r['published_s']:.2f} | {r['ratio']:.2f} |"
        )
    out.with_suffix(".md").write_text(doc["label"] + "\n\n" + "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
