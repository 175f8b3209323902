"""What every figure shares: one ``matplotlib.figure.Figure`` per file (no pyplot state, so
plotting is safe in any thread), matplotlib imported only when a figure is drawn, the file
written atomically in the format asked (:func:`save`: PNG, or SVG / PDF for papers, at a chosen
dpi), and line styles that tell the series apart in greyscale too (:func:`series_style`)."""

from __future__ import annotations

import io
from pathlib import Path

from jaxqueens.io.atomic import write_bytes

FORMATS = ("png", "svg", "pdf")
"""Figure formats :func:`save` writes: PNG (raster) and the vector SVG and PDF."""
DEFAULT_FORMAT = "png"
DEFAULT_DPI = 110
"""Resolution of a PNG (and of the raster parts of a vector figure) unless one is asked for."""

LINESTYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
HATCHES = ("", "//", "..", "xx", "\\\\", "++", "--", "oo", "||", "**")
"""Line styles, markers and bar hatches: series i gets the i-th of each (cycled), so that a
figure printed in greyscale still tells its series apart (colour alone does not)."""


def series_style(i: int, markers: int = 8) -> dict:
    """Keyword arguments of ``ax.plot`` for series ``i``: a colour, a line style and a marker
    (about ``markers`` per line, so markers label the line without hiding it)."""
    return {
        "color": f"C{i % 10}",
        "ls": LINESTYLES[i % len(LINESTYLES)],
        "marker": MARKERS[i % len(MARKERS)],
        "markevery": 1.0 / max(1, markers),
        "markersize": 4,
        "markerfacecolor": "none" if (i // len(MARKERS)) % 2 == 0 else f"C{i % 10}",
    }


BAND = (10, 90)
"""Percentiles of the band drawn across chains on trace figures (:func:`percentile_band`)."""


def percentile_band(ax, x, values, label: str, i: int = 0, band: tuple[int, int] = BAND) -> None:
    """The median across chains of ``values`` [K, T] against ``x`` [T] as a line in series
    ``i``'s style, and the ``band`` percentiles (10-90% by default) as a shaded band with the
    same line style at its edges (visible in greyscale too); the legend names both."""
    import numpy as np

    values = np.asarray(values, dtype=np.float64)
    style = series_style(i)
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
    ax.plot(x, mid, drawstyle="steps-post", lw=1.6, label=f"{label}: median", **style)


def check_format(fmt: str | None) -> str:
    """``fmt`` (None: :data:`DEFAULT_FORMAT`) if it is one of :data:`FORMATS`; a ValueError
    otherwise (the command line offers only these)."""
    fmt = DEFAULT_FORMAT if fmt is None else fmt
    if fmt not in FORMATS:
        raise ValueError(f"figure format {fmt!r}: use one of {', '.join(FORMATS)}")
    return fmt


def figure(width: float = 7.0, height: float = 4.0, dpi: int | None = None):
    """A new figure with one axes: ``(fig, ax)``."""
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
    """Label, grid and save (:func:`save`): the common end of a line figure."""
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
    """Write ``fig`` atomically as ``fmt`` (None: the format ``path``'s suffix names, PNG for
    any other) at ``dpi`` (None: the figure's own); the path's suffix becomes the format's.
    Vector files carry no creation date, so the same figure gives the same bytes; an SVG keeps
    its text as text (editable, searchable). Returns the path written."""
    import matplotlib as mpl

    path = Path(path)
    if fmt is None:
        fmt = path.suffix[1:].lower() if path.suffix[1:].lower() in FORMATS else DEFAULT_FORMAT
    fmt = check_format(fmt)
    path = path.with_suffix("." + fmt)
    fig.tight_layout()
    metadata = {"png": None, "svg": {"Date": None}, "pdf": {"CreationDate": None}}[fmt]
    buffer = io.BytesIO()  # rendered whole first: the file is written (and kept) in one piece
    with mpl.rc_context({"svg.hashsalt": "jaxqueens", "svg.fonttype": "none"}):
        fig.savefig(buffer, format=fmt, dpi=dpi if dpi is not None else "figure", metadata=metadata)
    write_bytes(path, buffer.getvalue())
    return path


def save_png(fig, path: Path, dpi: int | None = None) -> Path:
    """Write ``fig`` to ``path`` as PNG, atomically (:func:`save`)."""
    return save(fig, path, "png", dpi)
