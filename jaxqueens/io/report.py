"""`report.html`: one self-contained page per `--out` folder, readable offline in any browser.

The page reads in the order a person asks: the result, every figure (`FIGURE_ORDER`; PNG and
SVG embedded, PDF linked), the settings in full, the environment, and last the tables of every
folder of the output and a list of the files. Only this run's files are shown (`MANIFEST`,
written by `write_manifest` from a `snapshot` taken before the run). Nothing is fetched: the
styles are inline, there is no script, and a Content-Security-Policy forbids any request but
`data:` images. The command line writes it after every command that wrote `--out`;
`write_report` may be called on any folder.
"""

from __future__ import annotations

import datetime
import html
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from jaxqueens.io import jsonl, provenance
from jaxqueens.io.atomic import write_text
from jaxqueens.io.report_html import (
    MAX_CELL,
    MAX_SUMMARY_ROWS,
    cell,
    content,
    csv_table,
    figure,
    flatten,
    pairs,
    table,
)

FILENAME = "report.html"

FIGURE_SUFFIXES = (".png", ".svg", ".pdf")
"""Figures the page shows: PNG and SVG embedded as `data:` images, PDF as a link to the file."""
MAX_DEPTH = 2
"""Subfolder levels of `--out` that the page covers."""
FULL_TABLES = ("settings.csv",)
"""CSV tables shown in full (up to `MAX_SUMMARY_ROWS` rows) in the settings section."""
FIGURE_ORDER = (
    "solution",
    "success",
    "success_rate",
    "steps_ecdf",
    "seconds_ecdf",
    "ert",
    "rtd_steps",
    "rtd_seconds",
    "steps_hist",
    "best",
    "mean",
    "worst",
    "traces",
    "trace_conflicting_pairs",
    "trace_conflicted_queens",
    "coverage",
    "frequency_hist",
    "log_q_over_n",
)
"""Figure file stems in the order the page shows them: what was found, then how often and how
fast, then how the runs went, then the distributions behind them; a stem with a suffix
(`trace_conflicting_pairs_ls`) goes with the longest entry it starts with, and a figure named
in none of them comes last, by name."""
PROGRESS = re.compile(r"^\[\d+/\d+\] |^\w+: estimated run time ")
"""A printed line that announces work about to start (`[2/3] ls`, `TA: estimated run
time ...`): progress, left out of the page's result."""
MAX_RESULT_LINE = 200
"""A printed line longer than this is a note: shown in full below the result, not inside it."""
SKIPPED = ("checkpoint",)
"""Files whose name starts with one of these are listed only (never read)."""

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
"""The page may load nothing but its own `data:` images and inline styles: no script, no
request."""

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;
margin:2em auto;max-width:1100px;
padding:0 1em;color:#1b1b1b;background:#fff}
h1{font-size:1.6em;margin-bottom:.2em}
h2{font-size:1.3em;margin-top:2em;border-bottom:2px solid #ddd}
h3{font-size:1.05em;margin-top:1.4em}code,pre{font:13px ui-monospace,Menlo,Consolas,monospace}
pre{background:#f5f5f5;padding:.6em;overflow-x:auto;white-space:pre-wrap;word-break:break-all}
table{border-collapse:collapse;margin:.4em 0;font-size:13px}
th,td{border:1px solid #ccc;padding:2px 7px;text-align:left;vertical-align:top}
th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums}
.note{color:#666;font-size:12px}figure{margin:1em 0}figcaption{color:#444;font-size:12px}
img{max-width:100%;height:auto;border:1px solid #eee}.wide{overflow-x:auto}
pre.result{word-break:normal;overflow-wrap:break-word}
"""


def recommendation(doc: Any) -> list[str]:
    """A summary's recommendation: the `line` of every nested dict, in order."""
    if not isinstance(doc, dict):
        return []
    return [
        v["line"] for v in doc.values() if isinstance(v, dict) and isinstance(v.get("line"), str)
    ]


def _folders(root: Path) -> list[Path]:
    """`root` and its subfolders up to `MAX_DEPTH` levels, sorted (hidden ones left out)."""
    found = [root]
    level = [root]
    for _ in range(MAX_DEPTH):
        level = sorted(
            p
            for d in level
            for p in d.iterdir()
            if p.is_dir() and not p.name.startswith(".") and not p.is_symlink()
        )
        found += level
    return found


def _files(folder: Path) -> list[Path]:
    """The files of an output folder the page covers (not hidden, not the page itself)."""
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    return [p for p in files if p.name != FILENAME]


def _heading(root: Path, folder: Path, what: str) -> str:
    rel = folder.relative_to(root).as_posix()
    return f"<h2>{cell(what if rel == '.' else f'{what}: {rel}/')}</h2>"


def _figure_rank(path: Path) -> tuple[int, str]:
    """Where a figure goes in the page (`FIGURE_ORDER`), then its name."""
    known = [(len(s), i) for i, s in enumerate(FIGURE_ORDER) if path.stem.startswith(s)]
    return max(known, default=(0, len(FIGURE_ORDER)))[1], path.name


def _figures_section(root: Path, folder: Path, files: list[Path], shown: int) -> tuple[str, int]:
    """The figures among this run's `files` of `folder`: PNG and SVG embedded (`shown` were so
    far; at most `MAX_FIGURES` are), PDF linked; and how many are embedded now."""
    parts = []
    for path in sorted((p for p in files if p.suffix.lower() in FIGURE_SUFFIXES), key=_figure_rank):
        block, embedded = figure(path, shown)
        shown += embedded
        parts.append(block)
    return (_heading(root, folder, "figures") + "".join(parts) if parts else ""), shown


def _summary(path: Path) -> Any:
    """The document a `summary.json` holds (as this run wrote it), or the `OSError` or
    `ValueError` that kept it from being read as JSON."""
    try:
        return jsonl.loads(content(path).decode("utf-8"))
    except (OSError, ValueError) as err:
        return err


def _result_section(doc: Any, result: str | None) -> str:
    """The recommendation of the folder's own `summary.json` `doc` (this run's), then what the
    command printed without its progress lines (`PROGRESS`), then its long lines
    (`MAX_RESULT_LINE`) as notes; empty when there is neither."""
    lines = recommendation(doc)
    printed = [
        ln
        for ln in (result or "").rstrip().splitlines()
        if not PROGRESS.match(ln) and ln.strip() not in lines
    ]
    short = [ln for ln in printed if len(ln) <= MAX_RESULT_LINE]
    notes = [ln for ln in printed if len(ln) > MAX_RESULT_LINE]
    if not lines and not "".join(printed).strip():
        return ""
    return (
        "<h2>result</h2>"
        + "".join(f"<p><strong>{html.escape(line)}</strong></p>" for line in lines)
        + (
            f'<pre class="result">{html.escape(chr(10).join(short))}</pre>'
            if "".join(short).strip()
            else ""
        )
        + "".join(f'<p class="note">{html.escape(line.strip())}</p>' for line in notes)
    )


def _settings_section(root: Path, mine: dict[Path, list[Path]], line: str, given: dict) -> str:
    """The command line, the settings the user gave, the `--config` file's text and every
    `FULL_TABLES` table of this run (`mine`: its files by folder), in full."""
    parts = [
        f"<h2>settings</h2><h3>command</h3><pre>{html.escape(line)}</pre><h3>given</h3>",
        pairs(given) if given else '<p class="note">none: every setting at its default</p>',
    ]
    text = provenance.config_text(given.get("config"))
    if text is not None:
        parts.append(f"<h3>config file {cell(given['config'])}</h3><pre>{html.escape(text)}</pre>")
    parts += [
        csv_table(path, MAX_SUMMARY_ROWS, path.relative_to(root).as_posix())
        for files in mine.values()
        for path in files
        if path.name in FULL_TABLES
    ]
    return "".join(parts)


def _environment_section(env: dict, devs: dict) -> str:
    """Versions, platform, CPU, commit, `XLA_FLAGS` and devices as a table; a value too long
    for a cell (the XLA flags) in full below it."""
    rows = flatten(env) + flatten(devs)
    long = [(k, v) for k, v in rows if len(str(v)) > MAX_CELL]
    return (
        "<h2>environment</h2>"
        + table(("what", "value"), rows)
        + "".join(f"<h3>{cell(k)}</h3><pre>{html.escape(str(v))}</pre>" for k, v in long)
    )


def _tables_section(root: Path, folder: Path, every: list[Path], files: list[Path], docs) -> str:
    """`summary.json` (`docs`: this run's by folder, as `_summary` read them), the CSV tables
    (`summary.csv` first) and the file list of `folder`: the tables of the `files` this run
    wrote; the others of `every` file there are listed as an earlier run's."""
    if not every:
        return ""
    parts = [_heading(root, folder, "tables")]
    doc = docs.get(folder)
    if isinstance(doc, Exception):
        parts.append(f'<p class="note">summary.json could not be read: {cell(doc)}</p>')
    elif isinstance(doc, dict):
        shown = pairs({k: v for k, v in doc.items() if k != "run"})
        run = '<p class="note">its run record is under settings and environment</p>'
        parts.append("<h3>summary.json</h3>" + shown + (run if "run" in doc else ""))
    elif folder in docs:
        parts.append(f"<h3>summary.json</h3><pre>{cell(json.dumps(doc)[:5000])}</pre>")
    tables = [
        p
        for p in files
        if p.suffix.lower() == ".csv"
        and not p.name.startswith(SKIPPED)
        and p.name not in FULL_TABLES
    ]
    tables.sort(key=lambda p: p.name != "summary.csv")  # the summary table first
    parts += [csv_table(p) for p in tables]
    parts.append("<h3>files</h3>" + _listing(files))
    ours = set(files)
    stale = [p for p in every if p not in ours]
    if stale:
        parts.append(
            "<h3>files an earlier run left here</h3>"
            '<p class="note">not written by this run, so not shown as its results</p>'
            + _listing(stale)
        )
    return "".join(parts)


def _listing(files: list[Path]) -> str:
    return table(("file", "bytes"), ((p.name, f"{p.stat().st_size:,}") for p in files))


MANIFEST = "manifest.json"
"""The files this run wrote in its `--out` folder (relative path and bytes), written after the
outputs and before the page: the page shows only these; a file an earlier run left is listed
as such, never shown as this run's."""


def snapshot(out_dir: str | Path) -> dict[str, tuple[int, int]]:
    """What a folder holds before a run: every file the page would cover, `relative path ->
    (mtime in ns, bytes)` (empty for a missing folder)."""
    root = Path(out_dir)
    if not root.is_dir():
        return {}
    out = {}
    for path in (p for folder in _folders(root) for p in _files(folder)):
        st = path.stat()
        out[path.relative_to(root).as_posix()] = (st.st_mtime_ns, st.st_size)
    return out


def write_manifest(out_dir: str | Path, before: dict[str, tuple[int, int]], command: str) -> set:
    """Write `MANIFEST` (naming `command`): the files of a folder that are new or changed since
    its `snapshot` `before` the run. Returns their relative paths and the manifest's own (this
    run's files, as the page shows them)."""
    root = Path(out_dir)
    mine = {k: v[1] for k, v in snapshot(root).items() if k != MANIFEST and before.get(k) != v}
    files = [{"path": k, "bytes": v} for k, v in sorted(mine.items())]
    write_text(root / MANIFEST, json.dumps({"command": command, "files": files}, indent=2) + "\n")
    return {*mine, MANIFEST}


def render(
    out_dir: str | Path,
    *,
    command_line: Sequence[str] | str,
    settings: dict | None = None,
    devices: dict | None = None,
    title: str | None = None,
    result: str | None = None,
    only: set | None = None,
) -> str:
    """The page for the output folder `out_dir` as a string (see the module doc), titled `title`
    (default: "jaxqueens <command>"): `command_line` is its words (or the line), `settings` the
    options the user gave (a value that is not plain data is shown as text), `devices` what ran
    it (backend, devices, processes; None: the command did not start JAX), `result` what the
    command printed, shown after the summary's recommendation without its progress lines, and
    `only` the relative paths of the files this run wrote (`write_manifest`): only they are
    shown, the others are listed as an earlier run's (None: every file is this run's)."""
    root = Path(out_dir)
    line = command_line if isinstance(command_line, str) else " ".join(map(str, command_line))
    words = line.split()
    title = title or f"jaxqueens {words[1] if len(words) > 1 else ''}".strip()
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    env = provenance.environment()
    env = {
        **env["versions"],
        **{k: env[k] for k in ("platform", "cpu", "commit", "xla_flags")},
        "written": now,
    }
    devs = devices if devices is not None else {"devices": "none: this command did not start JAX"}
    plain = {k: v for k, v in (settings or {}).items() if not callable(v) and not k.startswith("_")}
    folders = _folders(root)
    every = {folder: _files(folder) for folder in folders}
    mine = {
        folder: [p for p in every[folder] if only is None or p.relative_to(root).as_posix() in only]
        for folder in folders
    }
    docs = {f: _summary(f / "summary.json") for f in folders if f / "summary.json" in mine[f]}
    body = [
        f"<h1>{cell(title)}</h1>",
        f'<p class="note">report of {cell(root.resolve())}, written {now}</p>',
        _result_section(docs.get(root), result),
    ]
    shown = 0
    for folder in folders:
        section, shown = _figures_section(root, folder, mine[folder], shown)
        body.append(section)
    body += [_settings_section(root, mine, line, plain), _environment_section(env, devs)]
    body += [_tables_section(root, f, every[f], mine[f], docs) for f in folders]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{cell(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        + "\n".join(b for b in body if b)
        + "\n</body>\n</html>\n"
    )


def write_report(out_dir: str | Path, **page: Any) -> Path:
    """Write `render`'s page (`page`: its keyword arguments) to `out_dir/report.html`
    atomically; returns its path."""
    path = Path(out_dir) / FILENAME
    write_text(path, render(out_dir, **page))
    return path


def command_words(argv: Sequence[str] | None = None) -> list[str]:
    """The command line as typed: `jaxqueens` and the arguments (default `sys.argv[1:]`)."""
    return ["jaxqueens", *(sys.argv[1:] if argv is None else list(argv))]
