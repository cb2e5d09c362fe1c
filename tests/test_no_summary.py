"""``-n`` ("no summary") in every output format, not only trec.

``-n`` was honoured by ``--format trec`` alone: table, json, csv and jsonl still printed their 'all' rows, a
flag that silently did nothing. Now, with ``-q``: trec and table without their 'all' lines and row, csv and
jsonl without the rows of query 'all', json without its "summary". Without ``-q`` nothing would be left:
trec prints nothing and exits 0, as trec_eval 10 does (``trec_eval -n -m P.1 qrels run`` prints no line);
the other formats refuse the pair with a usage error naming both flags.

Hand-worked values on QRELS and RUN (tag A): q1 ranks a (relevant) then b -> P@1 = 1, num_ret = 2; q2 ranks
x (unjudged) then c -> P@1 = 0, num_ret = 2; 'all': P@1 = 0.5, num_ret = 4.
"""

from __future__ import annotations

import json

import pytest
from conftest import invoke

import trec_rag_eval as tre

QRELS = "1 0 a 1\n1 0 b 0\n2 0 c 1\n2 0 d 1\n"
RUN = "1 Q0 a 1 2.0 A\n1 Q0 b 2 1.0 A\n2 Q0 x 1 3.0 A\n2 Q0 c 2 1.0 A\n"
MEASURES = ["-m", "P.1", "-m", "num_ret"]

# trec_eval 10's output (its "%-22s\t%s\t%.4f" lines, num_ret an integer; its fixed order: num_ret first)
TREC_PER_QUERY = ("num_ret               \t1\t2\nP_1                   \t1\t1.0000\n"
                  "num_ret               \t2\t2\nP_1                   \t2\t0.0000\n")
TREC_ALL = "num_ret               \tall\t4\nP_1                   \tall\t0.5000\n"
# the table: "query" and each id padded to 8, each column right-aligned to max(len(name), 7)
TABLE_PER_QUERY = ("query        P@1  NumRet\n"
                   "1         1.0000  2.0000\n"
                   "2         0.0000  2.0000\n")
TABLE_ALL = "all       0.5000  4.0000\n"
CSV_PER_QUERY = "A,1,P@1,1.0\nA,1,NumRet,2.0\nA,2,P@1,0.0\nA,2,NumRet,2.0\n"
CSV_ALL = "A,all,P@1,0.5\nA,all,NumRet,4.0\n"
ROWS_PER_QUERY = [("1", "P@1", 1.0), ("1", "NumRet", 2.0), ("2", "P@1", 0.0), ("2", "NumRet", 2.0)]


def _jsonl(rows, tag="A"):
    return "".join(json.dumps({"run": tag, "query_id": q, "measure": m, "value": v}) + "\n" for q, m, v in rows)


def _json(summary: bool) -> str:
    document = {"run": "A", "num_queries": 2, "measures": ["P@1", "NumRet"]}
    if summary:
        document["summary"] = {"P@1": 0.5, "NumRet": 4.0}
    document |= {"missing_queries": [], "extra_queries": [],
                 "per_query": {"1": {"P@1": 1.0, "NumRet": 2.0}, "2": {"P@1": 0.0, "NumRet": 2.0}}}
    return json.dumps(document, indent=2) + "\n"


