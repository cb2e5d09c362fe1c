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

from trec_rag_eval.number_formats import format_number, plain_data, plain_number
from trec_rag_eval.render.numbers import format_difference, p_phrase
from trec_rag_eval.render.text_table import aligned_lines, labelled_lines

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
    return json.dumps(plain_data(result.to_dict()), indent=2) + "\n"  # NaN (a p-value no test gives) as null


def allpairs_csv(result: AllPairs) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["measure", "run_a", "run_b", "mean_a", "mean_b", "delta", "p_value", "p_adjusted",
                     "significant", "winner"])
    for p in result.pairs:
        writer.writerow([p.measure, p.run_a, p.run_b, *(_field(v) for v in (p.mean_a, p.mean_b, p.delta, p.p_value,
                                                                              p.p_adjusted)),
                         p.significant, p.winner or ""])
    return out.getvalue()


def _field(value: float) -> float | str:
    """A number at full precision (csv writes its repr), nothing (NaN, +-inf) as an empty field."""
    number = plain_number(value)
    return "" if number is None else number


def _cells(result: AllPairs, mark: Callable[[str], str]) -> list[list[str]]:
    return [[result.letter(run), run, *(format_number(result.means[run][m]) + mark(result.letters(m)[run])
                                        for m in result.measures)] for run in result.runs]


def _pair_lines(result: AllPairs) -> list[str]:
    said = []
    for p in result.pairs:
        verdict = f"{p.winner} better" if p.winner else "not significant"
        said.append((p.measure, f"{result.letter(p.run_a)} {p.run_a} vs {result.letter(p.run_b)} {p.run_b}: "
                                f"{format_difference(p.delta)}, {p_phrase(p.p_adjusted, 'n/a')}: {verdict}"))
    return labelled_lines(said, result.measures)


def allpairs_table(result: AllPairs) -> str:
    header = ["", "run", *result.measures]
    rows = _cells(result, lambda letters: "".join(SUPERSCRIPTS.get(ch, ch) for ch in letters))
    lines = [f"All pairs of {len(result.runs)} runs over {result.n_queries} queries: {TEST_NAMES[result.test]}", ""]
    lines += aligned_lines([header, *rows])
    lines += ["", "A run's letters name the runs it is significantly better than on that measure.", "",
              "Pairs (p after the family correction):", *_pair_lines(result), "", method_text(result)]
    return "\n".join(lines) + "\n"


def allpairs_markdown(result: AllPairs) -> str:
    rows = _cells(result, lambda letters: f"<sup>{letters}</sup>" if letters else "")
    lines = ["| | run | " + " | ".join(result.measures) + " |", "|---|---|" + "---|" * len(result.measures)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += ["", f"Superscripts: the runs each run is significantly better than. {method_text(result)}."]
    return "\n".join(lines) + "\n"


def allpairs_latex(result: AllPairs, caption: str | None = None, label: str | None = "tab:all-pairs") -> str:
    """The letters table ready for a paper (booktabs): each measure's highest mean in bold, and the letters
    of the runs a run is significantly better than as superscripts, each letter in its own place in its
    column (the others kept as invisible space), so the columns line up; a caption (``caption``, by default
    the number of queries, then what the bold and the letters mean and the test) and a ``label``."""
    from trec_rag_eval.render.latex import latex_best, latex_cell, latex_escape, latex_table

    letters = [result.letter(run) for run in result.runs]
    cells: dict[str, list[str]] = {}
    for measure in result.measures:
        means = [result.means[run][measure] for run in result.runs]
        beaten = [result.letters(measure)[run] for run in result.runs]
        used = [letter for letter in letters if any(letter in b for b in beaten)]

        def mark(beats: str, used: list[str] = used) -> str:
            if not beats:
                return ""
            return "$^{" + "".join(ch if ch in beats else r"\phantom{" + ch + "}" for ch in used) + "}$"

        phantom = "$^{" + "".join(used) + "}$" if used else ""
        cells[measure] = [latex_cell(mean, best, mark(beats), phantom)
                          for mean, best, beats in zip(means, latex_best(means), beaten, strict=True)]
    rows = [" & ".join([letters[i], latex_escape(run), *(cells[m][i] for m in result.measures)])
            for i, run in enumerate(result.runs)]
    lead = f"Mean over {result.n_queries} queries." if caption is None else caption
    legend = (r"\textbf{Bold}: the highest mean of each measure. Superscripts: the runs each run is significantly "
              f"better than ({latex_escape(method_text(result))}).")
    header = " & Run & " + " & ".join(latex_escape(m) for m in result.measures)
    return "\n".join(latex_table("ll" + "r" * len(result.measures), header, rows, f"{lead} {legend}", label)) + "\n"


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
