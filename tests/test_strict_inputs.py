"""Inputs that used to be read wrong in silence: chunk maps, ids from Python, datasets
with keys in two languages, ids a TREC file cannot hold, runs cut by a download.

Each expectation is written by hand from the input shown in the test."""

from __future__ import annotations

import pytest
from conftest import trec_eval_binary

import trec_rag_eval
from trec_rag_eval.errors import InputFormatError, UsageError
from trec_rag_eval.io.chunks import DocIdMap, read_doc_map

# --- JSON chunk maps --------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "line", "said"), [
    ('{"c1": "d1",\n "c2": null}\n', 2, "got null"),                                      # before: doc "None"
    ('{"c1": "d1",\n "c2": ["d"]}\n', 2, 'got ["d"]'),                                     # before: doc "['d']"
    ('{"c1": "d1",\n "c2": 1.5}\n', 2, "got 1.5"),
    ('{"c1": "d1",\n "c2": true}\n', 2, "got true"),
    ('{"c1": "d1",\n "c2": {"x": 1}}\n', 2, 'got {"x": 1}'),
    ('[{"chunk_id": "c1", "doc_id": "d1"},\n {"chunk_id": "c2", "doc_id": null}]\n', 2, "got null"),
    ('[{"chunk_id": "c1", "doc_id": "d1"},\n {"chunk_id": null, "doc_id": "d"}]\n', 2, "got null"),
    ('{"c1": "d1",\n "c1": "d2"}\n', 2, "duplicate key 'c1'"),                             # before: last kept
    ('{"c1": "d1",\n "c2": "a b"}\n', 2, "'a b'"),                                       # no TREC file holds it
])
def test_json_map_entry_that_is_no_document_id_is_refused_with_its_line(tmp_path, text, line, said):
    path = tmp_path / "map.json"
    path.write_text(text)
    with pytest.raises(InputFormatError) as caught:
        read_doc_map(path)
    assert caught.value.path == str(path) and caught.value.line_no == line
    assert said in str(caught.value)


def test_json_map_integer_ids_are_ids(tmp_path):
    path = tmp_path / "map.json"
    path.write_text('{"c1": "d1", "c2": 7}')
    assert read_doc_map(path) == {"c1": "d1", "c2": "7"}


@pytest.mark.parametrize("mapping", [{"c": None}, {"c": ["d"]}, {"c": 1.0}, {"c": True}, {None: "d"}, {"c": ""}])
def test_doc_map_dict_value_that_is_no_document_id_is_refused(mapping):
    # before: {c: None} mapped c to a document named "None" (P@5 0.25 -> 0.175, "0 ids unmapped")
    with pytest.raises(UsageError, match="doc_map"):
        DocIdMap.from_mapping(mapping)
    with pytest.raises(UsageError, match="doc_map"):
        trec_rag_eval.evaluate({"1": {"d": 1}}, {"1": {"c": 1.0}}, ["P@1"], doc_map=mapping)


def test_doc_map_dict_with_one_id_twice_as_int_and_str_is_refused():
    with pytest.raises(UsageError, match="chunk 1 and chunk '1' are one id '1' mapped to 'a' and to 'b'"):
        DocIdMap.from_mapping({1: "a", "1": "b"})
    assert DocIdMap.from_mapping({1: "a", "1": "a"}).map_ids(["1"]) == ["a"]


# --- ids and numbers from Python ---------------------------------------------------------------------

def _shapes(rows, value_column):
    """The same rows (query_id, doc_id, value) in every Python shape the API takes."""
    import pandas as pd
    from ir_measures import Qrel, ScoredDoc

    nested: dict = {}
    for q, d, v in rows:
        nested.setdefault(q, {})[d] = v
    records = [{"query_id": q, "doc_id": d, value_column: v} for q, d, v in rows]
    named = [Qrel(q, d, v) if value_column == "relevance" else ScoredDoc(q, d, v) for q, d, v in rows]
    try:
        frame = pd.DataFrame(records)
    except OverflowError:  # pandas before 3 cannot infer a column holding an int beyond a double: object, as 3 does
        frame = pd.DataFrame({"query_id": [q for q, _, _ in rows], "doc_id": [d for _, d, _ in rows],
                              value_column: pd.Series([v for _, _, v in rows], dtype=object)})
    return {"dict": nested, "records": records, "named tuples": named, "pandas": frame}


