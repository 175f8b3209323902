"""Tests for ASCII and PNG rendering."""

import ast
import os
from pathlib import Path

import numpy as np
import pytest

from jaxqueens.errors import QueensError
from jaxqueens.plots import render
from jaxqueens.plots.render import MAX_ASCII_N, MAX_PNG_N, ascii_board, board_image, render_png

SOLUTION_4 = [1, 3, 0, 2]
SOLUTION_8 = [0, 4, 7, 5, 2, 6, 1, 3]


def test_ascii_n4_row_zero_at_bottom():
    assert ascii_board(SOLUTION_4) == "3 . Q . .\n2 . . . Q\n1 Q . . .\n0 . . Q .\n  0 1 2 3"
    assert (
        ascii_board(np.array(SOLUTION_4, np.uint8), labels=False)
        == ". Q . .\n. . . Q\nQ . . .\n. . Q ."
    )


def test_ascii_labels_for_two_digit_n():
    text = ascii_board(list(range(12)))
    lines = text.split("\n")
    assert lines[0] == "11 " + " ".join(["."] * 11 + ["Q"])
    assert lines[11] == " 0 Q" + " ." * 11
    assert lines[12] == "   " + " ".join([" "] * 10 + ["1", "1"])
    assert lines[13] == "   " + " ".join("012345678901")
    assert all(line == line.rstrip() for line in lines)


def test_ascii_without_labels_for_large_n():
    n = MAX_ASCII_N
    lines = ascii_board(np.arange(n)[::-1]).split("\n")
    assert len(lines) == n and all(len(line) == 2 * n - 1 for line in lines)
    assert lines[-1] == " ".join(["."] * (n - 1) + ["Q"])  # row 0 holds the queen of column n-1
    assert sum(line.count("Q") for line in lines) == n


def test_ascii_shows_every_queen_of_a_combination_board():
    assert ascii_board([0, 0, 0], labels=False) == ". . .\n. . .\nQ Q Q"


def test_ascii_errors():
    with pytest.raises(QueensError, match=rf"at most {MAX_ASCII_N}.*render"):
        ascii_board(np.arange(MAX_ASCII_N + 1))
    with pytest.raises(QueensError, match=r"0\.\.3"):
        ascii_board([0, 1, 2, 4])
    with pytest.raises(QueensError, match="one board"):
        ascii_board([[0, 1]])
    with pytest.raises(QueensError, match="one board"):
        ascii_board([0.0, 1.0])


def test_board_image_colours():
    image = board_image(
        [0, 4, 7, 5, 2, 6, 1, 1]
    )  # columns 6 and 7 share row 1; 3 and 7 share r+c=8
    assert image.shape == (8, 8, 3)
    queens = {tuple(image[r, c]) for c, r in enumerate([0, 4, 7, 5, 2, 6, 1, 1])}
    safe, attacked = tuple(image[0, 0]), tuple(image[1, 6])
    assert safe != attacked and queens == {safe, attacked}
    assert tuple(image[5, 3]) == attacked and tuple(image[1, 7]) == attacked
    assert tuple(image[0, 1]) != tuple(image[1, 1])  # light and dark squares alternate
    assert tuple(image[0, 1]) not in queens and tuple(image[1, 1]) not in queens


def test_png_n8(tmp_path):
    import matplotlib.image

    path = tmp_path / "board.png"
    render_png(SOLUTION_8, path, title="eight queens")
    pixels = matplotlib.image.imread(path)
    assert pixels.ndim == 3 and pixels.shape[2] in (3, 4)
    assert 400 <= pixels.shape[0] <= 2000 and 400 <= pixels.shape[1] <= 2000
    assert os.listdir(tmp_path) == ["board.png"]


def test_png_n1000(tmp_path):
    import matplotlib.image

    path = tmp_path / "poster.png"
    render_png(np.random.default_rng(0).permutation(MAX_PNG_N), path)
    pixels = matplotlib.image.imread(path)
    assert pixels.shape[0] >= MAX_PNG_N and pixels.shape[1] >= MAX_PNG_N
    red = (pixels[..., 0] > 0.7) & (pixels[..., 1] < 0.3) & (pixels[..., 2] < 0.3)
    assert red.any()  # a random permutation of 1000 has attacked queens


@pytest.mark.parametrize("n", [1, 8, 33, 400, MAX_PNG_N])
def test_board_png_is_every_square_without_matplotlib(tmp_path, n):
    """The poster a command writes on its own: a PNG any reader decodes, k pixels a square, the
    centre of each square coloured as board_image colours it (row 0 at the bottom)."""
    import matplotlib.image

    rows = np.random.default_rng(n).permutation(n)
    path = tmp_path / "solution.png"
    render.board_png(rows, path)
    pixels = matplotlib.image.imread(path)[..., :3]
    k = max(2, render.POSTER_PIXELS // n)
    assert pixels.shape == (n * k, n * k, 3)
    centres = pixels[::-1][k // 2 :: k, k // 2 :: k]  # [row, column], row 0 first
    np.testing.assert_allclose(centres, board_image(rows), atol=1 / 255)
    assert os.listdir(tmp_path) == ["solution.png"]


def test_board_png_imports_no_matplotlib(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys, numpy as np; from jaxqueens.plots import render; "
        f"render.board_png(np.arange(8), {str(tmp_path / 'b.png')!r}); "
        "assert 'matplotlib' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_png_errors_leave_nothing(tmp_path):
    with pytest.raises(
        QueensError, match=rf"n = {MAX_PNG_N + 1} is too large.*at most {MAX_PNG_N}"
    ):
        render_png(np.arange(MAX_PNG_N + 1), tmp_path / "big.png")
    with pytest.raises(QueensError, match=r"0\.\.1"):
        render_png([0, 2], tmp_path / "bad.png")
    assert os.listdir(tmp_path) == []


def test_matplotlib_is_imported_lazily_and_without_pyplot():
    tree = ast.parse(Path(render.__file__).read_text())
    top = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    names = {alias.name for node in top if isinstance(node, ast.Import) for alias in node.names}
    names |= {node.module for node in top if isinstance(node, ast.ImportFrom)}
    assert not any(name.startswith("matplotlib") for name in names)
    everywhere = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    everywhere |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not any("pyplot" in name for name in everywhere)


@pytest.mark.parametrize("title", [r"$\foo$", r"$\frac{1}$", r"cost $x^$"])
def test_defect_8_bad_mathtext_title_is_a_one_line_error(tmp_path, title):
    """A title matplotlib cannot typeset is refused before drawing, naming the fix."""
    out = tmp_path / "q.png"
    with pytest.raises(QueensError, match=r"title .* mathtext") as err:
        render_png(SOLUTION_8, out, title=title)
    assert "\n" not in str(err.value) and r"\$" in str(err.value)
    assert not out.exists()


@pytest.mark.parametrize(
    "title", [r"$\alpha_2$ run", "50% done", "costs $5", r"price \$5 and \$6", None]
)
def test_defect_8_good_titles_still_render(tmp_path, title):
    render_png(SOLUTION_8, tmp_path / "q.png", title=title)
    assert (tmp_path / "q.png").stat().st_size > 1000


def test_defect_28_msg_image_format_follows_the_suffix(tmp_path):
    assert render.image_format("a.PDF") == "pdf" and render.image_format("b.svg") == "svg"
    with pytest.raises(QueensError, match=r"suffix '\.gif'"):
        render.image_format("x.gif")
    render_png(np.array([1, 3, 0, 2]), tmp_path / "b.pdf")
    assert (tmp_path / "b.pdf").read_bytes()[:4] == b"%PDF"
