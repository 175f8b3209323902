"""Host-only pictures of a board: ASCII for the terminal, a PNG poster for large n.

Both draw row 0 at the bottom, as on a chess board. The PNG colours every
square as one block of pixels (light and dark squares, queens in black, queens
attacked by another queen in red), so n = 1000 still shows every square.
Matplotlib is imported only inside `render_png` and used through its
object-oriented API with the Agg canvas: no pyplot, no global figure state.
"""

from __future__ import annotations

import io
import math
import os
import struct
import zlib
from typing import Any

import numpy as np

from jaxqueens.core import checker
from jaxqueens.errors import QueensError
from jaxqueens.io.atomic import write_bytes
from jaxqueens.plots.base import rc_context

MAX_ASCII_N = 64
MAX_PNG_N = 1000
LABEL_MAX_N = 26  # ascii_board labels rows and columns up to this n

_LIGHT = (0.93, 0.85, 0.71)
_DARK = (0.71, 0.53, 0.39)
_QUEEN = (0.05, 0.05, 0.05)
_ATTACKED = (0.85, 0.10, 0.10)


def _board(rows: Any, limit: int, hint: str) -> np.ndarray:
    """Validate one board for drawing: integer `[n]`, 1 <= n <= limit, values in 0..n-1."""
    arr = np.asarray(rows)
    if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer):
        raise QueensError(
            f"cannot draw a board of shape {arr.shape} and dtype {arr.dtype}; pass one board "
            "rows[n]"
        )
    n = len(arr)
    if n > limit:
        raise QueensError(f"n = {n} is too large to draw here (at most {limit}); {hint}")
    if arr.min() < 0 or arr.max() >= n:
        raise QueensError(f"cannot draw the board: rows must lie in 0..{n - 1}; pass 0-based rows")
    return arr.astype(np.int64)


def ascii_board(rows: Any, labels: bool | None = None) -> str:
    """Draw board `rows` (int `[n]`, 0-based) as text: `Q` for a queen, `.` for an empty square, row
    0 at the bottom; n lines (more with labels) joined by newlines, without a final newline.

    `labels` labels rows (left) and columns (below, tens digit above units digit when n > 10); None:
    when n <= `LABEL_MAX_N`.

    Raises:
      QueensError: for n > `MAX_ASCII_N` (render a PNG instead) or a malformed board.
    """
    arr = _board(rows, MAX_ASCII_N, "render it to a PNG with `jaxqueens render` instead")
    n = len(arr)
    labels = n <= LABEL_MAX_N if labels is None else labels
    width = len(str(n - 1)) if labels else 0
    lines = []
    for r in range(n - 1, -1, -1):
        cells = " ".join(np.where(arr == r, "Q", "."))
        lines.append(f"{r:>{width}} {cells}" if labels else cells)
    if labels:
        cols = np.arange(n)
        if n > 10:
            tens = " ".join(str(c // 10) if c >= 10 else " " for c in cols)
            lines.append(f"{'':>{width}} {tens}".rstrip())
        lines.append(f"{'':>{width}} " + " ".join(str(c % 10) for c in cols))
    return "\n".join(lines)


def board_image(rows: Any) -> np.ndarray:
    """Colour image of board `rows` (int `[n]`, 0-based, n <= `MAX_PNG_N`): float32 `[n, n, 3]` RGB
    in 0..1, `image[r, c]` the square of row r, column c (row 0 first: draw it with
    `origin="lower"`)."""
    arr = _board(rows, MAX_PNG_N, "draw a smaller board")
    n = len(arr)
    image = _squares(n)
    attacked = checker.queen_conflicts(arr) > 0
    cols = np.arange(n)
    image[arr, cols] = np.where(attacked[:, None], _ATTACKED, _QUEEN)
    return image


POSTER_PIXELS = 800
"""The width a board poster without text (`board_png`) aims at, in pixels."""


def board_png(rows: Any, path: str | os.PathLike) -> None:
    """Write board `rows` (int `[n]`, 0-based) as a PNG of its squares alone (atomically): no text,
    no matplotlib.

    What a command draws on its own with `--out` (the `render` command and `--plot` draw the titled
    poster, `render_png`): the squares of `board_image`, row 0 at the bottom, each `k` pixels wide
    (`k` = `POSTER_PIXELS // n`, at least 2), a queen a disc on its square from `k = 8` on (black,
    or red when attacked).

    Raises:
      QueensError: for n > `MAX_PNG_N` or a malformed board.
    """
    arr = _board(rows, MAX_PNG_N, "draw a smaller board")
    n = len(arr)
    k = max(2, POSTER_PIXELS // n)
    image = board_image(arr)
    if k >= 8:  # queens as discs: the square's own colour outside the disc
        plain = _squares(n)
        y, x = np.mgrid[0:k, 0:k] + 0.5
        disc = (y - k / 2) ** 2 + (x - k / 2) ** 2 <= (0.36 * k) ** 2
        big = np.repeat(np.repeat(image, k, 0), k, 1)
        base = np.repeat(np.repeat(plain, k, 0), k, 1)
        inside = np.tile(disc, (n, n))
        big = np.where(inside[..., None], big, base)
    else:
        big = np.repeat(np.repeat(image, k, 0), k, 1)
    pixels = np.ascontiguousarray((big[::-1] * 255 + 0.5).astype(np.uint8))  # row 0 at the bottom
    write_bytes(path, _png(pixels))


def _squares(n: int) -> np.ndarray:
    """The empty board's colours, `[n, n, 3]` (`board_image` without queens)."""
    r, c = np.indices((n, n))
    return np.where(((r + c) % 2 == 0)[..., None], _DARK, _LIGHT).astype(np.float32)


def _png(pixels: np.ndarray) -> bytes:
    """PNG bytes of a uint8 RGB image `[h, w, 3]` (8-bit truecolour, no filter)."""
    h, w, _ = pixels.shape
    raw = np.concatenate([np.zeros((h, 1), np.uint8), pixels.reshape(h, 3 * w)], axis=1)

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw.tobytes(), 6))
        + chunk(b"IEND", b"")
    )