@pytest.mark.parametrize("side", ["qrels", "run"])
def test_query_ids_one_and_quoted_one_are_refused_in_every_shape(side):
    # before: {1: {...}, "1": {...}} was read as one query "1" holding both (P@2 0.5 instead of an error)
    value_column = "relevance" if side == "qrels" else "score"
    rows = [(1, "a", 1), ("1", "b", 2)]
    good_qrels, good_run = {"1": {"a": 1}}, {"1": {"a": 1.0}}
    for shape, value in _shapes(rows, value_column).items():
        args = (value, good_run) if side == "qrels" else (good_qrels, value)
        with pytest.raises(InputFormatError, match=r"the query id '1' and the query id 1 .* are one id '1'"):
            trec_rag_eval.evaluate(*args, ["P@2"])
        assert shape


def test_query_ids_all_integers_are_fine():
    result = trec_rag_eval.evaluate({1: {"a": 1}, 2: {"b": 1}}, {1: {"a": 1.0}, "2": {"b": 1.0}}, ["P@1"])
    assert result.value("P@1", "1") == 1.0 and result.value("P@1", "2") == 1.0  # each side spells its ids once


def test_doc_ids_one_and_quoted_one_in_one_query_name_both_spellings():
    with pytest.raises(InputFormatError, match=r"given twice \(as '1' and as 1\)"):
        trec_rag_eval.evaluate({"q": {"1": 1}}, {"q": {1: 1.0, "1": 2.0}}, ["P@1"])


@pytest.mark.parametrize("score", [10**400, -(10**400)])
def test_score_beyond_a_double_is_a_clear_error(score):
    # before: OverflowError: int too large to convert to float (a traceback)
    for shape, value in _shapes([("q1", "d1", 1.0), ("q1", "d7", score)], "score").items():
        if shape == "pandas":
            continue  # pandas itself keeps 10**400 as an object: the row path below covers it too
        with pytest.raises(InputFormatError, match=r"document 'd7'.*beyond the range of a floating-point number"):
            trec_rag_eval.evaluate({"q1": {"d1": 1}}, value, ["P@1"])


def test_score_beyond_a_double_in_pandas_object_column():
    import pandas as pd

    frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d7"],
                          "score": pd.Series([1.0, 10**400], dtype=object)})
    with pytest.raises(InputFormatError, match=r"query 'q1', document 'd7'.*beyond the range"):
        trec_rag_eval.evaluate({"q1": {"d1": 1}}, frame, ["P@1"])


def test_infinite_scores_rank_first_and_last_as_in_trec_eval():
    # a TREC file's "inf" is read by trec_eval's atof as infinity: the same from Python
    result = trec_rag_eval.evaluate({"q": {"b": 1}}, {"q": {"a": float("-inf"), "b": float("inf")}}, ["P@1"])
    assert result.value("P@1", "q") == 1.0


@pytest.mark.parametrize("relevance", [10**400, 2**63, -(2**63) - 1])
def test_huge_integer_relevance_is_a_clear_error(relevance):
    for value in _shapes([("q1", "d1", 1), ("q1", "d2", relevance)], "relevance").values():
        with pytest.raises(InputFormatError, match=r"document 'd2'.*relevance"):
            trec_rag_eval.evaluate(value, {"q1": {"d1": 1.0}}, ["P@1"])


@pytest.mark.parametrize(("side", "column"), [("run", "doc_id"), ("run", "query_id"), ("run", "score"),
                                              ("qrels", "doc_id"), ("qrels", "relevance"), ("qrels", "iteration")])
