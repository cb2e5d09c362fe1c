"""``tre.read_run`` takes a run in memory in every shape ``tre.evaluate`` takes, search results included (lists of
``{"id", "score"}`` items or ``(id, score)`` pairs per query), so a ``Run`` can be built once from what a search
function returned and evaluated many times; ``tre.Run`` itself, which takes columns and ids, says where such
results go instead of only refusing an item as a document id."""

from __future__ import annotations

import pytest

import trec_rag_eval as tre

QRELS = {"q1": {"d1": 1, "d3": 0}, "q2": {"d9": 2}}
Q1 = {"q1": QRELS["q1"]}  # runs of q1 alone are evaluated on q1 alone (a judged query not run scores 0)
RESULTS = {"q1": [{"id": "d2", "score": 2.0}, {"id": "d1", "score": 1.0}], "q2": [("d9", 0.5), ("d8", 0.25)]}


def test_search_results_become_a_run_with_the_numbers_evaluate_gives_them() -> None:
    run = tre.read_run(RESULTS)
    assert isinstance(run, tre.Run)
    # q1: d2 (unjudged) then d1 (relevant): RR = 1/2; q2: d9 first, relevant: RR = 1. Mean 0.75
    # P@1: q1 0, q2 1 -> 0.5
    for given in (run, RESULTS):
        result = tre.evaluate(QRELS, given, ["RR", "P@1"])
        assert result.summary_by_name["RR"] == pytest.approx(0.75)
        assert result.summary_by_name["P@1"] == pytest.approx(0.5)


def test_a_dict_of_scores_and_lists_of_ids_are_read_as_evaluate_reads_them() -> None:
    by_scores = tre.read_run({"q1": {"d1": 1.0, "d2": 2.0}})
    by_list = tre.read_run({"q1": ["d2", "d1"]})
    for run in (by_scores, by_list):  # d2 then d1 either way: RR = 1/2
        assert tre.evaluate(Q1, run, "RR").summary_by_name["RR"] == pytest.approx(0.5)


def test_a_document_listed_twice_is_warned_of_and_kept_at_its_first_place() -> None:
    with pytest.warns(tre.TrecRagEvalWarning, match=r"listed more than once.*q1: 'd1' x2"):
        run = tre.read_run({"q1": [("d1", 3.0), ("d2", 2.0), ("d1", 1.0)]})
    assert tre.evaluate(Q1, run, "RR").summary_by_name["RR"] == pytest.approx(1.0)  # d1 first


def test_chunk_ids_in_memory_are_mapped_with_the_judgments() -> None:
    # d1#0 and d1#1 are chunks of d1 (relevant): mapped, q1's first result is d1: RR = 1
    with pytest.warns(tre.TrecRagEvalWarning, match="2 retrieved chunks -> 1 documents"):
        run = tre.read_run({"q1": [("d1#0", 2.0), ("d1#1", 1.0)]}, qrels=tre.Qrels(Q1), doc_id_pattern=r"(.+)#\d+")
    assert tre.evaluate(Q1, run, "RR").summary_by_name["RR"] == pytest.approx(1.0)


def test_run_names_where_search_results_are_read() -> None:
    for results in (RESULTS, {"q1": [("d1", 1.0)]}, {"q1": [object()]}):  # items in a list of ids
        with pytest.raises(tre.InputFormatError, match=r"doc id must be a string or an integer; search results are "
                           r"read by tre\.read_run\(results\)$"):
            tre.Run(results)
    with pytest.raises(tre.InputFormatError, match=r"doc id must be a string or an integer$"):
        tre.Run({"q1": {(1, 2): 1.0}})  # a dict's key: no search result