def _check_title(title: str | None) -> None:
    """Refuse, before drawing, a title that matplotlib would fail to typeset: text with an even
    number of unescaped `$` is mathtext, and an unknown symbol there is a parse error."""
    from matplotlib import cbook
    from matplotlib.mathtext import MathTextParser

    if not title or not cbook.is_math_text(title):
        return
    try:
        MathTextParser("path").parse(title)
    except ValueError as err:
        lines = [line.strip() for line in str(err).splitlines() if line.strip()]
        reason = (lines[-1] if lines else "parse error").split(": ", 1)[-1].split("  (at char")[0]
        raise QueensError(
            f"title '{title[:60]}' is not valid matplotlib mathtext ({reason[:80]}); "
            r"fix the $...$ part, or write \$ for a dollar sign"
        ) from None


IMAGE_FORMATS = {
    ".png": "png",
    ".pdf": "pdf",
    ".svg": "svg",
    ".svgz": "svgz",
    ".eps": "eps",
    ".ps": "ps",
    ".jpg": "jpg",
    ".jpeg": "jpeg",
    ".tif": "tif",
    ".tiff": "tiff",
    ".webp": "webp",
}
"""File suffix -> the format matplotlib writes (its Agg canvas writes each of these)."""


def image_format(path: str | os.PathLike, option: str | None = None) -> str:
    """The format a poster at `path` is written in (a value of `IMAGE_FORMATS`), chosen by the
    file's suffix (case-insensitive); `option` (e.g. `-o`) names the option in the message.

    Raises:
      QueensError: an unknown or missing suffix (never PNG bytes under another name).
    """
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in IMAGE_FORMATS:
        shown = f"suffix {suffix!r}" if suffix else "no suffix"
        where = f"{option} {os.fspath(path)}" if option else os.fspath(path)
        raise QueensError(
            f"{where}: {shown}; name the output by its format: {', '.join(IMAGE_FORMATS)}"
        )
    return IMAGE_FORMATS[suffix]


def render_png(rows: Any, path: str | os.PathLike, title: str | None = None) -> None:
    """Write a poster of board `rows` (int `[n]`, 0-based) atomically, in the format the suffix of
    `path` names (PNG, PDF, SVG, ...: `IMAGE_FORMATS`); `title` is the first title line, the second
    always gives n and the attacking-pair count.

    Raises:
      QueensError: for n > `MAX_PNG_N`, a malformed board, a title with bad mathtext or an
        unknown suffix.
    """
    fmt = image_format(path)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    arr = _board(rows, MAX_PNG_N, "draw a smaller board")
    _check_title(title)
    image = board_image(arr)
    n = len(arr)
    pairs = int(checker.attacking_pairs(arr))
    verdict = "a solution" if pairs == 0 else f"{pairs} attacking pair{'s' * (pairs != 1)}"
    text = f"n = {n}: {verdict}"
    width, height = 8.0, 8.4  # inches
    box = (
        0.1,
        0.07,
        0.85,
        0.85 * width / height,
    )  # a square board 6.8 inches wide, room for the title
    dpi = max(100, math.ceil(2 * n / (box[2] * width)))  # at least 2 pixels per square
    fig = Figure(figsize=(width, height), dpi=dpi)
    FigureCanvasAgg(fig)
    ax = fig.add_axes(box)
    ax.imshow(image, origin="lower", interpolation="nearest")
    if n <= 32:
        ax.set_xticks(range(n))
        ax.set_yticks(range(n))
        ax.tick_params(length=0, labelsize=max(5, 10 - n // 8))
        ax.set_xlabel("column")
        ax.set_ylabel("row")
    else:
        ax.set_axis_off()
    ax.set_title(f"{title}\n{text}" if title else text)
    buffer = io.BytesIO()
    with rc_context():  # TrueType fonts in a PDF, PS or EPS poster
        fig.savefig(buffer, format=fmt, dpi=dpi)
    write_bytes(path, buffer.getvalue())
