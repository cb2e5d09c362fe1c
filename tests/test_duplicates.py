"""A document listed twice for one query of a run: the ranking finds it (it hashes the pairs anyway), and
the error cites both places through the run itself (``Run.places``, recorded by its reader), never by
guessing a file's format from its name. One text, whatever the path the run took.

The expected lines and rows are counted by hand in each test (comments and blank lines count as lines,
as trec_eval and every editor count them; Parquet rows from 1 in their own file)."""

from __future__ import annotations

import gzip
import os

import numpy as np
import pandas as pd
import polars as pl
import pytest
from conftest import invoke

from trec_rag_eval.errors import DuplicateDocumentError, InputFormatError
from trec_rag_eval.evaluation.evaluate import evaluate_tables
from trec_rag_eval.evaluation.streaming import evaluate_pieces
from trec_rag_eval.io.loading import load_qrels, load_run, load_run_shards
from trec_rag_eval.io.trec.pieces import iter_run_chunks
from trec_rag_eval.io.trec.qrels_runs import parse_run_text, read_trec_run
from trec_rag_eval.tables import Run

# line 1: a comment, line 2: q1's d1, lines 3-4: q1's d2 and a blank line, line 5: q2, line 6: d1 again for q1
# (q1's rows need not be together for a run read whole)
TEXT = "# run\n1 Q0 d1 1 3 t\n1 Q0 d2 2 2 t\n\n2 Q0 d9 1 1 t\n1 Q0 d1 3 1 t\n"
CITED = "document 'd1' listed twice for query '1' (first at line 2)"


@pytest.fixture
def qrels(tmp_path):
    path = tmp_path / "qrels.txt"
    path.write_text("1 0 d1 1\n1 0 d2 0\n2 0 d9 1\n")
    return load_qrels(str(path))


def _error(qrels, run) -> str:
    with pytest.raises(InputFormatError) as raised:
        evaluate_tables(qrels, run, ["P@5"])
    return str(raised.value)


def test_a_trec_file_cites_both_lines_read_either_way(qrels, tmp_path, table_form):
    # table_form: the line-by-line reader into lists, then the fast reader into Arrow (which skips the
    # comment and the blank line without saying where: the lines are still counted right)
    path = tmp_path / "run.txt"
    path.write_text(TEXT)
    assert _error(qrels, read_trec_run(str(path))) == f"{path}:6: {CITED}"


def test_gzip_text_in_memory_and_standard_input_cite_the_same_lines(qrels, tmp_path):
    path = tmp_path / "run.txt.gz"
    path.write_bytes(gzip.compress(TEXT.encode()))
    assert _error(qrels, read_trec_run(str(path))) == f"{path}:6: {CITED}"
    assert _error(qrels, parse_run_text(TEXT)) == f"<run>:6: {CITED}"
    qrels_file = tmp_path / "qrels.txt"
    qrels_file.write_text("1 0 d1 1\n")
    result = invoke(str(qrels_file), "-", input=TEXT)  # standard input: no file to reopen
    assert result.exit_code == 1
    assert result.stderr == f"Error: -:6: {CITED}\n"


def test_a_run_read_in_pieces_cites_the_lines_of_the_whole_file(qrels, tmp_path):
    # pieces of about 20 bytes, each of whole queries: q1 comes in a later piece than q2, and its lines are
    # still numbered from the file's first line (4 and 6; line 3 a comment)
    text = "2 Q0 d9 1 1 t\n2 Q0 d8 2 0.5 t\n# note\n1 Q0 d1 1 3 t\n1 Q0 d2 2 2 t\n1 Q0 d1 3 1 t\n"
    path = tmp_path / "run.txt"
    path.write_text(text)
    assert len(list(iter_run_chunks(str(path), chunk_bytes=20))) == 2
    with pytest.raises(InputFormatError) as raised:
        evaluate_pieces(qrels, iter_run_chunks(str(path), chunk_bytes=20), ["P@5"])
    assert str(raised.value) == f"{path}:6: document 'd1' listed twice for query '1' (first at line 4)"
    qrels_file = tmp_path / "qrels.txt"
    qrels_file.write_text("1 0 d1 1\n")
    result = invoke("--stream", str(qrels_file), str(path))
    assert result.stderr == f"Error: {path}:6: document 'd1' listed twice for query '1' (first at line 4)\n"


def test_shards_cite_the_file_of_each_line(qrels, tmp_path):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("1 Q0 d2 1 2 t\n1 Q0 d1 2 1 t\n")
    second.write_text("2 Q0 d9 1 1 t\n1 Q0 d1 1 3 t\n")
    run = load_run_shards([str(first), str(second)])
    assert _error(qrels, run) == f"{second}:2: document 'd1' listed twice for query '1' (first at {first}:2)"