def test_pandas_frame_with_a_column_twice_is_a_clear_error(side, column):
    # before: AttributeError: 'DataFrame' object has no attribute 'tolist'
    import pandas as pd

    value_column = "relevance" if side == "qrels" else "score"
    frame = pd.DataFrame({"query_id": ["q1"], "iteration": ["0"], "doc_id": ["d1"], value_column: [1]})
    if side == "run":
        frame = frame.drop(columns="iteration")
    frame = pd.concat([frame, frame[[column]]], axis=1)
    args = (frame, {"q1": {"d1": 1.0}}) if side == "qrels" else ({"q1": {"d1": 1}}, frame)
    with pytest.raises(InputFormatError, match=rf"the column '{column}' appears 2 times"):
        trec_rag_eval.evaluate(*args, ["P@1"])


# --- datasets with keys in two languages -------------------------------------------------------------

@pytest.mark.parametrize(("row", "keys"), [
    # before: the French key was kept and the English one dropped without a word
    ({"id": "q1", "requête": "vélo", "query": "bike", "pertinents": ["d1"]}, ("requête", "query")),
    ({"id": "q1", "requête": "vélo", "pertinents": ["d1"], "relevant": ["d2"]}, ("pertinents", "relevant")),
    ({"id": "q1", "pertinents": ["d1"], "non_pertinents": ["d2"], "non_relevant": ["d3"]},
     ("non_pertinents", "non_relevant")),
    ({"id": "q1", "requete": "velo", "requête": "vélo", "pertinents": ["d1"]}, ("requête", "requete")),
    ({"id": "q1", "pertinents": [{"id": "d1", "pertinence": 2, "relevance": 1}]}, ("relevance", "pertinence")),
])
def test_dataset_item_with_one_key_in_two_languages_and_two_values_is_refused(tmp_path, row, keys):
    path = tmp_path / "ds.json"
    path.write_text('[{"id": "q0", "query": "x", "relevant": ["d0"]},\n' + __import__("json").dumps(row) + "]")
    with pytest.raises(InputFormatError) as caught:
        trec_rag_eval.read_qrels(path)
    message = str(caught.value)
    assert caught.value.line_no == 2 and "item 2" in message and "(query q1)" in message
    assert all(f"{key!r}" in message for key in keys) and "different values" in message
    with pytest.raises(InputFormatError, match="different values"):  # the same rows from Python
        trec_rag_eval.evaluate([row], {"q1": {"d1": 1.0}}, ["P@1"])


def test_dataset_item_with_one_key_in_two_languages_and_one_value_is_read(tmp_path):
    path = tmp_path / "ds.json"
    path.write_text('[{"id": "q1", "requête": "vélo", "query": "vélo", "pertinents": ["d1"], "relevant": ["d1"]}]')
    qrels = trec_rag_eval.read_qrels(path)
    assert qrels.to_dict() == {"q1": {"d1": 1}}


def test_results_item_with_one_key_in_two_languages_and_two_values_is_refused(tmp_path):
    qrels = tmp_path / "ds.json"
    qrels.write_text('[{"id": "q1", "query": "x", "relevant": ["d1"]}]')
    results = tmp_path / "results.json"
    results.write_text('[{"id": "q1", "résultats": ["d1"], "results": ["d2"]}]')
    with pytest.raises(InputFormatError, match=r"'résultats' and 'results' say the same thing with different values"):
        trec_rag_eval.evaluate(str(qrels), str(results), ["P@1"])


# --- ids a TREC file cannot hold ---------------------------------------------------------------------

TREC_EVAL = trec_eval_binary()


def _convert(capsys, *args) -> tuple[int, str]:
    """``trec-rag-eval convert ARGS`` through the console entry point: (exit code, stderr)."""
    from trec_rag_eval.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["convert", *args])
    return exit_info.value.code, capsys.readouterr().err


