"""What every figure shares: one `matplotlib.figure.Figure` per file (no pyplot state, so
plotting is safe in any thread), matplotlib imported only when a figure is drawn, the file
written atomically in the format asked (`save`: PNG, or SVG / PDF for papers, at a chosen
dpi) under `RC` (TrueType fonts, which journals' PDF checks accept), and one style per
solver, the same in every figure and command (`solver_style`), told apart in greyscale
too."""

from __future__ import annotations

import contextlib
import io
import re
import zlib
from pathlib import Path
from typing import Any

from jaxqueens.core.statistics import Z95, wilson_interval
from jaxqueens.io.atomic import write_bytes

FORMATS = ("png", "svg", "pdf")
DEFAULT_FORMAT = "png"
DEFAULT_DPI = 110  # a PNG's resolution (and a vector figure's raster parts) unless one is asked

RC: dict[Any, Any] = {  # (keys checked by matplotlib, not by the type checker)
    "pdf.fonttype": 42,
    "ps.fonttype": 42,
    "svg.fonttype": "none",
    "svg.hashsalt": "jaxqueens",
}
"""Matplotlib settings every file is written under (`rc_context`): fonts embedded in PDF
and PostScript as TrueType (Type 42), never as Type 3, which IEEE's and ACM's PDF checks
reject; SVG text kept as text; SVG ids fixed, so the same figure gives the same bytes."""


def rc_context() -> contextlib.AbstractContextManager:
    """A context under which a figure is saved with the settings of `RC` (matplotlib's own settings
    again after it)."""
    import matplotlib as mpl

    return mpl.rc_context(RC)


SOLVER_STYLES: dict[str, tuple[str, str, str]] = {
    "mc-random": ("#1f77b4", "o", "-"),
    "mc-permutation": ("#ff7f0e", "s", "--"),
    "mc-greedy": ("#2ca02c", "^", "-."),
    "mc-qs4": ("#d62728", "D", ":"),
    "mc-tabu": ("#9467bd", "v", "--"),
    "ls": ("#8c564b", "P", "--"),
    "ta": ("#17becf", "X", "-"),
    "sa": ("#e377c2", "*", "-."),
    "ga-permutation": ("#bcbd22", "<", ":"),
    "ga-combination": ("#7f7f7f", ">", "-"),
}
"""Solver (`compare`'s names) -> `(colour, marker, line style)`, the same in every figure of
every command: each solver its own colour, and its own pair of dash and marker, so a greyscale
print keeps them apart too."""

SOLVER_ALIASES = {
    "min-conflicts": "mc-permutation",
    "minconflicts": "mc-permutation",
    "annealing-ls": "ls",
    "annealing-ta": "ta",
    "annealing-sa": "sa",
    "anneal-ls": "ls",
    "anneal-ta": "ta",
    "anneal-sa": "sa",
    "ga": "ga-permutation",
}
"""The other commands' spellings of a solver of `SOLVER_STYLES` (a family's bare name
stands for its default: min-conflicts from permutations, the GA on permutations); `family
(detail)`, as `stats` titles name a solver, reads as `family-detail`."""

LINESTYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
HATCHES = ("", "//", "..", "xx", "\\\\", "++", "--", "oo", "||", "**")
"""The line styles and markers of a solver not in `SOLVER_STYLES` (chosen by a hash of its
name), and the bar hatches, one per solver (`solver_hatch`)."""


def canonical(name: str) -> str:
    """The name `SOLVER_STYLES` knows a solver by (`annealing-ls`, `anneal (ls)` and `LS` are `ls`),
    or `name` lower-cased if it is not known."""
    key = name.strip().lower()
    family = re.fullmatch(r"(.+?)\s*\((.+)\)", key)
    if family:
        key = f"{family[1]}-{family[2]}"
    return SOLVER_ALIASES.get(key, key)


def _style(name: str) -> tuple[int, tuple[str, str, str]]:
    """A solver's position in `SOLVER_STYLES` and its style; an unknown one gets a grey,
    a dash and a marker fixed by its name."""
    key = canonical(name)
    if key in SOLVER_STYLES:
        return list(SOLVER_STYLES).index(key), SOLVER_STYLES[key]
    h = zlib.crc32(key.encode())
    return h % len(SOLVER_STYLES), ("#404040", MARKERS[h % len(MARKERS)], LINESTYLES[h % 4])


def solver_style(name: str, markers: int = 8) -> dict:
    """Keyword arguments of `ax.plot` for solver `name` under any of its spellings (`canonical`):
    `color`, `ls`, `marker`, `markevery`, `markersize`, `markerfacecolor`, `lw`, `alpha` and
    `zorder`. About `markers` markers per line, at points that differ from solver to solver, so that
    curves that coincide (LS and TA often do) stay visible: a broken line is drawn thinner and above
    a solid one."""
    i, (color, marker, ls) = _style(name)
    step = 1.0 / max(1, markers)
    solid = ls == "-"
    return {
        "color": color,
        "ls": ls,
        "marker": marker,
        "markevery": (step * i / len(SOLVER_STYLES), step),
        "markersize": 5,
        "markerfacecolor": "none",
        "lw": 2.2 if solid else 1.5,
        "alpha": 0.9,
        "zorder": 2.0 if solid else 2.5,
    }


