"""One self-contained HTML page for a comparison: tables, verdicts and embedded pictures.

The page loads nothing from anywhere: the style is inline, the pictures are PNG data URIs
(base64), and there is no script. It opens offline, from a file, in any browser.
"""

from __future__ import annotations

import base64
import datetime
import html
from typing import TYPE_CHECKING

from trec_rag_eval.render.comparison import (
    CORRECTION_NAMES,
    SIGNIFICANT_MARK,
    TEST_NAMES,
    comparison_footer,
    per_query_header,
    per_query_rows,
    summary_header,
    summary_rows,
    verdict,
)

if TYPE_CHECKING:
    from trec_rag_eval.compare.comparison import Comparison

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 72em;
       padding: 0 1em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
table#inputs th { border-bottom: 1px solid #ddd; font-weight: normal; color: #555; }
th, td { padding: 0.25em 0.7em; border-bottom: 1px solid #ddd; }
th { text-align: left; border-bottom: 2px solid #444; }
td.num { text-align: right; font-variant-numeric: tabular-nums; font-family: ui-monospace, monospace; }
tr.baseline td { color: #555; }
td.better { color: #1a7a35; font-weight: bold; } td.worse { color: #b3151a; font-weight: bold; }
ul.verdicts li { margin: 0.2em 0; }
li.better { color: #1a7a35; } li.worse { color: #b3151a; } li.noise { color: #555; }
img { max-width: 100%; height: auto; display: block; margin: 0.5em 0; }
p.footer { color: #555; font-size: 0.85em; }
"""


def _cell(text: str, numeric: bool, css: str = "") -> str:
    classes = " ".join(c for c in ("num" if numeric else "", css) if c)
    attribute = f' class="{classes}"' if classes else ""
    return f"<td{attribute}>{html.escape(text)}</td>"


def _summary_table(comparison: Comparison) -> str:
    header = summary_header(comparison)
    rows = summary_rows(comparison)
    out = [
        '<table id="summary">',
        "<thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr></thead>",
    ]
    out.append("<tbody>")
    index = 0
    for measure in comparison.measures:
        for run in comparison.runs:
            row = rows[index]
            index += 1
            if run == comparison.baseline:
                out.append(
                    '<tr class="baseline">' + "".join(_cell(c, i >= 2) for i, c in enumerate(row)) + "</tr>"
                )
                continue
            direction = comparison.pair(measure, run).direction
            css = direction if direction != "noise" else ""
            cells = [_cell(c, i >= 2, css if i == 3 else "") for i, c in enumerate(row)]
            out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _per_query_table(comparison: Comparison) -> str:
    header = per_query_header(comparison)
    out = [
        '<table id="per-query">',
        "<thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr></thead>",
        "<tbody>",
    ]
    for row in per_query_rows(comparison):
        out.append("<tr>" + "".join(_cell(c, i >= 2) for i, c in enumerate(row)) + "</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def _image(png: bytes, alt: str, element_id: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img id="{element_id}" alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def _header(comparison: Comparison, generated: datetime.datetime) -> str:
    """What the page compares: the input files, the settings, the version and the date."""
    from trec_rag_eval.version import __version__

    rows: list[tuple[str, str]] = []
    if "qrels" in comparison.sources:
        rows.append(("qrels", comparison.sources["qrels"]))
    for run in comparison.runs:
        label = f"{run} (baseline)" if run == comparison.baseline else run
        rows.append((f"run {label}", comparison.sources.get(run, "(given as values)")))
    rows.append(("queries", str(comparison.n_queries)))
    rows.append(("measures", ", ".join(comparison.measures)))
    test = TEST_NAMES[comparison.test] + (
        "" if comparison.correction == "none" else f", {CORRECTION_NAMES[comparison.correction]} correction")
    rows.append(("test", f"{test}, alpha {comparison.alpha:g}, {comparison.confidence * 100:g}% CI: "
                         f"{comparison.interval_method}" + (f", seed {comparison.seed}" if comparison.draws else "")))
    rows += list(comparison.evaluation_settings.items())
    rows.append(("made by", f"trec-rag-eval {__version__}, {generated:%Y-%m-%d %H:%M} UTC"))
    cells = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>" for k, v in rows)
    return f'<table id="inputs">{cells}</table>'


def render_html(
    comparison: Comparison,
    per_query: bool = False,
    title: str | None = None,
    images: bool = True,
    generated: datetime.datetime | None = None,
) -> str:
    """The whole page as a string. ``images=False`` leaves the pictures out (no matplotlib needed).

    Its header says what is compared: input files, settings, version and date (``generated``,
    default now, in UTC)."""
    generated = generated or datetime.datetime.now(datetime.timezone.utc)
    title = title or f"Comparison of {len(comparison.runs)} runs over {comparison.n_queries} queries"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title>",
        f"<style>{STYLE}</style>",
        "</head>",
        "<body>",
        f"<h1>{html.escape(title)}</h1>",
        _header(comparison, generated),
        "<h2>Verdicts</h2>",
        '<ul class="verdicts">',
    ]
    for pair in comparison.pairs:
        parts.append(
            f'<li class="{pair.direction}"><b>{html.escape(pair.measure)}</b>: '
            f"{html.escape(verdict(comparison, pair))}</li>"
        )
    parts += ["</ul>", "<h2>Summary</h2>", _summary_table(comparison)]
    parts.append(
        f"<p>{html.escape(SIGNIFICANT_MARK)} significant at alpha {comparison.alpha:g} after correction.</p>"
    )
    if images:
        from trec_rag_eval.render.plot import figure_bytes, intervals_figure, per_query_figure

        parts += [
            "<h2>Mean deltas and intervals</h2>",
            _image(
                figure_bytes(intervals_figure(comparison), "png"),
                "mean delta per measure with its interval",
                "intervals",
            ),
            "<h2>Per-query deltas</h2>",
            _image(
                figure_bytes(per_query_figure(comparison), "png"),
                "sorted per-query deltas per measure",
                "per-query-deltas",
            ),
        ]
    if per_query:
        parts += [
            "<details open>",
            "<summary>Per-query values and deltas (run - baseline)</summary>",
            _per_query_table(comparison),
            "</details>",
        ]
    parts += [f'<p class="footer">{html.escape(comparison_footer(comparison))}</p>', "</body>", "</html>"]
    return "\n".join(parts) + "\n"
