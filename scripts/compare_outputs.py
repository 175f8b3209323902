"""Run a fixed list of small CLI commands and compare every output with a recorded snapshot.

A reshaping of the code must not change what the commands write. `--record DIR` runs every
command with `--out` into DIR (its standard output beside it); `--against DIR` runs them again
into a fresh folder and compares each file with the snapshot's, byte for byte except what is a
timing or a record of the environment:

- CSV, JSON, JSONL and the arrays of `.npz` files are parsed; columns and keys that are seconds,
  rates or dates (`seconds`, `*_s`, `*_per_s`, `compile_*`, `wall*`, ...) and the environment
  record (`versions`, `platform`, `cpu`, `commit`, `xla_flags`, ...) are dropped, and the output
  folder's path is replaced by `<OUT>`; the manifest's byte counts and a checkpoint header's
  digest are dropped (they move with the timings). Key order is not compared: `stats --solver
  ga` writes its options in an order that differs between two runs of the same code.
- Standard output and `report.html` are compared as text after the same path replacement and
  with every duration (`0.02 s`, `compile 2.37 s`) and rate (`1,095 solutions/s`) masked, the
  timing columns of CSV text blanked, and compare's recommendation (chosen by measured times)
  masked; in `report.html` the tables lose their timing rows and columns as the CSV and JSON
  files do, and the result section (the standard output, laid out by the lengths of its
  timings) is left to the standard output's comparison.
- PNG images are compared by their decoded pixels, except the figures listed in `SKIPPED` (none
  so far: the commands' figures draw no timing); PDF and SVG files are skipped (their text is
  typeset by matplotlib and they embed a creation date).
- Every other file (`.npy`, `.txt`, boards) byte for byte.
- The exit status of every command (recorded as the first line of its standard output).

Prints one line per file (`same`, `differs: <first difference>` or `skipped: <reason>`) and
exits 1 on any difference. `--compare A B` compares two recorded snapshots without running.

Usage: python scripts/compare_outputs.py (--record DIR | --against DIR | --compare A B)
       [--only NAME[,NAME...]] [--keep] [--list]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
JAXQUEENS = [sys.executable, "-m", "jaxqueens"]
INSTANCES = Path("instances") / "prob079" / "diag-8.tar.gz"
"""Relative to the checkout the commands run in (`ROOT`), so that outputs do not name it."""
PARAM = "diag-8/diag-8-4-66.param"
"""One instance of the archive, extracted into the run folder for `solve --instance`."""
BOARD = "1\n3\n5\n7\n2\n0\n6\n4\n"
"""An 8-queens solution as a text board file, a start for `solve --file`."""

COMMANDS: list[tuple[str, str]] = [
    ("solve", "solve -n 8 --chains 20 --seed 3"),
    ("solve-plot", "solve -n 10 --chains 12 --plot --init greedy"),
    ("solve-tabu", "solve -n 12 --chains 10 --tabu 2 --move cisc352"),
    ("solve-toroidal", "solve -n 7 --chains 5 --toroidal"),
    ("solve-file", "solve -n 8 --chains 4 --file {in}/board.txt"),
    ("solve-instance", f"solve --chains 3 --instance {{in}}/{PARAM}:4"),
    ("solve-backtrack", "solve -n 10 --method backtrack"),
    ("solve-large", "solve -n 3000 --mode large --chains 3"),
    ("anneal", "anneal --method all -n 8 --chains 20 --steps 2000"),
    (
        "anneal-sa-classic",
        "anneal --method sa -n 10 --chains 10 --steps 3000 --preset classic --neighbour swap "
        "--plot",
    ),
    (
        "anneal-ta-instance",
        f"anneal --method ta --chains 8 --steps 2000 --instance {{in}}/{PARAM}:4",
    ),
    (
        "evolve-perm-steady",
        "evolve -n 8 --pop 40 --generations 60 --trials 4 --encoding permutation --scheme steady "
        "--seed 2 --plot",
    ),
    (
        "evolve-comb-gen",
        "evolve -n 8 --pop 40 --generations 40 --trials 3 --encoding combination "
        "--scheme generational --islands 2 --migrate-every 5 --history per-trial",
    ),
    (
        "evolve-classic",
        "evolve -n 6 --preset classic --generations 30 --trials 2 --score nonattacking",
    ),
    ("stats-mc", "stats -n 6 --solver minconflicts --chains 200"),
    ("stats-anneal", "stats -n 6 --solver anneal --chains 100 --steps 2000 --no-plots"),
    (
        "stats-ga",
        "stats -n 6 --solver ga --chains 20 --pop 30 --generations 40 --no-plots",
    ),
    (
        "compare",
        "compare -n 8 --chains 20 --steps 1000 --no-plots "
        "--solvers mc-permutation,mc-tabu,ls,sa,ga-permutation",
    ),
    ("count", "count -n 8"),
    ("count-unique", "count -n 9 --unique"),
    ("count-enumerate", "count -n 6 --enumerate"),
    ("count-toroidal", "count -n 7 --toroidal"),
    ("estimate", "estimate -n 8,12 --probes 2048"),
    ("complete", f"complete {INSTANCES} --diags 8 --count"),
    ("complete-enumerate", f"complete {INSTANCES} --diags 6 --enumerate"),
]
"""(name, arguments) of every command; each also gets `--out <run>/<name> --quiet`."""

SKIPPED: dict[str, str] = {}
"""Files (`<command>/<name>`) not compared, with the reason."""

TIMING_KEY = re.compile(
    r"(^|_)(s|ms|sec|secs|seconds|time|times|timing|timings|wall|elapsed|duration|compile"
    r"|per_s|per_second|rate_per_s|throughput|date|timestamp|created|started|finished)($|_)"
    r"|seconds|per_s$|_s_|^wall|^compile|^t_",
    re.IGNORECASE,
)
"""Keys and columns that hold seconds, rates or dates."""
KEEP_KEY = re.compile(r"^(time|times)$|success_rate|rates?$|^steps", re.IGNORECASE)
"""Names the timing pattern catches that are not timings (the `--time` setting, success rates)."""
ENVIRONMENT_KEYS = frozenset(
    {
        "versions",
        "version",
        "platform",
        "cpu",
        "commit",
        "xla_flags",
        "hostname",
        "host",
        "pid",
        "python",
        "jax",
        "jaxlib",
        "numpy",
        "matplotlib",
        "cache_dir",
    }
)
"""Keys that record the machine or the code's version, not the run."""