def solver_hatch(name: str) -> str:
    """The matplotlib bar hatch of solver `name` (any spelling), fixed as its colour is."""
    return HATCHES[_style(name)[0] % len(HATCHES)]


RATE_LIMITS = (-0.02, 1.02)
"""The y range of a figure of rates: a little below 0, so that a line at 0 (a solver that solved
nothing) is drawn above the axis, not hidden in it."""

BAND = (10, 90)
"""Percentiles of the band drawn across chains on trace figures (`percentile_band`)."""


def percentile_band(
    ax, x, values, label: str, solver: str | None = None, band: tuple[int, int] = BAND
) -> None:
    """The median across chains of `values` `[K, T]` (at `x` `[T]`) as a line labelled `label`, in
    the style of `solver` (None: `label`'s), and the percentile band `band` around it.

    The band is shaded, with the line's style at its edges (visible in greyscale too); the legend
    names both."""
    import numpy as np

    values = np.asarray(values, dtype=np.float64)
    style = solver_style(label if solver is None else solver)
    lo, mid, hi = np.percentile(values, [band[0], 50, band[1]], axis=0)
    k = values.shape[0]
    ax.fill_between(
        x,
        lo,
        hi,
        color=style["color"],
        alpha=0.18,
        lw=0.6,
        ls=style["ls"],
        step="post",
        label=f"{label}: {band[0]}-{band[1]}% of {k} chains",
    )
    ax.plot(x, mid, drawstyle="steps-post", label=f"{label}: median", **style)


def rate_band(ax, x, rate, trials: int, color: str, z: float | None = None) -> None:
    """The Wilson score interval (`wilson_interval`) of success rates `rate` `[P]` at `x` `[P]`,
    each over `trials` runs, as a band of `color` behind its line; `z` is the normal quantile (None:
    95%, two-sided)."""
    import numpy as np

    rate = np.asarray(rate, dtype=np.float64)
    lo, hi = wilson_interval(np.rint(rate * trials), trials, Z95 if z is None else z)
    ax.fill_between(x, lo, hi, step="post", color=color, alpha=0.15, lw=0, zorder=1.5)


def check_format(fmt: str | None) -> str:
    """A checked figure format: `fmt`, or `DEFAULT_FORMAT` for None.

    Raises:
      ValueError: a format not in `FORMATS` (the command line offers only those).
    """
    fmt = DEFAULT_FORMAT if fmt is None else fmt
    if fmt not in FORMATS:
        raise ValueError(f"figure format {fmt!r}: use one of {', '.join(FORMATS)}")
    return fmt


def figure(width: float = 7.0, height: float = 4.0, dpi: int | None = None):
    """A new figure with one axes, `width` x `height` inches at `dpi` (None: `DEFAULT_DPI`):
    `(fig, ax)`."""
    from matplotlib.figure import Figure  # (lazily: drawing is optional)

    fig = Figure(figsize=(width, height), dpi=DEFAULT_DPI if dpi is None else dpi)
    return fig, fig.add_subplot(1, 1, 1)


def finish(
    fig,
    ax,
    path: Path,
    title: str,
    xlabel: str | None = None,
    ylabel: str | None = None,
    ylim: tuple[float | None, float | None] | None = None,
    fmt: str | None = None,
    dpi: int | None = None,
) -> Path:
    """Label, grid and save (`save`, which takes `fmt` and `dpi`): the common end of a line figure;
    `ylim` None keeps matplotlib's limits. Returns the path written."""
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    return save(fig, path, fmt, dpi)


def save(fig, path: Path, fmt: str | None = None, dpi: int | None = None) -> Path:
    """Write a figure atomically; returns the path written, `path` with the format's suffix.

    `fmt` None takes the format `path`'s suffix names (PNG for any other), `dpi` None the figure's
    own. Vector files carry no creation date, so the same figure gives the same bytes; an SVG keeps
    its text as text (editable, searchable).
    """
    path = Path(path)
    if fmt is None:
        fmt = path.suffix[1:].lower() if path.suffix[1:].lower() in FORMATS else DEFAULT_FORMAT
    fmt = check_format(fmt)
    path = path.with_suffix("." + fmt)
    fig.tight_layout()
    metadata = {"png": None, "svg": {"Date": None}, "pdf": {"CreationDate": None}}[fmt]
    buffer = io.BytesIO()  # rendered whole first: the file is written (and kept) in one piece
    with rc_context():
        fig.savefig(buffer, format=fmt, dpi=dpi if dpi is not None else "figure", metadata=metadata)
    write_bytes(path, buffer.getvalue())
    return path


def save_png(fig, path: Path, dpi: int | None = None) -> Path:
    """Write a figure as PNG, atomically (`save`; `dpi` None: the figure's own)."""
    return save(fig, path, "png", dpi)
