"""An evaluation's table, the text a person reads (``render.output_formats``' table: measure x cutoff, or one row
per query, and its footer); the data formats (the JSON document, CSV rows, JSON Lines) are ``render.data_formats``'.

Each per-query part is written two ways with the same bytes: value by value (``str.format``) and a column at a
time (``render.columnar_text``, the ``*_columns`` functions) for a large evaluation: ~670,000 values for
``-q -m all_trec`` on 7,000 queries. The format's object chooses (``output_formats.column_wise``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from trec_rag_eval.evaluation.evaluate import Evaluation
from trec_rag_eval.measures.model import Measure
from trec_rag_eval.number_formats import format_number

if TYPE_CHECKING:
    import polars as pl


def _base(measure: Measure) -> str:
    return measure.shown.rsplit("@", 1)[0] if measure.cutoff is not None else measure.shown


def summary_grid(evaluation: Evaluation) -> tuple[list[Any], dict[str, dict[Any, Any]], list[tuple[str, Any]]]:
    """The summary as the table lays it out: (cutoffs, {measure family: {cutoff: mean}}, [(measure, mean)]
    of the measures without a cutoff). With a context cost, two more rows: the tokens of the top k
    (mean, then p95 over queries), as text with one decimal, at its cutoffs."""
    with_cutoff = [m for m in evaluation.measures if m.cutoff is not None and evaluation.summary.get(m) is not None]
    plain = [m for m in evaluation.measures if m.cutoff is None and evaluation.summary.get(m) is not None
             and not m.spec.run_tag]
    cutoffs = {m.cutoff for m in with_cutoff if m.cutoff is not None}  # always true: for mypy
    rows: dict[str, dict[Any, Any]] = {}
    for m in with_cutoff:
        rows.setdefault(_base(m), {})[m.cutoff] = evaluation.summary[m]
    context = evaluation.context
    if context is not None:
        cutoffs |= set(context.ks)
        rows[TOKENS_MEAN] = {k: f"{context.mean(k):.1f}" for k in context.ks}
        rows[TOKENS_P95] = {k: f"{context.p95(k):.1f}" for k in context.ks}
    return sorted(cutoffs), rows, [(m.shown, evaluation.summary[m]) for m in plain]


TOKENS_MEAN, TOKENS_P95 = "tokens", "tokens p95"


def context_note(evaluation: Evaluation) -> str | None:
    """What the tokens rows count, or None without a context cost."""
    context = evaluation.context
    if context is None:
        return None
    text = (f"tokens: of the top k results sent as context, counted as {context.tokenizer}; "
            f"mean and 95th percentile over {len(context.query_ids)} queries")
    if context.missing_texts:
        shown = ", ".join(context.missing_texts[:3]) + (", ..." if len(context.missing_texts) > 3 else "")
        text += f"; {len(context.missing_texts)} retrieved documents have no text, counted 0 ({shown})"
    return text


def summary_table(evaluation: Evaluation, title: str | None = None) -> str:
    """One row per measure, one column per cutoff; measures without a cutoff below; the context
    tokens of the top k under the measures, when known."""
    cutoffs, rows, plain = summary_grid(evaluation)
    width = max([len(name) for name in list(rows) + [name for name, _ in plain]] + [7])
    lines = []
    if title:
        lines.append(title)
    if rows:
        header = "measure".ljust(width) + "".join(f"{'@' + format_cutoff(k):>9}" for k in cutoffs)
        lines.append(header)
        lines.append("-" * len(header))
        for name, by_k in rows.items():
            cells = "".join(f"{format_number(by_k[k]) if k in by_k else '':>9}" for k in cutoffs)
            lines.append(name.ljust(width) + cells)
    if plain:
        if rows:
            lines.append("")
        for name, value in plain:
            lines.append(name.ljust(width) + f"{format_number(value):>9}")
    lines.append("")
    note = context_note(evaluation)
    if note is not None:
        lines.append(note)
    lines.append(evaluation_footer(evaluation))
    return "\n".join(lines) + "\n"


def format_cutoff(k: Any) -> str:
    return str(int(k)) if float(k).is_integer() else str(k)


def evaluation_footer(evaluation: Evaluation) -> str:
    n = len(evaluation.query_ids)
    text = f"queries: {n}"
    empty = len(evaluation.empty_queries)
    missing = len(evaluation.missing_queries) - empty
    said = [f"{missing} missing from the run"] * bool(missing) + [f"{empty} with no result"] * bool(empty)
    if said:
        text += f" ({', '.join(said)}, scored 0)"
    text += f"; run: {evaluation.run_tag}"
    return text


def per_query_table(evaluation: Evaluation, summary: bool = True) -> str:
    """One row per query (then 'all', unless not ``summary``), one column per measure; then the context
    tokens at each k, when known. Value by value."""
    measures, qwidth, widths, lines = _per_query_head(evaluation)
    table = [evaluation.values[m.shown] for m in measures]
    context = evaluation.context
    spent = {} if context is None else context.per_query()
    for i, q in enumerate(evaluation.query_ids):
        row = [format_number(column[i]) for column in table] + [str(spent[q][k]) for k in spent.get(q, {})]
        lines.append(q.ljust(qwidth) + "".join(f" {c:>{w}}" for c, w in zip(row, widths, strict=False)))
    return _per_query_end(evaluation, measures, qwidth, widths, lines, summary)


def per_query_table_columns(evaluation: Evaluation, summary: bool = True) -> str:
    """``per_query_table``, its rows built a column at a time (with context tokens, value by value)."""
    if not evaluation.query_ids or evaluation.context is not None:
        return per_query_table(evaluation, summary)
    import polars as pl

    from trec_rag_eval.render import columnar_text

    measures, qwidth, widths, lines = _per_query_head(evaluation)
    cells: list[pl.Series | pl.Expr] = [columnar_text.strings([q.ljust(qwidth) for q in evaluation.query_ids])]
    for m, w in zip(measures, widths, strict=False):
        cells += [pl.lit(" "), _num_column(m, evaluation.values[m.shown]).str.pad_start(w)]
    lines.append(columnar_text.joined(cells)[:-1])
    return _per_query_end(evaluation, measures, qwidth, widths, lines, summary)


def _per_query_head(evaluation: Evaluation) -> tuple[list[Measure], int, list[int], list[str]]:
    """The per-query table's measures, the width of its query column and of each other, its header line."""
    measures = measures_per_query(evaluation)
    names = [m.shown for m in measures]
    context = evaluation.context
    tokens = [] if context is None else [f"tokens@{k}" for k in context.ks]
    qwidth = max([len(q) for q in evaluation.query_ids] + [8])
    widths = [max(len(n), 7) for n in [*names, *tokens]]
    header = "query".ljust(qwidth) + "".join(f" {n:>{w}}" for n, w in zip([*names, *tokens], widths, strict=False))
    return measures, qwidth, widths, [header]


