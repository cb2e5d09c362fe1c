"""``--format jsonl``: the CSV format's rows (run, query_id, measure, value), each a JSON object on its own line, as
``json.dumps(row, ensure_ascii=False)`` writes it; values as the JSON format writes them (NaN: null). Checked
byte for byte through the command, on both ways the per-query lines are built, for one run and several, with
and without -q, through -o, --stream, standard input and a cluster. Numbers are trec_eval 10's."""

from __future__ import annotations

import csv
import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import invoke

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"

# ids a renderer could mishandle: a quote and a backslash, non-ASCII; a run tag with all three. With -J, the
# second query keeps nothing retrieved (d9 is not judged) and has nothing relevant: trec_eval's -nan.
QRELS = 'a"b\\c 0 d1 1\na"b\\c 0 d3 1\nqé 0 d1 0\nqé 0 d2 0\n'
TAG = 't"\\ü'
RUN = f'a"b\\c Q0 d2 1 2.0 {TAG}\na"b\\c Q0 d1 2 1.0 {TAG}\nqé Q0 d9 1 1.0 {TAG}\n'
MEASURES = ["-J", "-m", "iprec_at_recall.0", "-m", "map", "-m", "P.2", "-m", "num_ret"]
# trec_eval 10 -q -J -m iprec_at_recall.0 -m map -m P.2 -m num_ret: a"b\c keeps d1 alone (d2 is not judged),
# relevant at rank 1 of 2 relevant documents: iprec 1, map 1/2, P_2 1/2, num_ret 1; qé: -nan, 0, 0, 0;
# all: -nan, 0.25, 0.25, 1
PER_QUERY = [('a"b\\c', "IPrec@0.0", 1.0), ('a"b\\c', "AP", 0.5), ('a"b\\c', "P@2", 0.5), ('a"b\\c', "NumRet", 1.0),
             ("qé", "IPrec@0.0", None), ("qé", "AP", 0.0), ("qé", "P@2", 0.0), ("qé", "NumRet", 0.0)]
SUMMARY = [("all", "IPrec@0.0", None), ("all", "AP", 0.25), ("all", "P@2", 0.25), ("all", "NumRet", 1.0)]


def _lines(tag: str, rows: list[tuple[str, str, object]]) -> str:
    return "".join(json.dumps({"run": tag, "query_id": q, "measure": m, "value": v}, ensure_ascii=False) + "\n"
                   for q, m, v in rows)