TIMING_DERIVED = frozenset({"recommendation"})
"""Keys whose value is chosen by measured times (compare recommends the fastest solver)."""
TIMING_DERIVED_TEXT = [
    re.compile(r"recommended for [^<\n]*"),
    re.compile(r"\(95% CI [^()]*\)"),
]
"""Text chosen or computed from measured times: compare's recommendation and the confidence
intervals of its seconds per solution."""

DURATION = re.compile(
    r"(?<![\w.])[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?\s?(?:s|ms|us|µs|min|h|seconds?)(?![\w/])"
)
RATE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?\s?(?:[\w-]+/s|/s)(?!\w)")
DATE = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:?\d\d|Z)?")
COMMIT = re.compile(r"\b[0-9a-f]{40}\b")


def _is_timing(key: str) -> bool:
    return bool(TIMING_KEY.search(key)) and not KEEP_KEY.search(key)


def _dropped(key: str) -> bool:
    """Whether a key, column or dotted name (`run.versions.jax`) is a timing or environment."""
    parts = re.split(r"[./]", key.strip())
    return any(p in ENVIRONMENT_KEYS or p in TIMING_DERIVED or _is_timing(p) for p in parts)


def _paths(text: str, roots: list[str]) -> str:
    for root in roots:
        text = text.replace(root, "<OUT>")
    return text


def _mask(text: str, roots: list[str]) -> str:
    """Text with the run folder, durations, rates, dates and commits masked, and the timing
    columns of any CSV printed in it blanked."""
    text = _csv_blocks(_paths(text, roots))
    for pattern in TIMING_DERIVED_TEXT:
        text = pattern.sub("<TIMING-DERIVED>", text)
    text = DATE.sub("<DATE>", text)
    text = COMMIT.sub("<COMMIT>", text)
    text = RATE.sub("<RATE>", text)
    return DURATION.sub("<T>", text)


HEADER = re.compile(r"^[A-Za-z_][\w.-]*(,[A-Za-z_][\w.-]*)+$")


def _csv_blocks(text: str) -> str:
    """Text with the timing columns of every CSV block in it (a header line, then rows with as
    many fields) blanked."""
    out: list[str] = []
    drop: list[int] = []
    width = 0
    for line in text.split("\n"):
        bare = re.sub(r"<[^>]*>", "", line)  # a header inside <pre ...>
        if HEADER.match(bare):
            names = bare.split(",")
            drop, width = [i for i, name in enumerate(names) if _dropped(name)], len(names)
        elif drop:
            fields = next(csv.reader([line]), [])
            if len(fields) == width:
                line = ",".join("<T>" if i in drop else f for i, f in enumerate(fields))
            else:
                drop = []
        out.append(line)
    return "\n".join(out)


