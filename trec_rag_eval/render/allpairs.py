"""Renderings of an ``AllPairs`` (``compare --all-pairs``): the table of runs with superscript letters
naming the runs each one beats, and the pairs; one function per output format that writes them
(``allpairs_table``, ``allpairs_markdown``, ...: ``render.output_formats`` names them).

Formatting only: every number and decision is read from the ``AllPairs``.
"""

from __future__ import annotations

import csv
import html
import io
import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from trec_rag_eval.display import format_number
from trec_rag_eval.render.numbers import format_difference, p_phrase

if TYPE_CHECKING:
    from trec_rag_eval.compare.allpairs import AllPairs

TEST_NAMES = {"tukey-hsd": "randomised Tukey HSD", "tukey": "Tukey HSD (parametric, unpaired)",
              "t": "paired t-test", "randomization": "paired randomization test"}
SUPERSCRIPTS = dict(zip("abcdefghijklmnoprstuvwxyz0123456789", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ⁰¹²³⁴⁵⁶⁷⁸⁹", strict=True))
"""Unicode has no superscript q: a run lettered q keeps its plain letter."""


def method_text(result: AllPairs) -> str:
    """What was computed, for footers."""
    if result.test == "tukey-hsd":
        exact = [m for m in result.measures if result.exact.get(m)]
        drawn = f"{result.n_resamples} random permutations of each query's values across the runs (seed {result.seed})"
        if len(exact) == len(result.measures):
            how = "every permutation of each query's values across the runs enumerated (exact)"
        elif exact:
            how = f"every permutation enumerated for {', '.join(exact)}, otherwise {drawn}"
        else:
            how = drawn
        text = f"randomised Tukey HSD (Carterette 2012): {how}"
    elif result.test == "tukey":
        text = "Tukey HSD (scipy.stats.tukey_hsd: one-way ANOVA, runs as unpaired groups)"
    else:
        name = {"holm": "Holm", "bonferroni": "Bonferroni", "none": "no"}[result.correction]
        text = f"{TEST_NAMES[result.test]}, {name} correction"
        if result.test == "randomization":
            text += f", {result.n_resamples} resamples (seed {result.seed})"
    family = len(result.runs) * (len(result.runs) - 1) // 2
    return (f"{text}; each measure's {family} pairs are one family; alpha {result.alpha:g}; "
            f"{result.n_queries} queries")


def allpairs_text(result: AllPairs, fmt: str = "table") -> str:
    """``result`` in the output format ``fmt``: one that writes all pairs (``render.output_formats``:
    ``choices(ALL_PAIRS)``; ``table``, the command's text, by default)."""
    from trec_rag_eval.render.output_formats import ALL_PAIRS, find_format

    return find_format(fmt, ALL_PAIRS).render(ALL_PAIRS, result)


def allpairs_json(result: AllPairs) -> str:
    return json.dumps(result.to_dict(), indent=2) + "\n"


def allpairs_csv(result: AllPairs) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["measure", "run_a", "run_b", "mean_a", "mean_b", "delta", "p_value", "p_adjusted",
                     "significant", "winner"])
    for p in result.pairs:
        writer.writerow([p.measure, p.run_a, p.run_b, repr(p.mean_a), repr(p.mean_b), repr(p.delta),
                         repr(p.p_value), repr(p.p_adjusted), p.significant, p.winner or ""])
    return out.getvalue()


def _cells(result: AllPairs, mark: Callable[[str], str]) -> list[list[str]]:
    return [[result.letter(run), run, *(format_number(result.means[run][m]) + mark(result.letters(m)[run])
                                        for m in result.measures)] for run in result.runs]


def _pair_lines(result: AllPairs) -> list[str]:
    lines = []
    width = max(len(m) for m in result.measures)
    for p in result.pairs:
        verdict = f"{p.winner} better" if p.winner else "not significant"
        lines.append(f"  {p.measure.ljust(width)}  {result.letter(p.run_a)} {p.run_a} vs {result.letter(p.run_b)} "
                     f"{p.run_b}: {format_difference(p.delta)}, {p_phrase(p.p_adjusted, 'n/a')}: {verdict}")
    return lines


def allpairs_table(result: AllPairs) -> str:
    header = ["", "run", *result.measures]
    rows = _cells(result, lambda letters: "".join(SUPERSCRIPTS.get(ch, ch) for ch in letters))
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [f"All pairs of {len(result.runs)} runs over {result.n_queries} queries: {TEST_NAMES[result.test]}", ""]
    for row in [header, *rows]:
        lines.append("  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip())
    lines += ["", "A run's letters name the runs it is significantly better than on that measure.", "",
              "Pairs (p after the family correction):", *_pair_lines(result), "", method_text(result)]
    return "\n".join(lines) + "\n"


def allpairs_markdown(result: AllPairs) -> str:
    rows = _cells(result, lambda letters: f"<sup>{letters}</sup>" if letters else "")
    lines = ["| | run | " + " | ".join(result.measures) + " |", "|---|---|" + "---|" * len(result.measures)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += ["", f"Superscripts: the runs each run is significantly better than. {method_text(result)}."]
    return "\n".join(lines) + "\n"


def _latex_escape(text: str) -> str:
    return "".join("\\" + ch if ch in "&%$#_{}" else ch for ch in text)


def allpairs_latex(result: AllPairs) -> str:
    rows = _cells(result, lambda letters: f"$^{{{letters}}}$" if letters else "")
    lines = ["\\begin{tabular}{ll" + "r" * len(result.measures) + "}", "\\toprule",
             " & Run & " + " & ".join(_latex_escape(m) for m in result.measures) + " \\\\", "\\midrule"]
    lines += [f"{row[0]} & {_latex_escape(row[1])} & " + " & ".join(row[2:]) + " \\\\" for row in rows]
    lines += ["\\bottomrule", "\\end{tabular}",
              f"% superscripts: the runs each run is significantly better than; {_latex_escape(method_text(result))}"]
    return "\n".join(lines) + "\n"


def allpairs_html(result: AllPairs) -> str:
    """The letters table as an HTML table with ``<sup>`` letters (the notebook display)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ["", "run", *result.measures])
    body = []
    for run in result.runs:
        cells = [result.letter(run), html.escape(run)]
        for m in result.measures:
            letters = result.letters(m)[run]
            mark = f"<sup>{letters}</sup>" if letters else ""
            cells.append(html.escape(format_number(result.means[run][m])) + mark)
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    caption = html.escape(f"Superscripts: the runs each run is significantly better than. {method_text(result)}")
    return (f"<table><caption>{caption}</caption><thead><tr>{head}</tr></thead><tbody>{''.join(body)}"
            "</tbody></table>")
