"""JSON/JSONL datasets and results: every shape of the issue, stable ids, scores, errors verbatim."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from trec_rag_eval.checks.rag import check_rag
from trec_rag_eval.cli import FLAGS
from trec_rag_eval.errors import InputFormatError, UsageError
from trec_rag_eval.io.json.content import json_content_kind, read_dataset, read_results
from trec_rag_eval.io.loading import detect_format, detect_kind, load_qrels, load_run, load_run_report
from trec_rag_eval.io.trec.topics import load_topics

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TUTORIAL = FIXTURES / "eval_dataset_tutorial.json"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def judgments(qrels) -> list[tuple[str, str, int]]:
    return [(q, d, r) for q, _, d, r in qrels.frame.iter_rows()]


def ranking(run) -> dict[str, list[tuple[str, float]]]:
    out: dict[str, list[tuple[str, float]]] = {}
    for q, d, s in run.frame.iter_rows():
        out.setdefault(q, []).append((d, s))
    return out


# ---------------------------------------------------------------- the tutorial's dataset


def test_tutorial_fixture_is_its_dataset_verbatim():
    # Exactly what the tutorial's json.dump(dataset_eval, f, ensure_ascii=False, indent=2) writes.
    dataset_eval = [
        {
            "requête": "comment installer Python sur Windows",
            "pertinents": ["doc_install_python", "doc_setup_env"],
            "non_pertinents": ["doc_cuisine"],
        },
        {
            "requête": "configurer nginx comme reverse proxy",
            "pertinents": ["doc_nginx_proxy", "doc_nginx_config"],
            "non_pertinents": ["doc_python_web"],
        },
    ]
    assert TUTORIAL.read_text(encoding="utf-8") == json.dumps(dataset_eval, ensure_ascii=False, indent=2)


def test_tutorial_dataset_reads_with_generated_ids_and_zero_for_non_pertinents():
    qrels = read_dataset(TUTORIAL)
    assert judgments(qrels) == [
        ("q1", "doc_install_python", 1),
        ("q1", "doc_setup_env", 1),
        ("q1", "doc_cuisine", 0),
        ("q2", "doc_nginx_proxy", 1),
        ("q2", "doc_nginx_config", 1),
        ("q2", "doc_python_web", 0),
    ]
    assert qrels.topics == {
        "q1": "comment installer Python sur Windows",
        "q2": "configurer nginx comme reverse proxy",
    }
    assert qrels.source == str(TUTORIAL)


def test_results_keyed_by_query_text_match_the_dataset():
    qrels = read_dataset(TUTORIAL)
    run = read_results(FIXTURES / "results_tutorial.json", qrels)
    assert ranking(run) == {
        "q1": [
            ("doc_cuisine", 5.0),
            ("doc_setup_env", 4.0),
            ("doc_python_web", 3.0),
            ("doc_install_python", 2.0),
            ("doc_venv", 1.0),
        ],
        "q2": [
            ("doc_nginx_config", 4.0),
            ("doc_apache", 3.0),
            ("doc_python_web", 2.0),
            ("doc_nginx_proxy", 1.0),
        ],
    }
    assert run.run_tag == "results_tutorial"


# ---------------------------------------------------------------- dataset shapes


def test_english_keys_explicit_ids_and_graded_relevance(tmp_path):
    path = write(
        tmp_path,
        "d.json",
        json.dumps(
            [
                {"id": "A-1", "query": "x", "relevant": {"d1": 3, "d2": 1}, "non_relevant": ["d3"]},
                {"query": "y", "relevant": [{"id": "d4", "relevance": 2}, {"doc_id": "d5"}]},
                {"id": 17, "query": "z", "relevant": ["d6"]},
            ]
        ),
    )
    qrels = read_dataset(path)
    assert judgments(qrels) == [
        ("A-1", "d1", 3),
        ("A-1", "d2", 1),
        ("A-1", "d3", 0),
        ("q2", "d4", 2),
        ("q2", "d5", 1),
        ("17", "d6", 1),
    ]
    assert qrels.topics == {"A-1": "x", "q2": "y", "17": "z"}


def test_jsonl_positions_count_rows_not_lines(tmp_path):
    path = write(
        tmp_path,
        "d.jsonl",
        '{"requête": "a", "pertinents": ["d1"]}\n\n'
        '{"requête": "b", "pertinents": ["d2"], "non_pertinents": ["d3"]}\n',
    )
    qrels = read_dataset(path)
    assert judgments(qrels) == [("q1", "d1", 1), ("q2", "d2", 1), ("q2", "d3", 0)]


def test_single_line_jsonl_and_gzip(tmp_path):
    path = tmp_path / "d.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"query": "a", "relevant": ["d1"]}\n'))
    assert judgments(read_dataset(path)) == [("q1", "d1", 1)]


def test_corrupt_gzip_is_an_error_naming_the_file(tmp_path):
    # a valid gzip header, then bytes that are no deflate stream: zlib's own error, worded for the file
    path = tmp_path / "d.json.gz"
    path.write_bytes(gzip.compress(b'[{"query": "a", "relevant": ["d1"]}]')[:10] + b"not deflate")
    with pytest.raises(InputFormatError) as err:
        read_dataset(path)
    assert str(err.value).startswith(f"{path}: broken gzip file (")


def test_nfd_accented_key_is_the_same_key(tmp_path):
    # "requête" typed with a combining circumflex (macOS keyboards) is still the tutorial's key.
    path = write(
        tmp_path, "d.json", json.dumps([{"reque\u0302te": "a", "pertinents": ["d1"]}], ensure_ascii=False)
    )
    assert read_dataset(path).topics == {"q1": "a"}


def test_beir_folder_with_header_and_queries(tmp_path):
    (tmp_path / "qrels").mkdir()
    write(tmp_path, "qrels/test.tsv", "query-id\tcorpus-id\tscore\nq7\tdoc1\t1\nq7\tdoc2\t0\nq9\tdoc3\t2\n")
    write(
        tmp_path,
        "queries.jsonl",
        '{"_id": "q7", "text": "seven"}\n{"_id": "q8", "text": "train only"}\n'
        '{"_id": "q9", "text": "nine"}\n',
    )
    assert detect_format(tmp_path) == "beir"
    qrels = load_qrels(tmp_path)
    assert judgments(qrels) == [("q7", "doc1", 1), ("q7", "doc2", 0), ("q9", "doc3", 2)]
    assert qrels.topics == {"q7": "seven", "q9": "nine"}  # only queries that have judgments
    assert judgments(load_qrels(tmp_path / "qrels" / "test.tsv")) == judgments(qrels)


def test_a_beir_tsv_takes_the_queries_beside_it_first_and_both_are_inputs(tmp_path):
    # qrels/test.tsv with a queries.jsonl in qrels/ and one in the dataset folder: the texts come from the
    # nearer one; an output may replace neither (both are files the reading may open)
    from trec_rag_eval.io.output_checks import files_read

    (tmp_path / "qrels").mkdir()
    tsv = write(tmp_path, "qrels/test.tsv", "query-id\tcorpus-id\tscore\nq7\tdoc1\t1\n")
    write(tmp_path, "qrels/queries.jsonl", '{"_id": "q7", "text": "beside"}\n{"_id": "q8", "text": "eight"}\n')
    write(tmp_path, "queries.jsonl", '{"_id": "q7", "text": "in the dataset folder"}\n{"_id": "q8", "text": "8"}\n')
    assert load_qrels(tsv).topics == {"q7": "beside"}
    assert files_read(tsv)[2:] == [str(tmp_path / "qrels" / "queries.jsonl"), str(tmp_path / "queries.jsonl")]
    (tmp_path / "qrels" / "queries.jsonl").unlink()
    assert load_qrels(tsv).topics == {"q7": "in the dataset folder"}
    assert files_read(tsv)[2:] == [str(tmp_path / "queries.jsonl")]


def test_a_beir_queries_jsonl_of_one_query_is_one_row(tmp_path):
    # one line of JSONL is also a JSON object: it is the one query's row, not an object keyed by query
    (tmp_path / "qrels").mkdir()
    write(tmp_path, "qrels/test.tsv", "query-id\tcorpus-id\tscore\nq7\tdoc1\t1\n")
    write(tmp_path, "queries.jsonl", '{"_id": "q7", "text": "seven", "metadata": {}}\n')
    assert load_qrels(tmp_path).topics == {"q7": "seven"}
    write(tmp_path, "queries.jsonl", '{"q7": "seven"}\n')  # not BEIR's row: refused, with the line
    with pytest.raises(InputFormatError) as err:
        load_qrels(tmp_path)
    assert str(err.value) == f'{tmp_path / "queries.jsonl"}:1: expected {{"_id": ..., "text": ...}}'


def test_beir_bad_score_names_the_line(tmp_path):
    path = write(tmp_path, "test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\thigh\n")
    with pytest.raises(InputFormatError) as err:
        load_qrels(path)
    assert str(err.value) == f"{path}:3: the score 'high' is not an integer: 'q1\\td2\\thigh'"


def test_llamaindex_embedding_qa_dataset(tmp_path):
    path = write(
        tmp_path,
        "qa.json",
        json.dumps(
            {
                "queries": {"u1": "what is x?", "u2": "what is y?"},
                "corpus": {"n1": "x is ...", "n2": "y is ..."},
                "relevant_docs": {"u1": ["n1"], "u2": ["n2", "n1"]},
                "mode": "text",
            }
        ),
    )
    qrels = load_qrels(path)
    assert judgments(qrels) == [("u1", "n1", 1), ("u2", "n2", 1), ("u2", "n1", 1)]
    assert qrels.topics == {"u1": "what is x?", "u2": "what is y?"}


def test_ranx_pytrec_dict_of_dicts(tmp_path):
    path = write(tmp_path, "q.json", json.dumps({"q1": {"d1": 2, "d2": 0}, "q2": ["d3"]}))
    qrels = load_qrels(path)
    assert judgments(qrels) == [("q1", "d1", 2), ("q1", "d2", 0), ("q2", "d3", 1)]
    assert qrels.topics is None


def test_ragas_rows_are_both_dataset_and_results(tmp_path):
    rows = [
        {"user_input": "a?", "retrieved_context_ids": ["d2", "d1", "d2"], "reference_context_ids": ["d1"]},
        {"user_input": "b?", "retrieved_context_ids": [], "reference_context_ids": ["d4"]},
    ]
    path = write(tmp_path, "ragas.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n")
    assert json_content_kind(path) == "both"
    qrels = load_qrels(path, "ragas")
    assert judgments(qrels) == [("q1", "d1", 1), ("q2", "d4", 1)]
    run, report = load_run_report(path, qrels=qrels)
    # "d2" is listed twice: its first (best) place is kept, and the repeat reported.
    assert ranking(run) == {"q1": [("d2", 2.0), ("d1", 1.0)]}
    assert report.duplicates == (("q1", "d2", 2),)
    assert report.empty == ("q2",)


# ---------------------------------------------------------------- results shapes


@pytest.mark.parametrize(
    "payload",
    [
        {"q1": ["d3", "d1", "d2"]},
        {"q1": [{"id": "d3"}, {"id": "d1"}, {"id": "d2"}]},
        [{"id": "q1", "results": ["d3", "d1", "d2"]}],
        [{"query_id": "q1", "retrieved_ids": [{"doc_id": "d3"}, {"doc_id": "d1"}, {"doc_id": "d2"}]}],
    ],
)
def test_ordered_lists_get_strictly_decreasing_scores(tmp_path, payload):
    run = read_results(write(tmp_path, "r.json", json.dumps(payload)))
    assert ranking(run) == {"q1": [("d3", 3.0), ("d1", 2.0), ("d2", 1.0)]}


def test_scores_are_kept_and_dicts_read(tmp_path):
    run = read_results(
        write(
            tmp_path,
            "r.json",
            json.dumps(
                {
                    "q1": [{"id": "d1", "score": 0.5}, {"id": "d2", "score": 0.25}],
                    "q2": {"d3": 1, "d4": 7.5},
                    "q3": [{"id": "d1", "score": 0.25}, {"id": "d2", "score": 0.5}],
                }
            ),
        )
    )
    # a list's scores are kept when they fall along it; a list whose scores rise (a distance) is ranked
    # in its order all the same, with n, n-1, ..., 1; an object {doc_id: score} is scored as it is
    assert ranking(run) == {"q1": [("d1", 0.5), ("d2", 0.25)], "q2": [("d3", 1.0), ("d4", 7.5)],
                            "q3": [("d1", 2.0), ("d2", 1.0)]}


def test_trec_rag_request_jsonl(tmp_path):
    line = {
        "query": {"qid": 429, "text": "t"},
        "candidates": [
            {"docid": "seg#1", "score": 18.5, "doc": {}},
            {"docid": "seg#2", "score": 3.0, "doc": {}},
        ],
    }
    run = read_results(write(tmp_path, "req.jsonl", json.dumps(line) + "\n"))
    assert ranking(run) == {"429": [("seg#1", 18.5), ("seg#2", 3.0)]}


def test_rows_by_text_match_loosely_and_without_dataset_by_position(tmp_path):
    qrels = read_dataset(TUTORIAL)
    rows = [
        {"requête": "CONFIGURER  nginx comme reverse proxy ", "résultats": ["doc_nginx_proxy"]},
        {"requête": "comment installer Python sur Windows", "résultats": ["doc_setup_env"]},
    ]
    path = write(tmp_path, "r.json", json.dumps(rows, ensure_ascii=False))
    assert ranking(read_results(path, qrels)) == {
        "q2": [("doc_nginx_proxy", 1.0)],
        "q1": [("doc_setup_env", 1.0)],
    }
    # Without the dataset, rows without ids get q1, q2, ... by position, like dataset items.
    assert list(ranking(read_results(path))) == ["q1", "q2"]


def test_unmatched_query_text_is_kept_as_an_extra_query(tmp_path):
    qrels = read_dataset(TUTORIAL)
    path = write(tmp_path, "r.json", json.dumps({"une autre question": ["d1"], "q1": ["doc_setup_env"]}))
    run = read_results(path, qrels)
    assert list(ranking(run)) == ["une autre question", "q1"]


def test_mixed_scores_are_refused(tmp_path):
    path = write(tmp_path, "r.json", json.dumps({"q1": [{"id": "d1", "score": 1}, {"id": "d2"}]}))
    with pytest.raises(InputFormatError) as err:
        read_results(path)
    assert str(err.value) == (
        f"{path}:1: key 'q1': 1 of 2 results have a score and the others do not; "
        "give every result a score or none"
    )


# ---------------------------------------------------------------- errors, verbatim


def error_of(tmp_path, text: str, name: str = "d.json", reader=read_dataset) -> str:
    path = write(tmp_path, name, text)
    with pytest.raises(InputFormatError) as err:
        reader(path)
    return str(err.value).removeprefix(f"{path}")


def test_invalid_json_gives_line_and_column(tmp_path):
    text = '[\n  {"query": "a", "relevant": ["d1"]},\n  {"query": "b" "relevant": ["d2"]}\n]'
    assert error_of(tmp_path, text) == ":3: invalid JSON at column 17: Expecting ',' delimiter"


def test_invalid_jsonl_line(tmp_path):
    text = '{"query": "a", "relevant": ["d1"]}\n{"query": "b", "relevant": ["d2"}\n'
    assert error_of(tmp_path, text, "d.jsonl") == ":2: invalid JSON at column 33: Expecting ',' delimiter"


def test_missing_required_key_names_item_and_key(tmp_path):
    text = '[\n {"requête": "a", "pertinents": ["d1"]},\n {"requête": "b", "pertinent": ["d2"]}\n]'
    assert error_of(tmp_path, text) == (
        ":3: item 2 (query q2): missing required key 'pertinents' or 'relevant' or 'reference_context_ids'"
        " (keys present: 'requête', 'pertinent')"
    )


def test_relevance_that_is_not_a_number(tmp_path):
    text = json.dumps([{"id": "x1", "query": "a", "relevant": {"d1": "high"}}])
    assert (
        error_of(tmp_path, text)
        == ":1: item 1 (query x1): key 'relevant': the relevance of 'd1' is not a number: \"high\""
    )


def test_id_with_whitespace_cannot_go_to_trec(tmp_path):
    text = json.dumps([{"query": "a", "relevant": ["doc 1"]}])
    assert error_of(tmp_path, text) == (
        ":1: item 1 (query q1): key 'relevant': document id 'doc 1' contains whitespace,"
        " which a TREC file cannot hold"
    )


def test_duplicate_query_ids_and_conflicting_judgments(tmp_path):
    text = '[{"id": "a", "query": "x", "relevant": ["d1"]},\n{"id": "a", "query": "y", "relevant": ["d2"]}]'
    assert (
        error_of(tmp_path, text)
        == ":2: item 2 (query a): query id 'a' is used twice (first by item 1 (query a), line 1)"
    )
    text = json.dumps([{"query": "x", "pertinents": ["d1"], "non_pertinents": ["d1"]}])
    assert (
        error_of(tmp_path, text)
        == ":1: item 1 (query q1): document 'd1' is judged twice with different relevance (1 and 0)"
    )


def test_nan_scores_and_duplicate_keys_are_refused(tmp_path):
    assert (
        error_of(tmp_path, '{"q1": {"d1": NaN}}', reader=read_results)
        == ":1: key 'q1': NaN is not valid JSON (scores must be finite numbers)"
    )
    assert (
        error_of(tmp_path, '{"q1": {"d1": 1, "d1": 2}}', reader=read_results)
        == ":1: key 'q1': duplicate key 'd1' in one JSON object"
    )


def test_text_keyed_results_without_dataset(tmp_path):
    message = error_of(tmp_path, json.dumps({"comment faire": ["d1"]}), "r.json", read_results)
    assert message == (
        ":1: key 'comment faire': this key holds whitespace, so it is a query text, not a query "
        "id: results keyed by query text need the dataset to match them"
    )


def test_ambiguous_query_text(tmp_path):
    dataset = write(
        tmp_path,
        "d.json",
        json.dumps([{"query": "same", "relevant": ["d1"]}, {"query": "same", "relevant": ["d2"]}]),
    )
    qrels = read_dataset(dataset)
    message = error_of(
        tmp_path,
        json.dumps([{"query": "same", "results": ["d1"]}]),
        "r.json",
        lambda p: read_results(p, qrels),
    )
    assert (
        message == ':1: item 1 (query q1): the query text "same" matches several dataset queries (q1, q2); '
        "give each result row the query's id"
    )


def test_not_utf8_and_empty_and_scalar(tmp_path):
    path = tmp_path / "d.json"
    path.write_bytes(b'[{"query": "caf\xe9", "relevant": ["d1"]}]')
    with pytest.raises(InputFormatError, match=r"d.json:1: not UTF-8 text \(byte 0xe9\)"):
        read_dataset(path)
    assert error_of(tmp_path, "  \n") == ": the file is empty (expected JSON or JSONL)"
    assert error_of(tmp_path, '"just a string"') == ":1: expected a JSON array or object, got str"


# ---------------------------------------------------------------- detection and topics


def test_detection(tmp_path):
    assert detect_format(TUTORIAL) == "json"
    assert detect_format(write(tmp_path, "q.txt", "301 0 d1 1\n")) == "trec"
    assert detect_kind(write(tmp_path, "r.txt", "301 Q0 d1 1 2.5 tag\n")) == "results"
    assert detect_kind(write(tmp_path, "q2.txt", "301 0 d1 1\n")) == "dataset"
    assert detect_kind(FIXTURES / "results_tutorial.json") == "results"
    assert detect_kind(TUTORIAL) == "dataset"
    assert detect_kind(write(tmp_path, "run.json", json.dumps({"q1": {"d1": 0.5}}))) == "results"


def test_unknown_format_option(tmp_path):
    # the library names its parameter; the command line says the flag that sets it
    with pytest.raises(UsageError, match=r"unknown format 'xml' for load_qrels\(format=\.\.\.\)") as err:
        load_qrels(TUTORIAL, "xml")
    assert err.value.worded(FLAGS).startswith("unknown format 'xml' for --qrels-format; expected one of auto, trec")


def test_topics_file_keeps_text_verbatim_and_names_bad_lines(tmp_path):
    path = write(tmp_path, "t.tsv", "q1\t  deux espaces \nq2\tun\u00a0insécable\n")
    assert load_topics(path) == {"q1": "  deux espaces ", "q2": "un\u00a0insécable"}
    bad = write(tmp_path, "bad.tsv", "q1\tfine\nq2 no tab\n")
    with pytest.raises(InputFormatError) as err:
        load_topics(bad)
    assert str(err.value) == f"{bad}:2: expected query_id<TAB>query text: 'q2 no tab'"


# ---------------------------------------------------------------- RAG checks


def test_rag_checks_count_and_show_examples(tmp_path):
    dataset = write(
        tmp_path,
        "d.json",
        json.dumps(
            [
                {"id": "q1", "query": "a", "relevant": ["d1"]},
                {"id": "q2", "query": "b", "relevant": [], "non_relevant": ["d9"]},
                {"id": "q3", "query": "c", "relevant": ["d3"]},
            ]
        ),
    )
    qrels = load_qrels(dataset)
    results = write(tmp_path, "r.json", json.dumps({"q1": ["d1", "x1", "d1"], "q2": [], "q4": ["x2"]}))
    run, report = load_run_report(results, qrels=qrels)
    found = {w.code: w for w in check_rag(qrels, run, report)}
    # q1, the one dataset query with results, retrieved a judged document: unjudged x1, x2 are normal
    assert list(found) == [
        "extra_queries",
        "missing_queries",
        "duplicate_ids",
        "empty_results",
        "no_relevant",
    ]
    assert (found["extra_queries"].count, found["extra_queries"].examples) == (1, ("q4",))
    assert (found["missing_queries"].count, found["missing_queries"].examples) == (1, ("q3",))
    assert str(found["duplicate_ids"]) == (
        "1 ids are listed more than once in one result list (only the first place is kept) (e.g. q1: 'd1' x2)"
    )
    assert found["empty_results"].examples == ("q2",)
    assert found["no_relevant"].examples == ("q2",)


def test_rag_checks_no_overlap_and_clean_data():
    qrels = read_dataset(TUTORIAL)
    run = load_run(FIXTURES / "results_tutorial.json", qrels=qrels)
    assert check_rag(qrels, run) == []  # doc_venv, doc_apache are unjudged: normal, no warning
    from trec_rag_eval.tables import Run

    other = Run.from_dict({"q1": {"chunk_1": 2.0, "chunk_2": 1.0}, "q2": {"chunk_3": 1.0}})
    (warning,) = check_rag(qrels, other)
    assert str(warning) == (
        "3 of 3 distinct retrieved ids never appear in the qrels and only 0 of 2 queries retrieved any "
        "judged document: do the results and the dataset use the same ids (same chunking)? "
        "(e.g. 'chunk_1', 'chunk_2', 'chunk_3')"
    )
    half = Run.from_dict({"q1": {"doc_cuisine": 1.0}, "q2": {"chunk_3": 1.0}})
    assert check_rag(qrels, half) == []  # one query in two found a judged document: not below half
    perfect = Run.from_dict({"q1": {"doc_install_python": 1.0}, "q2": {"doc_nginx_proxy": 1.0}})
    assert check_rag(qrels, perfect) == []
