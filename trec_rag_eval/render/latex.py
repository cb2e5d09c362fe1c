"""The pieces of every LaTeX table the renderers write (a comparison, all pairs, a plan): text escaped for
LaTeX, the best value of a column in bold, superscripts aligned, a booktabs table in its float."""

from __future__ import annotations

from trec_rag_eval.number_formats import format_number

LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def latex_escape(text: str) -> str:
    return "".join(LATEX_SPECIAL.get(ch, ch) for ch in text)


def latex_best(values: list[float]) -> list[bool]:
    """Which cells of a column are its best value (the highest mean; every one of them when tied)."""
    finite = [v for v in values if v == v]
    best = max(finite) if finite else None
    return [best is not None and v == best for v in values]


def latex_cell(value: float, best: bool, mark: str, phantom: str) -> str:
    """A mean, in bold when it is its column's best, then its superscript; ``phantom`` (the column's widest
    superscript, invisible) where it has none, so the numbers of a column stay aligned."""
    number = format_number(value)
    number = r"\textbf{" + number + "}" if best else number
    return number + (mark if mark else (r"\hphantom{" + phantom + "}" if phantom else ""))


def latex_table(columns: str, header: str, rows: list[str], caption: str, label: str | None) -> list[str]:
    """A booktabs table in a ``table`` float, its caption and label above it (the usual place in papers)."""
    lines = [r"\begin{table}[t]", r"\centering", r"\caption{" + caption + "}"]
    if label:
        lines.append(r"\label{" + label + "}")
    lines += [r"\begin{tabular}{" + columns + "}", r"\toprule", header + r" \\", r"\midrule"]
    lines += [row + r" \\" for row in rows]
    return lines + [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
