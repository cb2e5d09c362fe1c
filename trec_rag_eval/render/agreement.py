"""Renderings of an ``Agreement`` (``trec-rag-eval agree``): the command's text and the notebook tables.

Formatting only: every number is read from the ``Agreement``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trec_rag_eval.number_formats import format_magnitude, format_number
from trec_rag_eval.render.notebook import html_table
from trec_rag_eval.render.numbers import format_difference

if TYPE_CHECKING:
    from trec_rag_eval.compare.agreement import Agreement

UNDEFINED = "undefined"
"""A coefficient with no value (kappa when both sides give one label alone)."""


def agreement_text(result: Agreement) -> str:
    """The command's text: label agreement, then each measure's two orderings, tau, tau_AP, swaps."""
    labels = result.labels
    lines = [f"A: {result.source_a}", f"B: {result.source_b}",
             f"Pairs judged by both: {labels.shared}; only in A: {labels.only_a}; only in B: {labels.only_b}"]
    if labels.shared:
        kappa_binary, alpha_nominal, kappa_linear, alpha_interval = (
            format_magnitude(value, UNDEFINED)
            for value in (labels.kappa_binary, labels.alpha_nominal, labels.kappa_linear, labels.alpha_interval))
        lines += [
            f"Label agreement on the {labels.shared} pairs both judge:",
            f"  binary (relevant = grade >= {labels.relevance_level}): Cohen's kappa "
            f"{kappa_binary}, Krippendorff's alpha (nominal) {alpha_nominal}, "
            f"same verdict {labels.same_binary:.0%}",
            f"  graded: Cohen's kappa (linear weights) {kappa_linear}, Krippendorff's alpha "
            f"(interval) {alpha_interval}, same grade {labels.same_grade:.0%}",
            "  confusion matrix (rows: A's grade, columns: B's grade):",
        ]
        width = max(4, *(len(str(x)) + 1 for row in labels.confusion for x in row))
        lines.append("       " + "".join(str(g).rjust(width) for g in labels.grades))
        for grade, row in zip(labels.grades, labels.confusion, strict=True):
            lines.append(f"  A {str(grade).ljust(3)}" + "".join(str(x).rjust(width) for x in row))
    else:
        lines.append("No pair is judged by both: no label agreement to measure.")
    if result.rankings:
        runs = len(result.rankings[0].runs)
        lines.append("")
        lines.append(f"System rankings of {runs} runs over the {len(result.query_ids)} queries both judge:")
        for r in result.rankings:
            tau, low, high, tau_ap = (format_magnitude(value, UNDEFINED) for value in (r.tau, r.tau_low, r.tau_high,
                                                                                         r.tau_ap))
            lines.append(f"  {r.measure}: Kendall's tau {tau} ({result.confidence:.0%} bootstrap interval "
                         f"[{low}, {high}]), tau_AP {tau_ap}, "
                         f"{len(r.swaps)} swapped pair{'s' if len(r.swaps) != 1 else ''}")
            order_a, order_b = r.ordering("a"), r.ordering("b")
            score = {"a": dict(zip(r.runs, r.scores_a, strict=True)),
                     "b": dict(zip(r.runs, r.scores_b, strict=True))}
            width = max(len(name) for name in r.runs) + 8
            lines.append(f"    rank  {'under A'.ljust(width)}  under B")
            for i, (x, y) in enumerate(zip(order_a, order_b, strict=True)):
                left = f"{x} {format_number(score['a'][x])}"
                lines.append(f"    {str(i + 1).ljust(4)}  {left.ljust(width)}  {y} {format_number(score['b'][y])}")
            for s in r.swaps:
                lines.append(f"    swapped: {s.first} vs {s.second}: {format_difference(s.delta_a)} under A, "
                             f"{format_difference(s.delta_b)} under B")
        lines.append(f"tau: Kendall's tau-b between the runs' means; tau_AP: B's ordering against A's (Yilmaz "
                     f"et al. 2008); interval: percentile bootstrap over queries, {result.n_resamples} resamples, "
                     f"seed {result.seed}")
    return "\n".join(lines) + "\n"


def agreement_html(result: Agreement) -> str:
    """The notebook tables: the label statistics, then one row per measure."""
    labels = result.labels
    parts = [html_table(["", "value"], [
        ["pairs judged by both", labels.shared], ["only in A", labels.only_a], ["only in B", labels.only_b],
        ["Cohen's kappa (binary)", labels.kappa_binary], ["Cohen's kappa (linear)", labels.kappa_linear],
        ["Krippendorff's alpha (nominal)", labels.alpha_nominal],
        ["Krippendorff's alpha (interval)", labels.alpha_interval]], f"A: {result.source_a}; B: {result.source_b}")]
    if result.rankings:
        rows = [[r.measure, r.tau, r.tau_low, r.tau_high, r.tau_ap, len(r.swaps), " > ".join(r.ordering("a")),
                 " > ".join(r.ordering("b"))] for r in result.rankings]
        parts.append(html_table(["measure", "Kendall's tau", "CI low", "CI high", "tau_AP", "swaps", "under A",
                                 "under B"], rows, f"{len(result.query_ids)} queries"))
    return "".join(parts)
