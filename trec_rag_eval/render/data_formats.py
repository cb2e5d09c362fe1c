"""An evaluation's data formats (``render.output_formats``): the JSON document, CSV rows and JSON Lines, values as
``number_formats.plain_number`` writes them; the table a person reads is ``render.table``'s.

Each per-query part is written two ways with the same bytes: value by value (``json.dumps(indent=2)``,
``csv.writer``, ``json.dumps`` of each row) and a column at a time (``render.columnar_text``, the ``*_columns``
functions) for a large evaluation. The format's object chooses (``output_formats.column_wise``).
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
from trec_rag_eval.number_formats import plain_number
from trec_rag_eval.render.table import measures_per_query

if TYPE_CHECKING:
    import polars as pl


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
    """json's text of ``plain_number`` of every value: repr of the float, null for NaN and +-inf."""
    from trec_rag_eval.render import columnar_text

    if measure.spec.value_type == "str":
        return columnar_text.strings([json.dumps(v, ensure_ascii=False) for v in values])
    return columnar_text.shortest(_finite_or_nan(values)).fill_null("null")


def _finite_or_nan(values: Any) -> np.ndarray:
    """The values as floats, NaN for each +-inf: ``plain_number``'s rule (no finite float, no value) a column at
    a time, since ``columnar_text.shortest`` writes inf as ``inf`` and only NaN as nothing."""
    array = np.asarray(values, dtype=np.float64)
    return np.where(np.isinf(array), np.nan, array)


def _json_per_query(evaluation: Evaluation) -> str:
    """``{query_id: {measure: value}}`` as json.dumps(indent=2) writes it one level down."""
    import polars as pl

    from trec_rag_eval.render import columnar_text

    ids = evaluation.query_ids
    if not ids:
        return "{}"
    keys = [json.dumps(q, ensure_ascii=False) for q in ids]
    measures = list({m.shown: m for m in measures_per_query(evaluation)}.values())  # a name once, as in a dict
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
    table = [(m.shown, e.values[m.shown]) for m in measures_per_query(e)]
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

    measures = measures_per_query(evaluation)
    ids = evaluation.query_ids
    if not measures or not ids:
        return ""
    values = []
    for m in measures:
        column = evaluation.values[m.shown]
        if m.spec.value_type == "str":
            values.append(columnar_text.strings([_csv_field(v) for v in column]))
        else:
            values.append(columnar_text.shortest(_finite_or_nan(column)).fill_null(""))
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

    measures = measures_per_query(evaluation)
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
