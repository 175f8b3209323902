"""report.html in a real headless browser (Debian's Chromium): it renders, nothing is blocked or
fetched, and every figure decodes with a non-zero natural size. Skipped where no Chromium is
installed (`apt-get install chromium`), as on CI."""

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from jaxqueens.io import report
from jaxqueens.io.tables import write_csv, write_json
from jaxqueens.plots.base import figure, save_png

CHROMIUM = next(
    (p for p in ("/usr/bin/chromium", shutil.which("chromium") or "") if p and Path(p).exists()),
    None,
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium at /usr/bin/chromium (install it "
    "with 'apt-get install chromium' to run the browser test)",
)

PROBE = """<script>
(function () {
  var problems = [];
  document.addEventListener("securitypolicyviolation", function (e) {
    problems.push("csp " + e.violatedDirective + " " + e.blockedURI); });
  window.addEventListener("error", function (e) {
    problems.push("error " +
      (e.message || (e.target && (e.target.src || e.target.tagName)))); }, true);
  window.addEventListener("load", function () {
    var imgs = Array.prototype.map.call(document.images, function (im) {
      return {alt: im.alt, complete: im.complete, w: im.naturalWidth, h: im.naturalHeight}; });
    var out = document.createElement("pre");
    out.id = "probe";
    out.textContent = JSON.stringify({problems: problems, images: imgs,
                                      tables: document.getElementsByTagName("table").length,
                                      title: document.title});
    document.body.appendChild(out);
  });
})();
</script>"""
"""Read-only probe added to a copy of the page (the page itself has no script): it records CSP
violations and load errors, and each image's natural size once the page has loaded. It fetches
nothing; the copy keeps the page's policy (default-src 'none') and only allows this inline
script."""


def chromium(*args, timeout=90):
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def page(tmp_path):
    out = tmp_path / "out"
    write_json(
        out / "summary.json", {"n": 8, "solved": 3, "recommendation": {"line": "recommended: x"}}
    )
    write_csv(out / "runs.csv", ["chain", "steps"], [[i, 2 * i] for i in range(50)])
    for name, color in (("a.png", "C0"), ("sub/b.png", "C3")):
        fig, ax = figure(4, 3)
        ax.plot(np.arange(10), np.arange(10) ** 2, color=color)
        save_png(fig, out / name)
    return report.write_report(
        out,
        command_line="jaxqueens solve -n 8 --out out",
        devices={"backend": "cpu", "devices": ["TFRT_CPU_0"]},
    )


def test_report_renders_in_chromium_with_every_figure(page, tmp_path):
    text = page.read_text(encoding="utf-8")
    assert "<script" not in text  # the page itself runs nothing
    probed = tmp_path / "probed.html"
    csp = report.CSP.replace("style-src", "script-src 'unsafe-inline'; style-src")
    probed.write_text(
        text.replace(report.CSP, csp).replace("</title>", "</title>\n" + PROBE, 1), encoding="utf-8"
    )
    res = chromium("--virtual-time-budget=10000", "--dump-dom", probed.as_uri())
    assert res.returncode == 0, res.stderr[-2000:]
    found = re.search(r'<pre id="probe">(.*?)</pre>', res.stdout, re.S)
    assert found, res.stdout[-2000:]
    probe = json.loads(
        found.group(1)
        .replace("&quot;", '"')
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
    )
    assert probe["problems"] == []
    assert probe["title"] == "jaxqueens solve" and probe["tables"] >= 4
    assert [im["alt"] for im in probe["images"]] == ["a.png", "b.png"]
    for im in probe["images"]:
        assert im["complete"] and im["w"] == 440 and im["h"] == 330, im  # 4 x 3 in at 110 dpi


def test_report_screenshot_is_not_blank(page, tmp_path):
    import matplotlib.image

    shot = tmp_path / "shot.png"
    res = chromium(f"--screenshot={shot}", "--window-size=1000,1400", page.as_uri())
    assert res.returncode == 0 and shot.stat().st_size > 0, res.stderr[-2000:]
    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (1400, 1000) and pixels.std() > 0.01  # text and figures drawn