def _nul_inputs(tmp_path):
    """Each input kind convert reads, with a NUL inside a document id on its first data line/row."""
    import json

    import polars as pl

    made = {}
    made["dataset"] = tmp_path / "ds.json"
    made["dataset"].write_text('[{"id": "q1", "query": "x",\n  "relevant": ["d\\u00001", "d2"]}]')
    made["results"] = tmp_path / "res.json"
    made["results"].write_text(json.dumps([{"id": "q1", "results": ["d2", "d\x001"]}]))
    made["qrels parquet"] = tmp_path / "q.parquet"
    pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d2", "d\x001"], "relevance": [1, 1]}).write_parquet(
        made["qrels parquet"])
    made["run parquet"] = tmp_path / "r.parquet"
    pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d2", "d\x001"], "score": [1.0, 0.5]}).write_parquet(
        made["run parquet"])
    made["trec run"] = tmp_path / "run.txt"
    made["trec run"].write_bytes(b"q1 Q0 d2 1 2 t\nq1 Q0 d\x001 2 1 t\n")
    made["trec qrels"] = tmp_path / "qrels.txt"
    made["trec qrels"].write_bytes(b"q1 0 d2 1\nq1 0 d\x001 1\n")
    return made


@pytest.mark.parametrize(("kind", "output", "where"), [
    ("dataset", "--qrels", ":1:"), ("dataset", "--json", ":1:"), ("results", "--run", ":1:"),
    ("qrels parquet", "--qrels", "row 2"), ("run parquet", "--run", "row 2"), ("trec run", "--run", ":2:"),
    ("trec run", "--json", ":2:"), ("trec qrels", "--qrels", ":2:"), ("trec qrels", "--json", ":2:"),
])
def test_convert_refuses_a_nul_in_an_id_instead_of_writing_a_file_trec_eval_crashes_on(tmp_path, capsys, kind,
                                                                                          output, where):
    # before: the NUL was copied into the TREC file, and trec_eval then crashed (malloc(): invalid size)
    source = _nul_inputs(tmp_path)[kind]
    suffix = ".parquet" if output == "--qrels" and kind == "trec qrels" else (".json" if output == "--json"
                                                                              else ".txt")
    target = tmp_path / f"out{suffix}"
    args = [str(source), output, str(target)]
    if kind == "results":
        (tmp_path / "ds_ok.json").write_text('[{"id": "q1", "query": "x", "relevant": ["d2"]}]')
        args += ["--dataset", str(tmp_path / "ds_ok.json")]
    code, err = _convert(capsys, *args)
    assert code != 0 and "NUL" in err and "Traceback" not in err, err
    assert (f"{source}{where}" if where.startswith(":") else f"{source}: {where}") in err
    assert not target.exists()


def test_evaluating_a_run_with_a_nul_names_the_line(tmp_path):
    import subprocess

    inputs = _nul_inputs(tmp_path)
    qrels = tmp_path / "ok.qrels"
    qrels.write_text("q1 0 d2 1\n")
    with pytest.raises(InputFormatError, match="NUL") as caught:
        trec_rag_eval.evaluate(str(qrels), str(inputs["trec run"]), ["P@1"])
    assert caught.value.line_no == 2
    if TREC_EVAL is not None:  # the oracle: trec_eval cannot read such a file
        done = subprocess.run([TREC_EVAL, str(qrels), str(inputs["trec run"])], capture_output=True)
        assert done.returncode != 0


def test_other_control_characters_trec_eval_reads_are_kept(tmp_path):
    # \x01 is no separator for trec_eval (it reads "d\x011" as one id): kept, as trec_eval keeps it
    qrels = tmp_path / "q.txt"
    qrels.write_bytes(b"q1 0 d\x011 1\n")
    run = tmp_path / "r.txt"
    run.write_bytes(b"q1 Q0 d\x011 1 2 t\nq1 Q0 d2 2 1 t\n")
    assert trec_rag_eval.evaluate(str(qrels), str(run), ["P@1"]).value("P@1", "q1") == 1.0


# --- a run cut by a download -------------------------------------------------------------------------