@pytest.fixture
def paths(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    return str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")


def _run(paths, *args):
    return invoke(*MEASURES, *args, *paths)


EXPECTED = {  # format -> (-q, -q -n)
    "trec": (TREC_PER_QUERY + TREC_ALL, TREC_PER_QUERY),
    "table": (TABLE_PER_QUERY + TABLE_ALL, TABLE_PER_QUERY),
    "csv": ("run,query_id,measure,value\n" + CSV_PER_QUERY + CSV_ALL, "run,query_id,measure,value\n" + CSV_PER_QUERY),
    "jsonl": (_jsonl([*ROWS_PER_QUERY, ("all", "P@1", 0.5), ("all", "NumRet", 4.0)]), _jsonl(ROWS_PER_QUERY)),
    "json": (_json(True), _json(False)),
}


@pytest.mark.parametrize("fmt", list(EXPECTED))
def test_n_with_q_leaves_out_the_summary_in_every_format(paths, fmt):
    with_summary, without = EXPECTED[fmt]
    full = _run(paths, "-q", "--format", fmt)
    assert full.exit_code == 0, full.output
    assert full.stdout == with_summary  # the hand-worked bytes, summary included
    result = _run(paths, "-q", "-n", "--format", fmt)
    assert result.exit_code == 0, result.output
    assert result.stdout == without


@pytest.mark.parametrize("fmt", list(EXPECTED))
def test_the_library_renders_the_same_bytes(paths, fmt):
    evaluation = tre.evaluate(*paths, ["P.1", "num_ret"], order="trec" if fmt == "trec" else "asked")
    assert evaluation.render(fmt, per_query=True) == EXPECTED[fmt][0]
    assert evaluation.render(fmt, per_query=True, summary=False) == EXPECTED[fmt][1]


def test_n_alone_with_trec_prints_nothing_as_trec_eval_does(paths):
    result = _run(paths, "-n")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "", "")


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "jsonl"])
def test_n_alone_is_refused_where_nothing_would_be_left(paths, fmt):
    result = _run(paths, "-n", "--format", fmt)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (f"Error: -n drops the summary (query 'all'), which is all the {fmt} format shows without "
                             "-q: add -q (each query's values, without the summary)\n")


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "jsonl"])
def test_the_library_refuses_it_too_in_its_own_words(paths, fmt):
    evaluation = tre.evaluate(*paths, ["P@1"])
    with pytest.raises(tre.UsageError, match=r"^summary=False drops the summary \(query 'all'\), which is all the "
                                             f"{fmt} format shows without per_query=True"):
        evaluation.render(fmt, summary=False)
    assert evaluation.render("trec", summary=False) == ""


def test_several_runs_lose_their_summaries_alike(paths, tmp_path):
    other = tmp_path / "other.txt"
    other.write_text("1 Q0 b 1 1.0 B\n2 Q0 d 1 1.0 B\n")  # q1: b not relevant -> 0; q2: d relevant -> 1
    result = invoke("-q", "-n", "-m", "P.1", "--format", "csv", *paths, str(other))
    assert result.exit_code == 0, result.output
    assert result.stdout == "run,query_id,measure,value\nA,1,P@1,1.0\nA,2,P@1,0.0\nB,1,P@1,0.0\nB,2,P@1,1.0\n"
    trec = invoke("-q", "-n", "-m", "P.1", *paths, str(other))
    p1 = "P_1                   \t"
    assert trec.stdout == (f"runid                 \tall\tA\n{p1}1\t1.0000\n{p1}2\t0.0000\n"
                           f"runid                 \tall\tB\n{p1}1\t0.0000\n{p1}2\t1.0000\n")


def test_the_json_document_would_lose_the_context_cost(paths, tmp_path):
    # json keeps the context tokens only among its means over queries: -n would drop --corpus silently
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": d, "text": "one two"}) + "\n" for d in "abcx"))
    result = invoke("-q", "-n", "--format", "json", "--corpus", str(corpus), *paths)
    assert result.exit_code == 2
    assert result.stderr == ("Error: -n drops the JSON document's context_tokens (means over queries), the only place "
                             "it shows the context cost: drop --corpus or -n, or choose the csv, jsonl or table format "
                             "(their rows per query keep the tokens)\n")
    # csv keeps each query's tokens (2 words a document: 2 at k = 1, 4 at k = 3), not the 'all' rows
    csv = invoke("-q", "-n", "-m", "P@1", "--format", "csv", "--corpus", str(corpus), *paths)
    assert csv.exit_code == 0, csv.output
    assert csv.stdout == ("run,query_id,measure,value\nA,1,P@1,1.0\nA,2,P@1,0.0\n"
                          "A,1,tokens@1,2\nA,2,tokens@1,2\n")


def test_the_help_says_what_n_does():
    text = invoke("evaluate", "--help").stdout
    assert "without the rows of query 'all'" in " ".join(text.split())


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "jsonl"])
def test_built_a_column_at_a_time_the_same_bytes(paths, fmt, monkeypatch):
    # large evaluations render their per-query part column-wise (render.table): forced here on the small pair
    monkeypatch.setattr("trec_rag_eval.render.output_formats.COLUMN_WISE_FROM", 0)
    result = _run(paths, "-q", "-n", "--format", fmt)
    assert result.exit_code == 0, result.output
    assert result.stdout == EXPECTED[fmt][1]