TABLE = re.compile(r"<table[^>]*>(.*?)</table>", re.DOTALL)
SECTION = re.compile(r"<h3>([^<]*)</h3>(<div[^>]*>)?<table[^>]*>.*?</table>", re.DOTALL)
RESULT = re.compile(r"(<h2>result</h2>)(.*?)(?=<h2>)", re.DOTALL)
"""A report's result section: the command's standard output, cut to a number of characters
with long lines moved to notes, a layout that moves with the widths of the timings printed in
it. The standard output itself is compared in full (`<command>.stdout`)."""
ROW = re.compile(r"<tr[^>]*>(.*?)</tr>", re.DOTALL)
CELL = re.compile(r"<t([hd])[^>]*>(.*?)</t[hd]>", re.DOTALL)


def _html(text: str, roots: list[str]) -> str:
    """A report as text: each table one line per row, without the rows (key, value) and columns
    (a header) that are timings or the environment; then masked as any text."""

    def section(match: re.Match) -> str:
        if _dropped(match.group(1)):  # a table of timings, or ranked by them
            return f"<h3>{match.group(1)}</h3><TIMING-DERIVED>"
        return match.group(0)

    def table(match: re.Match) -> str:
        rows = [CELL.findall(row) for row in ROW.findall(match.group(1))]
        drop: set[int] = set()
        header: list[str] = []
        lines = []
        for cells in rows:
            if cells and all(kind == "h" for kind, _ in cells):
                drop = {i for i, (_, name) in enumerate(cells) if _dropped(name) or name == "bytes"}
                header = ["\t".join(c for i, (_, c) in enumerate(cells) if i not in drop)]
                continue
            if len(cells) == 2 and _dropped(cells[0][1]):
                continue  # a key and its value
            lines.append("\t".join(c for i, (_, c) in enumerate(cells) if i not in drop))
        if all(len(line.split("\t")) == 2 for line in lines):
            lines.sort()  # keys and values: their order is not compared, as in JSON
        return "<table>\n" + "\n".join(header + lines) + "\n</table>"

    def result(match: re.Match) -> str:
        return match.group(1) + "<STANDARD OUTPUT: compared in <command>.stdout>\n"

    text = RESULT.sub(result, text)
    return _mask(TABLE.sub(table, SECTION.sub(section, text)), roots)


def _clean_json(value: object, roots: list[str]) -> object:
    if isinstance(value, dict):
        return {k: _clean_json(v, roots) for k, v in value.items() if not _dropped(str(k))}
    if isinstance(value, list):
        return [_clean_json(v, roots) for v in value]
    if isinstance(value, str):
        return _paths(value, roots)
    return value


def _clean_manifest(value: object, roots: list[str]) -> object:
    cleaned = _clean_json(value, roots)
    if isinstance(cleaned, dict):
        for entry in cleaned.get("files", []):
            if isinstance(entry, dict):
                entry.pop("bytes", None)
    return cleaned


def _csv_rows(text: str, roots: list[str]) -> list[list[str]]:
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return rows
    keep = [i for i, name in enumerate(rows[0]) if not _dropped(name.strip())]
    return [[_paths(row[i], roots) if i < len(row) else "<missing>" for i in keep] for row in rows]


def _first_difference(a: object, b: object, where: str = "") -> str | None:
    """Where two parsed values first differ (None when equal)."""
    if type(a) is not type(b):
        return f"{where or '.'}: {_short(a)} != {_short(b)}"
    if isinstance(a, dict) and isinstance(b, dict):
        for key in list(a) + [k for k in b if k not in a]:
            if key not in a or key not in b:
                return f"{where}.{key}: only in {'snapshot' if key in a else 'new run'}"
            found = _first_difference(a[key], b[key], f"{where}.{key}")
            if found:
                return found
        return None  # key order is not compared: some dicts are built from sets
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            found = _first_difference(x, y, f"{where}[{i}]")
            if found:
                return found
        if len(a) != len(b):
            return f"{where or '.'}: {len(a)} items != {len(b)}"
        return None
    if a != b:
        return f"{where or '.'}: {_short(a)} != {_short(b)}"
    return None


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _text_difference(a: str, b: str) -> str | None:
    if a == b:
        return None
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb, strict=False)):
        if x != y:
            return f"line {i + 1}: {_short(x)} != {_short(y)}"
    return f"{len(la)} lines != {len(lb)}"