def _big_run(lines: int) -> bytes:
    return b"".join(b"q%d Q0 d%d %d %d bm25\n" % (i // 100, i, i % 100 + 1, 1000 - i % 100) for i in range(lines))


@pytest.mark.parametrize("size", ["small", "large"])   # the line-by-line reader and the fast one
def test_run_whose_last_line_lost_its_end_inside_the_tag_looks_truncated(tmp_path, size):
    body = _big_run(3 if size == "small" else 40_000)
    path = tmp_path / "run.txt"
    path.write_bytes(body + b"q9 Q0 dx 1 0.5 bm2")   # cut inside "bm25\n"
    lines = body.count(b"\n") + 1
    with pytest.warns(UserWarning, match=rf"run.txt:{lines}: the file looks truncated .* run tag 'bm2' differs "
                                         r"from 'bm25'"):
        run = trec_rag_eval.read_run(path)
    assert run.run_tag == "bm2"   # what trec_eval prints as runid: the last line's


@pytest.mark.parametrize("content", [
    b"q1 Q0 d1 1 2 bm25\nq1 Q0 d2 2 1 bm25",          # no line end, same tag: complete as far as one can tell
    b"q1 Q0 d1 1 2 bm25\nq1 Q0 d2 2 1 other\n",      # two tags, but the file ends with its line end
    b"q1 Q0 d1 1 2 bm2",                               # one line: nothing to compare with
])
def test_complete_looking_runs_give_no_truncation_warning(tmp_path, content):
    import warnings

    path = tmp_path / "run.txt"
    path.write_bytes(content)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        trec_rag_eval.read_run(path)


@pytest.mark.parametrize(("content", "line"), [
    (b"1 0 d1 1\n1 0 d2", 2),                  # qrels cut inside the doc id: 3 columns
    (b"q1 Q0 d1 1 2 bm25\nq1 Q0 d2 2 0.", 2),  # run cut inside the score: 5 columns
])
def test_files_cut_elsewhere_are_errors_with_the_line(tmp_path, content, line):
    path = tmp_path / "cut.txt"
    path.write_bytes(content)
    reader = trec_rag_eval.read_qrels if content.startswith(b"1 0") else trec_rag_eval.read_run
    with pytest.raises(InputFormatError) as caught:
        reader(path)
    assert caught.value.line_no == line


@pytest.mark.parametrize("bad", ["d\x00", "d 1"])
def test_every_writer_refuses_an_id_its_reader_would_refuse(tmp_path, bad):
    # ids from Python may hold anything; a file is written only when it reads back
    from trec_rag_eval.io.parquet import write_parquet_qrels, write_parquet_run
    from trec_rag_eval.io.writers import write_dataset_json, write_results_json, write_trec_qrels, write_trec_run
    from trec_rag_eval.tables import Qrels, Run

    qrels = Qrels({"q1": {"d0": 1, bad: 1}})
    run = Run({"q1": {"d0": 1.0, bad: 0.5}})
    for writer, table, name in ((write_trec_qrels, qrels, "q.txt"), (write_dataset_json, qrels, "q.json"),
                                (write_parquet_qrels, qrels, "q.parquet"), (write_trec_run, run, "r.txt"),
                                (write_results_json, run, "r.json"), (write_parquet_run, run, "r.parquet")):
        with pytest.raises(InputFormatError, match="NUL|whitespace"):
            writer(table, tmp_path / name)
        assert not (tmp_path / name).exists()


def test_run_read_in_pieces_that_looks_truncated_names_the_line_of_the_whole_file(tmp_path):
    from trec_rag_eval.io.trec.pieces import iter_run_chunks

    body = _big_run(300)
    path = tmp_path / "run.txt"
    path.write_bytes(body + b"q9 Q0 dx 1 0.5 bm2")
    with pytest.warns(UserWarning, match=r"run.txt:301: the file looks truncated"):
        pieces = list(iter_run_chunks(path, chunk_bytes=512))
    assert len(pieces) > 2


def test_other_tools_words_beside_the_query_or_results_keep_the_alias_order(tmp_path):
    # only French/English twins are refused when they differ: "question" beside "query", or the
    # passages' texts under "documents" beside "retrieved_ids", are ordinary rows
    qrels = [{"id": "q1", "query": "bike", "question": "how to ride a bike?", "relevant": ["d1"]}]
    results = tmp_path / "results.json"
    results.write_text('[{"id": "q1", "retrieved_ids": ["d1", "d2"], "documents": ["text one", "text two"]}]')
    assert trec_rag_eval.evaluate(qrels, str(results), ["P@1"]).value("P@1", "q1") == 1.0
