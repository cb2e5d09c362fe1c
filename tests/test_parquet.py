"""Parquet qrels and runs: detected like the other formats, the same numbers as the TREC text of the
same data, errors that name the file and the row, and lossless round trips through ``convert``."""

from __future__ import annotations

import os
import string

import polars as pl
import pytest
from conftest import golden_path, invoke
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.evaluation.evaluate import evaluate_tables
from trec_rag_eval.io.loading import detect_format, detect_kind, load_qrels, load_run


def _trec_rows(path: str, width: int) -> list[list[str]]:
    """The fields of a TREC file's data lines, split here by hand (not by the reader under test)."""
    with open(path, encoding="utf-8") as handle:
        return [line.split()[:width] for line in handle if line.strip() and not line.startswith("#")]


def _run_frame(path: str) -> pl.DataFrame:
    rows = _trec_rows(path, 6)
    return pl.DataFrame({"query_id": [r[0] for r in rows], "Q0": [r[1] for r in rows],
                         "doc_id": [r[2] for r in rows], "rank": [int(r[3]) for r in rows],
                         "score": [float(r[4]) for r in rows], "run_tag": [r[5] for r in rows]})


def _qrels_frame(path: str) -> pl.DataFrame:
    rows = _trec_rows(path, 4)
    return pl.DataFrame({"query_id": [r[0] for r in rows], "iteration": [r[1] for r in rows],
                         "doc_id": [r[2] for r in rows], "relevance": [int(r[3]) for r in rows]})


def test_parquet_file_and_partitions_print_the_bytes_of_the_trec_text(tmp_path):
    qrels_txt, run_txt = golden_path("qrels.binary"), golden_path("run.ties")
    expected = invoke("-q", "-m", "all_trec", "--format", "trec", qrels_txt, run_txt)
    assert expected.exit_code == 0
    _qrels_frame(qrels_txt).write_parquet(tmp_path / "qrels.parquet")
    run = _run_frame(run_txt)
    run.write_parquet(tmp_path / "run.parquet")
    # partitions as a data platform writes them: rows cut anywhere (a query spans two files),
    # in sub-folders, with a folder of hidden bookkeeping files beside them
    parts = tmp_path / "run_parts"
    (parts / "day=2").mkdir(parents=True)
    (parts / "_temporary").mkdir()
    third = run.height // 3
    run[:third].write_parquet(parts / "day=1.parquet")
    run[third: 2 * third].drop("Q0", "rank").write_parquet(parts / "day=2" / "part-0.parquet")
    run[2 * third:].write_parquet(parts / "day=2" / "part-1.parquet")
    (parts / "_temporary" / "junk.parquet").write_bytes(b"not parquet")
    for qrels, run_path in ((tmp_path / "qrels.parquet", tmp_path / "run.parquet"),
                            (qrels_txt, parts), (tmp_path / "qrels.parquet", run_txt)):
        got = invoke("-q", "-m", "all_trec", "--format", "trec", str(qrels), str(run_path))
        assert got.exit_code == 0, got.stderr
        assert got.stdout == expected.stdout


def test_detection_and_kind(tmp_path):
    pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]}).write_parquet(tmp_path / "run.pq")
    pl.DataFrame({"query_id": [1], "doc_id": ["a"], "relevance": [1]}).write_parquet(tmp_path / "judged")
    assert detect_format(tmp_path / "run.pq") == "parquet"  # by its bytes, whatever the name
    assert detect_kind(tmp_path / "run.pq") == "results"
    assert detect_kind(tmp_path / "judged") == "dataset"
    folder = tmp_path / "parts"
    folder.mkdir()
    os.rename(tmp_path / "run.pq", folder / "a.parquet")
    assert detect_format(folder) == "parquet"
    # integer ids read as their text; the run tag defaults to the name
    qrels, run = load_qrels(tmp_path / "judged"), load_run(folder)
    assert qrels.to_dict() == {"1": {"a": 1}}
    assert run.run_tag == "parts"
    assert evaluate_tables(qrels, run, ["P@1"]).summary_by_name == {"P@1": 1.0}


def _error(tmp_path, frame: pl.DataFrame, kind: str = "run", name: str = "bad.parquet") -> str:
    path = tmp_path / name
    frame.write_parquet(path)
    with pytest.raises(InputFormatError) as info:
        if kind == "run":
            evaluate_tables(load_qrels(golden_path("qrels.binary")), load_run(path), ["P@5"])
        else:
            load_qrels(path)
    return str(info.value).replace(str(tmp_path) + os.sep, "")