def _npz_arrays(path: Path, roots: list[str]) -> dict[str, object]:
    import numpy as np

    out: dict[str, object] = {}
    with np.load(path, allow_pickle=False) as data:
        for key in data.files:
            if any(_dropped(part) for part in key.split(".")):
                continue
            array = data[key]
            if array.dtype.kind in "US" and array.ndim == 0:
                text = str(array)
                try:
                    header = _clean_json(json.loads(text), roots)
                    if isinstance(header, dict):
                        header.pop("digest", None)  # a hash over the arrays, timings included
                    out[key] = header
                except json.JSONDecodeError:
                    out[key] = _mask(text, roots)
            else:
                out[key] = (str(array.dtype), array.shape, array.tobytes())
    return out


def _pixels(path: Path) -> tuple[tuple[int, ...], bytes]:  # shape, bytes
    import matplotlib.image

    array = matplotlib.image.imread(path)
    return array.shape, array.tobytes()


def _compare_file(
    name: str, old: Path, new: Path, old_roots: list[str], new_roots: list[str]
) -> str | None:
    """None when the files agree (after the normalisation), else the first difference."""
    suffix = old.suffix.lower()
    if name.endswith("manifest.json"):
        return _first_difference(
            _clean_manifest(json.loads(old.read_text()), old_roots),
            _clean_manifest(json.loads(new.read_text()), new_roots),
        )
    if suffix == ".json":
        return _first_difference(
            _clean_json(json.loads(old.read_text()), old_roots),
            _clean_json(json.loads(new.read_text()), new_roots),
        )
    if suffix == ".jsonl":
        a = [_clean_json(json.loads(line), old_roots) for line in old.read_text().splitlines()]
        b = [_clean_json(json.loads(line), new_roots) for line in new.read_text().splitlines()]
        return _first_difference(a, b)
    if suffix == ".csv":
        a_rows = _csv_rows(old.read_text(), old_roots)
        b_rows = _csv_rows(new.read_text(), new_roots)
        for i, (x, y) in enumerate(zip(a_rows, b_rows, strict=False)):
            if x != y:
                return f"row {i + 1}: {_short(x)} != {_short(y)}"
        if len(a_rows) != len(b_rows):
            return f"{len(a_rows)} rows != {len(b_rows)}"
        return None
    if suffix == ".npz":
        return _first_difference(_npz_arrays(old, old_roots), _npz_arrays(new, new_roots))
    if suffix == ".html":
        return _text_difference(
            _html(old.read_text(), old_roots), _html(new.read_text(), new_roots)
        )
    if suffix == ".stdout":
        return _text_difference(
            _mask(old.read_text(), old_roots), _mask(new.read_text(), new_roots)
        )
    if suffix == ".png":
        (a_shape, a_pixels), (b_shape, b_pixels) = _pixels(old), _pixels(new)
        if a_shape != b_shape:
            return f"image size {a_shape} != {b_shape}"
        return None if a_pixels == b_pixels else "pixels differ"
    a_bytes, b_bytes = old.read_bytes(), new.read_bytes()
    if a_bytes == b_bytes:
        return None
    at = next(
        (i for i, (x, y) in enumerate(zip(a_bytes, b_bytes, strict=False)) if x != y),
        min(len(a_bytes), len(b_bytes)),
    )
    return f"byte {at} of {len(a_bytes)} != of {len(b_bytes)}"


def _skip_reason(name: str, path: Path) -> str | None:
    if name in SKIPPED:
        return SKIPPED[name]
    if path.suffix.lower() in (".pdf", ".svg", ".eps", ".ps"):
        return "vector figure: matplotlib typesets its text and stamps a creation date"
    if path.suffix.lower() == ".zip" and zipfile.is_zipfile(path):
        return "zip archive: its entries carry the time they were written"
    return None


def _roots(folder: Path) -> list[str]:
    """The spellings of a run folder (and of the checkout it ran in) that its files may hold,
    longest first."""
    names = {str(folder), str(folder.resolve())}
    meta = folder / "snapshot.json"
    if meta.is_file():
        names.add(json.loads(meta.read_text())["root"])
    return sorted(names, key=len, reverse=True)


