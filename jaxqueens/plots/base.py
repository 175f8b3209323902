"""What every figure shares: one ``matplotlib.figure.Figure`` per file (no pyplot state, so
plotting is safe in any thread), matplotlib imported only when a figure is drawn, and the PNG
written atomically."""

from __future__ import annotations

from pathlib import Path

from jaxqueens.io.atomic import atomic_path


def figure(width: float = 7.0, height: float = 4.0):
    """A new figure with one axes: ``(fig, ax)``."""
    from matplotlib.figure import Figure  # (lazily: drawing is optional)

    fig = Figure(figsize=(width, height), dpi=110)
    return fig, fig.add_subplot(1, 1, 1)


def finish(
    fig,
    ax,
    path: Path,
    title: str,
    xlabel: str | None = None,
    ylabel: str | None = None,
    ylim: tuple[float | None, float | None] | None = None,
) -> Path:
    """Label, grid and save: the common end of a line figure."""
    if xlabel is not None:
        ax.set_xlabel(xlabel)
    if ylabel is not None:
        ax.set_ylabel(ylabel)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    return save_png(fig, path)


def save_png(fig, path: Path) -> Path:
    """Write ``fig`` to ``path`` as PNG, atomically."""
    fig.tight_layout()
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        fig.savefig(f, format="png")
    return Path(path)
