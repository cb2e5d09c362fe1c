"""The format registry (``io.loading``): every format in one place, used by loading, the service and
convert; a format added there is detected, read and evaluated on every path."""

from __future__ import annotations

import pytest
from conftest import invoke

import trec_rag_eval as tre
from trec_rag_eval.io import loading as formats
from trec_rag_eval.io.loading import FORMATS, QRELS_FORMATS, RUN_FORMATS, Format, detect_format, register_format


def test_the_choices_come_from_the_registry():
    assert QRELS_FORMATS == ("auto", "trec", "json", "beir", "parquet", "prefs", "qrels_prefs", "qrels_jg", "rag",
                             "ragas", "llamaindex", "dict")
    assert RUN_FORMATS == ("auto", "trec", "json", "parquet")  # BEIR's run reader only answers detection
    assert set(QRELS_FORMATS[1:]) == {name for name, fmt in FORMATS.items() if fmt.read_qrels is not None}


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="registered already"):
        register_format(Format("trec", "again"))
    with pytest.raises(ValueError, match="registered already"):
        register_format(Format("auto", "the word for detection"))


def test_outputs_choose_their_format_by_suffix():
    assert formats.for_output("x.parquet").name == "parquet"
    assert formats.for_output("X.PARQUET").name == "parquet"
    assert formats.for_output("x.qrels").name == "trec"


def test_a_registered_format_is_detected_read_and_evaluated(tmp_path):
    # a toy format: "q,d,grade" lines after a "#toy" line; one registration makes it a format everywhere
    def read_toy(path):
        lines = open(path, encoding="utf-8").read().split("\n")[1:]
        judged: dict[str, dict[str, int]] = {}
        for query_id, doc_id, grade in (line.split(",") for line in lines if line):
            judged.setdefault(query_id, {})[doc_id] = int(grade)
        return tre.Qrels.from_dict(judged, source=path)

    register_format(Format("toy", "comma-separated judgments", sniff=lambda path, head: head().startswith("#toy"),
                    read_qrels=read_toy))
    # formats are sniffed in the registry's order: put the toy first, as a format that TREC's fallback would take
    FORMATS.update({"toy": FORMATS.pop("toy"), **{name: FORMATS.pop(name) for name in list(FORMATS) if name != "toy"}})
    try:
        qrels = tmp_path / "judgments.toy"
        qrels.write_text("#toy\nq1,d1,1\nq1,d2,0\nq2,d3,2\n", encoding="utf-8")
        run = tmp_path / "run.txt"
        run.write_text("q1 Q0 d2 1 2.0 r\nq1 Q0 d1 2 1.0 r\nq2 Q0 d3 1 1.0 r\n", encoding="utf-8")
        assert detect_format(qrels) == "toy"
        # by hand: q1 has d1 relevant at rank 2 (RR 1/2), q2 has d3 at rank 1 (RR 1): MRR 0.75
        assert tre.evaluate(str(qrels), str(run), "MRR").summary["MRR"] == 0.75
        trec = tmp_path / "judgments.qrels"
        trec.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n", encoding="utf-8")
        assert tre.evaluate(str(trec), str(run), "MRR").summary["MRR"] == 0.75  # the same data, the same number
    finally:
        FORMATS.pop("toy")


# --- detection reads the file's lines, not its first line alone --------------------------------------------
# A file whose lines are nearly all of one format, with one bad line (a field lost, one too many), is read as
# that format, and the error names the bad line; the first line alone decided before, so a TREC file whose
# first line lost a field was taken for BEIR (or JSON) and blamed on its second line.

RUN = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n"


@pytest.mark.parametrize("role, text, error", [
    ("qrels", "1 0 1\n1 0 b 0\n1 0 c 2\n",
     "1: expected 4 columns (query_id iteration doc_id relevance), got 3: '1 0 1'"),
    ("qrels", "{q1} 0 d1\n{q1} 0 d2 1\n{q1} 0 d3 0\n",
     "1: expected 4 columns (query_id iteration doc_id relevance), got 3: '{q1} 0 d1'"),
    ("qrels", "[q1] 0 d1 1 x\n[q1] 0 d2 1\n[q1] 0 d3 0\n",
     "1: expected 4 columns (query_id iteration doc_id relevance), got 5: '[q1] 0 d1 1 x'"),
    ("run", "[q1] Q0 d1 1 2.0\n[q1] Q0 d2 2 1.0 r\n[q1] Q0 d3 3 0.5 r\n",
     "1: expected 6 columns (query_id Q0 doc_id rank score run_tag), got 5: '[q1] Q0 d1 1 2.0'"),
    ("run", "{q1} Q0 d1 1 2.0 r\n{q1} Q0 d2\n{q1} Q0 d3 3 0.5 r\n",
     "2: expected 6 columns (query_id Q0 doc_id rank score run_tag), got 3: '{q1} Q0 d2'"),
    # and the other way round: a BEIR file whose first row has a field too many is BEIR, blamed on that row
    ("qrels", "q1\td1\t1\t9\nq1\td2\t1\nq1\td3\t0\n",
     "1: expected 3 columns (query-id corpus-id score), separated by tabs, got 4: 'q1\\td1\\t1\\t9'"),
    ("qrels", "query-id\tcorpus-id\tscore\nq1\td1\t1\t9\n",
     "2: expected 3 columns (query-id corpus-id score), separated by tabs, got 4: 'q1\\td1\\t1\\t9'"),
])
def test_a_file_with_one_bad_line_is_read_as_the_format_of_the_others(tmp_path, role, text, error):
    path = tmp_path / "input.txt"
    path.write_text(text)
    other = tmp_path / ("run.txt" if role == "qrels" else "qrels.txt")
    other.write_text(RUN if role == "qrels" else "q1 0 d1 1\n")
    args = [str(path), str(other)] if role == "qrels" else [str(other), str(path)]
    result = invoke(*args)
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [f"Error: {path}:{error}"]


