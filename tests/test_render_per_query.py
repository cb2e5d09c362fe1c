"""Every per-query output (-q in trec, table, json, csv and jsonl) is built a column at a time; here each is checked,
byte for byte, against the value-by-value rendering the formats define: C's ``%-22s\\t%s\\t%6.4f`` lines,
``json.dumps(indent=2)`` of the documented dict, ``csv.writer`` rows, ``json.dumps`` of each JSON Lines row,
the table's f-strings."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

import trec_rag_eval as tre
from trec_rag_eval.number_formats import format_number
from trec_rag_eval.render import trec
from trec_rag_eval.render.data_formats import to_dict
from trec_rag_eval.render.output import Document, RunRenderer
from trec_rag_eval.render.table import per_query_table, per_query_table_columns
from trec_rag_eval.render.trec import format_trec_value


@pytest.fixture(autouse=True, params=["column-wise", "value by value"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both ways each output is built (polars columns from COLUMN_WISE_FROM values, one call per value
    below) must give the same bytes."""
    threshold = 0 if request.param == "column-wise" else 10**9
    monkeypatch.setattr("trec_rag_eval.render.output_formats.COLUMN_WISE_FROM", threshold)
    monkeypatch.setattr(trec, "BLOCK_LINES", 150)  # trec's lines in blocks of queries: one a block here
    # the blocks in 3 groups of queries, one per thread (5 queries: groups of 1, 2 and 2), whatever the cores
    monkeypatch.setattr(trec, "PARALLEL_FROM", 0)
    monkeypatch.setattr("trec_rag_eval.core.parallel.sort_threads", lambda: 3)
    return str(request.param)

# query ids a column path could mishandle: non-ASCII, a comma, a quote, a long one; a query whose
# values are NaN (nothing left after judged_only and no relevant document: trec_eval's 0/0), one
# with nothing relevant, one missing from the run
def _whole(fmt: str, evaluations: list[tre.Evaluation], per_query: bool) -> str:
    """The evaluate command's output of these evaluations, run after run (``render.output``)."""
    pieces: list[str] = []
    document = Document(fmt, pieces.append)
    for e in evaluations:
        document.add(e.run_tag, RunRenderer(fmt, per_query)(e))
    document.close()
    return "".join(pieces)


def to_json(evaluations: list[tre.Evaluation], per_query: bool) -> str:
    return _whole("json", evaluations, per_query)


def to_csv(evaluations: list[tre.Evaluation], per_query: bool) -> str:
    return _whole("csv", evaluations, per_query)


def to_jsonl(evaluations: list[tre.Evaluation], per_query: bool) -> str:
    return _whole("jsonl", evaluations, per_query)


QRELS = {"q,1": {"a": 2, "b": 0, "c": 1}, "q\"2": {"a": 1, "x": 3}, "é3": {"d": 0, "e": 0},
         "q4-with-a-rather-long-query-id": {"a": 1}, "q5": {"z": 1}}
RUN = {"q,1": {"a": 3.0, "b": 2.0, "u": 1.5, "c": 1.0}, "q\"2": {"u": 2.0, "x": 1.0, "a": 0.5},
       "é3": {"u": 1.0, "v": 0.5}, "q4-with-a-rather-long-query-id": {"u": 1.0, "a": 0.9}}


def _evaluations() -> list[tre.Evaluation]:
    return [tre.evaluate(QRELS, RUN, "all_trec"),
            tre.evaluate(QRELS, RUN, ["all_trec", "F1@2", "nDCG@3", "Judged@2"], judged_only=True)]


def _reference_trec(e: tre.Evaluation, summary: bool) -> str:
    lines = []
    for i, q in enumerate(e.query_ids):
        for m in e.measures:
            if m.spec.per_query and m in e.values and m.family != "num_q":  # num_q: in the summary only
                lines.append(f"{m.trec_name:<22}\t{q}\t{format_trec_value(m, e.values[m][i])}\n")
    if summary:
        lines += [f"{m.trec_name:<22}\tall\t{format_trec_value(m, e.summary[m])}\n"
                  for m in e.measures if e.summary.get(m) is not None]
    return "".join(lines)


def _reference_table(e: tre.Evaluation) -> str:
    measures = [m for m in e.measures if m in e.values and m.spec.per_query]
    names = [str(m) for m in measures]
    qwidth = max([len(q) for q in e.query_ids] + [8])
    widths = [max(len(n), 7) for n in names]
    lines = ["query".ljust(qwidth) + "".join(f" {n:>{w}}" for n, w in zip(names, widths, strict=True))]
    for i, q in enumerate(e.query_ids):
        lines.append(q.ljust(qwidth) + "".join(f" {format_number(e.values[m][i]):>{w}}"
                                               for m, w in zip(measures, widths, strict=True)))
    lines.append("all".ljust(qwidth) + "".join(
        f" {format_number(e.summary.get(m)) if e.summary.get(m) is not None else '':>{w}}"
        for m, w in zip(measures, widths, strict=True)))
    return "\n".join(lines) + "\n"


