"""Notebook tables (``_repr_html_``): plain HTML ``<table>``s with the command line's numbers and words.

Jupyter shows what ``_repr_html_`` returns; every result type's goes through here (registered in
``render.results``), built from the same rows as the terminal text, so both say the same thing.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from trec_rag_eval.number_formats import format_number


def html_table(header: Sequence[str], rows: Sequence[Sequence[Any]], caption: str | None = None,
               notes: Sequence[str] = (), row_classes: Sequence[str] | None = None) -> str:
    """A plain HTML table; cells are escaped, numbers formatted by ``number_formats.format_number``; ``notes``
    are paragraphs after it (verdicts, footers); ``row_classes`` one CSS class per row ("" for none)."""
    parts = ["<table>"]
    if caption:
        parts.append(f"<caption>{html.escape(caption)}</caption>")
    parts.append("<thead><tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in header) + "</tr></thead>")
    parts.append("<tbody>")
    for i, row in enumerate(rows):
        css = row_classes[i] if row_classes is not None else ""
        opening = f'<tr class="{html.escape(css)}">' if css else "<tr>"
        parts.append(opening + "".join(f"<td>{html.escape(format_number(cell))}</td>" for cell in row) + "</tr>")
    parts.append("</tbody></table>")
    parts += [f"<p>{html.escape(note)}</p>" for note in notes]
    return "".join(parts)


def html_list(items: Sequence[tuple[str, str]]) -> str:
    """``<ul>`` of (bold label, text) items."""
    return "<ul>" + "".join(f"<li><b>{html.escape(label)}</b>: {html.escape(text)}</li>" for label, text in items) \
        + "</ul>"
