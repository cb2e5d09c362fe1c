"""The documentation site builds (mkdocs build --strict: every page in the nav, every link and anchor resolved, the
Python reference generated from the docstrings), and a built page works in a real headless browser (Debian's
chromium, as for the HTML report): it loads without an error, shows the navigation, its table and its code, and
its search finds pages from the site's own index. Skipped only when chromium is absent (.ci/run installs it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from browser import CHROMIUM, open_in_chromium
from file_server import FileServer

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    # CI builds the site with --strict before the tests (.ci/run) and names it here: built once, not twice
    built = os.environ.get("TREC_RAG_EVAL_BUILT_SITE")
    if built:
        assert (Path(built) / "index.html").is_file(), f"TREC_RAG_EVAL_BUILT_SITE={built} holds no built site"
        return Path(built)
    target = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(target)], cwd=REPO,
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, NO_MKDOCS_2_WARNING="1",
                                   PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))))
    assert done.returncode == 0, done.stderr[-3000:]
    return target


def test_the_site_builds_strict_with_every_page(site):
    nav = re.findall(r": ([\w/.-]+\.md)$", (REPO / "mkdocs.yml").read_text(encoding="utf-8"), re.MULTILINE)
    assert len(nav) >= 20
    for page in nav:
        assert (site / page.replace(".md", ".html")).is_file(), page
    # the Python reference is generated from the docstrings of the public names
    reference = (site / "reference.html").read_text(encoding="utf-8")
    for name in ("trec_rag_eval.evaluate", "trec_rag_eval.compare", "trec_rag_eval.Comparison", "to_latex",
                 "RelevanceEvaluator"):
        assert name in reference, name
    assert "Evaluate <code>run</code> against <code>qrels</code>" in reference  # evaluate's docstring
    # the generated pages: the command-line reference and the measure table
    assert "trec-rag-eval compare" in (site / "cli.html").read_text(encoding="utf-8")
    assert "<table>" in (site / "measures.html").read_text(encoding="utf-8")


CHECK_SCRIPT = """
<script>
var loadErrors = [];
window.addEventListener('error', function (e) {
  loadErrors.push((e.target && (e.target.src || e.target.href || e.target.tagName)) || e.message || 'error');
}, true);
window.addEventListener('load', function () {
  setTimeout(function () {
    var marker = document.createElement('pre');
    marker.id = 'page-check';
    marker.textContent = JSON.stringify({
      title: document.title,
      nav: document.querySelectorAll('nav.md-nav a.md-nav__link').length,
      rows: document.querySelectorAll('article table tbody tr').length,
      code: document.querySelectorAll('article pre code').length,
      copy: document.querySelectorAll('article button.md-code__button').length,
      search: (document.querySelector('input.md-search__input') || {}).value,
      errors: loadErrors
    });
    document.body.appendChild(marker);
  }, 500);
});
</script>
"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_a_built_page_works_in_a_headless_browser(site, tmp_path):
    # served over HTTP as a host serves it (mkdocs serve, GitHub Pages; from file:// the search worker cannot fetch
    # its index), the search asked for in the URL as the theme's shared search links do
    with FileServer(site) as server:
        data, console = open_in_chromium(
            site / "guides" / "coming-from.html", CHECK_SCRIPT, "page-check", tmp_path / "profile",
            url=lambda checked: server.url(checked.relative_to(site).as_posix()) + "?q=RelevanceEvaluator",
            flags=["--virtual-time-budget=5000"])
    assert data["title"] == "From trec_eval, pytrec_eval, ir_measures, ranx - trec-rag-eval"  # its name in the nav
    assert data["errors"] == []                 # every script, style sheet and image of the page loaded
    assert data["nav"] >= 20                    # the site's navigation
    assert data["rows"] >= 25                   # the table of equivalents
    assert data["code"] >= 2 and data["copy"] == data["code"]  # code blocks, with the copy buttons (its script ran)
    assert data["search"] == "RelevanceEvaluator"   # the theme's script read the URL into its search box
    assert [line for line in console if "Uncaught" in line or "Failed" in line] == []


def test_the_test_extra_installs_the_docs_extra():
    # CI installs '.[test]' and builds the site with it: the same pinned versions as 'pip install -e .[docs]'
    import configparser

    setup = configparser.ConfigParser()
    setup.read(REPO / "setup.cfg", encoding="utf-8")
    extras = setup["options.extras_require"]
    docs = [line for line in extras["docs"].splitlines() if line.strip()]
    test = [line for line in extras["test"].splitlines() if line.strip() and not line.strip().startswith("#")]
    assert {"mkdocs", "mkdocs-material", "mkdocstrings", "mkdocstrings-python"} <= {
        re.split(r"[=<>;\[ ]", line)[0] for line in docs}
    assert all("==" in line for line in docs)
    assert set(docs) <= set(test)
