"""Renderings of a ``Fusion`` (``trec-rag-eval fuse``): the command's report and the notebook table.

Formatting only: the runs, settings and cross-validation's numbers are the fusion's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trec_rag_eval.number_formats import format_number
from trec_rag_eval.render.notebook import html_table
from trec_rag_eval.render.text_table import aligned_lines

if TYPE_CHECKING:
    from trec_rag_eval.fusion.fusion_result import Fusion


def fusion_text(fusion: Fusion) -> str:
    """What was fused and how; when tuned, the cross-validation: one row per fold, the held-out and training
    means, the setting written."""
    lines = [f"Fused {len(fusion.runs)} runs ({', '.join(fusion.runs)}) with {fusion.settings_text}: "
             f"{fusion.n_queries} queries, {fusion.n_documents} documents"]
    tuning = fusion.tuning
    if tuning is not None:
        lines.append("")
        lines.append(f"{tuning.parameter} chosen on {tuning.measure} by {len(tuning.folds)}-fold cross-validation "
                     f"over {tuning.n_queries} queries (seed {tuning.seed}), {tuning.n_settings} settings tried:")
        header = ["fold", "queries", "chosen", "training", "held-out"]
        rows = [[str(f.fold), str(f.n_queries), f.chosen.label(fusion.method), format_number(f.training),
                 format_number(f.held_out)] for f in tuning.folds]
        lines += ["  " + line for line in aligned_lines([header, *rows], right={0, 1, 3, 4})]
        lines.append(f"{tuning.measure}: {format_number(tuning.held_out)} held out (each query scored with the "
                     f"setting chosen without it), {format_number(tuning.training)} on the training folds")
        lines.append(f"written with {tuning.chosen.label(fusion.method)}, chosen on all {tuning.n_queries} queries "
                     f"({tuning.measure} {format_number(tuning.chosen_score)} on those same queries: optimistic)")
    return "\n".join(lines) + "\n"


def fusion_html(fusion: Fusion) -> str:
    """The fused run's first 20 rows, or the cross-validation's folds when tuned."""
    caption = f"{fusion.settings_text} of {', '.join(fusion.runs)}"
    if fusion.tuning is None:
        table = fusion.to_polars()
        rows = [list(row) for row in table.head(20).iter_rows()]
        return html_table(list(table.columns), rows, caption + f" (first 20 of {table.height} rows)")
    tuning = fusion.tuning
    rows = [[f.fold, f.n_queries, f.chosen.label(fusion.method), f.training, f.held_out] for f in tuning.folds]
    rows.append(["all", tuning.n_queries, tuning.chosen.label(fusion.method), tuning.training, tuning.held_out])
    return html_table(["fold", "queries", "chosen", f"training {tuning.measure}", f"held-out {tuning.measure}"],
                      rows, caption)
