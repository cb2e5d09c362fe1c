"""A JSON results file's lists of result objects that all have the keys of the first are read on whole columns
(``io.json.runs._listed``); the same lists read result by result (``id_values``: the path every other list takes,
which words each error) are the reference: the same run, the same report, the same error."""

from __future__ import annotations

import json
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import trec_rag_eval as tre
from trec_rag_eval.io.json import runs

IDS = st.one_of(st.sampled_from(["a", "b", "c", "d", "10", "é"]), st.sampled_from(["", " a", "a\x00", "x y"]),
                st.integers(-5, 12), st.booleans())
SCORES = st.one_of(st.sampled_from([3.0, 2.0, 2.0, 1.0, 0.5, -1.0]), st.integers(-3, 3), st.booleans(), st.none(),
                   st.floats(), st.just(10**99))  # NaN and infinities too: json writes them, and reads them back
KEYS = st.sampled_from([("id", "score"), ("doc_id", "score"), ("id",), ("id", "score", "text"),
                        ("docid", "similarity")])


@st.composite
def _file(draw):
    usual = draw(st.booleans())
    ids = st.sampled_from(["a", "b", "c", "d", "10", "é"]) if usual else IDS
    scores = st.sampled_from([3.0, 2.0, 2.0, 1.0, 0.5]) if usual else SCORES
    mixed = not usual and draw(st.booleans())  # results of one list with different keys
    results = {}
    for query in draw(st.lists(st.sampled_from(["q1", "q2", "q3"]), unique=True, max_size=3)):
        keys = draw(KEYS)
        items = []
        for _ in range(draw(st.integers(0, 5))):
            shape = draw(KEYS) if mixed else keys
            item = {"id" if k == "id" else k: None for k in shape}
            for k in shape:
                item[k] = draw(ids) if k in ("id", "doc_id", "docid") else draw(scores) if k in (
                    "score", "similarity") else "some text"
            items.append(item)
        results[query] = items
    return results


def _read(path, columns: bool):
    with mock.patch.object(runs, "_listed", runs._listed if columns else lambda value: None):
        try:
            run, report = runs.read_results_report(path)
        except tre.TrecRagEvalError as err:
            return "error", str(err)
    return run.to_dict(), report


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_file())
def test_json_results_read_on_columns_are_those_read_result_by_result(tmp_path, results):
    path = tmp_path / "results.json"
    # json writes an infinity as Infinity, which no JSON reader must take; 1e999 is a number that reads as one
    path.write_text(json.dumps(results).replace("Infinity", "1e999"), encoding="utf-8")
    assert repr(_read(path, True)) == repr(_read(path, False))


def test_the_usual_lists_take_the_columns(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"q1": [{"id": "d2", "score": 2.0}, {"id": 7, "score": 1}]}), encoding="utf-8")
    with mock.patch.object(runs, "id_values", side_effect=AssertionError("read result by result")):
        run = tre.read_run(path)
    # d2 then 7 (an integer id read as its text), their scores kept: they fall along the list
    assert run.to_dict() == {"q1": {"d2": 2.0, "7": 1.0}}


def test_what_the_columns_refuse_is_read_and_worded_result_by_result(tmp_path):
    path = tmp_path / "results.json"
    for text, words in (('{"q1": [{"id": "a", "score": 1e999}]}', "the score of 'a' is not a number: Infinity"),
                        ('{"q1": [{"id": "a b", "score": 1}]}', "document id 'a b' contains whitespace"),
                        ('{"q1": [{"id": "a\\u0000", "score": 1}]}', "contains a NUL character"),
                        ('{"q1": [{"id": true, "score": 1}]}', "document id must be a string or an integer"),
                        ('{"q1": [{"id": "a", "score": true}]}', "the score of 'a' is not a number: true")):
        path.write_text(text, encoding="utf-8")
        for columns in (True, False):
            outcome = _read(path, columns)
            assert outcome[0] == "error" and words in outcome[1], (text, outcome)
