"""Search results in memory, ``{query_id: [{"id", "score"}, ...]}`` or ``(id, score)`` pairs, are read on whole
columns (``engine.search_results.ranked_search_results``, ranked by ``io.ranked_lists.lists_scores``); the same
lists read result by result (``ranked_results``, ``list_scores``: the path every other kind of result takes) are
the reference: the same ids and scores, the same warnings, whatever the ties, rises, non-finite scores, repeats
and odd items."""

from __future__ import annotations

import math
import warnings
from collections import OrderedDict
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import trec_rag_eval as tre
from trec_rag_eval.engine import search_results
from trec_rag_eval.io.ranked_lists import lists_scores
from trec_rag_eval.tables.checked_columns import BlockedRunColumns


def test_lists_are_ranked_in_their_order_as_the_rule_of_lists_says():
    # by hand, one list at a time (io.ranked_lists' rule): scores kept when they fall along the list and its ties
    # stand in trec_eval's order (doc id descending); else n, n-1, ..., 1; "rising" when a score rises
    scores = np.array([3.0, 2.0, 2.0, 1.0,  # ties b > a: in trec_eval's order, kept
                       1.0, 2.0,  # rises: 2, 1, and said
                       2.0, 2.0,  # a tie a < b: not trec_eval's order, so 2, 1, not said (no rise)
                       math.nan, 1.0,  # no number: 2, 1, not said
                       math.inf, 5.0, 6.0,  # not finite: 3, 2, 1, and no rise said though 6 > 5 (as list_scores)
                       0.5])  # one alone: kept
    ids = ["x", "b", "a", "y", "p", "q", "a", "b", "m", "n", "r", "s", "t", "z"]
    ranked, rising = lists_scores(scores, ids, [4, 2, 2, 2, 3, 1])
    assert ranked.tolist() == [3.0, 2.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0, 3.0, 2.0, 1.0, 0.5]
    assert rising.tolist() == [False, True, False, False, False, False]


def test_the_usual_results_take_the_columns_and_give_the_numbers_of_the_rows():
    results = {"q1": [{"id": "d2", "score": 2.0}, {"id": "d1", "score": 1.0}],
               "q2": [{"id": "d9", "score": 0.5}, {"id": "d8", "score": 0.25}]}
    run = tre.read_run(results)
    assert isinstance(run.data, BlockedRunColumns)  # read on whole columns
    # q1: d2 (unjudged) then d1 (relevant): RR 1/2; q2: d9 relevant first: RR 1; mean 0.75
    assert tre.evaluate({"q1": {"d1": 1}, "q2": {"d9": 2}}, results, "RR").summary_by_name["RR"] == 0.75


IDS = st.sampled_from(["a", "b", "c", "d", "e", "10", "9", "é", " ", "", "x y"])
SCORES = st.one_of(st.sampled_from([3.0, 2.0, 2.0, 1.0, 0.5, -1.0, math.nan, math.inf, -math.inf]),
                   st.floats(allow_nan=False, width=32).map(np.float32), st.sampled_from([None, 2, "1.5", True]))


@st.composite
def _results(draw):
    pairs = draw(st.booleans())
    usual = draw(st.booleans())  # only what the columns take: string ids, float scores
    ids = st.sampled_from(["a", "b", "c", "d", "e", "10", "9", "é"]) if usual else IDS
    scores = st.sampled_from([3.0, 2.0, 2.0, 1.0, 0.5, math.nan, math.inf]) if usual else SCORES

    def item(doc_id, score):
        if pairs:
            return (doc_id, score)
        return {"id": doc_id} if score is None and draw(st.booleans()) else {"id": doc_id, "score": score}

    queries = draw(st.lists(st.sampled_from(["q1", "q2", "q3", "q4"]), unique=True, max_size=4))
    return {q: [item(draw(ids), draw(scores)) for _ in range(draw(st.integers(0, 6)))] for q in queries}


def _read(results, columns: bool):
    """The run and the warnings of ``results``, read on whole columns where they can be, or result by result."""
    with warnings.catch_warnings(record=True) as caught, mock.patch.object(
            search_results, "ranked_search_results", search_results.ranked_search_results if columns else
            lambda value: None):
        warnings.simplefilter("always")
        try:
            run = tre.read_run(results)
        except tre.TrecRagEvalError as err:
            return ("error", str(err)), []
    return run.to_dict(), [str(w.message) for w in caught]


@settings(max_examples=300, deadline=None)
@given(_results())
def test_search_results_read_on_columns_are_those_read_result_by_result(results):
    by_columns, by_rows = _read(results, True), _read(results, False)
    assert repr(by_columns) == repr(by_rows)  # repr: NaN equal to NaN, 2.0 told from 2


def test_other_results_are_read_result_by_result():
    for results in ({"q1": [{"id": "a", "score": 1.0}, ("b", 0.5)]},  # two kinds of result
                    {"q1": [{"doc_id": "a", "score": 1.0}]},  # the id under another key
                    {"q1": [{"id": 7, "score": 1.0}]},  # an integer id
                    {"q1": [{"id": "a", "score": "1"}]},  # a score of text
                    {"q1": [("a", 1.0), ("a", 0.5)]},  # a document twice
                    {"q1": [{"id": "a", "score": 1.0}, {"id": "a", "score": 0.5}]},  # twice, as dicts
                    {"q1": [{"id": "a", "score": 1.0}], "q2": [("b", 0.5)]},  # another kind in another list
                    {"q1": [{"id": "a", "score": 1.0}, OrderedDict(id="b", score=0.5)]},  # a dict of another type
                    {"q1": [{"id": 1, "score": 1.0}, {"id": 1.0, "score": 0.5}]},  # ids one dict holds as one
                    {"q1": [{"id": "", "score": 1.0}]},  # an empty id
                    {"q1": [{"id": ["a"], "score": 1.0}]}):  # an id no dict can hold
        assert search_results.ranked_search_results(results) is None


def test_a_score_beyond_a_double_is_the_library_s_error_naming_the_result():
    # an integer score no double holds was Python's OverflowError from search results in memory (a dict of dicts
    # said it in the library's words already)
    for results in ({"q1": [("a", 10**400)]}, {"q1": [{"id": "a", "score": -(10**400)}, {"id": "b", "score": 1.0}]}):
        with pytest.raises(tre.TrecRagEvalError, match=r"the score of the result .* is beyond the range of a "
                                                       r"floating-point number \(about 1\.8e308\)"):
            tre.read_run(results)
