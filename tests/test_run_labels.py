"""Warnings about several runs name each run as the caller named it, and a query whose search found nothing is
said to have no result, never to be missing from the run (it was asked, and answered with an empty list)."""

from __future__ import annotations

import warnings

import pytest

import trec_rag_eval as tre

DATASET = [{"id": "q1", "query": "chat noir", "relevant": ["d1"]},
           {"id": "q2", "query": "zèbre", "relevant": ["d2"]},
           {"id": "q3", "query": "chien", "relevant": ["d3"]}]


def _said(call) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [str(w.message) for w in caught if issubclass(w.category, tre.TrecRagEvalWarning)]


def _engine(failing: str | None = None):
    """A search function: nothing found for 'zèbre'; ``failing`` raises for that query."""

    def search(query: str, k: int) -> list[str]:
        if query == failing:
            raise RuntimeError("timeout")
        return [] if query == "zèbre" else ["d1", "d3"]
    return search


def _report(search, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the harness's own warning about the failed query
        return tre.Evaluator(search, progress=False, **options).evaluate(DATASET, measures=["P@1"])


def test_two_configurations_of_one_engine_are_named_by_their_labels():
    # both runs come from <engine engine> (the harness's default run tag): the comparison's names tell them apart
    plain, variant = _report(_engine(failing="chien")), _report(_engine(failing="chat noir"))
    assert plain.run.source == variant.run.source == "<engine engine>"
    said = _said(lambda: tre.compare(plain.qrels, {"plain": plain.run, "variant": variant.run}, ["P@1"]))
    assert said == ["run 'plain' (<engine engine>): 1 qrels query missing from the run, scored 0: q3",
                    "run 'variant' (<engine engine>): 1 qrels query missing from the run, scored 0: q1"]


def test_a_search_that_found_nothing_is_not_missing_from_the_run():
    report = _report(_engine())
    assert report.run.empty_queries == {"q2"}
    assert report.result.missing_queries == ["q2"] and report.result.empty_queries == ["q2"]
    assert "queries: 3 (1 with no result, scored 0)" in str(report)
    # evaluate and compare score it 0 (P@1: q1 1, q2 0, q3 0) and do not call it missing
    said = _said(lambda: tre.evaluate(report.qrels, report.run, "P@1"))
    assert said == []
    assert tre.evaluate(report.qrels, report.run, "P@1").summary["P@1"] == pytest.approx(1 / 3)
    assert _said(lambda: tre.compare(report.qrels, {"a": report.run, "b": report.run}, ["P@1"])) == []


@pytest.mark.parametrize("results", [
    {"q1": ["d1"], "q2": [], "q3": ["d3"]},                                     # lists of ids
    {"q1": {"d1": 2.0}, "q2": {}, "q3": {"d3": 1.0}},                          # pytrec_eval's dicts
    {"q1": [{"id": "d1", "score": 1.0}], "q2": [], "q3": [("d3", 1.0)]},       # what a search function returns
    {"chat noir": ["d1"], "zèbre": [], "chien": ["d3"]},                         # keyed by the query texts
    {"chat noir": [{"id": "d1", "score": 1.0}], "zèbre": [], "chien": [{"id": "d3", "score": 0.5}]},  # both
])
def test_an_empty_result_list_in_memory_is_said_as_the_engines(results):
    from trec_rag_eval.engine.harness_files import dataset_qrels

    qrels = dataset_qrels(DATASET)
    said = _said(lambda: tre.evaluate(qrels, results, "P@1"))
    result = tre.evaluate(qrels, results, "P@1")
    assert said == []
    assert result.empty_queries == ["q2"] and result.summary["P@1"] == pytest.approx(2 / 3)
    assert "queries: 3 (1 with no result, scored 0)" in str(result)


def test_missing_and_empty_queries_are_told_apart():
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    said = _said(lambda: tre.evaluate(qrels, {"q1": ["d1"], "q2": []}, "P@1"))
    assert said == ["run (dict): 1 qrels query missing from the run, scored 0: q3"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = tre.evaluate(qrels, {"q1": ["d1"], "q2": []}, "P@1")
    assert "queries: 3 (1 missing from the run, 1 with no result, scored 0)" in str(result)


def test_an_empty_result_stays_empty_through_a_chunk_mapping():
    results = {"q1": ["d1#1", "d1#2"], "q2": [], "q3": ["d3#4"]}
    from trec_rag_eval.engine.harness_files import dataset_qrels

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the note saying what the mapping did
        result = tre.evaluate(dataset_qrels(DATASET), results, "P@1", doc_map=r"^(.*)#\d+$")
    assert result.empty_queries == ["q2"]


def test_agree_and_crosscheck_keep_the_empty_results_of_a_run():
    # agreement evaluates each run under both judgments; the cross-check runs ir-measures beside us: neither
    # calls a query the search answered with nothing "missing"
    report = _report(_engine())
    strict = tre.Qrels({"q1": {"d1": 1}, "q2": {"d2": 0}, "q3": {"d3": 1}})
    other = _report(lambda query, k: [] if query == "zèbre" else ["d3", "d1"])
    said = _said(lambda: tre.agree(report.qrels, strict, {"a": report.run, "b": other.run}, ["P@1"]))
    assert not [text for text in said if "missing" in text]
    said = _said(lambda: tre.crosscheck(report.qrels, report.run, ["P@1"]))
    assert not [text for text in said if "missing" in text]
