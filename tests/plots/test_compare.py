"""``jaxqueens.plots.compare`` and the shared saving of :mod:`jaxqueens.plots.base`: PNG,
SVG and PDF, "not solved" labelled, series told apart without colour."""

from types import SimpleNamespace

import numpy as np
import pytest

from jaxqueens.plots import base
from jaxqueens.plots import compare as plots

CURVES = {
    "mc-qs4": {
        "rtd_steps": (np.array([0, 3, 7, 100]), np.array([0.0, 0.25, 0.5, 0.5])),
        "rtd_seconds": (np.array([0.0, 1e-4, 2e-4, 3e-3]), np.array([0.0, 0.25, 0.5, 0.5])),
        "steps_ecdf": (np.array([3, 7]), np.array([0.5, 1.0])),
        "seconds_ecdf": (np.array([1e-4, 2e-4]), np.array([0.5, 1.0])),
    },
    "sa": {
        "rtd_steps": (np.array([0, 100]), np.zeros(2)),
        "rtd_seconds": (np.array([0.0, 1e-2]), np.zeros(2)),
        "steps_ecdf": (np.zeros(0), np.zeros(0)),
        "seconds_ecdf": (np.zeros(0), np.zeros(0)),
    },
}


def result(curves=CURVES, ert=None, ci=None, notes=None, budgets=None, chains=None, solved=None):
    """A compare result as `write_plots` reads it: n = 8, 100 steps per chain; `solved` gives the
    chains each solver solved (default: 0 for `sa`, 2 for the others, as `CURVES` draws them)."""
    per = [
        {
            "solver": s,
            "solved": (solved or {}).get(s, 0 if s == "sa" else 2),
            "ert_s": (ert or {}).get(s),
            "ert_s_ci": (ci or {}).get(s),
            "ert_note": (notes or {}).get(s),
        }
        for s in curves
    ]
    budgets = budgets or dict.fromkeys(curves, 100)
    summary = {"steps_budgets": budgets, "per_solver": per}
    return SimpleNamespace(n=8, steps=100, chains=chains, curves=curves, summary=summary)


def draw(out, fmt, dpi=None):
    res = result(
        ert={"mc-qs4": 1e-3, "sa": None},
        ci={"mc-qs4": [5e-4, None], "sa": None},
        notes={"mc-qs4": None, "sa": "not solved (0 of 4 chains within 100 steps)"},
    )
    return plots.write_plots(res, out, fmt, dpi)


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    """`draw`'s figures in a format, drawn once a module (the format test reads them; the
    reproducibility test draws them again and compares)."""
    root, made = tmp_path_factory.mktemp("drawn"), {}

    def get(fmt):
        if fmt not in made:
            made[fmt] = draw(root / str(fmt), fmt)
        return made[fmt]

    return get


@pytest.mark.parametrize(
    "fmt, magic", [("svg", b"<?xml"), ("pdf", b"%PDF"), ("png", b"\x89PNG"), (None, b"\x89PNG")]
)
def test_every_figure_in_the_format_asked(drawn, fmt, magic):
    paths = drawn(fmt)
    assert [p.name for p in paths] == [f"{f}.{fmt or 'png'}" for f in plots.FIGURES]
    for p in paths:
        assert p.read_bytes().startswith(magic), p


def test_vector_figures_are_reproducible_and_label_not_solved(drawn, tmp_path):
    a, b = drawn("svg"), draw(tmp_path / "b", "svg")  # the format test's and a new one
    for x, y in zip(a, b, strict=True):
        assert x.read_bytes() == y.read_bytes(), x.name  # no date, fixed ids
    svg = {p.stem: p for p in a}
    ert = svg["ert"].read_text()
    assert "not solved" in ert and "<text" in ert  # the slot is labelled, text kept as text
    assert "sa (not solved)" in svg["rtd_steps"].read_text()  # the legend
    p1, p2 = drawn("pdf"), draw(tmp_path / "d", "pdf")
    assert p1[0].read_bytes() == p2[0].read_bytes()


def test_not_solved_is_drawn_for_a_solver_that_solved_nothing_not_for_an_ert_note(
    monkeypatch, tmp_path
):
    """The legend's "(not solved)" followed `ert_note`, which is also set for a solver that solved
    chains but whose ERT CI has no upper bound: it follows the chains solved."""
    notes = {"mc-qs4": "no upper bound: more than 2.5% of the resamples solved none"}
    axes = drawn_axes(monkeypatch, tmp_path, curves=CURVES, notes=notes)
    for stem in ("rtd_steps", "rtd_seconds", "steps_ecdf", "seconds_ecdf"):
        labels = [x.get_label() for x in axes[stem].lines]
        assert "mc-qs4" in labels and "sa (not solved)" in labels, (stem, labels)


def test_dpi_sets_the_png_resolution(tmp_path):
    from jaxqueens.io.report_html import png_size

    low = png_size(draw(tmp_path / "low", "png", dpi=50)[0].read_bytes())
    high = png_size(draw(tmp_path / "high", "png", dpi=200)[0].read_bytes())
    assert low is not None and high is not None
    assert high[0] == pytest.approx(4 * low[0], rel=0.02)


def drawn_axes(monkeypatch, tmp_path, **kwargs):
    """The axes of every figure of a compare run, by file stem, as drawn and titled (no file
    written: the figures' files are tested above)."""
    axes = {}

    def keep(fig, ax, path, title, xlabel=None, ylabel=None, **kw):
        ax.set_title(title)
        ax.set_ylabel(ylabel or "")
        if kw.get("ylim"):
            ax.set_ylim(*kw["ylim"])
        axes[path.stem] = ax
        return path

    monkeypatch.setattr(plots, "finish", keep)
    plots.write_plots(result(**kwargs), tmp_path)
    return axes