@pytest.mark.parametrize("columns, expected", [
    ({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, float("nan")]},
     "bad.parquet: row 2: score is NaN, which has no place in a ranking: "
     "{'query_id': '1', 'doc_id': 'b', 'score': nan}"),
    ({"query_id": ["1", "1"], "doc_id": ["a", None], "score": [1.0, 2.0]},
     "bad.parquet: row 2: doc_id is missing (null): {'query_id': '1', 'doc_id': None, 'score': 2.0}"),
    ({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": ["2.5", "high"]},
     "bad.parquet: row 2: score must be a number, got 'high': {'query_id': '1', 'doc_id': 'b', 'score': 'high'}"),
    ({"query_id": ["1", "what is x"], "doc_id": ["a", "b"], "score": [1.0, 2.0]},
     "bad.parquet: row 2: query id 'what is x' contains whitespace, which a TREC file cannot hold: "
     "{'query_id': 'what is x', 'doc_id': 'b', 'score': 2.0}"),
    ({"query_id": ["1", "1"], "doc_id": ["a", "b\x1cc"], "score": [1.0, 2.0]},  # str.isspace, not regex \\s
     "bad.parquet: row 2: document id 'b\\x1cc' contains whitespace, which a TREC file cannot hold: "
     "{'query_id': '1', 'doc_id': 'b\\x1cc', 'score': 2.0}"),
    ({"query_id": ["1", ""], "doc_id": ["a", "b"], "score": [1.0, 2.0]},
     "bad.parquet: row 2: query id '' is empty: {'query_id': '', 'doc_id': 'b', 'score': 2.0}"),
    ({"query_id": ["1", "#2"], "doc_id": ["a", "b"], "score": [1.0, 2.0]},
     "bad.parquet: row 2: query id '#2' starts with '#', which a TREC file reads as a comment: "
     "{'query_id': '#2', 'doc_id': 'b', 'score': 2.0}"),
    ({"qid": ["1"], "docno": ["a"], "score": [1.0]},
     "bad.parquet: expected the columns query_id, doc_id, score (ir_measures' names), missing query_id, "
     "doc_id; found qid, docno, score"),
    ({"query_id": ["301", "301", "302", "301"], "doc_id": ["a", "b", "a", "a"], "score": [1.0, 2.0, 3.0, 4.0]},
     "bad.parquet: row 4: document 'a' listed twice for query '301' (first at row 1)"),
])
def test_run_errors_name_the_file_and_the_row(tmp_path, columns, expected):
    assert _error(tmp_path, pl.DataFrame(columns)) == expected


@pytest.mark.parametrize("columns, expected", [
    ({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1.0, 0.5]},
     "bad.parquet: row 2: relevance must be an integer, got 0.5: "
     "{'query_id': '1', 'doc_id': 'b', 'relevance': 0.5}"),
    ({"query_id": ["1", "1", "1"], "doc_id": ["a", "b", "a"], "relevance": [1, 0, 2]},
     "bad.parquet: row 3: document 'a' judged twice for query '1' (first at row 1): "
     "{'query_id': '1', 'doc_id': 'a', 'relevance': 2}"),  # the file's own columns: it has no iteration
])
def test_qrels_errors_name_the_file_and_the_row(tmp_path, columns, expected):
    assert _error(tmp_path, pl.DataFrame(columns), kind="qrels") == expected


def test_a_duplicate_across_partitions_names_both_files(tmp_path):
    parts = tmp_path / "run"
    parts.mkdir()
    pl.DataFrame({"query_id": ["301", "301"], "doc_id": ["a", "b"], "score": [1.0, 2.0]}).write_parquet(
        parts / "0.parquet")
    pl.DataFrame({"query_id": ["302", "301"], "doc_id": ["a", "b"], "score": [1.0, 2.0]}).write_parquet(
        parts / "1.parquet")
    with pytest.raises(InputFormatError) as info:
        evaluate_tables(load_qrels(golden_path("qrels.binary")), load_run(parts), ["P@5"])
    assert str(info.value) == (f"{parts / '1.parquet'}: row 2: document 'b' listed twice for query '301' "
                               f"(first at {parts / '0.parquet'}: row 2)")