def _reference_csv(evaluations: list[tre.Evaluation]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["run", "query_id", "measure", "value"])
    for e in evaluations:
        for i, q in enumerate(e.query_ids):
            for m in e.measures:
                if m.spec.per_query and m in e.values:
                    value = e.values[m][i]
                    writer.writerow([e.run_tag, q, str(m), value if isinstance(value, str)
                                     else None if math.isnan(value) else float(value)])
        for m in e.measures:
            if e.summary.get(m) is not None:
                value = e.summary[m]
                writer.writerow([e.run_tag, "all", str(m), None if isinstance(value, float) and math.isnan(value)
                                 else value if isinstance(value, str) else float(value)])
    return buffer.getvalue()


def test_the_evaluations_hold_what_the_renderers_must_get_right() -> None:
    plain, judged = _evaluations()
    assert math.isnan(judged.value("IPrec@0.0", "é3"))  # trec_eval's -nan
    assert plain.value("relstring", "q,1") == "20-1"  # a string column, '' for the missing query
    assert "q,1" in plain.query_ids and "é3" in plain.query_ids


@pytest.mark.parametrize("summary", [True, False])
def test_trec_per_query_lines(summary: bool) -> None:
    for e in _evaluations():
        assert e.render("trec", per_query=True, summary=summary) == _reference_trec(e, summary)
    assert "  -nan\n" in _evaluations()[1].render("trec", per_query=True)


def test_table_per_query(path: str) -> None:
    make = per_query_table_columns if path == "column-wise" else per_query_table
    for e in _evaluations():
        assert make(e) == _reference_table(e)


def test_json_per_query() -> None:
    evaluations = _evaluations()
    for e in evaluations:
        assert to_json([e], True) == json.dumps(to_dict(e, True), indent=2, ensure_ascii=False) + "\n"
        assert to_json([e], False) == json.dumps(to_dict(e, False), indent=2, ensure_ascii=False) + "\n"
    both = [to_dict(e, True) for e in evaluations]
    assert to_json(evaluations, True) == json.dumps(both, indent=2, ensure_ascii=False) + "\n"
    assert json.loads(to_json(evaluations, True))[1]["per_query"]["é3"]["P@5"] == 0.0


def test_csv_per_query() -> None:
    evaluations = _evaluations()
    assert to_csv(evaluations, True) == _reference_csv(evaluations)
    rows = list(csv.reader(io.StringIO(to_csv(evaluations[:1], True))))
    assert ["run", "q,1", "P@5", "0.4"] in rows


def _reference_jsonl(evaluations: list[tre.Evaluation]) -> str:
    """The csv's rows, each ``json.dumps`` of its dict as the JSON format writes a value (NaN: null)."""
    def line(e: tre.Evaluation, query: str, name: str, value: object) -> str:
        plain = value if isinstance(value, str) else None if math.isnan(float(value)) else float(value)
        return json.dumps({"run": e.run_tag, "query_id": query, "measure": name, "value": plain},
                          ensure_ascii=False) + "\n"

    lines = []
    for e in evaluations:
        for i, q in enumerate(e.query_ids):
            lines += [line(e, q, str(m), e.values[m][i]) for m in e.measures if m.spec.per_query and m in e.values]
        lines += [line(e, "all", str(m), e.summary[m]) for m in e.measures if e.summary.get(m) is not None]
    return "".join(lines)


def test_jsonl_per_query() -> None:
    evaluations = _evaluations()
    assert to_jsonl(evaluations, True) == _reference_jsonl(evaluations)
    assert to_jsonl(evaluations, False) == "".join(line for line in _reference_jsonl(evaluations).splitlines(True)
                                                   if '"query_id": "all"' in line)
    rows = [json.loads(line) for line in to_jsonl(evaluations, True).splitlines()]
    assert {"run": "run", "query_id": "q,1", "measure": "P@5", "value": 0.4} in rows  # 2 relevant in the top 5
    # NaN (trec_eval's -nan: judged_only leaves é3 nothing retrieved and nothing relevant) is null, never NaN
    assert {"run": "run", "query_id": "é3", "measure": "IPrec@0.0", "value": None} in rows
    assert "NaN" not in to_jsonl(evaluations, True)


def test_jsonl_escapes_every_string_as_json_does() -> None:
    # quotes, backslashes, non-ASCII, control characters, a line separator json leaves as it is
    odd = ['q"1', "q\\2", "é\u20283", "q\x014", "q\t5"]
    qrels = {q: {"a": 1, "b": 0} for q in odd}
    run = {q: {"b": 2.0, "a": 1.0} for q in odd}
    e = tre.evaluate(qrels, run, ["P@1", "AP", "relstring.2"])
    assert to_jsonl([e], True) == _reference_jsonl([e])
    lines = to_jsonl([e], True).split("\n")[:-1]  # JSON Lines ends each object with "\n" alone
    assert len(lines) == 3 * len(odd) + 2  # 3 values per query, then the means of P@1 and AP (none of relstring)
    rows = [json.loads(line) for line in lines]
    # every query: the relevant document second, so P@1 = 0, AP = 1/2, relstring "01"
    assert [r["value"] for r in rows if r["query_id"] == "q\t5"] == [0.0, 0.5, "01"]
    assert [(r["query_id"], r["value"]) for r in rows[-2:]] == [("all", 0.0), ("all", 0.5)]
    assert {r["query_id"] for r in rows} == {*odd, "all"}
    assert '"query_id": "q\\u00014"' in lines[0] and '"é\u20283"' in to_jsonl([e], True)  # as json.dumps escapes
