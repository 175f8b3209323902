"""The shared figure setup of :mod:`jaxqueens.plots.base`: TrueType fonts in every PDF and
PostScript file, and one style per solver name in every figure."""

import re
import shutil
import subprocess

import numpy as np
import pytest

from jaxqueens.plots import base, render


def font_types(data: bytes) -> set[str]:
    """The kinds of font a PDF (``/Subtype /TrueType``, ``/Type3``, ...) or PostScript file
    (``/FontType 42``, ``3``) embeds, read from its font dictionaries (matplotlib writes them
    uncompressed)."""
    if data.startswith(b"%PDF"):
        fonts = re.findall(rb"/Type\s*/Font\b[^>]*?/Subtype\s*/(\w+)", data)
        fonts += re.findall(rb"/Subtype\s*/(\w+)[^>]*?/Type\s*/Font\b", data)
        return {f.decode() for f in fonts}
    return {f"FontType {t.decode()}" for t in re.findall(rb"/FontType\s+(\d+)", data)}


def test_pdf_and_ps_files_embed_truetype_not_type3_fonts(tmp_path):
    """IEEE and ACM checks reject Type 3 fonts: a figure's PDF (text and mathtext) and a board
    poster's PDF and EPS (the PostScript writer) embed Type 42 (TrueType) fonts only."""
    fig, ax = base.figure()
    ax.plot([0, 1], [0, 1], label="ls")
    ax.legend()
    pdfs = [base.finish(fig, ax, tmp_path / "line.pdf", r"title $\alpha^2$", "steps", "rate")]
    posters = [tmp_path / f"board.{suffix}" for suffix in ("pdf", "eps")]
    for path in posters:
        render.render_png(np.array([1, 3, 0, 2]), path, title=r"board $n^2$")
    pdfs.append(posters[0])
    for path in pdfs:
        kinds = font_types(path.read_bytes())
        assert kinds and kinds <= {"TrueType", "Type0", "CIDFontType2"}, (path.name, kinds)
    for path in posters[1:]:
        assert font_types(path.read_bytes()) == {"FontType 42"}, path.name
    if shutil.which("pdffonts"):  # poppler, where installed: its own reading of the same files
        for path in pdfs:
            listing = subprocess.run(
                ["pdffonts", str(path)], capture_output=True, text=True, check=True
            ).stdout
            rows = listing.splitlines()[2:]
            assert rows and not any("Type 3" in row for row in rows), listing


def test_one_solver_gets_one_style_under_every_spelling():
    """Commands spell a solver differently (compare's ``ls``, anneal's ``annealing-ls``, stats'
    ``anneal (ls)``); each spelling gets the same colour, marker and line style."""
    spellings = {
        "ls": ("annealing-ls", "anneal (ls)", "LS"),
        "ta": ("annealing-ta", "anneal (ta)"),
        "sa": ("annealing-sa", "anneal (sa)"),
        "mc-permutation": ("min-conflicts", "minconflicts"),
        "ga-permutation": ("ga",),
    }
    for name, others in spellings.items():
        for other in others:
            assert base.canonical(other) == name, other
            assert base.solver_style(other) == base.solver_style(name), other


def test_solver_styles_keep_every_solver_apart_in_colour_and_in_greyscale():
    """Ten solvers in one figure: each its own colour, and its own line style and marker pair
    (greyscale prints)."""
    styles = [base.solver_style(name) for name in base.SOLVER_STYLES]
    assert len({s["color"] for s in styles}) == len(styles)
    assert len({(s["ls"], s["marker"]) for s in styles}) == len(styles)


def test_ls_curve_is_not_hidden_under_ta():
    """LS and TA often trace the same curve: they differ in dash and marker, the broken line is
    drawn above the solid one, and their markers fall at different points."""
    ls, ta = base.solver_style("ls"), base.solver_style("ta")
    assert ls["ls"] != ta["ls"] and ls["marker"] != ta["marker"]
    solid, broken = (ls, ta) if ls["ls"] == "-" else (ta, ls)
    assert broken["zorder"] > solid["zorder"]
    assert ls["markevery"] != ta["markevery"]


def test_unknown_name_gets_the_same_style_every_time():
    assert base.solver_style("my-solver") == base.solver_style("my-solver")
    assert base.canonical("my-solver") == "my-solver"


@pytest.mark.parametrize("k, total", [(0, 10), (3, 10), (10, 10), (47, 200)])
def test_wilson_band_is_drawn_around_a_success_rate(k, total):
    from jaxqueens.core.statistics import wilson_interval

    _, ax = base.figure()
    base.rate_band(ax, np.array([0, 1]), np.array([k, k]) / total, total, color="C0")
    (band,) = ax.collections
    ys = band.get_paths()[0].vertices[:, 1]
    lo, hi = wilson_interval(k, total)
    assert ys.min() == pytest.approx(lo) and ys.max() == pytest.approx(hi)