def test_unreadable_files_and_empty_folders_through_the_cli(tmp_path):
    (tmp_path / "broken.parquet").write_bytes(b"PAR1 and then nothing")
    result = invoke(golden_path("qrels.binary"), str(tmp_path / "broken.parquet"))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {tmp_path / 'broken.parquet'}: not a readable Parquet file (")
    assert "Traceback" not in result.stderr
    empty = tmp_path / "empty.parquet"
    pl.DataFrame(schema={"query_id": pl.Utf8, "doc_id": pl.Utf8, "score": pl.Float64}).write_parquet(empty)
    result = invoke(golden_path("qrels.binary"), str(empty), "--run-format", "parquet")
    assert result.stderr == f"Error: {empty}: no results found: the Parquet data has no rows\n"


_ids = st.text(alphabet=string.ascii_letters + string.digits + "._-:/éß", min_size=1, max_size=8)
_scores = st.floats(allow_nan=False, width=64)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(judgments=st.dictionaries(st.tuples(_ids, _ids), st.tuples(st.integers(-2, 4), _ids), min_size=1,
                                 max_size=20),
       results=st.dictionaries(st.tuples(_ids, _ids), _scores, min_size=1, max_size=20),
       tag=_ids)
def test_parquet_round_trips_through_convert(tmp_path_factory, judgments, results, tag):
    """TREC -> Parquet -> TREC gives back the same lines, and Parquet -> TREC -> Parquet the same
    table: ids, relevance, iteration, every bit of each score, and the run tag."""
    folder = tmp_path_factory.mktemp("round")
    qrels_lines = "".join(f"{q} {it} {d} {r}\n" for (q, d), (r, it) in judgments.items())
    (folder / "q.txt").write_text(qrels_lines, encoding="utf-8")
    assert invoke("convert", str(folder / "q.txt"), "--qrels", str(folder / "q.parquet")).exit_code == 0
    assert invoke("convert", str(folder / "q.parquet"), "--qrels", str(folder / "q2.txt")).exit_code == 0
    assert (folder / "q2.txt").read_text(encoding="utf-8") == qrels_lines
    assert invoke("convert", str(folder / "q2.txt"), "--qrels", str(folder / "q2.parquet")).exit_code == 0
    assert pl.read_parquet(folder / "q2.parquet").equals(pl.read_parquet(folder / "q.parquet"))

    frame = pl.DataFrame({"query_id": [q for q, _ in results], "doc_id": [d for _, d in results],
                          "score": list(results.values()), "run_tag": [tag] * len(results)})
    frame.write_parquet(folder / "r.parquet")
    assert invoke("convert", str(folder / "r.parquet"), "--run", str(folder / "r.txt")).exit_code == 0
    assert invoke("convert", str(folder / "r.txt"), "--run", str(folder / "r2.parquet")).exit_code == 0
    back = pl.read_parquet(folder / "r2.parquet")
    assert back.columns == ["query_id", "doc_id", "rank", "score", "run_tag"]
    key = ["query_id", "doc_id"]
    assert back.select(*key, "score", "run_tag").sort(key).equals(frame.sort(key))
    assert invoke("convert", str(folder / "r2.parquet"), "--run", str(folder / "r2.txt")).exit_code == 0
    assert (folder / "r2.txt").read_bytes() == (folder / "r.txt").read_bytes()


def test_a_partition_of_another_type_is_named_not_joined_in_silence(tmp_path):
    """Partitions are joined under their common type: a boolean score beside float ones became 1.0,
    and a float query_id beside integer ones was blamed on the first, valid, file."""
    folder = tmp_path / "run"
    folder.mkdir()
    pl.DataFrame({"query_id": [1], "doc_id": ["a"], "score": [1.0]}).write_parquet(folder / "part-0.parquet")
    pl.DataFrame({"query_id": [2], "doc_id": ["a"], "score": [True]}).write_parquet(folder / "part-1.parquet")
    result = invoke(golden_path("qrels.binary"), str(folder))
    assert (result.exit_code, result.stderr) == (1, f"Error: {folder}/part-1.parquet: row 1: score must be a number, "
                                                    "the column holds Boolean: {'query_id': 2, 'doc_id': 'a', "
                                                    "'score': True}\n")
    pl.DataFrame({"query_id": [2.0], "doc_id": ["a"], "score": [2.0]}).write_parquet(folder / "part-1.parquet")
    result = invoke(golden_path("qrels.binary"), str(folder))
    assert (result.exit_code, result.stderr) == (1, f"Error: {folder}/part-1.parquet: row 1: query_id must be text "
                                                    "or an integer, the column holds Float64: {'query_id': 2.0, "
                                                    "'doc_id': 'a', 'score': 2.0}\n")