def test_parquet_cites_rows(qrels, tmp_path):
    path = tmp_path / "run.parquet"
    pl.DataFrame({"query_id": ["1", "2", "1"], "doc_id": ["d1", "d9", "d1"], "score": [3.0, 1.0, 2.0]}) \
        .write_parquet(path)
    assert _error(qrels, load_run(str(path))) == \
        f"{path}: row 3: document 'd1' listed twice for query '1' (first at row 1)"


COLUMNS = {"query_id": ["1", "2", "1"], "doc_id": ["d1", "d9", "d1"], "score": [3.0, 1.0, 2.0]}
ROWS = "row 3: document 'd1' listed twice for query '1' (first at row 1)"


@pytest.mark.parametrize("shape, source", [
    ("columns", "run (dict)"),                  # the readers' own shape, a caller's: checked as any dict
    ("pandas", "run (pandas DataFrame)"),
    ("polars", "run (polars DataFrame)"),        # the schema's own types: passed through, found by the ranking
    ("polars ints", "run (polars DataFrame)"),   # other types: converted, and checked while converting
    ("records", "run (list)"),
])
def test_every_shape_in_memory_cites_its_rows_in_one_text(qrels, shape, source):
    import trec_rag_eval as tre

    value = {
        "columns": lambda: {**COLUMNS, "score": np.array(COLUMNS["score"])},  # the readers' own shape
        "pandas": lambda: pd.DataFrame(COLUMNS),
        "polars": lambda: pl.DataFrame(COLUMNS),
        "polars ints": lambda: pl.DataFrame({**COLUMNS, "query_id": [1, 2, 1]}),
        "records": lambda: [dict(zip(COLUMNS, row, strict=True)) for row in zip(*COLUMNS.values(), strict=True)],
    }[shape]()
    with pytest.raises(InputFormatError) as raised:
        tre.evaluate(qrels, value, ["P@5"])
    assert str(raised.value) == f"{source}: {ROWS}"


def test_rows_that_cannot_be_pointed_at_name_the_pair(qrels):
    # doc ids mapped after reading, say: the places find fewer than two rows, and the error names the pair
    from trec_rag_eval.tables import NOWHERE

    run = Run({**COLUMNS, "score": np.array(COLUMNS["score"])}, source="mapped.txt", places=NOWHERE, checked=True)
    with pytest.raises(DuplicateDocumentError) as raised:
        evaluate_tables(qrels, run, ["P@5"])
    assert str(raised.value) == "mapped.txt: document 'd1' listed twice for query '1'"


def test_places_cross_to_a_worker(tmp_path):
    # a run sent to a Dask worker keeps its places (functions of the reader, bound to the file's name)
    import pickle

    path = tmp_path / "run.txt"
    path.write_text(TEXT)
    copy = pickle.loads(pickle.dumps(read_trec_run(str(path))))
    assert copy.places is not None and copy.places.find("1", "d1") == [(str(path), 2), (str(path), 6)]
    assert os.fspath(path) == copy.source


def test_a_chunk_listed_twice_is_refused_before_chunks_are_mapped_to_documents(qrels, tmp_path, table_form):
    # trec_eval refuses the file ("duplicate docs d1#1"); mapping chunks to documents keeps each document's
    # best chunk, which must not hide the repeat: the same error, citing the same lines, as without a map
    path = tmp_path / "run.txt"
    path.write_text("1 Q0 d1#1 1 3 t\n1 Q0 d2#1 2 2 t\n1 Q0 d1#1 3 1 t\n")
    with pytest.raises(InputFormatError) as raised:
        evaluate_tables(qrels, read_trec_run(str(path)), ["P@5"], doc_map=r"(.*)#\d+")
    assert str(raised.value) == f"{path}:3: document 'd1#1' listed twice for query '1' (first at line 1)"
    assert _error(qrels, read_trec_run(str(path))) == str(raised.value)


def test_a_run_given_by_url_cites_its_lines(qrels):
    # read where it lies (fsspec): its places fetch it again on the error, as a file is read again
    import fsspec

    import trec_rag_eval as tre

    fsspec.filesystem("memory").pipe("/test_duplicates/run.txt", TEXT.encode())
    with pytest.raises(InputFormatError) as raised:
        tre.evaluate(qrels, "memory://test_duplicates/run.txt", ["P@5"])
    assert str(raised.value) == f"memory://test_duplicates/run.txt:6: {CITED}"


def test_a_file_gone_since_it_was_read_leaves_the_pair_named(qrels, tmp_path):
    # the places read the file again on the error: if it is no longer there, the error is still the duplicate
    path = tmp_path / "run.txt"
    path.write_text(TEXT)
    run = read_trec_run(str(path))
    path.unlink()
    with pytest.raises(DuplicateDocumentError) as raised:
        evaluate_tables(qrels, run, ["P@5"])
    assert str(raised.value) == f"{path}: document 'd1' listed twice for query '1'"
