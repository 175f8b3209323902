"""`jaxqueens.io.report`: one well-formed, self-contained page per --out folder."""

import base64
import html
import html.parser
import json
import os

import numpy as np
import pytest

from jaxqueens.io import provenance, report, report_html
from jaxqueens.io.tables import write_csv, write_json
from jaxqueens.plots.base import figure, save_png

VOID = {"meta", "img", "br", "hr", "input", "link", "col", "area", "base", "source", "wbr"}


class Page(html.parser.HTMLParser):
    """Tags kept balanced (a well-formed page), every URL and image noted."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.errors, self.urls, self.images, self.tags = [], [], [], [], []
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        for key in ("src", "href", "action", "data", "poster"):
            if key in attrs:
                self.urls.append(attrs[key])
        if tag == "img":
            self.images.append(attrs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    assert not page.errors and not page.stack, (page.errors, page.stack)
    assert text.startswith("<!DOCTYPE html>")
    return page


def png(path, color="C0"):
    fig, ax = figure(3, 2)
    ax.plot([0, 1, 2], [1, 0, 2], color=color)
    return save_png(fig, path)


@pytest.fixture
def folder(tmp_path):
    out = tmp_path / "out"
    write_json(
        out / "summary.json",
        {
            "n": 8,
            "solved": 5,
            "steps": {"median": 12.0, "p99": None},
            "recommendation": {"solver": "mc-qs4", "line": "recommended: mc-qs4"},
            "per_solver": [{"solver": "a", "ert_s": 0.5}, {"solver": "b", "ert_s": 1.5}],
        },
    )
    write_csv(
        out / "runs.csv",
        ["chain", "steps", "note"],
        [[i, i * 3, "<script>alert(1)</script>" if i == 0 else ""] for i in range(100)],
    )
    png(out / "steps_hist.png")
    np.save(out / "solutions.npy", np.zeros((2, 8), np.int32))
    (out / "checkpoint.npz").write_bytes(b"not read")
    write_json(out / "ta" / "summary.json", {"method": "ta"})
    png(out / "ta" / "trace.png", "C1")
    return out


def test_page_is_well_formed_self_contained_and_complete(folder):
    path = report.write_report(
        folder,
        command_line=["jaxqueens", "solve", "-n", "8", "--out", str(folder)],
        settings={"n": 8, "func": print, "out": str(folder)},
        devices={"backend": "cpu", "devices": ["TFRT_CPU_0", "TFRT_CPU_1"]},
    )
    assert path == folder / "report.html"
    text = path.read_text(encoding="utf-8")
    page = parse(text)
    # nothing from the network: no script, no stylesheet link, only data: images
    assert "script" not in page.tags and "link" not in page.tags and "iframe" not in page.tags
    assert all(u.startswith("data:image/png;base64,") for u in page.urls), page.urls
    assert "http://" not in text and "https://" not in text
    assert report.CSP in text and "default-src 'none'" in report.CSP
    # every figure, embedded byte for byte, with a non-zero size
    assert len(page.images) == 2
    embedded = {img["alt"]: base64.b64decode(img["src"].split(",", 1)[1]) for img in page.images}
    assert embedded["steps_hist.png"] == (folder / "steps_hist.png").read_bytes()
    assert embedded["trace.png"] == (folder / "ta" / "trace.png").read_bytes()
    for data in embedded.values():
        w, h = report_html.png_size(data)
        assert w > 0 and h > 0
    words = " ".join(page.text)
    # command line, settings (not the function), versions, devices
    assert (
        "jaxqueens solve -n 8 --out" in words and "TFRT_CPU_1" in words and "<function" not in words
    )
    for name, version in provenance.versions().items():
        assert name in words and (version is None or version in words)
    assert {"jaxqueens", "python", "jax", "jaxlib", "numpy"} <= set(provenance.versions())
    # the summary (flattened, the records as a table, the recommendation line) and the CSV's first
    # rows
    assert "steps.median" in words and "recommended: mc-qs4" in words and "per_solver" in words
    assert f"first {report_html.MAX_ROWS} of 100 rows" in words
    assert "<script>alert(1)</script>" in words  # shown as text, escaped in the source
    assert "&lt;script&gt;" in text
    assert "ta/" in words and "checkpoint.npz" in words and "solutions.npy" in words


def test_no_devices_and_rewrites_leave_one_page(folder):
    report.write_report(folder, command_line="jaxqueens check board.txt")
    first = (folder / "report.html").read_text()
    assert "did not start JAX" in first
    report.write_report(folder, command_line="jaxqueens check board.txt")
    page = parse((folder / "report.html").read_text())
    assert len(page.images) == 2  # the earlier report is not part of the next one
    assert not [p for p in os.listdir(folder) if p.endswith(".tmp")]  # written atomically


def test_figure_limits_and_bad_files_are_notes(folder, monkeypatch):
    (folder / "broken.png").write_bytes(b"not a png")
    (folder / "empty.csv").write_text("")
    monkeypatch.setattr(
        report_html, "MAX_FIGURE_BYTES", (folder / "steps_hist.png").stat().st_size - 1
    )
    text = report.render(folder, command_line="jaxqueens x")
    page = parse(text)
    words = " ".join(page.text)
    assert "broken.png: not a PNG image, not embedded" in words
    assert "steps_hist.png: not embedded" in words and "too large to embed" in words
    assert len(page.images) == 1  # ta/trace.png is smaller than the limit
    (folder / "summary.json").write_text("{broken")
    assert "summary.json could not be read" in report.render(folder, command_line="jaxqueens x")


def test_the_result_comes_first_then_figures_then_settings_and_tables(folder):
    """The page reads as a person asks: the printed result, the figures, what was given, the
    environment, then the tables."""
    text = report.render(
        folder,
        command_line="jaxqueens solve -n 8 --out x",
        settings={"n": 8},
        result="n = 8: 1000 of 1000 chains solved, 92 distinct solutions\n<b>bold</b>\n",
    )
    order = [
        text.index(mark)
        for mark in (
            "<h2>result</h2>",
            "1000 of 1000 chains solved",
            "<h2>figures</h2>",
            "<h2>settings</h2>",
            "<h2>environment</h2>",
            "<h2>tables</h2>",
            "<h3>summary.json</h3>",
        )
    ]
    assert order == sorted(order)
    assert "&lt;b&gt;bold&lt;/b&gt;" in text and "<b>bold</b>" not in text
    assert "<h2>figures: ta/</h2>" in text and "<h2>tables: ta/</h2>" in text
    (folder / "summary.json").unlink()  # no recommendation and nothing printed: no result
    assert "<h2>result</h2>" not in report.render(folder, command_line="jaxqueens x", result="")


def test_svg_figures_are_embedded_and_pdf_figures_linked(tmp_path):
    """`--format svg|pdf`: an SVG is an image like a PNG (an <img> runs none of its
    scripts), a PDF is a link to the file beside the page (no browser shows it as an image)."""
    from jaxqueens.plots.base import save

    out = tmp_path / "out"
    out.mkdir()
    for name, fmt in (("a", "svg"), ("b", "pdf"), ("c", "png")):
        fig, ax = figure(3, 2)
        ax.plot([0, 1], [1, 0])
        save(fig, out / name, fmt)
    (out / "fake.svg").write_text("not an svg")
    page = parse(report.render(out, command_line="jaxqueens compare --format svg"))
    sources = [i["src"].split(",")[0] for i in page.images]
    assert sources == ["data:image/svg+xml;base64", "data:image/png;base64"]
    assert "b.pdf" in page.urls  # linked, relative to the page
    assert "fake.svg: not an SVG image, not embedded" in "".join(page.text)


def test_the_runs_own_manifest_is_not_listed_as_left_by_an_earlier_run(folder):
    before = report.snapshot(folder)
    write_csv(folder / "runs.csv", ["chain"], [[0]])  # this run's only output
    mine = report.write_manifest(folder, before, "solve")
    assert report.MANIFEST in mine
    text = report.render(folder, command_line="jaxqueens solve", only=mine)
    stale = text[text.index("files an earlier run left here") :]
    assert "summary.json" in stale  # the fixture's files are an earlier run's
    assert report.MANIFEST not in stale  # the manifest is this run's own


def test_the_result_opens_with_the_recommendation_not_progress_lines_or_long_notes(folder):
    note = "(" + "a long note about defaults " * 15 + ")"
    printed = f"[1/2] mc-qs4\n[2/2] ls\nTA: estimated run time at most ~1 s\nn = 8\n{note}\n"
    text = report.render(folder, command_line="jaxqueens compare", result=printed)
    result = text[text.index("<h2>result</h2>") : text.index("<h2>figures</h2>")]
    assert result.index("<strong>recommended: mc-qs4</strong>") < result.index("n = 8")
    assert "[1/2]" not in result and "[2/2]" not in result and "estimated run time" not in result
    # the note comes after the printed result, in full, as a note
    assert result.index("n = 8") < result.index(f'<p class="note">{html.escape(note)}</p>')


def test_figures_follow_a_fixed_order_not_the_alphabet(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    names = ["steps_ecdf", "seconds_ecdf", "ert", "rtd_steps", "rtd_seconds", "zz_extra"]
    for name in sorted(names):  # written alphabetically
        png(out / f"{name}.png")
    page = parse(report.render(out, command_line="jaxqueens compare"))
    assert [i["alt"] for i in page.images] == [f"{name}.png" for name in names]


def test_settings_csv_is_shown_in_full_before_the_environment(folder):
    rows = [["ls", f"key{i}", i] for i in range(report_html.MAX_ROWS + 29)]
    write_csv(folder / "settings.csv", ["solver", "key", "value"], rows)
    text = report.render(folder, command_line="jaxqueens compare")
    settings = text[text.index("<h2>settings</h2>") : text.index("<h2>environment</h2>")]
    assert (
        f"key{report_html.MAX_ROWS + 28}" in settings
        and f"{report_html.MAX_ROWS + 29} rows" in settings
    )
    assert "first 20" not in settings and "settings.csv" not in text[: text.index("<h2>settings")]


def test_summary_json_nested_records_are_tables_not_flattened_keys(tmp_path):
    write_json(
        tmp_path / "summary.json",
        {"recommendation": {"line": "ls", "ranking": [{"solver": "ls"}, {"solver": "ta"}]}},
    )
    text = report.render(tmp_path, command_line="jaxqueens compare")
    assert "recommendation.ranking.0.solver" not in text
    assert "<h3>recommendation.ranking</h3>" in text and "<td>ta</td>" in text


def test_the_config_file_and_environment_are_shown(tmp_path, monkeypatch):
    config = tmp_path / "run.toml"
    config.write_text('command = "solve"\n[options]\nn = 8\n')
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=2")
    text = report.render(tmp_path, command_line="jaxqueens solve", settings={"config": str(config)})
    settings = text[text.index("<h2>settings</h2>") : text.index("<h2>environment</h2>")]
    assert "[options]" in settings and "n = 8" in settings
    env = text[text.index("<h2>environment</h2>") :]
    assert "--xla_force_host_platform_device_count=2" in env and ">cpu<" in env


def test_summary_json_that_is_not_a_dict_is_shown_as_its_json(tmp_path):
    for doc in ([1, 2], None):  # JSON null is a document too, not "no summary"
        (tmp_path / "summary.json").write_text(json.dumps(doc))
        text = report.render(tmp_path, command_line="jaxqueens x")
        assert f"<h3>summary.json</h3><pre>{json.dumps(doc)}</pre>" in text
