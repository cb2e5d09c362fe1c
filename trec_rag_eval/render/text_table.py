"""Plain-text tables, as the commands print them: each column as wide as its widest cell, two spaces between
columns, no space at the end of a line (the HTML counterpart: ``render.notebook.html_table``)."""

from __future__ import annotations

from collections.abc import Container, Sequence


def aligned_lines(rows: Sequence[Sequence[str]], right: Container[int] = ()) -> list[str]:
    """``rows`` of cells (a header first, if any) as lines of text: the columns whose index is in ``right``
    aligned to the right, the others to the left."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.rjust(widths[i]) if i in right else cell.ljust(widths[i]) for i, cell in enumerate(row))
            .rstrip() for row in rows]