def _per_query_end(evaluation: Evaluation, measures: list[Measure], qwidth: int, widths: list[int], lines: list[str],
                   summary: bool) -> str:
    """The per-query table's lines, then its 'all' row (unless not ``summary``)."""
    if not summary:
        return "\n".join(lines) + "\n"
    context = evaluation.context
    totals = [format_number(evaluation.summary.get(m)) if evaluation.summary.get(m) is not None else ''
              for m in measures]
    totals += [] if context is None else [f"{context.mean(k):.1f}" for k in context.ks]
    lines.append("all".ljust(qwidth) + "".join(f" {c:>{w}}" for c, w in zip(totals, widths, strict=False)))
    return "\n".join(lines) + "\n"


def measures_per_query(evaluation: Evaluation) -> list[Measure]:
    """The measures with a value per query, in the evaluation's order: the columns of every per-query output."""
    return [m for m in evaluation.measures if m.spec.per_query and m.shown in evaluation.values]


def _num_column(measure: Measure, values: Any) -> pl.Series:
    """``format_number`` of every value of a per-query column."""
    from trec_rag_eval.render import columnar_text

    if measure.spec.value_type == "str":
        return columnar_text.strings([str(v) for v in values])
    return columnar_text.fixed(np.asarray(values, dtype=np.float64), 4, nan="nan")
