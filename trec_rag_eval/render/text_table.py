"""Plain-text tables, as the commands print them: each column as wide as its widest cell, two spaces between
columns, no space at the end of a line (the HTML counterpart: ``render.notebook.html_table``)."""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence


def aligned_lines(rows: Sequence[Sequence[str]], right: Container[int] = ()) -> list[str]:
    """``rows`` of cells (a header first, if any) as lines of text: the columns whose index is in ``right``
    aligned to the right, the others to the left."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.rjust(widths[i]) if i in right else cell.ljust(widths[i]) for i, cell in enumerate(row))
            .rstrip() for row in rows]


def labelled_lines(items: Iterable[tuple[str, str]], labels: Iterable[str] | None = None) -> list[str]:
    """``(label, text)`` items as the verdict lines of a table: ``  LABEL  text``, each label padded to the widest
    of ``labels`` (default: the items' own labels)."""
    items = list(items)
    width = max((len(label) for label in (labels if labels is not None else (label for label, _ in items))),
                default=0)
    return [f"  {label.ljust(width)}  {text}" for label, text in items]
