"""The README's two pictures, made with the ``jaxqueens`` command as a user would run it.

- ``docs/assets/solution-16.png``: one min-conflicts solution at n = 16 (``solve``, then
  ``render``);
- ``docs/assets/compare-16.png``: ``compare``'s expected-run-time chart at n = 16 (every solver,
  the same chains and step budget).

Both are committed; run this script again after a change to the plots or the solvers.

Usage: python scripts/make_readme_figures.py [--out-dir docs/assets] [--chains 300]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def jaxqueens(*args: str) -> None:
    """One ``jaxqueens`` command in a fresh process (this interpreter's package)."""
    subprocess.run([sys.executable, "-m", "jaxqueens.cli", *args], check=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", default=str(ROOT / "docs" / "assets"))
    ap.add_argument("--chains", type=int, default=300, help="compare's chains per solver")
    args = ap.parse_args()
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="readme-figures-") as tmp:
        solve = Path(tmp) / "solve"
        jaxqueens("solve", "-n", "16", "--chains", "1", "--seed", "0", "--out", str(solve))
        jaxqueens("render", str(solve / "solutions.npy"), "-o", str(out / "solution-16.png"))
        cmp = Path(tmp) / "compare"
        jaxqueens(
            "compare",
            "-n",
            "16",
            "--chains",
            str(args.chains),
            "--seed",
            "0",
            "--dpi",
            "80",
            "--out",
            str(cmp),
        )
        shutil.copyfile(cmp / "ert.png", out / "compare-16.png")
    for name in ("solution-16.png", "compare-16.png"):
        path = out / name
        print(f"wrote {path} ({path.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