@pytest.mark.parametrize("text, name", [
    ("1 0 1\n1 0 b 0\n1 0 c 2\n", "trec"),
    ("query-id\tcorpus-id\tscore\nq1\td1\t1\n", "beir"),
    ("q1\td1\t1\nq1\td2\t0\n", "beir"),
    ("q1\td1\t1\n", "beir"),
    ('{"q1": {"d1": 1}}\n', "json"),
    ('[\n  {"id": "q1", "query": "a b c", "relevant": ["d1"]}\n]\n', "json"),
    ('{"query_id": "q1", "doc_id": "d1", "score": 3}\n{"query_id": "q1", "doc_id": "d2", "score": 2}\n', "json"),
    ("{q1} Q0 d1 1 2.0 r\n", "trec"),
])
def test_detection_by_the_lines_of_the_head(tmp_path, text, name):
    path = tmp_path / "input"
    path.write_text(text)
    assert formats.detect(str(path)) == name


@pytest.mark.parametrize("text, error", [
    ("q1 Q0 d1 1 2.0\nq1 Q0 d2 2 1.0 r\nq1 Q0 d3 3 0.5 r\n",
     "1: expected 6 columns (query_id Q0 doc_id rank score run_tag), got 5: 'q1 Q0 d1 1 2.0'"),
    ("q1 0 d1 1 5\nq1 0 d2 1\nq1 0 d3 0\n", "1: expected 4 columns (query_id iteration doc_id relevance), got 5: "
     "'q1 0 d1 1 5'"),
])
def test_convert_tells_a_run_from_judgments_by_the_lines_not_the_first_alone(tmp_path, text, error):
    # a run whose first line lost a field was converted as judgments, and refused as qrels
    path = tmp_path / "input.txt"
    path.write_text(text)
    result = invoke("convert", str(path), "--json", str(tmp_path / "out.json"))
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [f"Error: {path}:{error}"]


@pytest.mark.parametrize("kind", ["trec", "parquet", "folder"])
def test_detection_asks_each_question_of_a_file_once(tmp_path, monkeypatch, kind):
    # every sniffer that needs to know whether the input is a folder, or Parquet, gets the answer detection
    # found first: a TREC file was asked five times whether it is a folder and opened twice for Parquet's magic
    # bytes (by the preferences' sniffer, then Parquet's); then opened once for Parquet's magic bytes and once
    # more for its text. Now once: the text and the magic bytes are the same first bytes.
    from trec_rag_eval.io import sources

    path = tmp_path / "input"
    if kind == "folder":
        path.mkdir()
        (path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    else:
        path.write_bytes(b"PAR1 not a real one" if kind == "parquet" else b"1 0 d1 1\n")
    asked: list[str] = []
    is_dir, open_bytes = formats.is_dir, sources.open_bytes

    def opened(name, **kw):
        asked.append("opened")
        return open_bytes(name, **kw)

    monkeypatch.setattr(formats, "is_dir", lambda name: asked.append("folder?") or is_dir(name))
    monkeypatch.setattr(formats, "open_bytes", opened)  # however detection opens the file, it is counted
    monkeypatch.setattr(sources, "open_bytes", opened)
    expected = {"trec": "trec", "parquet": "parquet", "folder": "beir"}[kind]
    if kind == "parquet":  # a Parquet file is asked for its columns by the preferences' sniffer
        monkeypatch.setattr("trec_rag_eval.io.parquet.column_names", lambda name: ["query_id", "doc_id"])
    assert formats.detect(str(path)) == expected
    assert asked == (["folder?"] if kind == "folder" else ["folder?", "opened"])
