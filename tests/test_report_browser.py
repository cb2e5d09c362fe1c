"""The HTML comparison report opened in a real headless browser (Debian's chromium).

The report is copied, a small checking script is put into the copy's head (the report itself has no
script), and chromium's ``--dump-dom`` gives back the page after load with the script's marker
(tests/browser.py). Console messages are read from chromium's log on stderr. Skipped only when chromium is
absent.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from browser import CHROMIUM, open_in_chromium

from trec_rag_eval.compare import compare_values
from trec_rag_eval.render.html import render_html

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)"
)

CHECK_SCRIPT = """
<script>
var loadErrors = [];
window.addEventListener('error', function (e) {
  loadErrors.push((e.target && e.target.tagName) || e.message || 'error');
}, true);
window.addEventListener('load', function () {
  var images = Array.prototype.slice.call(document.images);
  var widths = images.map(function (i) { return i.complete ? i.naturalWidth : 0; });
  var tables = Array.prototype.slice.call(document.querySelectorAll('table'));
  var marker = document.createElement('pre');
  marker.id = 'render-check';
  marker.textContent = JSON.stringify({
    images: images.length,
    widths: widths,
    heights: images.map(function (i) { return i.naturalHeight; }),
    tables: tables.map(function (t) {
      return [t.id, t.tBodies[0].rows.length, t.getBoundingClientRect().height];
    }),
    errors: loadErrors
  });
  document.body.appendChild(marker);
});
</script>
"""


def _open_in_chromium(page: Path, tmp_path: Path) -> tuple[dict, list[str]]:
    """Load ``page`` with the check script; return the marker data and the console lines."""
    return open_in_chromium(page, CHECK_SCRIPT, "render-check", tmp_path / "chromium-profile")


def _comparison():
    rng = np.random.default_rng(3)
    n = 25
    a = rng.uniform(0, 1, n)
    values = {
        "bm25": {"nDCG@10": a, "R@5": a * 0.8, "MRR": np.sqrt(a)},
        "dense": {
            "nDCG@10": np.clip(a + rng.normal(0.08, 0.05, n), 0, 1),
            "R@5": a * 0.8,
            "MRR": np.sqrt(a) * 0.98,
        },
        "hybrid <&>": {
            "nDCG@10": np.clip(a + rng.normal(0.0, 0.1, n), 0, 1),
            "R@5": a * 0.7,
            "MRR": np.sqrt(a),
        },
    }
    return compare_values(values, [f"q{i}" for i in range(n)], n_resamples=1000)


def test_report_renders_tables_and_images_without_console_errors(tmp_path: Path) -> None:
    comparison = _comparison()
    page = tmp_path / "report.html"
    text = render_html(comparison, per_query=True)
    page.write_text(text, encoding="utf-8")
    # Self-contained: every src/href is a data URI, and nothing names a remote host.
    assert re.findall(r'(?:src|href)\s*=\s*"(?!data:)', text) == []
    assert "http://" not in text and "https://" not in text
    assert "hybrid &lt;&amp;&gt;" in text  # run names are escaped

    marker, console = _open_in_chromium(page, tmp_path)

    assert console == []
    assert marker["errors"] == []
    assert marker["images"] == 2
    assert all(width > 100 for width in marker["widths"]), marker
    assert all(height > 100 for height in marker["heights"]), marker
    tables = {table_id: (rows, height) for table_id, rows, height in marker["tables"]}
    assert tables["summary"][0] == 3 * 3  # measures x runs
    assert tables["per-query"][0] == 3 * 25  # measures x queries
    assert all(height > 0 for _, height in tables.values())


def test_the_browser_check_catches_a_broken_page(tmp_path: Path) -> None:
    """The checks above can fail: a broken image and a script error are both reported."""
    page = tmp_path / "broken.html"
    page.write_text(
        "<!DOCTYPE html><html><head></head><body>"
        "<table id='summary'><tbody><tr><td>x</td></tr></tbody></table>"
        "<img src='data:image/png;base64,AAAA'><script>console.error('boom'); missingFunction();</script>"
        "</body></html>",
        encoding="utf-8",
    )
    marker, console = _open_in_chromium(page, tmp_path)
    assert marker["widths"] == [0]
    assert marker["errors"] != []
    assert any('"boom"' in line for line in console)
    assert any("missingFunction is not defined" in line for line in console)