def compare(old: Path, new: Path, only: set[str] | None = None) -> int:
    """Compare two run folders file by file; print one line per file; the number of differences."""
    old_roots, new_roots = _roots(old), _roots(new)
    differences = 0
    names = [name for name, _ in COMMANDS if only is None or name in only]
    for command in names:
        a_files = _files(old, command)
        b_files = _files(new, command)
        for rel in sorted(set(a_files) | set(b_files)):
            if rel not in b_files:
                print(f"{rel}: differs: only in the snapshot")
                differences += 1
                continue
            if rel not in a_files:
                print(f"{rel}: differs: only in the new run")
                differences += 1
                continue
            reason = _skip_reason(rel, a_files[rel])
            if reason:
                print(f"{rel}: skipped: {reason}")
                continue
            try:
                found = _compare_file(rel, a_files[rel], b_files[rel], old_roots, new_roots)
            except (ValueError, OSError, UnicodeDecodeError) as error:
                found = f"cannot be read: {error}"
            print(f"{rel}: same" if found is None else f"{rel}: differs: {found}")
            differences += found is not None
    return differences


def _files(run: Path, command: str) -> dict[str, Path]:
    found: dict[str, Path] = {}
    folder = run / command
    if folder.is_dir():
        for path in folder.rglob("*"):
            if path.is_file():
                found[f"{command}/{path.relative_to(folder).as_posix()}"] = path
    stdout = run / f"{command}.stdout"
    if stdout.is_file():
        found[f"{command}.stdout"] = stdout
    return found


def _inputs(run: Path) -> Path:
    folder = run / "inputs"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "board.txt").write_text(BOARD)
    with tarfile.open(ROOT / INSTANCES) as archive:
        member = archive.extractfile(PARAM)
        if member is None:
            raise SystemExit(f"{INSTANCES} has no {PARAM}")
        (folder / PARAM).parent.mkdir(parents=True, exist_ok=True)
        (folder / PARAM).write_bytes(member.read())
    return folder


def run_all(run: Path, only: set[str] | None, log: Callable[[str], None]) -> int:
    """Run every command into `run`; the number that failed."""
    inputs = _inputs(run)
    commit = subprocess.run(
        ["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    ).stdout.strip()
    meta = {"root": str(ROOT), "commit": commit or None, "uncommitted_changes": bool(dirty)}
    (run / "snapshot.json").write_text(json.dumps(meta, indent=2) + "\n")
    failures = 0
    for name, arguments in COMMANDS:
        if only is not None and name not in only:
            continue
        argv = [a.replace("{in}", str(inputs)) for a in arguments.split()]
        argv = [*JAXQUEENS, *argv, "--out", str(run / name), "--quiet"]
        t0 = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
        seconds = time.perf_counter() - t0
        (run / f"{name}.stdout").write_text(f"exit {done.returncode}\n{done.stdout}")
        status = {0: "ok", 1: "ok (exit 1: not every run solved)"}.get(
            done.returncode, f"FAILED (exit {done.returncode})"
        )
        log(f"ran {name}: {status} in {seconds:.1f} s")
        if done.returncode not in (0, 1):
            failures += 1
            log(done.stderr.strip()[-2000:])
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--record", type=Path, metavar="DIR", help="run and keep a snapshot")
    mode.add_argument("--against", type=Path, metavar="DIR", help="run and compare with DIR")
    mode.add_argument("--compare", type=Path, nargs=2, metavar=("A", "B"), help="no run")
    mode.add_argument("--list", action="store_true", help="print the commands and exit")
    parser.add_argument("--only", help="comma list of command names to run (default: all)")
    parser.add_argument("--keep", action="store_true", help="--against: keep the new run")
    args = parser.parse_args(argv)
    only = set(args.only.split(",")) if args.only else None
    if only is not None and (unknown := only - {name for name, _ in COMMANDS}):
        parser.error(f"--only: unknown command(s) {', '.join(sorted(unknown))}")
    log = lambda line: print(line, file=sys.stderr, flush=True)

    if args.list:
        for name, arguments in COMMANDS:
            print(f"{name}: jaxqueens {arguments}")
        return 0
    if args.compare:
        old, new = args.compare
        return 1 if compare(old, new, only) else 0
    if args.record:
        if args.record.exists() and any(args.record.iterdir()):
            parser.error(f"--record: {args.record} is not empty; give a new folder")
        args.record.mkdir(parents=True, exist_ok=True)
        failures = run_all(args.record, only, log)
        log(f"snapshot in {args.record}" + (f"; {failures} command(s) failed" if failures else ""))
        return 1 if failures else 0
    if not args.against.is_dir():
        parser.error(f"--against: {args.against} is not a folder (record one with --record)")
    new = Path(tempfile.mkdtemp(prefix="jaxqueens-compare-"))
    try:
        failures = run_all(new, only, log)
        differences = compare(args.against, new, only)
        print(f"{differences} file(s) differ; {failures} command(s) failed")
        return 1 if differences or failures else 0
    finally:
        if args.keep:
            log(f"new run kept in {new}")
        else:
            shutil.rmtree(new, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