def test_a_solver_keeps_its_colour_whatever_its_place_in_the_list(monkeypatch, tmp_path):
    """Colours and markers followed a solver's position, so a solver changed colour from one
    figure to the next: ``sa`` alone and ``sa`` after ``mc-qs4`` are drawn alike."""
    both = drawn_axes(monkeypatch, tmp_path / "both", curves=CURVES)["rtd_steps"]
    alone = drawn_axes(monkeypatch, tmp_path / "alone", curves={"sa": CURVES["sa"]})["rtd_steps"]
    line = lambda ax, name: next(x for x in ax.lines if x.get_label().startswith(name))
    for key in ("color", "linestyle", "marker"):
        assert line(both, "sa").properties()[key] == line(alone, "sa").properties()[key], key
    assert line(both, "sa").get_color() != line(both, "mc-qs4").get_color()
    assert line(both, "sa").get_color() == base.solver_style("annealing-sa")["color"]


def test_rtd_of_all_chains_shows_the_wilson_interval(monkeypatch, tmp_path):
    """Success rates had no confidence interval: with the chains known, each RTD of all chains
    shades its 95% Wilson interval, and the axis says so."""
    from jaxqueens.core.statistics import wilson_interval

    axes = drawn_axes(monkeypatch, tmp_path, curves=CURVES, chains=4)
    for stem in ("rtd_steps", "rtd_seconds"):
        ax = axes[stem]
        assert "95% Wilson CI" in ax.get_ylabel()
        assert len(ax.collections) == len(CURVES), stem  # one band per solver
    ys = axes["rtd_steps"].collections[0].get_paths()[0].vertices[:, 1]
    lo, hi = wilson_interval(np.array([0, 1, 2]), 4)
    assert ys.max() == pytest.approx(hi.max()) and ys.min() == pytest.approx(lo.min())
    assert not drawn_axes(monkeypatch, tmp_path / "x", curves=CURVES)["rtd_steps"].collections


def test_titles_name_the_solvers_with_their_own_budgets(monkeypatch, tmp_path):
    """The title said "some solvers' own" budgets without naming them: it names each solver
    whose budget differs from the run's, and its budget."""
    axes = drawn_axes(monkeypatch, tmp_path, curves=CURVES, budgets={"mc-qs4": 100, "sa": 5000})
    for ax in axes.values():
        title = ax.get_title()
        assert "n = 8, 100 steps per chain; sa: 5,000" in title and "mc-qs4" not in title
    plain = drawn_axes(monkeypatch, tmp_path / "plain", curves=CURVES, budgets={"sa": 100})
    assert plain["ert"].get_title() == "expected time per solution (n = 8, 100 steps per chain)"


def test_save_takes_the_format_from_the_suffix_or_the_argument(tmp_path):
    fig, ax = base.figure()
    ax.plot([0, 1], [0, 1])
    assert base.save(fig, tmp_path / "a.svg").name == "a.svg"
    assert base.save(fig, tmp_path / "b", "pdf").name == "b.pdf"
    assert base.save(fig, tmp_path / "c.png", "svg").name == "c.svg"
    assert base.save_png(fig, tmp_path / "d.png").read_bytes().startswith(b"\x89PNG")
    with pytest.raises(ValueError, match="use one of png, svg, pdf"):
        base.save(fig, tmp_path / "e", "gif")


def test_percentile_band_across_chains(tmp_path):
    """Trace figures: the median and the 10-90% band across chains (enough chains), the chains
    themselves otherwise; the legend names the band."""
    from jaxqueens.plots.chains import BAND_CHAINS, method_traces

    rng = np.random.default_rng(0)
    many = {m: np.maximum(0, 20 - np.cumsum(rng.random((40, 50)) < 0.1, axis=1)) for m in "ab"}
    svg = method_traces(many, tmp_path / "many.svg", 8).read_text()
    assert "10-90% of 40 chains" in svg and "median" in svg
    few = {"a": many["a"][: BAND_CHAINS - 1]}
    assert "10-90%" not in method_traces(few, tmp_path / "few.svg", 8).read_text()
    _, ax = base.figure()
    values = rng.random((101, 5))
    base.percentile_band(ax, np.arange(5), values, "x")
    (band,) = ax.collections
    lo, hi = np.percentile(values, [10, 90], axis=0)
    ys = band.get_paths()[0].vertices[:, 1]
    assert ys.min() == pytest.approx(lo.min()) and ys.max() == pytest.approx(hi.max())
    assert np.allclose(ax.lines[0].get_ydata(), np.median(values, axis=0))


def test_a_line_at_zero_is_drawn_above_the_axis_not_hidden_in_it(monkeypatch, tmp_path):
    """A solver that solved nothing is a line at 0, which lay on the x axis and vanished into
    it: the rate axes start a little below 0."""
    axes = drawn_axes(monkeypatch, tmp_path, curves=CURVES)
    for stem in ("rtd_steps", "rtd_seconds", "steps_ecdf", "seconds_ecdf"):
        assert axes[stem].get_ylim()[0] < 0, stem
    (sa,) = [x for x in axes["rtd_steps"].lines if x.get_label().startswith("sa")]
    assert np.all(np.asarray(sa.get_ydata()) == 0)