@pytest.fixture(params=["column-wise", "value by value"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    threshold = 0 if request.param == "column-wise" else 10**9
    monkeypatch.setattr("trec_rag_eval.render.output_formats.COLUMN_WISE_FROM", threshold)
    return str(request.param)


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "qrels.txt").write_text(QRELS, encoding="utf-8")
    (tmp_path / "run.txt").write_text(RUN, encoding="utf-8")
    return str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")


def test_one_run_per_query_then_the_summary(files, path):
    result = invoke("-q", *MEASURES, "--format", "jsonl", *files)
    assert result.exit_code == 0, result.output
    assert result.stdout == _lines(TAG, PER_QUERY + SUMMARY)
    assert "NaN" not in result.stdout and '{"run": "t\\"\\\\ü", "query_id": "a\\"b\\\\c", ' in result.stdout


def test_without_q_the_summary_alone(files, path):
    result = invoke(*MEASURES, "--format", "jsonl", *files)
    assert result.stdout == _lines(TAG, SUMMARY)


def test_several_runs_each_runs_lines_in_turn_nothing_around_them(files, path, tmp_path):
    qrels, run = files
    other = tmp_path / "other.txt"  # qé retrieves d1 (judged, not relevant): its iprec is 0, not -nan
    other.write_text('a"b\\c Q0 d3 1 2.0 B\nqé Q0 d1 1 1.0 B\n', encoding="utf-8")
    result = invoke("-q", *MEASURES, "--format", "jsonl", qrels, run, str(other))
    assert result.exit_code == 0, result.output
    # trec_eval 10 on other.txt: a"b\c: d3 relevant at rank 1: iprec 1, map 1/2, P_2 1/2, num_ret 1; qé: 0, 0, 0, 1
    second = [('a"b\\c', "IPrec@0.0", 1.0), ('a"b\\c', "AP", 0.5), ('a"b\\c', "P@2", 0.5),
              ('a"b\\c', "NumRet", 1.0), ("qé", "IPrec@0.0", 0.0), ("qé", "AP", 0.0), ("qé", "P@2", 0.0),
              ("qé", "NumRet", 1.0), ("all", "IPrec@0.0", 0.5), ("all", "AP", 0.25), ("all", "P@2", 0.25),
              ("all", "NumRet", 2.0)]
    assert result.stdout == _lines(TAG, PER_QUERY + SUMMARY) + _lines("B", second)
    summary = invoke(*MEASURES, "--format", "jsonl", qrels, run, str(other)).stdout
    assert summary == _lines(TAG, SUMMARY) + _lines("B", second[-4:])


def test_the_same_bytes_through_a_file_stream_and_standard_input(files, path, tmp_path):
    qrels, run = files
    expected = _lines(TAG, PER_QUERY + SUMMARY)
    out = tmp_path / "out.jsonl"
    assert invoke("-q", *MEASURES, "--format", "jsonl", "-o", str(out), qrels, run).exit_code == 0
    assert out.read_text(encoding="utf-8") == expected
    assert invoke("-q", *MEASURES, "--format", "jsonl", "--stream", qrels, run).stdout == expected
    piped = invoke("-q", *MEASURES, "--format", "jsonl", qrels, "-", input=RUN)
    assert piped.exit_code == 0, piped.output
    assert piped.stdout == expected


def test_the_rows_are_the_csv_formats(path):
    # every trec_eval measure per query on the shipped run: the same rows, in the same order, the same numbers
    args = ["-q", "-m", "all_trec", str(FIXTURES / "qrels.txt"), str(FIXTURES / "run_bm25.txt")]
    rows = [json.loads(line) for line in invoke(*args, "--format", "jsonl").stdout.splitlines()]
    table = list(csv.reader(io.StringIO(invoke(*args, "--format", "csv").stdout)))
    assert table[0] == ["run", "query_id", "measure", "value"] and len(rows) == len(table) - 1 > 800
    for row, (run, query, measure, value) in zip(rows, table[1:], strict=True):
        assert (row["run"], row["query_id"], row["measure"]) == (run, query, measure)
        if isinstance(row["value"], str) or row["value"] is None:
            assert (row["value"] or "") == value
        else:
            assert row["value"] == float(value) and json.dumps(row["value"]) == value  # repr's digits both
    assert {"run": "bm25", "query_id": "all", "measure": "AP", "value": 0.3388690476190477} in rows  # trec_eval 0.3389
    assert math.isclose(next(r["value"] for r in rows if r["query_id"] == "q1" and r["measure"] == "AP"), 0.2333,
                        abs_tol=5e-5)  # trec_eval 10 -q -m map: q1 0.2333


def test_dataframe_libraries_read_it_directly(files):
    import polars as pl

    text = invoke("-q", *MEASURES, "--format", "jsonl", *files).stdout
    frame = pl.read_ndjson(io.BytesIO(text.encode()))
    assert frame.columns == ["run", "query_id", "measure", "value"]
    assert frame.rows() == [(TAG, q, m, v) for q, m, v in PER_QUERY + SUMMARY]
    pd = pytest.importorskip("pandas")
    pandas_frame = pd.read_json(io.StringIO(text), lines=True)
    assert list(pandas_frame["query_id"]) == [q for q, _, _ in PER_QUERY + SUMMARY]
    assert math.isnan(pandas_frame["value"][4]) and pandas_frame["value"][1] == 0.5


def test_the_library_renders_it_as_the_command_prints_it(files):
    import trec_rag_eval as tre

    evaluation = tre.evaluate(*files, ["iprec_at_recall.0", "map", "P.2", "num_ret"], judged_only=True)
    assert evaluation.render("jsonl", per_query=True) == _lines(TAG, PER_QUERY + SUMMARY)
    assert evaluation.render("jsonl") == _lines(TAG, SUMMARY)


def test_help_says_what_it_is():
    text = " ".join(invoke("evaluate", "--help").stdout.split())
    assert "[trec|table|json|csv|jsonl]" in text and "jsonl (JSON Lines: the csv's rows, one JSON object a line" in text


@pytest.mark.slow
def test_on_a_cluster_the_same_bytes(files, tmp_path):
    pytest.importorskip("distributed")
    qrels, run = files
    other = tmp_path / "other.txt"
    other.write_text('a"b\\c Q0 d3 1 2.0 B\nqé Q0 d1 1 1.0 B\n', encoding="utf-8")
    args = ["-q", *MEASURES, "--format", "jsonl", qrels, run, str(other)]
    here = subprocess.run([sys.executable, "-m", "trec_rag_eval", *args], capture_output=True, check=True)
    spread = subprocess.run([sys.executable, "-m", "trec_rag_eval", "--cluster", "local:1", *args],
                            capture_output=True, check=True)
    assert spread.stdout == here.stdout and here.stdout.decode().startswith(_lines(TAG, PER_QUERY + SUMMARY))
