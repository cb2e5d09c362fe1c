"""``tre.Run(x)`` and ``tre.Qrels(x)`` called directly check ``x`` as ``tre.evaluate`` does, in its words, whatever
the shape: even a dict shaped as the file readers' own columns (ids in lists, the numbers a float64 or int64 numpy
array) or a polars frame whose columns have the tables' own types, which the constructors took as already checked
(the readers build their tables through them, and say so now: ``checked=True``)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import trec_rag_eval as tre

QRELS = {"q1": {"a": 1}}
# the shape the readers hand the tables: ids in lists, scores a float64 numpy array
RUNS = {  # what is wrong, the words for a dict of columns, the words for a polars frame (check_frame's)
    "an empty doc id": ({"doc_id": ["b", ""]}, "run (dict): row 2 (query 'q1', document ''): the doc id is empty",
                        "run (polars DataFrame): row 2: expected a query_id, a doc_id and a score (a number other "
                        "than NaN), got 'q1', '', 1.0"),
    "a NaN score": ({"score": np.array([np.nan, 1.0])},
                    "run (dict): row 1 (query 'q1', document 'b'): the score nan is not a number",
                    "run (polars DataFrame): row 1: expected a query_id, a doc_id and a score (a number other than "
                    "NaN), got 'q1', 'b', nan"),
    "a pair twice": ({"doc_id": ["a", "a"]},
                     "run (dict): row 2: document 'a' listed twice for query 'q1' (first at row 1)",
                     "run (polars DataFrame): row 2: document 'a' listed twice for query 'q1' (first at row 1)"),
}


def _run(**changed):
    return {"query_id": ["q1", "q1"], "doc_id": ["b", "a"], "score": np.array([3.0, 1.0]), **changed}


def _errors(make, evaluate):
    """The error of ``make()`` and that of ``evaluate()``, as texts."""
    texts = []
    for call in (make, evaluate):
        with pytest.raises(tre.InputFormatError) as caught:
            call()
        texts.append(str(caught.value))
    return texts


@pytest.mark.parametrize("case", list(RUNS))
def test_a_run_made_of_a_dict_shaped_as_a_readers_columns_is_checked_in_evaluates_words(case):
    changed, words, _ = RUNS[case]
    run = _run(**changed)
    made, evaluated = _errors(lambda: tre.Run(run), lambda: tre.evaluate(QRELS, run, "P@1"))
    assert made == evaluated == words


@pytest.mark.parametrize("case", list(RUNS))
def test_a_run_made_of_a_polars_frame_of_the_tables_types_is_checked_in_evaluates_words(case):
    changed, _, words = RUNS[case]
    frame = pl.DataFrame(_run(**changed), schema={"query_id": pl.Utf8, "doc_id": pl.Utf8, "score": pl.Float64})
    made, evaluated = _errors(lambda: tre.Run(frame), lambda: tre.evaluate(QRELS, frame, "P@1"))
    assert made == evaluated == words


def test_an_integer_id_in_a_readers_shape_reads_as_a_trec_file_spells_it():
    # d 7 given as the integer 7 is the document "7", as evaluate reads it: ranked first (score 3), relevant, P@1 = 1
    run = tre.Run(_run(doc_id=[7, "a"]))
    assert run.to_dict() == {"q1": {"7": 3.0, "a": 1.0}}
    assert tre.evaluate({"q1": {"7": 1}}, run, "P@1").summary["P@1"] == 1.0


@pytest.mark.parametrize("changed, words, frame_words", [
    ({"doc_id": ["a", ""]}, "qrels (dict): row 2 (query 'q1', document ''): the doc id is empty",
     "qrels (polars DataFrame): row 2: expected a query_id, a doc_id and a relevance (a number other than NaN), got "
     "'q1', '', 0"),
    ({"doc_id": ["a", "a"]}, "qrels (dict): row 2: document 'a' judged twice for query 'q1' (first at row 1)",
     "qrels (polars DataFrame): row 2: document 'a' judged twice for query 'q1' (first at row 1)"),
])
def test_judgments_made_of_a_dict_shaped_as_a_readers_columns_are_checked_in_evaluates_words(changed, words,
                                                                                              frame_words):
    qrels = {"query_id": ["q1", "q1"], "iteration": ["0", "0"], "doc_id": ["a", "b"],
             "relevance": np.array([1, 0]), **changed}
    made, evaluated = _errors(lambda: tre.Qrels(qrels), lambda: tre.evaluate(qrels, {"q1": {"a": 1.0}}, "P@1"))
    assert made == evaluated == words
    frame = pl.DataFrame(qrels, schema={"query_id": pl.Utf8, "iteration": pl.Utf8, "doc_id": pl.Utf8,
                                        "relevance": pl.Int64})
    made, evaluated = _errors(lambda: tre.Qrels(frame), lambda: tre.evaluate(frame, {"q1": {"a": 1.0}}, "P@1"))
    assert made == evaluated == frame_words


def test_a_dict_of_another_class_shaped_as_a_readers_columns_is_checked_too():
    # the readers' columns are trusted only when the package says so (checked=True), never by their class: an
    # OrderedDict passed evaluate unchecked (only a plain dict was looked at), and its empty doc id ranked
    from collections import OrderedDict

    run = OrderedDict(_run(doc_id=["b", ""]))
    made, evaluated = _errors(lambda: tre.Run(run), lambda: tre.evaluate(QRELS, run, "P@1"))
    assert made == evaluated == "run (dict): row 2 (query 'q1', document ''): the doc id is empty"


def test_preferences_made_of_a_dict_shaped_as_a_readers_columns_are_checked():
    # the same shape of Preferences' own (ids in lists, the levels a float64 numpy array) was taken as it was: an
    # empty doc id and a NaN level passed
    columns = {"query_id": ["q1", "q1"], "group": ["g", "g"], "subgroup": ["s", "s"], "doc_id": ["a", "b"],
               "level": np.array([2.0, 1.0])}
    with pytest.raises(tre.InputFormatError) as caught:
        tre.Preferences({**columns, "doc_id": ["a", ""]})
    assert str(caught.value) == "<prefs>: row 2: doc_id must be a string or an integer without whitespace, got ''"
    with pytest.raises(tre.InputFormatError) as caught:
        tre.Preferences({**columns, "level": np.array([np.nan, 1.0])})
    assert str(caught.value) == "<prefs>: row 1: level must be a number other than NaN, got nan"
    assert tre.Preferences(columns).data["doc_id"] == ["a", "b"]


def test_run_from_dict_keeps_a_nan_score_but_refuses_an_empty_id_in_evaluates_words():
    # from_dict reads ids of other kinds row by row (their str()), and took an empty doc id as it was: it ranked
    # first (score 3) and P@1 came out 0.0 with no error
    scores = {"q1": {"": 3.0, "a": 1.0}}
    made, evaluated = _errors(lambda: tre.Run.from_dict(scores), lambda: tre.evaluate(QRELS, scores, "P@1"))
    assert made == evaluated == "run (dict): query 'q1', document '': the doc id is empty"
    kept = tre.Run.from_dict({"q1": {7: float("nan"), "a": 1.0}})  # an integer id: row by row, its NaN kept
    assert kept.to_dict()["q1"]["a"] == 1.0 and np.isnan(kept.to_dict()["q1"]["7"])


@pytest.mark.parametrize("grade", [2**31, -(2**31) - 1, 2**40])
def test_a_polars_frame_of_the_tables_types_refuses_a_relevance_beyond_the_readers_range_as_other_shapes_do(grade):
    # a frame with the iteration column (the tables' own types) skipped the range check every other shape makes
    # (trec_eval reads a grade as a C int: -2**31 to 2**31 - 1), and the grade 2**40 was scored as relevant
    words = (f"qrels (polars DataFrame): row 1 (query 'q1', document 'a'): the relevance {grade} is not an integer "
             "from -2147483648 to 2147483647")
    rows = {"query_id": ["q1", "q1"], "doc_id": ["a", "b"], "relevance": [grade, 1]}
    without = pl.DataFrame(rows)  # no iteration column: its rows read one by one, the range checked
    assert _errors(lambda: tre.Qrels(without), lambda: tre.evaluate(without, {"q1": {"a": 1.0}}, "P@1")) == [words] * 2
    frame = pl.DataFrame({**rows, "iteration": ["0", "0"]}).select("query_id", "iteration", "doc_id", "relevance")
    assert _errors(lambda: tre.Qrels(frame), lambda: tre.evaluate(frame, {"q1": {"a": 1.0}}, "P@1")) == [words] * 2
    table = frame.to_arrow()
    arrow_words = words.replace("polars DataFrame", "Arrow Table")
    made, evaluated = _errors(lambda: tre.Qrels(table), lambda: tre.evaluate(table, {"q1": {"a": 1.0}}, "P@1"))
    assert made == evaluated == arrow_words


@pytest.mark.parametrize("scores", [
    {"q1": {7: None, "a": 1.0}},             # float(None): a TypeError from inside the library
    {"q1": {7: "x", "a": 1.0}},              # float("x"): a ValueError
    {"q1": {7: "1.5", "a": 1.0}},            # float("1.5"): taken for the number 1.5, where evaluate refuses it
    {"q1": {7: 10**400}},                    # float(10**400): an OverflowError
    {"q1": {1: 2.0, "1": 1.0}},              # one document twice once its ids are strings: taken, both rows kept
    {1: {"a": 1.0}, "1": {"b": 2.0}},        # one query twice: its two dicts merged
    {"q1": {7: 1.0}, "q2": None},            # None.items(): an AttributeError
], ids=["None", "text", "a number as text", "beyond a double", "a document twice", "a query twice", "no dict"])
def test_run_from_dict_refuses_in_evaluates_words_what_it_read_row_by_row(scores):
    # from_dict reads a dict whose ids are of other kinds (an integer id) row by row: each of these was taken
    # silently or stopped with Python's own error, where evaluate refuses it in words
    made, evaluated = _errors(lambda: tre.Run.from_dict(scores), lambda: tre.evaluate(QRELS, scores, "P@1"))
    assert made == evaluated


def test_run_from_dict_still_keeps_a_nan_score_and_a_bool_one_and_refuses_what_is_no_dict():
    kept = tre.Run.from_dict({"q1": {7: float("nan"), "a": True, (1, 2): 0.5}})  # ids of any kind: their str()
    assert kept.to_dict()["q1"]["a"] == 1.0 and kept.to_dict()["q1"]["(1, 2)"] == 0.5
    assert np.isnan(kept.to_dict()["q1"]["7"])
    with pytest.raises(tre.UsageError, match=r"^Run.from_dict takes a dict \{query_id: \{doc_id: score\}\}, got list$"):
        tre.Run.from_dict([("q1", "a", 1.0)])


@pytest.mark.parametrize("doc_id, shown", [
    (1.5, "1.5"), ((1, 2), "(1, 2)"), (frozenset({"a"}), "frozenset({'a'})"),
    (("x" * 100,), "('" + "x" * 55 + "..."),  # its first 57 characters
], ids=["a float", "a tuple", "a frozenset", "a long one"])
def test_an_id_of_another_kind_is_named_as_given_not_as_none(doc_id, shown):
    # the refusal named the id after its failed conversion: "document None", whatever was given
    run = {"q1": {doc_id: 1.0}}
    made, evaluated = _errors(lambda: tre.Run(run), lambda: tre.evaluate(QRELS, run, "P@1"))
    assert made == evaluated == f"run (dict): query 'q1', document {shown}: the doc id must be a string or an integer"
    result = {"id": "a", "score": 2.0}  # a search result, which evaluate reads (its id) and Run does not
    with pytest.raises(tre.InputFormatError) as caught:
        tre.Run({"q1": [result]})
    assert str(caught.value).startswith("run (dict): query 'q1', document {'id': 'a', 'score': 2.0}: ")
