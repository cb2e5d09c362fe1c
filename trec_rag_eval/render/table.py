"""An evaluation's text in the output formats other than trec_eval's (``render.output_formats``): the table
a person reads (measure x cutoff, or one row per query), the JSON document, CSV rows and JSON Lines.

Each per-query part is written two ways with the same bytes: value by value (``str.format``,
``json.dumps(indent=2)``, ``csv.writer``, ``json.dumps`` of each row) and a column at a time
(``render.columnar_text``, the ``*_columns`` functions) for a large evaluation: ~670,000 values for
``-q -m all_trec`` on 7,000 queries. The format's object chooses (``output_formats.column_wise``).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from trec_rag_eval.evaluation.evaluate import Evaluation
from trec_rag_eval.measures.model import Measure
from trec_rag_eval.number_formats import format_number
from trec_rag_eval.render.numbers import plain_number

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
    measures = _per_query_measures(evaluation)
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


def _per_query_measures(evaluation: Evaluation) -> list[Measure]:
    return [m for m in evaluation.measures if m.spec.per_query and m.shown in evaluation.values]


def _num_column(measure: Measure, values: Any) -> pl.Series:
    """``format_number`` of every value of a per-query column."""
    from trec_rag_eval.render import columnar_text

    if measure.spec.value_type == "str":
        return columnar_text.strings([str(v) for v in values])
    return columnar_text.fixed(np.asarray(values, dtype=np.float64), 4, nan="nan")


def to_dict(evaluation: Evaluation, per_query: bool = False, summary: bool = True) -> dict[str, Any]:
    """The JSON document of one evaluation; without ``summary``, no ``summary`` nor ``context_tokens`` (the
    means over queries): what ``-n`` leaves."""
    out: dict[str, Any] = {
        "run": evaluation.run_tag,
        "num_queries": len(evaluation.query_ids),
        "measures": [m.shown for m in evaluation.measures],
        "summary": {str(m): plain_number(v) for m, v in evaluation.summary.items() if v is not None},
        "missing_queries": evaluation.missing_queries,
        "extra_queries": evaluation.extra_queries,
    }
    if not summary:
        del out["summary"]
    elif evaluation.context is not None:
        out["context_tokens"] = {"tokenizer": evaluation.context.tokenizer,
                                 **{f"@{k}": v for k, v in evaluation.context.summary.items()}}
    if per_query:
        out["per_query"] = {
            q: {m.shown: plain_number(evaluation.values[m][i]) for m in evaluation.measures
                if m in evaluation.values and m.spec.per_query}
            for i, q in enumerate(evaluation.query_ids)
        }
    return out


def json_text(evaluation: Evaluation, per_query: bool, summary: bool = True) -> str:
    """The JSON document of one evaluation (``to_dict``), as ``json.dumps(indent=2)`` writes it."""
    return json.dumps(to_dict(evaluation, per_query, summary), indent=2, ensure_ascii=False)


def json_text_columns(evaluation: Evaluation, per_query: bool, summary: bool = True) -> str:
    """``json_text``, its ``per_query`` part written a column at a time."""
    if not per_query:
        return json_text(evaluation, per_query, summary)
    text = json.dumps(to_dict(evaluation, summary=summary), indent=2, ensure_ascii=False)
    return text[: -len("\n}")] + ',\n  "per_query": ' + _json_per_query(evaluation) + "\n}"


def _json_value_column(measure: Measure, values: Any) -> pl.Series:
    """json's text of ``plain_number`` of every value: repr of the float, null for NaN, Infinity for inf."""
    import polars as pl

    from trec_rag_eval.render import columnar_text

    if measure.spec.value_type == "str":
        return columnar_text.strings([json.dumps(v, ensure_ascii=False) for v in values])
    array = np.asarray(values, dtype=np.float64)
    text = columnar_text.shortest(array).fill_null("null")
    infinite = np.flatnonzero(np.isinf(array))
    if len(infinite):
        text = text.scatter(infinite, pl.Series(["Infinity" if v > 0 else "-Infinity" for v in array[infinite]]))
    return text


def _json_per_query(evaluation: Evaluation) -> str:
    """``{query_id: {measure: value}}`` as json.dumps(indent=2) writes it one level down."""
    import polars as pl

    from trec_rag_eval.render import columnar_text

    ids = evaluation.query_ids
    if not ids:
        return "{}"
    keys = [json.dumps(q, ensure_ascii=False) for q in ids]
    measures = list({m.shown: m for m in _per_query_measures(evaluation)}.values())  # a name once, as in a dict
    if not measures:
        return "{\n" + ",\n".join(f"    {key}: {{}}" for key in keys) + "\n  }"
    opening = columnar_text.strings([f"    {key}: {{" for key in keys])
    entries = []
    for i, m in enumerate(measures):
        head = f"      {json.dumps(m.shown, ensure_ascii=False)}: "
        tail = "," if i < len(measures) - 1 else ""
        entries.append(pl.select(pl.concat_str([pl.lit(head), _json_value_column(m, evaluation.values[m.shown]),
                                                pl.lit(tail)])).to_series())
    closing = columnar_text.strings(["    },"] * (len(ids) - 1) + ["    }"])
    return "{\n" + columnar_text.joined([columnar_text.interleave([opening, *entries, closing])])[:-1] + "\n  }"


