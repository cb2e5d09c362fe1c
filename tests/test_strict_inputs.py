"""Inputs that used to be read wrong in silence (issue 27): chunk maps, ids from Python, datasets
with keys in two languages, ids a TREC file cannot hold, runs cut by a download.

Each expectation is written by hand from the input shown in the test."""

from __future__ import annotations

import pytest

import trec_rag_eval
from trec_rag_eval.errors import InputFormatError, TrecRagEvalError, UsageError
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