def csv_rows(e: Evaluation, per_query: bool = False, summary: bool = True) -> str:
    """The csv rows of one evaluation (``run,query_id,measure,value``, as ``csv.writer`` writes them: floats as
    repr, NaN empty), without the header; without ``summary``, none of query ``all``."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    if per_query:
        writer.writerows(_per_query_rows(e))
    writer.writerows(_other_rows(e, per_query, summary))
    return buffer.getvalue()


def csv_rows_columns(e: Evaluation, per_query: bool = False, summary: bool = True) -> str:
    """``csv_rows``, its per-query rows written a column at a time."""
    buffer = io.StringIO()
    if per_query:
        buffer.write(_csv_per_query(e))
    csv.writer(buffer, lineterminator="\n").writerows(_other_rows(e, per_query, summary))
    return buffer.getvalue()


def _per_query_rows(e: Evaluation) -> Iterator[list[Any]]:
    """``[run, query_id, measure, value]`` of every per-query value, query by query, value by value."""
    table = [(m.shown, e.values[m.shown]) for m in _per_query_measures(e)]
    return ([e.run_tag, q, name, plain_number(column[i])] for i, q in enumerate(e.query_ids) for name, column in table)


def _other_rows(e: Evaluation, per_query: bool, summary: bool = True) -> Iterator[list[Any]]:
    """The rows after the per-query values: each query's context tokens at each k (``-q``), the summary
    (query ``all``), then the context cost at each k (mean, then p95 over queries); the last two only
    with ``summary``."""
    if per_query and e.context is not None:
        for q, by_k in e.context.per_query().items():
            for k, count in by_k.items():
                yield [e.run_tag, q, f"tokens@{k}", count]
    if not summary:
        return
    for m in e.measures:
        value = e.summary.get(m)
        if value is not None:
            yield [e.run_tag, "all", m.shown, plain_number(value)]
    if e.context is not None:
        for k in e.context.ks:
            yield [e.run_tag, "all", f"tokens@{k}", e.context.mean(k)]
            yield [e.run_tag, "all", f"tokens_p95@{k}", e.context.p95(k)]


def _csv_field(text: str) -> str:
    """``text`` as csv.writer writes it among other fields (quoted when it must be)."""
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow([text, ""])
    return buffer.getvalue()[: -len(",\n")]


def _csv_per_query(evaluation: Evaluation) -> str:
    """The per-query rows of ``csv_rows``: each run tag, query id and measure name quoted once (when it must
    be), gathered beside the values' column, written by polars' CSV writer without quoting."""
    from trec_rag_eval.render import columnar_text

    measures = _per_query_measures(evaluation)
    ids = evaluation.query_ids
    if not measures or not ids:
        return ""
    values = []
    for m in measures:
        column = evaluation.values[m.shown]
        if m.spec.value_type == "str":
            values.append(columnar_text.strings([_csv_field(v) for v in column]))
        else:
            values.append(columnar_text.shortest(np.asarray(column, dtype=np.float64)).fill_null(""))
    run = _csv_field(evaluation.run_tag)
    rows = columnar_text.repeat_each([f"{run},{_csv_field(q)}" for q in ids], len(measures))
    names = columnar_text.cycle([_csv_field(m.shown) for m in measures], len(ids))
    return columnar_text.separated([rows, names, columnar_text.interleave(values)], separator=",")


JSONL_KEYS = ("run", "query_id", "measure", "value")


def jsonl_rows(e: Evaluation, per_query: bool = False, summary: bool = True) -> str:
    """JSON Lines: the csv rows of one evaluation, each ``json.dumps({"run": ..., "query_id": ..., "measure": ...,
    "value": ...}, ensure_ascii=False)`` on its own line, values as the JSON format writes them (``plain_number``:
    floats at full precision, NaN as ``null``); without ``summary``, none of query ``all``."""
    lines = [_jsonl_line(row) for row in _per_query_rows(e)] if per_query else []
    lines += [_jsonl_line(row) for row in _other_rows(e, per_query, summary)]
    return "".join(lines)


def jsonl_rows_columns(e: Evaluation, per_query: bool = False, summary: bool = True) -> str:
    """``jsonl_rows``, its per-query lines written a column at a time."""
    lines = [_jsonl_per_query(e)] if per_query else []
    lines += [_jsonl_line(row) for row in _other_rows(e, per_query, summary)]
    return "".join(lines)


def _jsonl_line(row: list[Any]) -> str:
    return json.dumps(dict(zip(JSONL_KEYS, row, strict=True)), ensure_ascii=False) + "\n"


def _jsonl_per_query(evaluation: Evaluation) -> str:
    """The per-query lines of ``jsonl_rows``: each query id (with the run tag) and measure name json-escaped
    once, gathered beside the values' column of json texts, the three written by polars' CSV writer with a
    space between them: ``{"run": R, "query_id": Q,`` ``"measure": M, "value":`` ``V`` and ``}``."""
    from trec_rag_eval.render import columnar_text

    measures = _per_query_measures(evaluation)
    ids = evaluation.query_ids
    if not measures or not ids:
        return ""

    def text(value: str) -> str:
        return json.dumps(value, ensure_ascii=False)

    run = f'{{"run": {text(evaluation.run_tag)}, "query_id": '
    rows = columnar_text.repeat_each([f"{run}{text(q)}," for q in ids], len(measures))
    names = columnar_text.cycle([f'"measure": {text(m.shown)}, "value":' for m in measures], len(ids))
    values = columnar_text.interleave([_json_value_column(m, evaluation.values[m.shown]) for m in measures])
    return columnar_text.separated([rows, names, values], separator=" ", line_end="}\n")
